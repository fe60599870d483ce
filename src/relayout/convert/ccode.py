"""C text shared by every generated kernel: storage typedefs and the exact cast routines.

Narrowing from double goes through float32 rounded to odd (truncate, then set the last bit when
anything was dropped), then one round-to-nearest-even to the narrow type: float32 keeps at least two
more bits than any narrow type, so the two steps give the single rounding of relayout.dtypes exactly
(the tests check this bit for bit). The same text compiles as C for the host and CUDA for a device.
"""

from __future__ import annotations

from relayout.dtypes import PRECISIONS, Precision, precision
from relayout.types import RELAYOUT_C_NAMES

# relayout's own names for the storage-only types (relayout_bf16, ...), never an ABI's: a kernel
# source that includes its ABI's typedefs as well gets no clash.
STORAGE_TYPEDEFS = (
    "#ifndef RELAYOUT_STORAGE_TYPEDEFS\n#define RELAYOUT_STORAGE_TYPEDEFS\n"
    + RELAYOUT_C_NAMES.storage_typedefs()
    + "#endif\n"
)


def _round_from_float_bits(target: Precision) -> str:
    """A C function rounding float32 bits once to `target`'s bits, ties to even, with subnormals."""
    first_unrepresentable = target.nan_bits if target.finite_only else target.inf_bits
    nan_payload = (
        ""
        if target.finite_only
        else f" | ((magnitude >> {23 - target.mantissa_bits}) & {hex((1 << target.mantissa_bits) - 1)}u)"
    )
    return f"""\
RELAYOUT_INLINE uint32_t relayout_round_f32bits_{target.name}(uint32_t bits) {{
    uint32_t sign = (bits & 0x80000000u) ? {hex(target.sign_bit)}u : 0u;
    uint32_t magnitude = bits & 0x7fffffffu;
    int32_t field = (int32_t)(magnitude >> 23);
    uint32_t significand = (magnitude & 0x7fffffu) | (field != 0 ? 0x800000u : 0u);
    int32_t exponent = (field != 0 ? field : 1) - 127;
    int32_t below_normal = {1 - target.bias} - exponent;
    int32_t shift = {23 - target.mantissa_bits} + (below_normal > 0 ? below_normal : 0);
    shift = shift < 30 ? shift : 30;
    /* ties to even without booleans (which stop GCC's vectoriser): adding half - 1 plus the kept
       last bit carries exactly when the dropped part exceeds half, or equals it on an odd kept */
    uint32_t half = 1u << (shift - 1);
    uint32_t kept = (significand + (half - 1u) + ((significand >> shift) & 1u)) >> shift;
    int32_t biased = exponent + {target.bias};
    biased = (biased > 1 ? biased : 1) - 1;
    biased = biased < 4096 ? biased : 4096;
    uint32_t encoded = ((uint32_t)biased << {target.mantissa_bits}) + kept;
    encoded = encoded >= {first_unrepresentable}u ? {target.overflow_bits}u : encoded;
    encoded = magnitude > 0x7f800000u ? ({target.nan_bits}u{nan_payload}) : encoded;
    return sign | encoded;
}}
"""


def _widen_to_float(source: Precision) -> str:
    """A C function giving the exact float32 of `source`'s bits (every narrow value is a float)."""
    all_ones = (1 << source.exponent_bits) - 1
    mantissa_mask = (1 << source.mantissa_bits) - 1
    if source.finite_only:
        special = f"(magnitude == {source.nan_bits}u)"
        special_bits = "0x7fc00000u"
    else:
        special = f"(field == {all_ones}u)"
        special_bits = f"(0x7f800000u | (mantissa << {23 - source.mantissa_bits}) | (mantissa != 0 ? 0x400000u : 0u))"
    return f"""\
RELAYOUT_INLINE float relayout_widen_{source.name}(uint32_t bits) {{
    uint32_t sign = (bits & {hex(source.sign_bit)}u) ? 0x80000000u : 0u;
    uint32_t magnitude = bits & {hex((1 << (source.bits - 1)) - 1)}u;
    uint32_t field = magnitude >> {source.mantissa_bits};
    uint32_t mantissa = magnitude & {hex(mantissa_mask)}u;
    /* subnormal: mantissa * 2**(1 - bias - mantissa_bits), exact in float */
    uint32_t subnormal_bits = relayout_float_bits((float)mantissa * {(2.0 ** (1 - source.bias - source.mantissa_bits)).hex()}f);
    uint32_t normal_bits = ((field + {127 - source.bias}u) << 23) | (mantissa << {23 - source.mantissa_bits});
    uint32_t out_bits = field == 0 ? subnormal_bits : normal_bits;
    out_bits = {special} ? {special_bits} : out_bits;
    return relayout_bits_as_float(sign | out_bits);
}}
"""


