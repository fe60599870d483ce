"""The exact narrowing casts in AVX2 lanes: each element rounded once to nearest-even in the adder.

The lanes reach ccode.py's result (the single rounding of relayout.dtypes) by a route that is cheap
in AVX2. Adding M, a power of two times 1 or 1.5 whose last place is 2**(e - m) (e the binary
exponent of x, m the target's mantissa bits), to x rounds it once, ties to even, to a multiple of
the target's spacing at that exponent; subtracting M again is exact. M is clamped from below to the
spacing of the target's subnormals. Past the target's range the rounded value overflows when it is
converted (to inf for the types that have one) or is clamped to the step past the largest finite
value (fp8_e4m3, whose encoding there is NaN); where M's exponent itself overflows, M's bits wrap to
a negative number or a NaN, which the clamp from below replaces, leaving x nearly unrounded and far
past the range. The rounded value is exact in float32 and, for fp16 and the fp8 types (fp8_e4m3
scaled by a power of two), in fp16, so converting it (vcvtpd2ps, F16C's vcvtps2ph) and shifting
gives the target's bits with no second rounding; bf16 is the top half of the float. fp32 to bf16
rounds the float's bits with one integer add, and fp32 to fp16 is vcvtps2ph itself, whose single
rounding is the scalar routine's.

A block of lanes holding a NaN converts through ccode.py's scalar routine, so NaN payloads are the
scalar code's too, and so do a run's last elements (fewer than a block); the casts to fp8_e4m3 and
from fp32 to fp16 and fp8_e5m2 skip that test, their lanes giving the scalar bits for NaN already.
Each run sets MXCSR to its default (ties to even, no flush to zero, exceptions masked) and restores
the caller's after, so the lanes do not depend on the caller's floating-point mode. Where the cast
moves more bytes than the last-level cache holds, the lanes write with streaming stores. The lanes
are compiled where the compiler targets AVX2 and F16C (-march=native on such a machine) and
RELAYOUT_SCALAR_CASTS is not defined; elsewhere a run is ccode.py's scalar loop alone.
"""

from __future__ import annotations

from relayout.convert.ccode import narrow_expression
from relayout.dtypes import Precision, precision

# The C preprocessor switch between the lane routines and the scalar loop.
SIMD_GUARD = """\
#if defined(__AVX2__) && defined(__F16C__) && !defined(RELAYOUT_SCALAR_CASTS)
#define RELAYOUT_AVX2_CASTS 1
#include <immintrin.h>
#endif
"""

LANE_TARGETS = ("fp16", "bf16", "fp8_e4m3", "fp8_e5m2")
"""The types with lane routines: every narrow type a cast kernel rounds to but fp32."""

# Two four-double halves as eight floats; a block's 16 bytes stored, streaming past the caches
# where the run was told to (its target is then 16-byte aligned).
PAIR_AND_STORE = """\
static inline __m256 relayout_avx2_pair(__m128 low, __m128 high) {
    return _mm256_insertf128_ps(_mm256_castps128_ps256(low), high, 1);
}
static inline void relayout_avx2_store(void *dst, __m128i bits, int stream) {
    if (stream) _mm_stream_si128((__m128i *)dst, bits);
    else _mm_storeu_si128((__m128i *)dst, bits);
}
"""


def streams(threshold: int) -> str:
    """A C function telling whether a cast of `bytes` (source and target together) into `dst`
    writes with streaming stores: with the lanes, a 16-byte aligned target, and more bytes than
    `threshold`, past which the first results leave the cache before the cast ends anyway."""
    return f"""\
static inline int relayout_streams(const void *dst, int64_t bytes) {{
#ifdef RELAYOUT_AVX2_CASTS
    return (uintptr_t)dst % 16 == 0 && bytes > {threshold};
#else
    (void)dst;
    (void)bytes;
    return 0;
#endif
}}
"""


def _grid(target: Precision, fraction_bits: int, factor: float) -> dict[str, str]:
    """The constants of the adder M = `factor` * 2**(e + p - m) rounding to `target` from a source
    with p = `fraction_bits`: what M's bits add to those of 2**e, M's least value (at the spacing
    of the subnormals) and the value past the largest finite one, where an overflow lands."""
    top_exponent = (1 << target.exponent_bits) - (1 if target.finite_only else 2) - target.bias
    offset = (fraction_bits - target.mantissa_bits) << fraction_bits
    offset += int((factor - 1) * (1 << fraction_bits))
    least = factor * 2.0 ** (1 - target.bias - target.mantissa_bits + fraction_bits)
    past_largest = target.max_finite + 2.0 ** (top_exponent - target.mantissa_bits)
    return {
        "offset": hex(offset) + ("ll" if fraction_bits > 31 else ""),
        "least": least.hex(),
        "past": past_largest.hex(),
    }


