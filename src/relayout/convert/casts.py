"""Plain cast kernels: a whole contiguous array narrowed or widened in one OpenMP loop per type pair.

These are the fast paths of a cast with no layout change (and the benchmark's copy bound). The
narrowing to fp16, bf16 and fp8 runs simd.py's AVX2 lanes where the build targets AVX2 (GCC's own
vectorisation of ccode.py's routines is compute bound there, at half the lanes' rate or less) and
ccode.py's branch-free scalar routines elsewhere; fp64 to fp32 and the widenings vectorise as plain
C, fp32 to fp64 past the last-level cache in AVX lanes with streaming stores. `convert_plain` picks
the copy, narrowing or widening kernel for a pair of arrays (a program's plain steps, both ways).
Loops are scheduled dynamically in chunks of 32768 elements (the copy in 256 KiB pieces): on a
shared machine a thread that loses its core hands its chunks to the others instead of holding up
the whole loop.
"""

from __future__ import annotations

import ctypes
import time
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt

from relayout.convert.build import Toolchain, load_library
from relayout.convert.ccode import CAST_PRELUDE, narrow_expression, widen_expression
from relayout.convert.simd import (
    LANE_TARGETS,
    SIMD_GUARD,
    lane_routines,
    narrow_run_name,
    streams,
)
from relayout.dtypes import precision, precision_of_dtype

PROBLEM_PRECISIONS = ("fp64", "fp32")
NARROW_PRECISIONS = ("fp32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2")
ALIGNMENT = 64
CHUNK = 32768  # elements a thread takes at a time
# A narrowing cast moving more bytes than this (source and target together, this machine's 32 MiB
# last-level cache) writes its target with streaming stores where it runs in AVX2 lanes: its first
# results would leave the cache before it ends, so the stores skip reading the lines they fill.
STREAM_BYTES = 32 << 20
# A copy smaller than this is numpy's on the calling thread: the OpenMP copy's call costs more.
SMALL_COPY_BYTES = 1 << 16


def aligned_empty(shape: tuple[int, ...] | int, dtype: npt.DTypeLike) -> npt.NDArray[Any]:
    """An uninitialised C-ordered array whose data starts on a 64-byte boundary."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    wanted = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * wanted.itemsize
    raw = np.empty(nbytes + ALIGNMENT, dtype=np.uint8)
    start = (-raw.ctypes.data) % ALIGNMENT
    return raw[start : start + nbytes].view(wanted).reshape(shape)


def aligned_zeros(shape: tuple[int, ...] | int, dtype: npt.DTypeLike) -> npt.NDArray[Any]:
    array = aligned_empty(shape, dtype)
    array.view(np.uint8).fill(0) if array.size else None
    return array


def cast_pairs() -> list[tuple[str, str]]:
    return [(s, t) for s in PROBLEM_PRECISIONS for t in NARROW_PRECISIONS if s != t]


def lane_pairs() -> list[tuple[str, str]]:
    """The cast pairs converted by simd.py's run functions (all but fp64 to fp32, which vectorises
    as plain C)."""
    return [(s, t) for s, t in cast_pairs() if t in LANE_TARGETS]


def _narrow_kernel(source: str, target: str) -> str:
    src_type = precision(source).storage_c_type
    dst_type = precision(target).storage_c_type
    if (source, target) not in lane_pairs():
        body = f"""\
    #pragma omp parallel for simd schedule(dynamic, {CHUNK})
    for (int64_t i = 0; i < n; ++i) dst[i] = {narrow_expression(source, target, "src[i]")};"""
    else:
        body = f"""\
    const int stream = relayout_streams(dst, n * (int64_t)(sizeof *src + sizeof *dst));
    const int64_t pieces = (n + {CHUNK} - 1) / {CHUNK};
    #pragma omp parallel for schedule(dynamic, 1)
    for (int64_t k = 0; k < pieces; ++k) {{
        const int64_t start = k * {CHUNK};
        const int64_t length = n - start < {CHUNK} ? n - start : {CHUNK};
        {narrow_run_name(source, target)}(src + start, dst + start, length, stream);
    }}"""
    return f"""