CAST_PRELUDE = (
    """\
#include <stdint.h>
#include <string.h>
#include <math.h>
#ifdef __CUDACC__
#define RELAYOUT_INLINE static __device__ __forceinline__
#else
#define RELAYOUT_INLINE static inline
#endif
"""
    + STORAGE_TYPEDEFS
    + """\
RELAYOUT_INLINE uint32_t relayout_float_bits(float value) {
#ifdef __CUDACC__
    return (uint32_t)__float_as_uint(value);
#else
    union { float value; uint32_t bits; } pun; pun.value = value; return pun.bits;
#endif
}
RELAYOUT_INLINE uint64_t relayout_double_bits(double value) {
#ifdef __CUDACC__
    return (uint64_t)__double_as_longlong(value);
#else
    union { double value; uint64_t bits; } pun; pun.value = value; return pun.bits;
#endif
}
RELAYOUT_INLINE float relayout_bits_as_float(uint32_t bits) {
#ifdef __CUDACC__
    return __uint_as_float(bits);
#else
    union { float value; uint32_t bits; } pun; pun.bits = bits; return pun.value;
#endif
}
/* float32 bits of x rounded to odd: exact for the narrow types, which keep >= 2 fewer bits.
   The doubles are compared through their bits, which stays branch-free and vectorises. */
RELAYOUT_INLINE uint32_t relayout_f64_to_f32_odd(double x) {
    float nearest = (float)x;
    uint64_t x_bits = relayout_double_bits(x);
    uint64_t back_bits = relayout_double_bits((double)nearest);
    uint32_t bits = relayout_float_bits(nearest);
    uint32_t inexact = back_bits != x_bits;
    /* rounded away from zero: step back one ulp (magnitude bits order like magnitudes) */
    uint32_t overshot = (back_bits & 0x7fffffffffffffffull) > (x_bits & 0x7fffffffffffffffull);
    return (bits - (overshot & inexact)) | inexact;
}
"""
    + "".join(
        _round_from_float_bits(PRECISIONS[n]) for n in ("fp16", "bf16", "fp8_e4m3", "fp8_e5m2")
    )
    + "".join(_widen_to_float(PRECISIONS[n]) for n in ("fp16", "bf16", "fp8_e4m3", "fp8_e5m2"))
)
"""Typedefs and cast routines every kernel source starts with (after expr.C_PRELUDE)."""


def storage_c_type(name: str) -> str:
    """The C type a kernel buffer of precision `name` is accessed through (bits for half types)."""
    return precision(name).storage_c_type


def narrow_expression(source: str, target: str, value: str) -> str:
    """C text rounding `value` (a C expression of precision `source`, fp64 or fp32) once to
    `target`, as `target`'s storage type."""
    if source == target:
        return value
    if target == "fp64":
        raise ValueError(f"a cast from {source} to fp64 widens: use widen_expression")
    if source not in ("fp64", "fp32"):
        raise ValueError(f"narrowing starts from fp64 or fp32, not {source}")
    if target == "fp32":
        if source != "fp64":
            raise ValueError(f"cannot narrow {source} to fp32")
        return f"((float)({value}))"
    float_bits = (
        f"relayout_f64_to_f32_odd({value})" if source == "fp64" else f"relayout_float_bits({value})"
    )
    return f"(({storage_c_type(target)})relayout_round_f32bits_{target}({float_bits}))"


def widen_expression(source: str, target: str, value: str) -> str:
    """C text giving `value` (storage of precision `source`) exactly at precision `target`."""
    if source == target:
        return value
    if source == "fp64":
        raise ValueError(f"fp64 does not widen to {target}")
    if source == "fp32":
        return f"((double)({value}))" if target == "fp64" else value
    widened = f"relayout_widen_{source}((uint32_t)({value}))"
    return f"((double){widened})" if target == "fp64" else widened


def problem_c_type(name: str) -> str:
    """The C type of a problem-precision array (fp64 or fp32)."""
    if name not in ("fp64", "fp32"):
        raise ValueError(f"a problem array is fp64 or fp32, not {name}")
    return precision(name).storage_c_type


def convert_expression(source: str, target: str, value: str) -> str:
    """C text converting `value` (storage of precision `source`) to `target`'s storage with one
    rounding from the exact value: exact widening where `target` holds every `source` value,
    else widening to double (exact) and one narrowing."""
    if source == target:
        return value
    exact_widening = (source != "fp64" and target == "fp64") or (
        source not in ("fp64", "fp32") and target == "fp32"
    )
    if exact_widening:
        return widen_expression(source, target, value)
    if source not in ("fp64", "fp32"):
        value = widen_expression(source, "fp64", value)
        source = "fp64"
    return narrow_expression(source, target, value)