# The AVX2 spellings of one source's lanes: vector type, float and integer suffixes, the
# exponent mask, the fraction bits and a literal's suffix.
LANES = {
    "fp64": ("__m256d", "pd", "epi64", "_mm256_set1_epi64x", "0x7ff0000000000000ll", 52, ""),
    "fp32": ("__m256", "ps", "epi32", "_mm256_set1_epi32", "0x7f800000", 23, "f"),
}


def _nearest(source: str, target: Precision) -> str:
    """`source` lanes (four doubles or eight floats) rounded once to `target`'s grid.

    A target with inf rounds x itself with M = 1.5 * 2**(e + p - m): x + M stays in M's binade
    whatever x's sign, a zero takes x's sign back, and a value past the target's range stays past
    it, so that the conversion to float32 or fp16 overflows it to inf. fp8_e4m3 rounds |x| with
    M = 2**(e + p - m) and clamps to the step past its largest finite value, its NaN encoding."""
    vector, real, integer, set_integer, exponent_mask, fraction_bits, f = LANES[source]
    saturates = not target.finite_only
    grid = _grid(target, fraction_bits, 1.5 if saturates else 1.0)
    rounded = (
        f"_mm256_sub_{real}(_mm256_add_{real}(x, adder), adder)"
        if saturates
        else f"_mm256_min_{real}(_mm256_sub_{real}(_mm256_add_{real}(magnitude, adder), adder),"
        f" _mm256_set1_{real}({grid['past']}{f}))"
    )
    magnitude = (
        ""
        if saturates
        else f"    const {vector} magnitude = _mm256_andnot_{real}(_mm256_set1_{real}(-0.0{f}), x);\n"
    )
    return f"""\
static inline {vector} relayout_avx2_nearest_{target.name}_{source}({vector} x) {{
    const {vector} sign = _mm256_and_{real}(x, _mm256_set1_{real}(-0.0{f}));
{magnitude}    const __m256i scale = _mm256_add_{integer}(
        _mm256_and_si256(_mm256_cast{real}_si256(x), {set_integer}({exponent_mask})),
        {set_integer}({grid["offset"]}));
    const {vector} adder = _mm256_max_{real}(_mm256_castsi256_{real}(scale), _mm256_set1_{real}({grid["least"]}{f}));
    return _mm256_or_{real}({rounded}, sign);
}}
"""


def _encode(target: Precision) -> str:
    """Eight floats exact in `target` as its bits in eight 16-bit lanes (an fp8 in the low byte)."""
    half_bits = "_mm256_cvtps_ph(value, _MM_FROUND_TO_NEAREST_INT)"
    if target.name == "bf16":
        body = """\
    const __m256i bits = _mm256_srli_epi32(_mm256_castps_si256(value), 16);
    return _mm_packus_epi32(_mm256_castsi256_si128(bits), _mm256_extracti128_si256(bits, 1));"""
    elif target.name == "fp16":
        body = f"    return {half_bits};"
    elif target.name == "fp8_e5m2":
        # fp8_e5m2 is fp16's sign, exponent and top two mantissa bits
        body = f"    return _mm_srli_epi16({half_bits}, 8);"
    else:
        # scaled by 2**(bias - 15), an fp8_e4m3 value is an fp16 whose bits 13..7 are its
        # exponent and mantissa (bit 14 is clear) and bit 15 its sign
        scale = (2.0 ** (target.bias - 15)).hex()
        body = f"""\
    value = _mm256_mul_ps(value, _mm256_set1_ps({scale}f));
    const __m128i half = {half_bits};
    return _mm_or_si128(_mm_srli_epi16(_mm_slli_epi16(half, 1), 8),
                        _mm_and_si128(_mm_srli_epi16(half, 8), _mm_set1_epi16(0x80)));"""
    return f"""\
static inline __m128i relayout_avx2_encode_{target.name}(__m256 value) {{
{body}
}}
"""


def _lane_block(source: str, target: Precision) -> str:
    """Two C functions of the pair's blocks: eight elements of `source` at `src` as eight floats
    (from fp64 already rounded to `target`, a NaN where the element is one), and those floats (no
    NaN among them) as `target`'s bits in eight 16-bit lanes."""
    c_type = precision(source).storage_c_type
    name = target.name
    if source == "fp64":
        nearest = f"relayout_avx2_nearest_{name}_fp64"
        floats = (
            f"relayout_avx2_pair(_mm256_cvtpd_ps({nearest}(_mm256_loadu_pd(src))),"
            f" _mm256_cvtpd_ps({nearest}(_mm256_loadu_pd(src + 4))))"
        )
        bits = f"    return relayout_avx2_encode_{name}(value);"
    else:
        floats = "_mm256_loadu_ps(src)"
        if name == "fp16":
            bits = "    return _mm256_cvtps_ph(value, _MM_FROUND_TO_NEAREST_INT);"
        elif name == "bf16":
            # bf16 spans float32's exponents: the float's bits round to their top half with one add
            bits = """\
    const __m256i whole = _mm256_castps_si256(value);
    const __m256i last = _mm256_and_si256(_mm256_srli_epi32(whole, 16), _mm256_set1_epi32(1));
    const __m256i kept = _mm256_srli_epi32(
        _mm256_add_epi32(_mm256_add_epi32(whole, _mm256_set1_epi32(0x7fff)), last), 16);
    return _mm_packus_epi32(_mm256_castsi256_si128(kept), _mm256_extracti128_si256(kept, 1));"""
        else:
            bits = (
                f"    return relayout_avx2_encode_{name}(relayout_avx2_nearest_{name}_fp32(value));"
            )
    return f"""\
static inline __m256 relayout_avx2_{source}_floats_{name}(const {c_type} *src) {{
    return {floats};
}}
static inline __m128i relayout_avx2_{source}_bits_{name}(__m256 value) {{
{bits}
}}
"""


