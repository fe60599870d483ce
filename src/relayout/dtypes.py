"""Floating precisions relayout converts between (the floating entries of relayout.types' table), and
the exact rounding from double to each of them.

Narrowing rounds once, from the double, to nearest-even, with subnormals, signed zeros and NaN kept
NaN; overflow goes to inf for fp16, bf16 and fp8_e5m2 and to NaN for fp8_e4m3 (OCP E4M3FN, which has
no inf). Widening back to double is exact. These numpy routines define what every kernel must produce.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from relayout.types import ELEMENT_TYPES, ElementType


@dataclass(frozen=True)
class Precision:
    """One floating element type of relayout.types' table, as this module's bit math reads it."""

    name: str
    numpy_dtype: np.dtype[Any]
    storage_c_type: str
    bits: int
    exponent_bits: int
    mantissa_bits: int
    bias: int
    finite_only: bool

    @classmethod
    def of(cls, element: ElementType) -> Precision:
        """The precision of a floating entry of the table; ValueError for any other type."""
        layout = element.float_bits
        if layout is None:
            raise ValueError(f"{element.name} is not a floating type")
        return cls(
            name=element.name,
            numpy_dtype=element.numpy_dtype,
            storage_c_type=element.storage_c_type,
            bits=8 * element.size,
            exponent_bits=layout.exponent_bits,
            mantissa_bits=layout.mantissa_bits,
            bias=layout.bias,
            finite_only=layout.finite_only,
        )

    @property
    def storage_dtype(self) -> np.dtype[Any]:
        """The unsigned integer dtype holding this type's bits."""
        return np.dtype(f"uint{self.bits}")

    @property
    def itemsize(self) -> int:
        return self.bits // 8

    @property
    def sign_bit(self) -> int:
        return 1 << (self.bits - 1)

    @property
    def overflow_bits(self) -> int:
        """Magnitude bits a too-large finite value gets: inf, or NaN for a finite-only type."""
        return self.nan_bits if self.finite_only else self.inf_bits

    @property
    def inf_bits(self) -> int:
        """Magnitude bits of inf (for a finite-only type: the first encoding past the largest finite)."""
        return ((1 << self.exponent_bits) - 1) << self.mantissa_bits

    @property
    def nan_bits(self) -> int:
        """Magnitude bits of the NaN this module writes (quiet, no payload beyond the double's top bits)."""
        if self.finite_only:
            return (1 << (self.bits - 1)) - 1
        return self.inf_bits | (1 << (self.mantissa_bits - 1))

    @property
    def max_finite(self) -> float:
        """The largest finite value, as a double."""
        bits = (self.nan_bits - 1) if self.finite_only else (self.inf_bits - 1)
        return float(bits_to_double(np.array([bits], dtype=self.storage_dtype), self.name)[0])


PRECISIONS: dict[str, Precision] = {
    name: Precision.of(element) for name, element in ELEMENT_TYPES.items() if element.floating
}
"""Every floating precision by its request name (fp64 ... fp8_e5m2), in the table's order."""


def precision(name: str) -> Precision:
    """The precision called `name`, or a ValueError listing the accepted names."""
    try:
        return PRECISIONS[name]
    except KeyError:
        raise ValueError(
            f"unknown precision {name!r}: expected one of {', '.join(PRECISIONS)}"
        ) from None


def precision_of_dtype(dtype: npt.DTypeLike) -> Precision:
    """The precision whose numpy dtype is `dtype` (float64, float32, float16, ml_dtypes types)."""
    wanted = np.dtype(dtype)
    for p in PRECISIONS.values():
        if p.numpy_dtype == wanted:
            return p
    raise ValueError(
        f"dtype {wanted} is not a relayout precision: expected one of "
        + ", ".join(str(p.numpy_dtype) for p in PRECISIONS.values())
    )


_DOUBLE_EXPONENT_MASK = np.uint64(0x7FF0000000000000)
_DOUBLE_MAGNITUDE_MASK = np.uint64(0x7FFFFFFFFFFFFFFF)
_DOUBLE_MANTISSA_MASK = np.uint64(0x000FFFFFFFFFFFFF)


def double_to_bits(values: npt.ArrayLike, name: str) -> npt.NDArray[Any]:
    """The bits of `name` nearest each double (ties to even), in the type's unsigned storage dtype."""
    target = precision(name)
    doubles = np.ascontiguousarray(values, dtype=np.float64)
    if target.name == "fp64":
        return doubles.view(np.uint64).copy()
    raw = doubles.view(np.uint64).astype(np.int64, copy=False) & np.int64(0x7FFFFFFFFFFFFFFF)
    negative = doubles.view(np.uint64) >> np.uint64(63)
    field = raw >> 52
    is_special = field == 0x7FF
    is_nan = is_special & ((raw & np.int64(_DOUBLE_MANTISSA_MASK)) != 0)
    # value = significand * 2**(exponent - 52), the implicit bit made explicit for normal doubles.
    significand = (raw & np.int64(_DOUBLE_MANTISSA_MASK)) | np.where(
        field > 0, np.int64(1) << 52, np.int64(0)
    )
    exponent = np.maximum(field, 1) - 1023
    min_normal_exponent = 1 - target.bias
    # Bits to drop: the mantissa's surplus, plus the shortfall below the target's normal range.
    shift = (52 - target.mantissa_bits) + np.maximum(min_normal_exponent - exponent, 0)
    shift = np.minimum(shift, 60)
    kept = significand >> shift
    remainder = significand & ((np.int64(1) << shift) - 1)
    half = np.int64(1) << (shift - 1)
    round_up = (remainder > half) | ((remainder == half) & ((kept & 1) == 1))
    kept = kept + round_up
    # A carry out of the mantissa lands in the exponent field by plain addition.
    biased = np.maximum(exponent + target.bias, 1) - 1
    encoded = (np.minimum(biased, 1 << 20) << target.mantissa_bits) + kept
    first_unrepresentable = target.nan_bits if target.finite_only else target.inf_bits
    encoded = np.where(encoded >= first_unrepresentable, target.overflow_bits, encoded)
    infinite = is_special & ~is_nan
    encoded = np.where(infinite, target.overflow_bits, encoded)
    # NaN keeps its sign and top payload bits, with the quiet bit set so it stays NaN.
    payload = (raw & np.int64(_DOUBLE_MANTISSA_MASK)) >> (52 - target.mantissa_bits)
    nan_encoded = (
        np.int64(target.nan_bits) if target.finite_only else np.int64(target.nan_bits) | payload
    )
    encoded = np.where(is_nan, nan_encoded, encoded)
    signed = encoded.astype(np.uint64) | (negative << np.uint64(target.bits - 1))
    return signed.astype(target.storage_dtype)


def round_from_double(values: npt.ArrayLike, name: str) -> npt.NDArray[Any]:
    """`values` rounded once to precision `name`, as an array of that precision's numpy dtype."""
    target = precision(name)
    return double_to_bits(values, name).view(target.numpy_dtype)


def bits_to_double(bits: npt.ArrayLike, name: str) -> npt.NDArray[np.float64]:
    """The exact doubles of the stored bits of precision `name` (widening never rounds)."""
    source = precision(name)
    stored = np.ascontiguousarray(bits, dtype=source.storage_dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        return stored.view(source.numpy_dtype).astype(np.float64)


def widen_to_double(values: npt.NDArray[Any]) -> npt.NDArray[np.float64]:
    """An array of any relayout precision, exactly as doubles."""
    source = precision_of_dtype(values.dtype)
    return bits_to_double(np.ascontiguousarray(values).view(source.storage_dtype), source.name)
