"""The element types of the request language, one table holding every fact about each: numpy dtype,
C type, storage, size, alignment and, for a floating type, its bit layout; and the C names an ABI
gives what C itself does not name (CNames). Rounding lives in dtypes.py."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal, get_args

import ml_dtypes
import numpy as np

__all__ = [
    "CAST_TARGETS",
    "C_RESERVED_NAMES",
    "ELEMENT_TYPES",
    "RELAYOUT_C_NAMES",
    "SPARSE_FORMATS",
    "SPARSE_FORMAT_DEFAULTS",
    "CNames",
    "CastTarget",
    "ElementType",
    "FloatBits",
    "SparseFormatName",
    "c_name_problem",
    "element_type",
]

# Array and pointer names become C identifiers (parameters, struct members, a zip's struct name): the
# keywords of C99 to C23, and the ABI's own trailing parameters, would make invalid or clashing C.
C_RESERVED_NAMES = frozenset(
    [
        "auto",
        "break",
        "case",
        "char",
        "const",
        "continue",
        "default",
        "do",
        "double",
        "else",
        "enum",
        "extern",
        "float",
        "for",
        "goto",
        "if",
        "inline",
        "int",
        "long",
        "register",
        "restrict",
        "return",
        "short",
        "signed",
        "sizeof",
        "static",
        "struct",
        "switch",
        "typedef",
        "union",
        "unsigned",
        "void",
        "volatile",
        "while",
        "_Alignas",
        "_Alignof",
        "_Atomic",
        "_Bool",
        "_Complex",
        "_Generic",
        "_Imaginary",
        "_Noreturn",
        "_Static_assert",
        "_Thread_local",
        "alignas",
        "alignof",
        "bool",
        "constexpr",
        "false",
        "nullptr",
        "static_assert",
        "thread_local",
        "true",
        "typeof",
        "typeof_unqual",
        "_BitInt",
        "_Decimal32",
        "_Decimal64",
        "_Decimal128",
        "workspace",
        "workspace_bytes",
    ]
)


def c_name_problem(name: str) -> str | None:
    """Why `name` cannot be a C identifier of the kernel's ABI, or None when it can."""
    if name in C_RESERVED_NAMES:
        return f"{name!r} is a C keyword or a name the kernel's C signature takes"
    if name.startswith("__") or (name[:1] == "_" and name[1:2].isupper()):
        return f"{name!r} is reserved to the C implementation (__x, _X)"
    return None


CastTarget = Literal["fp64", "fp32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2"]
CAST_TARGETS: tuple[str, ...] = get_args(CastTarget)
# The sparse storage formats, and the parameters (with their defaults) a format operation may give
# each; relayout.sparse.formats implements exactly these (kept here so that reading a request does
# not import scipy).
SparseFormatName = Literal["csr", "csc", "coo", "ell", "dia", "bcsr", "jds", "sell_c_sigma"]
SPARSE_FORMATS: tuple[str, ...] = get_args(SparseFormatName)
_FORMAT_PARAMETERS: dict[str, dict[str, object]] = {
    "bcsr": {"block_size": (1, 1)},
    "sell_c_sigma": {"C": 8, "sigma": 1},
}
SPARSE_FORMAT_DEFAULTS: dict[str, dict[str, object]] = {
    name: _FORMAT_PARAMETERS.get(name, {}) for name in SPARSE_FORMATS
}


@dataclass(frozen=True)
class FloatBits:
    """The bit layout of a floating type: sign, exponent and mantissa fields with an exponent bias."""

    exponent_bits: int
    mantissa_bits: int
    bias: int
    # E4M3FN spends the all-ones exponent on finite values: only S.1111.111 is NaN and there is no inf.
    finite_only: bool = False


@dataclass(frozen=True)
class ElementType:
    """One element type: its request name, its storage in numpy and C, and a floating type's bits."""

    name: str
    numpy: Any
    # The C type a pointer or scalar of this type is declared with; None for a storage-only type,
    # which C reaches through a typedef of its bits that the ABI names (CNames.c_type).
    c_type: str | None
    # The C type a buffer element or struct member of this type is accessed through: half and
    # storage-only types as their bits, which have the same size and alignment.
    storage_c_type: str
    size: int
    alignment: int
    float_bits: FloatBits | None = None
    complex: bool = False
    real_part: str | None = None

    @property
    def floating(self) -> bool:
        """Whether this is a floating type (a cast may target it); complex types are not."""
        return self.float_bits is not None

    @property
    def numpy_dtype(self) -> np.dtype[Any]:
        return np.dtype(self.numpy)