def _nan_exact(source: str, target: str) -> bool:
    """The pair's lanes give the scalar routine's bits for NaN as well, so its blocks skip the NaN
    test: a float NaN passes the adder unchanged but for its quiet bit, and F16C's quieting keeps
    its top mantissa bits, as the scalar routine does for fp16 and fp8_e5m2 (a double NaN does
    not: the scalar route's round-to-odd step can change them); fp8_e4m3's NaN is its overflow,
    where the clamp past the largest finite value sends a NaN."""
    return (source == "fp32" and target in ("fp16", "fp8_e5m2")) or target == "fp8_e4m3"


def _lane_loop(source: str, target: Precision) -> str:
    """The statements converting a run's whole blocks (8 elements to 16-bit types, 16 to fp8)."""
    floats = f"relayout_avx2_{source}_floats_{target.name}"
    bits = f"relayout_avx2_{source}_bits_{target.name}"
    if target.bits == 16:
        block, halves = 8, ["low"]
        store = f"relayout_avx2_store(dst + i, {bits}(low), stream);"
    else:
        block, halves = 16, ["low", "high"]
        store = (
            f"relayout_avx2_store(dst + i, _mm_packus_epi16({bits}(low), {bits}(high)), stream);"
        )
    values = "\n".join(
        f"        const __m256 {half} = {floats}(src + i + {8 * k});"
        for k, half in enumerate(halves)
    )
    if _nan_exact(source, target.name):
        test = ""
    else:
        nan = " | ".join(
            f"_mm256_movemask_ps(_mm256_cmp_ps({half}, {half}, _CMP_UNORD_Q))" for half in halves
        )
        test = f"""
        if ({nan}) {{
            for (int64_t j = i; j < i + {block}; ++j) dst[j] = {narrow_expression(source, target.name, "src[j]")};
            continue;
        }}"""
    return f"""\
    for (; i + {block} <= n; i += {block}) {{
{values}{test}
        {store}
    }}"""


def narrow_run_name(source: str, target: str) -> str:
    return f"relayout_narrow_run_{source}_to_{target}"


def narrow_run(source: str, target: str) -> str:
    """A C function rounding `n` contiguous elements of `source` (fp64 or fp32) once to `target`
    (fp16, bf16 or an fp8): whole blocks in lanes where compiled, the rest by the scalar routine."""
    narrow = precision(target)
    src_type = precision(source).storage_c_type
    return f"""
static inline void {narrow_run_name(source, target)}(const {src_type} *restrict src, {narrow.storage_c_type} *restrict dst, int64_t n, int stream) {{
    int64_t i = 0;
#ifdef RELAYOUT_AVX2_CASTS
    const unsigned int caller_mode = _mm_getcsr();
    _mm_setcsr(0x1f80);
{_lane_loop(source, narrow)}
#else
    (void)stream;
#endif
    #pragma omp simd
    for (int64_t j = i; j < n; ++j) dst[j] = {narrow_expression(source, target, "src[j]")};
#ifdef RELAYOUT_AVX2_CASTS
    if (stream) _mm_sfence();
    _mm_setcsr(caller_mode);
#endif
}}
"""


def lane_routines(pairs: list[tuple[str, str]]) -> str:
    """The C text of the lane routines `pairs` need (compiled only with RELAYOUT_AVX2_CASTS), then
    one run function per pair. Follows ccode.CAST_PRELUDE and SIMD_GUARD."""
    targets = [precision(t) for t in LANE_TARGETS if any(t == target for _, target in pairs)]
    lanes = [PAIR_AND_STORE]
    lanes += [_nearest("fp64", t) for t in targets if ("fp64", t.name) in pairs]
    lanes += [
        _nearest("fp32", t)
        for t in targets
        if ("fp32", t.name) in pairs and t.name in ("fp8_e4m3", "fp8_e5m2")
    ]
    lanes += [_encode(t) for t in targets]
    lanes += [_lane_block(s, precision(t)) for s, t in pairs]
    runs = [narrow_run(s, t) for s, t in pairs]
    return "#ifdef RELAYOUT_AVX2_CASTS\n" + "".join(lanes) + "#endif\n" + "".join(runs)
