"""The element type names of the request language and what each means: numpy dtype, C type, size,
alignment, whether it is floating and whether a cast may target it. Rounding lives in dtypes.py."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

import ml_dtypes
import numpy as np

__all__ = [
    "CAST_TARGETS",
    "C_RESERVED_NAMES",
    "ELEMENT_TYPES",
    "SPARSE_FORMATS",
    "CastTarget",
    "ElementType",
    "SparseFormatName",
    "c_name_problem",
    "element_type",
]

# Array and pointer names become C identifiers (parameters, struct members, hb_zip_<name>): the
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
CAST_TARGETS: tuple[str, ...] = ("fp64", "fp32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2")
# The storage formats of relayout.sparse_formats (a test keeps the two lists equal; the names live
# here so that reading a request does not import scipy).
SparseFormatName = Literal["csr", "csc", "coo", "ell", "dia", "bcsr", "jds", "sell_c_sigma"]
SPARSE_FORMATS: tuple[str, ...] = ("csr", "csc", "coo", "ell", "dia", "bcsr", "jds", "sell_c_sigma")


@dataclass(frozen=True)
class ElementType:
    """One element type: its request name and its storage in numpy and C."""

    name: str
    numpy: Any
    c_type: str
    # The C type a struct member of this type is written as: half and storage-only types are
    # written as their bits, which have the same size and alignment.
    c_member_type: str
    size: int
    alignment: int
    floating: bool
    complex: bool = False
    real_part: str | None = None

    @property
    def numpy_dtype(self) -> np.dtype[Any]:
        return np.dtype(self.numpy)


def _scalar(
    name: str,
    numpy_type: Any,
    c_type: str,
    floating: bool,
    c_member_type: str | None = None,
) -> ElementType:
    dtype = np.dtype(numpy_type)
    return ElementType(
        name=name,
        numpy=numpy_type,
        c_type=c_type,
        c_member_type=c_member_type or c_type,
        size=dtype.itemsize,
        alignment=dtype.alignment,
        floating=floating,
    )


def _complex(name: str, numpy_type: Any, c_type: str, real_part: str) -> ElementType:
    """A complex type: its parts are `real_part` values; no cast targets it (not floating)."""
    return replace(_scalar(name, numpy_type, c_type, False), complex=True, real_part=real_part)


ELEMENT_TYPES: dict[str, ElementType] = {
    entry.name: entry
    for entry in (
        _scalar("fp64", np.float64, "double", True),
        _scalar("fp32", np.float32, "float", True),
        _scalar("fp16", np.float16, "_Float16", True, "uint16_t"),
        _scalar("bf16", ml_dtypes.bfloat16, "__npb_bf16", True, "uint16_t"),
        _scalar("fp8_e4m3", ml_dtypes.float8_e4m3fn, "__npb_fp8_e4m3", True, "uint8_t"),
        _scalar("fp8_e5m2", ml_dtypes.float8_e5m2, "__npb_fp8_e5m2", True, "uint8_t"),
        _scalar("int8", np.int8, "int8_t", False),
        _scalar("int16", np.int16, "int16_t", False),
        _scalar("int32", np.int32, "int32_t", False),
        _scalar("int64", np.int64, "int64_t", False),
        _scalar("uint8", np.uint8, "uint8_t", False),
        _scalar("uint16", np.uint16, "uint16_t", False),
        _scalar("uint32", np.uint32, "uint32_t", False),
        _scalar("uint64", np.uint64, "uint64_t", False),
        _complex("complex64", np.complex64, "float _Complex", "fp32"),
        _complex("complex128", np.complex128, "double _Complex", "fp64"),
    )
}


def element_type(name: str) -> ElementType:
    """The ElementType of a name; ValueError listing the known names otherwise."""
    try:
        return ELEMENT_TYPES[name]
    except KeyError:
        known = ", ".join(ELEMENT_TYPES)
        raise ValueError(f"unknown element type {name!r} (known: {known})") from None