void relayout_cast_{source}_to_{target}(const {src_type} *restrict src, {dst_type} *restrict dst, int64_t n) {{
{body}
}}
"""


# fp32 to fp64 past STREAM_BYTES: converted in AVX lanes and written with streaming stores (a
# widening writes twice the bytes it reads; a store that first reads the line it fills would add
# another read of those). The conversion is the C cast's own instruction, so the bits are the same.
WIDEN_FP32_RUN = """
static inline void relayout_widen_run_fp32_to_fp64(const float *restrict src, double *restrict dst, int64_t n, int stream) {
    int64_t i = 0;
#ifdef RELAYOUT_AVX2_CASTS
    if (stream) {
        for (; i < n && (uintptr_t)(dst + i) % 32 != 0; ++i) dst[i] = (double)src[i];
        for (; i + 8 <= n; i += 8) {
            _mm256_stream_pd(dst + i, _mm256_cvtps_pd(_mm_loadu_ps(src + i)));
            _mm256_stream_pd(dst + i + 4, _mm256_cvtps_pd(_mm_loadu_ps(src + i + 4)));
        }
        _mm_sfence();
    }
#else
    (void)stream;
#endif
    #pragma omp simd
    for (int64_t j = i; j < n; ++j) dst[j] = (double)src[j];
}
"""


def _widen_kernel(source: str, target: str) -> str:
    src_type = precision(source).storage_c_type
    dst_type = precision(target).storage_c_type
    if (source, target) == ("fp32", "fp64"):
        return f"""
void relayout_widen_fp32_to_fp64(const float *restrict src, double *restrict dst, int64_t n) {{
    const int stream = relayout_streams(dst, n * (int64_t)(sizeof *src + sizeof *dst));
    const int64_t pieces = (n + {CHUNK} - 1) / {CHUNK};
    #pragma omp parallel for schedule(dynamic, 1)
    for (int64_t k = 0; k < pieces; ++k) {{
        const int64_t start = k * {CHUNK};
        const int64_t length = n - start < {CHUNK} ? n - start : {CHUNK};
        relayout_widen_run_fp32_to_fp64(src + start, dst + start, length, stream);
    }}
}}
"""
    return f"""
