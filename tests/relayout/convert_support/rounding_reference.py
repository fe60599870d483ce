"""An integer-and-rational rounding oracle for the narrow precisions, written apart from relayout.dtypes.

The formats are described here from their definitions (sign, exponent field, mantissa field, bias),
every value is an exact Fraction, and rounding compares a double against the exact midpoint of its
two neighbouring representable values; ties go to the even encoding. Also: the input sets the issue
names (every value, both neighbouring midpoints, each midpoint +- 1 ulp, specials, random doubles).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cache

import numpy as np


@dataclass(frozen=True)
class Format:
    """A binary floating format from its definition."""

    bits: int
    exponent_bits: int
    mantissa_bits: int
    bias: int
    ieee_specials: bool  # False: OCP E4M3FN, where only all-ones is NaN and there is no inf

    def value(self, encoding: int) -> Fraction | None:
        """The exact value of a magnitude encoding (sign bit clear); None for inf and NaN."""
        exponent_field = encoding >> self.mantissa_bits
        mantissa = encoding & ((1 << self.mantissa_bits) - 1)
        all_ones = (1 << self.exponent_bits) - 1
        if self.ieee_specials and exponent_field == all_ones:
            return None
        if not self.ieee_specials and encoding == (1 << (self.bits - 1)) - 1:
            return None
        if exponent_field == 0:
            return Fraction(mantissa, 1 << self.mantissa_bits) * Fraction(2) ** (1 - self.bias)
        significand = Fraction((1 << self.mantissa_bits) + mantissa, 1 << self.mantissa_bits)
        return significand * Fraction(2) ** (exponent_field - self.bias)

    def next_value_after_max(self) -> Fraction:
        """The value one ulp above the largest finite one: where the overflow midpoint sits."""
        largest = self.finite_magnitudes()[-1]
        top_exponent = math.floor(math.log2(largest))
        return largest + Fraction(2) ** (top_exponent - self.mantissa_bits)

    @cache  # noqa: B019 - formats are a handful of frozen constants
    def finite_magnitudes(self) -> list[Fraction]:
        """Every finite non-negative value, in encoding order (which is value order)."""
        values = []
        for encoding in range(1 << (self.bits - 1)):
            value = self.value(encoding)
            if value is None:
                break
            values.append(value)
        return values


FORMATS = {
    "fp32": Format(32, 8, 23, 127, True),
    "fp16": Format(16, 5, 10, 15, True),
    "bf16": Format(16, 8, 7, 127, True),
    "fp8_e4m3": Format(8, 4, 3, 7, False),
    "fp8_e5m2": Format(8, 5, 2, 15, True),
}
TABLE_FORMATS = ("fp16", "bf16", "fp8_e4m3", "fp8_e5m2")


def storage(fmt: Format) -> type[np.unsignedinteger]:
    return {8: np.uint8, 16: np.uint16, 32: np.uint32}[fmt.bits]


@cache
def magnitude_table(name: str) -> tuple[np.ndarray, float]:
    """The finite magnitudes as doubles (exact) and the value one ulp past the largest."""
    fmt = FORMATS[name]
    values = np.array([float(v) for v in fmt.finite_magnitudes()], dtype=np.float64)
    return values, float(fmt.next_value_after_max())


def round_by_table(x: np.ndarray, name: str) -> np.ndarray:
    """The encoding nearest each double, ties to even; for table-sized formats (<= 16 bits).

    Overflow is the encoding just past the largest finite one, which is inf for IEEE formats and NaN
    for E4M3FN; NaN inputs give the all-ones-exponent quiet NaN (only its NaN-ness is compared).
    """
    fmt = FORMATS[name]
    table, past_max = magnitude_table(name)
    extended = np.append(table, past_max)
    magnitude = np.abs(x)
    below = np.searchsorted(table, magnitude, side="right") - 1
    below = np.clip(below, 0, len(table) - 1)
    # Neighbouring values have few significant bits, so their midpoint is an exact double.
    midpoint = (extended[below] + extended[below + 1]) / 2
    encoding = np.where(magnitude > midpoint, below + 1, below)
    tie = magnitude == midpoint
    encoding = np.where(tie & (below % 2 == 1), below + 1, encoding)
    nan_encoding = (1 << (fmt.bits - 1)) - 1
    encoding = np.where(np.isnan(x), nan_encoding, encoding)
    sign = np.signbit(x).astype(np.int64) << (fmt.bits - 1)
    return (encoding.astype(np.int64) | sign).astype(storage(fmt))


def round_by_fractions(x: float, name: str) -> int:
    """The encoding nearest one double, by exact rational arithmetic (any format, slow)."""
    fmt = FORMATS[name]
    sign = (1 << (fmt.bits - 1)) if math.copysign(1.0, x) < 0 else 0
    if math.isnan(x):
        return sign | ((1 << (fmt.bits - 1)) - 1)
    overflow = (
        len(fmt.finite_magnitudes())
        if fmt.bits <= 16
        else ((1 << fmt.exponent_bits) - 1) << fmt.mantissa_bits
    )
    if math.isinf(x):
        return sign | overflow
    q = abs(Fraction(x))
    min_exponent = 1 - fmt.bias
    exponent = max(math.floor(math.log2(q)) if q else min_exponent, min_exponent)
    # math.log2 of a Fraction can be off by one near powers of two: settle it exactly.
    while exponent > min_exponent and q < Fraction(2) ** exponent:
        exponent -= 1
    while q >= Fraction(2) ** (exponent + 1):
        exponent += 1
    quantum = Fraction(2) ** (exponent - fmt.mantissa_bits)
    steps = q / quantum
    whole = math.floor(steps)
    rest = steps - whole
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and whole % 2 == 1):
        whole += 1
    if exponent == min_exponent and whole < (1 << fmt.mantissa_bits):
        encoding = whole
    else:
        encoding = ((exponent + fmt.bias) << fmt.mantissa_bits) + whole - (1 << fmt.mantissa_bits)
    return sign | min(encoding, overflow)


def decode(bits: np.ndarray, name: str) -> np.ndarray:
    """Exact doubles of stored encodings (NaN for NaN, +-inf for inf), from the definition."""
    fmt = FORMATS[name]
    table, _ = magnitude_table(name)
    magnitude = bits.astype(np.int64) & ((1 << (fmt.bits - 1)) - 1)
    inside = magnitude < len(table)
    values = np.where(inside, table[np.minimum(magnitude, len(table) - 1)], np.nan)
    if fmt.ieee_specials:
        values = np.where(magnitude == len(table), np.inf, values)
    negative = (bits.astype(np.int64) >> (fmt.bits - 1)) & 1
    return np.where(negative == 1, -values, values)


def boundary_inputs(name: str) -> np.ndarray:
    """Every representable value of `name`, both neighbouring midpoints, each midpoint +- 1 ulp of
    the double, the subnormal and overflow thresholds, and the specials, both signs."""
    table, past_max = magnitude_table(name)
    extended = np.append(table, past_max)
    midpoints = (extended[:-1] + extended[1:]) / 2
    pieces = [
        table,
        midpoints,
        np.nextafter(midpoints, np.inf),
        np.nextafter(midpoints, -np.inf),
        np.nextafter(table, np.inf),
        np.nextafter(table, -np.inf),
        np.array([past_max, np.nextafter(past_max, np.inf), np.nextafter(past_max, 0)]),
    ]
    return with_specials(np.concatenate(pieces))


def with_specials(values: np.ndarray) -> np.ndarray:
    specials = np.array(
        [
            0.0,
            np.inf,
            np.nan,
            5e-324,
            2.2250738585072014e-308,
            1.7976931348623157e308,
            1.401298464324817e-45,
            0.7006492321624085e-45,
            3.4028234663852886e38,
            float.fromhex("0x1.ffffffp127"),
            float.fromhex("0x1.fffffefffffffp127"),
        ]
    )
    both = np.concatenate([values, specials])
    return np.concatenate([both, -both])


def random_doubles(count: int, seed: int, name: str) -> np.ndarray:
    """Doubles that hit every part of a format: random bit patterns, values across its exponent
    range, and values a few ulps of the double from its midpoints."""
    rng = np.random.default_rng(seed)
    third = count // 3
    bit_patterns = rng.integers(0, 2**64, size=third, dtype=np.uint64).view(np.float64)
    fmt = FORMATS[name]
    low, high = -fmt.bias - fmt.mantissa_bits - 2, (1 << fmt.exponent_bits) - fmt.bias + 1
    in_range = rng.uniform(-1, 1, size=third) * np.exp2(rng.integers(low, high, size=third))
    rest = count - 2 * third
    if fmt.bits <= 16:
        table, past_max = magnitude_table(name)
        extended = np.append(table, past_max)
        picks = rng.integers(0, len(table), size=rest)
        midpoints = (extended[picks] + extended[picks + 1]) / 2
    else:
        singles = (
            rng.uniform(1, 2, size=rest) * np.exp2(rng.integers(-149, 128, size=rest))
        ).astype(np.float32)
        midpoints = singles.astype(np.float64) + np.spacing(singles).astype(np.float64) / 2
    ulps = rng.integers(-3, 4, size=rest)
    near = midpoints + ulps * np.spacing(midpoints)
    signs = np.where(rng.integers(0, 2, size=rest) == 1, -1.0, 1.0)
    return np.concatenate([bit_patterns, in_range, near * signs])


def fp32_structured_inputs() -> np.ndarray:
    """For fp32, whose 2**32 values cannot all be listed: for every exponent field, mantissas at
    both ends and in the middle, their upper midpoints and each midpoint +- 1 ulp of the double."""
    rng = np.random.default_rng(7)
    fields = np.repeat(np.arange(0, 255), 6)
    mantissas = np.concatenate(
        [np.array([0, 1, 2, (1 << 23) - 2, (1 << 23) - 1]), rng.integers(3, (1 << 23) - 3, 1)]
    )
    mantissas = np.tile(mantissas, 255)
    bits = (fields.astype(np.uint32) << np.uint32(23)) | mantissas.astype(np.uint32)
    values = bits.view(np.float32).astype(np.float64)
    with np.errstate(over="ignore"):
        upper = np.nextafter(values.astype(np.float32), np.float32(np.inf)).astype(np.float64)
    midpoints = (values + upper) / 2
    return with_specials(
        np.concatenate(
            [
                values,
                midpoints,
                np.nextafter(midpoints, np.inf),
                np.nextafter(midpoints, -np.inf),
            ]
        )
    )