def _scalar(
    name: str,
    numpy_type: Any,
    c_type: str | None,
    float_bits: FloatBits | None = None,
    storage_c_type: str | None = None,
) -> ElementType:
    dtype = np.dtype(numpy_type)
    storage = storage_c_type or c_type
    if storage is None:
        raise ValueError(f"element type {name}: a storage-only type needs its storage C type")
    return ElementType(
        name=name,
        numpy=numpy_type,
        c_type=c_type,
        storage_c_type=storage,
        size=dtype.itemsize,
        alignment=dtype.alignment,
        float_bits=float_bits,
    )


def _complex(name: str, numpy_type: Any, c_type: str, real_part: str) -> ElementType:
    """A complex type: its parts are `real_part` values; no cast targets it (not floating)."""
    return replace(_scalar(name, numpy_type, c_type), complex=True, real_part=real_part)


# The floating layouts: IEEE 754 binary64, binary32, binary16; bfloat16 (binary32's exponent with 7
# mantissa bits); OCP 8-bit floating point (OFP8) E4M3FN and E5M2, as ml_dtypes implements them.
ELEMENT_TYPES: dict[str, ElementType] = {
    entry.name: entry
    for entry in (
        _scalar("fp64", np.float64, "double", FloatBits(11, 52, 1023)),
        _scalar("fp32", np.float32, "float", FloatBits(8, 23, 127)),
        _scalar("fp16", np.float16, "_Float16", FloatBits(5, 10, 15), "uint16_t"),
        _scalar("bf16", ml_dtypes.bfloat16, None, FloatBits(8, 7, 127), "uint16_t"),
        _scalar(
            "fp8_e4m3",
            ml_dtypes.float8_e4m3fn,
            None,
            FloatBits(4, 3, 7, finite_only=True),
            "uint8_t",
        ),
        _scalar("fp8_e5m2", ml_dtypes.float8_e5m2, None, FloatBits(5, 2, 15), "uint8_t"),
        _scalar("int8", np.int8, "int8_t"),
        _scalar("int16", np.int16, "int16_t"),
        _scalar("int32", np.int32, "int32_t"),
        _scalar("int64", np.int64, "int64_t"),
        _scalar("uint8", np.uint8, "uint8_t"),
        _scalar("uint16", np.uint16, "uint16_t"),
        _scalar("uint32", np.uint32, "uint32_t"),
        _scalar("uint64", np.uint64, "uint64_t"),
        _complex("complex64", np.complex64, "float _Complex", "fp32"),
        _complex("complex128", np.complex128, "double _Complex", "fp64"),
    )
}


@dataclass(frozen=True)
class CNames:
    """The names a C text gives what C does not name: a mixed zip's struct (`zip_struct_prefix` and
    the pointer's name) and each storage-only element type (`storage_type_prefix` and the type's
    name, a typedef of its bits). relayout's own by default (RELAYOUT_C_NAMES); a caller rendering
    an ABI of its own passes its names."""

    zip_struct_prefix: str = "relayout_zip_"
    storage_type_prefix: str = "relayout_"

    def struct_type(self, pointer_name: str) -> str:
        """The typedef name of a mixed-type zip's struct."""
        return f"{self.zip_struct_prefix}{pointer_name}"

    def c_type(self, name: str) -> str:
        """The C type a pointer or scalar of element type `name` is declared with."""
        return element_type(name).c_type or f"{self.storage_type_prefix}{name}"

    def storage_typedefs(self) -> str:
        """One typedef line per storage-only type, naming its bits (needs <stdint.h>)."""
        return "".join(
            f"typedef {entry.storage_c_type} {self.c_type(entry.name)};\n"
            for entry in ELEMENT_TYPES.values()
            if entry.c_type is None
        )


RELAYOUT_C_NAMES = CNames()
"""relayout's own C names: `relayout_zip_<pointer>` structs, `relayout_bf16`, `relayout_fp8_e4m3`, ..."""


def element_type(name: str) -> ElementType:
    """The ElementType of a name; ValueError listing the known names otherwise."""
    try:
        return ELEMENT_TYPES[name]
    except KeyError:
        known = ", ".join(ELEMENT_TYPES)
        raise ValueError(f"unknown element type {name!r} (known: {known})") from None
