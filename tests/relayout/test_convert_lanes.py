"""The AVX2 lanes of the narrowing cast kernels give the scalar routine's bits exactly (NaN payloads
included), at every length and alignment, and each build reports the path it compiled."""

from __future__ import annotations

import ctypes
import platform
from pathlib import Path

import numpy as np
import pytest

from relayout.convert.build import Toolchain, load_library
from relayout.convert.casts import STREAM_BYTES, aligned_empty, cast_in, cast_library, lane_pairs
from relayout.dtypes import precision
from tests.relayout.convert_support.rounding_reference import (
    TABLE_FORMATS,
    boundary_inputs,
    fp32_structured_inputs,
    random_doubles,
)
from tests.relayout.test_convert_build import run_sanitizer_clean

SCALAR = Toolchain.from_environment(native=False, extra=("-DRELAYOUT_SCALAR_CASTS",))
AVX2 = Toolchain.from_environment(native=False, extra=("-mavx2", "-mf16c"))


def cpu_has_avx2_and_f16c() -> bool:
    if platform.machine() not in ("x86_64", "AMD64"):
        return False
    try:
        flags = set(Path("/proc/cpuinfo").read_text().split())
    except OSError:
        return False
    return {"avx2", "f16c"} <= flags


needs_avx2 = pytest.mark.skipif(
    not cpu_has_avx2_and_f16c(),
    reason="this CPU lacks AVX2 or F16C, so the lane build cannot run here",
)


def double_patterns(count: int, seed: int) -> np.ndarray:
    """Doubles whose bits below float32's last place (where the scalar route rounds to odd) are
    each boundary case: zero, one, just under, at and just over half, all ones; every exponent."""
    rng = np.random.default_rng(seed)
    high = rng.integers(0, 2**64, size=count, dtype=np.uint64) & ~np.uint64((1 << 29) - 1)
    half = np.uint64(1 << 28)
    lows = np.array([0, 1, half - 1, half, half + 1, 2 * half - 1], dtype=np.uint64)
    return (high | lows[rng.integers(0, len(lows), size=count)]).view(np.float64)


def float_patterns(count: int, seed: int) -> np.ndarray:
    """float32s whose dropped bits (13 to 30 of them: every normal and subnormal case of the narrow
    types) are each boundary case of the round-to-nearest-even step."""
    rng = np.random.default_rng(seed)
    dropped = rng.integers(13, 31, size=count).astype(np.uint64)
    high = rng.integers(0, 2**32, size=count, dtype=np.uint64) >> dropped << dropped
    half = np.uint64(1) << (dropped - np.uint64(1))
    lows = np.stack(
        [np.zeros_like(half), np.ones_like(half), half - 1, half, half + 1, 2 * half - 1]
    )
    low = lows[rng.integers(0, len(lows), size=count), np.arange(count)]
    return (high | low).astype(np.uint32).view(np.float32)


def nan_doubles() -> np.ndarray:
    """NaNs of both signs whose payloads sit in the float's kept bits, its dropped bits or both."""
    payloads = [1, 1 << 28, 1 << 29, (1 << 29) - 1, 1 << 50, 1 << 51, (1 << 52) - 1, 0x5A5A5A5A5]
    bits = [0x7FF0000000000000 | p for p in payloads]
    return np.array(bits + [b | (1 << 63) for b in bits], dtype=np.uint64).view(np.float64)


def nan_floats() -> np.ndarray:
    payloads = [1, 1 << 12, 1 << 13, 1 << 16, 1 << 21, 1 << 22, (1 << 23) - 1, 0x2A5A5A]
    bits = [0x7F800000 | p for p in payloads]
    return np.array(bits + [b | (1 << 31) for b in bits], dtype=np.uint32).view(np.float32)