void relayout_widen_{source}_to_{target}(const {src_type} *restrict src, {dst_type} *restrict dst, int64_t n) {{
    #pragma omp parallel for simd schedule(dynamic, {CHUNK})
    for (int64_t i = 0; i < n; ++i) dst[i] = {widen_expression(source, target, "src[i]")};
}}
"""


COPY_KERNEL = """
void relayout_copy_bytes(const uint8_t *restrict src, uint8_t *restrict dst, int64_t n) {
    const int64_t piece = (int64_t)1 << 18;
    const int64_t pieces = (n + piece - 1) / piece;
    #pragma omp parallel for schedule(dynamic, 1)
    for (int64_t k = 0; k < pieces; ++k) {
        const int64_t start = k * piece;
        const int64_t length = n - start < piece ? n - start : piece;
        memcpy(dst + start, src + start, (size_t)length);
    }
}
"""


# How many elements the narrowing runs convert at a time: 8 where the AVX2 lanes were compiled.
LANES_KERNEL = """
int relayout_cast_lanes(void) {
#ifdef RELAYOUT_AVX2_CASTS
    return 8;
#else
    return 1;
#endif
}
"""


def cast_source() -> str:
    """The C text of every plain cast kernel and the copy kernel."""
    parts = [
        "#include <omp.h>\n",
        CAST_PRELUDE,
        SIMD_GUARD,
        LANES_KERNEL,
        streams(STREAM_BYTES),
        lane_routines(lane_pairs()),
        WIDEN_FP32_RUN,
        COPY_KERNEL,
    ]
    for source, target in cast_pairs():
        parts.append(_narrow_kernel(source, target))
        parts.append(_widen_kernel(target, source))
    return "".join(parts)


@cache
def _cast_library(toolchain: Toolchain) -> ctypes.CDLL:
    return load_library(cast_source(), toolchain)


def cast_library(toolchain: Toolchain | None = None) -> ctypes.CDLL:
    """The plain cast kernels built with `toolchain` (default: the environment's), once."""
    return _cast_library(toolchain or Toolchain.from_environment())


def _pointer(array: npt.NDArray[Any]) -> ctypes.c_void_p:
    return ctypes.c_void_p(array.ctypes.data)


def _require_contiguous(array: npt.NDArray[Any], role: str) -> None:
    if not array.flags.c_contiguous:
        raise ValueError(f"{role}: the plain cast kernels need a C-contiguous array")


def _run_cast_kernel(
    name: str, source: npt.NDArray[Any], out: npt.NDArray[Any], toolchain: Toolchain | None
) -> npt.NDArray[Any]:
    """Kernel `name` of the cast library over every element of `source` into `out`."""
    kernel = getattr(cast_library(toolchain), name)
    kernel(_pointer(source), _pointer(out), ctypes.c_int64(source.size))
    return out


def cast_in(
    source: npt.NDArray[Any],
    to: str,
    out: npt.NDArray[Any] | None = None,
    toolchain: Toolchain | None = None,
) -> npt.NDArray[Any]:
    """`source` (fp64 or fp32) rounded once to precision `to`, in a 64-byte aligned buffer."""
    from_name = precision_of_dtype(source.dtype).name
    if (from_name, to) not in cast_pairs():
        raise ValueError(
            f"no cast kernel from {from_name} to {to}: casts narrow fp64 or fp32 to one of "
            + ", ".join(NARROW_PRECISIONS)
        )
    _require_contiguous(source, "source")
    target = precision(to)
    if out is None:
        out = aligned_empty(source.shape, target.numpy_dtype)
    elif out.dtype != target.numpy_dtype or out.size != source.size:
        raise ValueError(f"out: expected {source.size} elements of {target.numpy_dtype}")
    _require_contiguous(out, "out")
    return _run_cast_kernel(f"relayout_cast_{from_name}_to_{to}", source, out, toolchain)


def widen_out(
    buffer: npt.NDArray[Any], out: npt.NDArray[Any], toolchain: Toolchain | None = None
) -> npt.NDArray[Any]:
    """`buffer` of a narrow precision written exactly into `out` (fp64 or fp32), in place."""
    from_name = precision_of_dtype(buffer.dtype).name
    to = precision_of_dtype(out.dtype).name
    if (to, from_name) not in cast_pairs():
        raise ValueError(f"no widening kernel from {from_name} to {to}")
    if out.size != buffer.size:
        raise ValueError(f"out has {out.size} elements, the buffer {buffer.size}")
    _require_contiguous(buffer, "buffer")
    _require_contiguous(out, "out")
    return _run_cast_kernel(f"relayout_widen_{from_name}_to_{to}", buffer, out, toolchain)


@cache
def plain_kernel(source: np.dtype[Any], target: np.dtype[Any]) -> str | None:
    """The cast library's kernel taking every element of a `source` array to `target` exactly
    (the single rounding of a narrowing, the exact value of a widening), None for a pair it lacks:
    the same dtype is copy_bytes' to move."""
    try:
        from_name, to_name = precision_of_dtype(source).name, precision_of_dtype(target).name
    except (KeyError, ValueError):
        return None
    if (from_name, to_name) in cast_pairs():
        return f"relayout_cast_{from_name}_to_{to_name}"
    if (to_name, from_name) in cast_pairs():
        return f"relayout_widen_{from_name}_to_{to_name}"
    return None


def convert_plain(
    source: npt.NDArray[Any], out: npt.NDArray[Any], toolchain: Toolchain | None = None
) -> None:
    """Every element of `source` into `out` (both C-contiguous, of one size) at `out`'s type: an
    OpenMP copy for the same type, else the cast library's narrowing or widening kernel."""
    if source.size != out.size:
        raise ValueError(f"out has {out.size} elements, the source {source.size}")
    _require_contiguous(source, "source")
    _require_contiguous(out, "out")
    if source.dtype == out.dtype:
        if source.nbytes < SMALL_COPY_BYTES or np.may_share_memory(source, out):
            np.copyto(out, source)  # memcpy's ranges must not overlap
        else:
            _copy_kernel(toolchain)(_pointer(source), _pointer(out), ctypes.c_int64(source.nbytes))
        return
    name = plain_kernel(source.dtype, out.dtype)
    if name is None:
        raise ValueError(f"no plain cast kernel from {source.dtype} to {out.dtype}")
    if source.nbytes < SMALL_COPY_BYTES and name in NUMPY_EXACT:
        # numpy's loop is the same C conversion, so the same bits, without the kernel's call.
        np.copyto(out, source, casting="unsafe")
        return
    _run_cast_kernel(name, source, out, toolchain)


# The plain kernels that are one exact C conversion (float to double; the narrowing to float
# would make numpy warn of its overflows).
NUMPY_EXACT = frozenset({"relayout_widen_fp32_to_fp64"})


def _copy_kernel(toolchain: Toolchain | None) -> Any:
    return cast_library(toolchain).relayout_copy_bytes


def copy_bytes(
    source: npt.NDArray[Any], out: npt.NDArray[Any], toolchain: Toolchain | None = None
) -> int:
    """An OpenMP memcpy of `source` into `out` (the benchmark's copy bound); its nanoseconds."""
    if source.nbytes != out.nbytes:
        raise ValueError(f"copy of {source.nbytes} bytes into {out.nbytes}")
    kernel = _copy_kernel(toolchain)
    start = time.perf_counter_ns()
    kernel(_pointer(source), _pointer(out), ctypes.c_int64(source.nbytes))
    return time.perf_counter_ns() - start
