"""Precisions of the judge: the grading tolerance matrix, the sweep's datatype spellings, the casts a
request may ask for (precision_casts), and each precision's numpy and C types, read from relayout's
table of element types with the C names of the judge's ABI (C_NAMES)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from relayout.dtypes import PRECISIONS as _RELAYOUT_PRECISIONS
from relayout.types import ELEMENT_TYPES, CNames


class Tolerance(NamedTuple):
    """An output passes where |got - want| <= atol + rtol * |want| elementwise."""

    rtol: float
    atol: float


# The spec's names (requests_api.md §1, §3.1): a cast pointer is `__npb_bf16 *`, a mixed zip's struct
# `hb_zip_uv`; whatever C the judge shows a kernel names its types so.
C_NAMES = CNames(zip_struct_prefix="hb_zip_", storage_type_prefix="__npb_")

PRECISIONS: tuple[str, ...] = tuple(_RELAYOUT_PRECISIONS)

TOLERANCE_MATRIX: dict[str, Tolerance] = {
    "fp64": Tolerance(1e-9, 1e-11),
    "fp32": Tolerance(1e-3, 1e-5),
    "fp16": Tolerance(1e-2, 1e-3),
    "bf16": Tolerance(3e-2, 1e-2),
    "fp8_e4m3": Tolerance(1e-1, 0.125),
    "fp8_e5m2": Tolerance(2e-1, 0.25),
}

NUMPY_DTYPES: dict[str, np.dtype] = {p: ELEMENT_TYPES[p].numpy_dtype for p in PRECISIONS}

# The C element type of a pointer at each precision (spec §1: the prompt tables these).
C_TYPES: dict[str, str] = {p: C_NAMES.c_type(p) for p in PRECISIONS}

# Storage-only types reach C as their bits; a submission declares them through these typedefs.
C_PRELUDE = "#include <stdint.h>\n" + C_NAMES.storage_typedefs()

# The sweep's --datatype spellings and the precision each names.
DATATYPE_ALIASES = {"float64": "fp64", "double": "fp64", "float32": "fp32", "float": "fp32"}


def precision_of(datatype: str) -> str:
    """The precision a datatype spelling names (fp64, float64, double, ...); ValueError otherwise."""
    name = DATATYPE_ALIASES.get(datatype, datatype)
    if name not in NUMPY_DTYPES:
        raise ValueError(f"unknown precision {datatype!r}; expected one of {list(PRECISIONS)}")
    return name


@dataclass(frozen=True)
class PrecisionCasts:
    """The casts open to an array at one problem precision, and relayout's cast kernels for them
    (one OpenMP loop per type pair, rounding once from the problem precision)."""

    problem: str
    targets: tuple[str, ...]

    def cast_in(self, array: np.ndarray, to: str) -> np.ndarray:
        """`array` (at the problem precision) rounded once to `to`, in a new aligned buffer."""
        if to not in self.targets:
            raise ValueError(f"no cast from {self.problem} to {to}; open: {list(self.targets)}")
        from relayout.convert import cast_in

        return cast_in(np.ascontiguousarray(array, dtype=NUMPY_DTYPES[self.problem]), to)

    def widen_out(self, buffer: np.ndarray, out: np.ndarray) -> np.ndarray:
        """A cast buffer written back exactly into `out`, an array at the problem precision."""
        from relayout.convert import widen_out

        return widen_out(buffer, out)


def precision_casts(problem_precision: str, allowed: list[str] | tuple[str, ...]) -> PrecisionCasts:
    """The casts a request may name for an array at `problem_precision`: the allowed precisions
    other than the array's own (a cast to its own dtype is refused)."""
    precision_of(problem_precision)
    targets = tuple(p for p in PRECISIONS if p in allowed and p != problem_precision)
    return PrecisionCasts(problem_precision, targets)


def grading_tolerance(
    problem_precision: str, kernel: str, override_kernels: list[str] | tuple[str, ...] = ()
) -> tuple[Tolerance, str | None]:
    """The band a grade is judged in, and the override's precision where one applies.

    grading.precision_override_kernels: a listed fp64-only kernel run under fp32 keeps its fp64
    problem and is graded in the fp32 band; the grade records that override.
    """
    if problem_precision == "fp32" and kernel in override_kernels:
        return TOLERANCE_MATRIX["fp32"], "fp32"
    return TOLERANCE_MATRIX[problem_precision], None