def lane_inputs(source: str, target: str) -> np.ndarray:
    """Every boundary of `target`, the structured float32s, NaNs and random values in `source`,
    13 more than a multiple of 16 so the scalar tail runs as well."""
    if source == "fp64":
        parts = [
            boundary_inputs(target),
            fp32_structured_inputs(),
            nan_doubles(),
            random_doubles(150_000, seed=31, name=target),
            double_patterns(150_000, seed=32),
        ]
        values = np.concatenate(parts)
    else:
        with np.errstate(over="ignore", invalid="ignore"):
            parts = [
                boundary_inputs(target).astype(np.float32),
                fp32_structured_inputs().astype(np.float32),
                random_doubles(150_000, seed=33, name=target).astype(np.float32),
            ]
        values = np.concatenate([*parts, nan_floats(), float_patterns(150_000, seed=34)])
    return values[: len(values) // 16 * 16 + 13]


def narrowed_bits(values: np.ndarray, target: str, toolchain: Toolchain) -> np.ndarray:
    return cast_in(values, target, toolchain=toolchain).view(precision(target).storage_dtype)


def test_every_lane_target_is_a_narrow_type_of_both_problem_precisions() -> None:
    assert sorted(lane_pairs()) == sorted(
        (source, target) for source in ("fp64", "fp32") for target in TABLE_FORMATS
    )


def test_the_scalar_build_compiles_no_lanes() -> None:
    assert cast_library(SCALAR).relayout_cast_lanes() == 1


@needs_avx2
def test_an_avx2_build_converts_in_lanes() -> None:
    assert cast_library(AVX2).relayout_cast_lanes() == 8


@needs_avx2
def test_the_default_build_uses_the_lanes_on_an_avx2_machine() -> None:
    default = Toolchain.from_environment()
    if not default.native:
        pytest.skip("RELAYOUT_NATIVE=0: the default build targets no particular CPU")
    assert cast_library(default).relayout_cast_lanes() == 8


@needs_avx2
@pytest.mark.parametrize(("source", "target"), lane_pairs())
def test_lanes_give_the_scalar_bits_exactly(source: str, target: str) -> None:
    values = lane_inputs(source, target)
    got = narrowed_bits(values, target, AVX2)
    want = narrowed_bits(values, target, SCALAR)
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, list(zip(values[bad][:5], got[bad][:5], want[bad][:5], strict=True))


@needs_avx2
@pytest.mark.parametrize(("source", "target"), lane_pairs())
def test_lanes_at_every_short_length_and_offset(source: str, target: str) -> None:
    values = lane_inputs(source, target)[:4096]
    for length in range(0, 41):
        for offset in (0, 1, 3):
            start = 100 * length + offset
            piece = values[start : start + length]
            out = aligned_empty(length + 1, precision(target).numpy_dtype)[1:]
            cast_in(piece, target, out=out, toolchain=AVX2)
            want = narrowed_bits(piece, target, SCALAR)
            assert np.array_equal(out.view(precision(target).storage_dtype), want), (length, offset)


@needs_avx2
@pytest.mark.parametrize(("source", "target"), lane_pairs())
def test_streaming_stores_past_the_cache_give_the_same_bits(source: str, target: str) -> None:
    per_element = precision(source).itemsize + precision(target).itemsize
    values = np.resize(lane_inputs(source, target), STREAM_BYTES // per_element + 1013)
    got = narrowed_bits(values, target, AVX2)
    assert np.array_equal(got, narrowed_bits(values, target, SCALAR))


# Sets MXCSR in every OpenMP thread, runs a cast kernel, then sets the default mode back.
IN_MODE = """
#include <immintrin.h>
#include <stdint.h>
typedef void (*relayout_cast_kernel)(const void *, void *, int64_t);
static void relayout_mode_everywhere(unsigned int mode) {
    #pragma omp parallel
    _mm_setcsr(mode);
}
void relayout_cast_in_mode(relayout_cast_kernel kernel, unsigned int mode, const void *src,
                           void *dst, int64_t n) {
    relayout_mode_everywhere(mode);
    kernel(src, dst, n);
    relayout_mode_everywhere(0x1f80);
}
"""
# Round toward zero, flush to zero, denormals are zero, exceptions masked.
HOSTILE_MODE = 0x7FC0 | 0x8000


@needs_avx2
@pytest.mark.parametrize(("source", "target"), lane_pairs())
def test_lanes_ignore_the_callers_floating_point_mode(source: str, target: str) -> None:
    values = lane_inputs(source, target)[:200_000]
    kernel = getattr(cast_library(AVX2), f"relayout_cast_{source}_to_{target}")
    out = aligned_empty(len(values), precision(target).storage_dtype)
    load_library(IN_MODE, AVX2).relayout_cast_in_mode(
        ctypes.cast(kernel, ctypes.c_void_p),
        ctypes.c_uint(HOSTILE_MODE),
        ctypes.c_void_p(values.ctypes.data),
        ctypes.c_void_p(out.ctypes.data),
        ctypes.c_int64(len(values)),
    )
    assert np.array_equal(out, narrowed_bits(values, target, SCALAR))


SANITIZED_CASTS = """
import numpy as np
from relayout.convert.casts import STREAM_BYTES, cast_in, lane_pairs
from relayout.convert.build import Toolchain
from relayout.convert.program import SANITIZE_FLAGS
from relayout.dtypes import precision
chain = Toolchain.from_environment(extra=SANITIZE_FLAGS)
values = np.random.default_rng(4).standard_normal(STREAM_BYTES // 5 + 17) * 1e3
for source, target in lane_pairs():
    streamed = STREAM_BYTES // (precision(source).itemsize + precision(target).itemsize) + 17
    for length in (0, 5, 8, 15, 16, 17, 40_001, 70_000, streamed):
        piece = values[:length].astype(precision(source).numpy_dtype)
        exact = np.empty(length, dtype=precision(target).numpy_dtype)
        cast_in(piece, target, out=exact, toolchain=chain)
print("SANITIZED-OK")
"""


def test_sanitized_cast_kernels_report_nothing(tmp_path: Path) -> None:
    run_sanitizer_clean(SANITIZED_CASTS, tmp_path)
