"""C kernels for the sparse formats scipy lacks (ELL, JDS, SELL-C-sigma), built once and loaded.

relayout.sparse.formats keeps a vectorised numpy conversion of these three formats as the
reference and calls the kernels here instead, which write each output slot exactly once (padding
included, so outputs start uninitialised) and run their loops under OpenMP. The source is one fixed
text: sizes are run-time arguments, so a new matrix never rebuilds, and it is compiled through
relayout.convert.build's content-addressed cache. Values are moved as raw bits, one kernel per
element width (1, 2, 4, 8 or 16 bytes), so every dtype of those widths converts bit for bit: NaN
payloads and signed zeros included, padding all-zero bits (0.0 for floats). Values of another
width, object arrays and unaligned buffers are left to the numpy reference (the wrappers answer None).

Every kernel bounds-checks what it computes: a source position against nnz, a destination against
its buffer's extent, a rank against the rows. The CSR reaching them is canonical by
construction, so a check that fails means a bug or a hand-made, invalid CSR; the kernel then skips
that row, counts it and returns the count, and the wrapper raises ValueError instead of returning a
half-written buffer.

Where no library can be built (no compiler on PATH, an unusable cache directory, a compiler that
cannot build OpenMP C) `library()` answers None and the callers keep to the numpy reference.
"""

from __future__ import annotations

import ctypes
import subprocess
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt

INDEX_DTYPE = np.dtype(np.int64)

# Element width in bytes -> the C type that moves one value's bits.
ELEMENT_TYPES = {
    1: "uint8_t",
    2: "uint16_t",
    4: "uint32_t",
    8: "uint64_t",
    16: "relayout_sparse_u128",
}

PRELUDE = """\
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct { uint64_t lo, hi; } relayout_sparse_u128;

/* Below this much work a loop stays on one thread: starting a team costs more than it saves. */
#define SPARSE_PARALLEL_MIN 65536
/* Rows per scheduling chunk of the fills: enough to amortise the scheduler, few enough to balance
   on a machine whose cores are shared. */
#define SPARSE_ROWS_PER_CHUNK 4096
/* Windows this short (or with this few distinct lengths) sort without heap scratch. */
#define SPARSE_SMALL 256

/* The longest row of the CSR, or -1 when indptr is not a non-decreasing run from 0 to nnz
   (then every later kernel would be handed positions outside the buffers). */
int64_t relayout_sparse_max_row(const int64_t *restrict indptr, int64_t rows, int64_t nnz) {
    if (rows < 0 || nnz < 0 || indptr[0] != 0 || indptr[rows] != nnz) return -1;
    int64_t longest = 0, bad = 0;
    #pragma omp parallel for schedule(static) reduction(max: longest) reduction(+: bad) \\
        if (rows > SPARSE_PARALLEL_MIN)
    for (int64_t r = 0; r < rows; ++r) {
        const int64_t length = indptr[r + 1] - indptr[r];
        bad += length < 0;
        longest = length > longest ? length : longest;
    }
    return bad ? -1 : longest;
}

/* Row r's extent [*lo, *lo + *length), or an empty one (and a nonzero answer) when it leaves
   [0, nnz] or is longer than `limit`. */
static inline int sparse_row(const int64_t *restrict indptr, int64_t r, int64_t nnz, int64_t limit,
                             int64_t *lo, int64_t *length) {
    const int64_t a = indptr[r], b = indptr[r + 1];
    if (a < 0 || b < a || b > nnz || b - a > limit) {
        *lo = 0;
        *length = 0;
        return 1;
    }
    *lo = a;
    *length = b - a;
    return 0;
}

/* The slots of slice s if slice_ptr describes it soundly inside [0, total): *base and *width. */
static inline int sell_slice(const int64_t *restrict slice_ptr, int64_t s, int64_t chunk,
                                  int64_t total, int64_t *base, int64_t *width) {
    const int64_t a = slice_ptr[s], b = slice_ptr[s + 1];
    if (a < 0 || b < a || b > total || (b - a) % chunk != 0) return 1;
    *base = a;
    *width = (b - a) / chunk;
    return 0;
}

/* JDS order and diagonals: a counting sort of the rows by decreasing length, stable: perm[q] is
   the row at rank q, rank[r] the rank of row r; jd_ptr[k+1] - jd_ptr[k] = the rows longer than k.
   `count` is scratch of depth + 1 entries. Serial: O(rows + depth), a small part of the fill. */
int64_t relayout_jds_plan(const int64_t *restrict indptr, int64_t rows, int64_t depth,
                          int64_t *restrict perm, int64_t *restrict rank,
                          int64_t *restrict jd_ptr, int64_t *restrict count) {
    memset(count, 0, (size_t)(depth + 1) * sizeof(int64_t));
    for (int64_t r = 0; r < rows; ++r) {
        const int64_t length = indptr[r + 1] - indptr[r];
        if (length < 0 || length > depth) return -1;
        count[length] += 1;
    }
    /* count[L] becomes the rows longer than L: where rows of length L start in perm. */
    int64_t longer = 0;
    for (int64_t length = depth; length >= 0; --length) {
        const int64_t here = count[length];
        count[length] = longer;
        longer += here;
    }
    jd_ptr[0] = 0;
    for (int64_t k = 0; k < depth; ++k) jd_ptr[k + 1] = jd_ptr[k] + count[k];
    for (int64_t r = 0; r < rows; ++r) {
        const int64_t at = count[indptr[r + 1] - indptr[r]]++;
        if (at < 0 || at >= rows) return -1;
        perm[at] = r;
        rank[r] = at;
    }
    return 0;
}

/* Rows [first, first + n) into perm sorted by decreasing length, stable. A counting sort over
   the window's range of lengths: that range is at most the window's entries + 1, so all windows
   together cost O(rows + nnz). A short window with a wide range sorts by insertion instead, and so
   does any window whose scratch cannot be had. */
static void sell_sort_window(const int64_t *restrict indptr, int64_t first, int64_t n,
                             int64_t *restrict perm) {
    int64_t shortest = INT64_MAX, longest = 0;
    for (int64_t r = first; r < first + n; ++r) {
        const int64_t length = indptr[r + 1] - indptr[r];
        shortest = length < shortest ? length : shortest;
        longest = length > longest ? length : longest;
    }
    const int64_t range = longest - shortest + 1;
    int64_t local[SPARSE_SMALL];
    int64_t *count = NULL;
    if (range <= SPARSE_SMALL) {
        count = local;
        memset(count, 0, (size_t)range * sizeof(int64_t));
    } else if (n > SPARSE_SMALL) {
        count = calloc((size_t)range, sizeof(int64_t));
    }
    if (count == NULL) {
        for (int64_t i = 0; i < n; ++i) {
            const int64_t r = first + i, length = indptr[r + 1] - indptr[r];
            int64_t j = i;
            while (j > 0 && indptr[perm[j - 1] + 1] - indptr[perm[j - 1]] < length) {
                perm[j] = perm[j - 1];
                --j;
            }
            perm[j] = r;
        }
        return;
    }
    for (int64_t r = first; r < first + n; ++r) count[longest - (indptr[r + 1] - indptr[r])] += 1;
    int64_t start = 0;
    for (int64_t key = 0; key < range; ++key) {
        const int64_t here = count[key];
        count[key] = start;
        start += here;
    }
    for (int64_t r = first; r < first + n; ++r) perm[count[longest - (indptr[r + 1] - indptr[r])]++] = r;
    if (count != local) free(count);
}

/* SELL-C-sigma order and slices: perm sorted by decreasing length inside each window of sigma rows
   (stable), rank its inverse, slice_ptr[s+1] - slice_ptr[s] = C x the longest row of slice s.
   Answers the slots in all, -1 for an inconsistent indptr, -2 when the slots overflow int64. */
int64_t relayout_sell_plan(const int64_t *restrict indptr, int64_t rows, int64_t nnz, int64_t chunk,
                           int64_t sigma, int64_t *restrict perm, int64_t *restrict rank,
                           int64_t *restrict slice_ptr) {
    if (chunk < 1 || sigma < 1) return -1;
    /* Counted without rows + sigma - 1, which overflows for a sigma near INT64_MAX. */
    const int64_t windows = rows == 0 ? 0 : (rows - 1) / sigma + 1;
    const int64_t grain = sigma >= SPARSE_ROWS_PER_CHUNK ? 1 : SPARSE_ROWS_PER_CHUNK / sigma;
    #pragma omp parallel for schedule(dynamic, grain) if (windows > 1 && rows > SPARSE_PARALLEL_MIN)
    for (int64_t w = 0; w < windows; ++w) {
        const int64_t first = w * sigma;
        const int64_t n = rows - first < sigma ? rows - first : sigma;
        if (n == 1) perm[first] = first;
        else sell_sort_window(indptr, first, n, perm + first);
    }
    const int64_t slices = rows == 0 ? 0 : (rows - 1) / chunk + 1;
    int64_t bad = 0;
    #pragma omp parallel for schedule(static) reduction(+: bad) if (rows > SPARSE_PARALLEL_MIN)
    for (int64_t s = 0; s < slices; ++s) {
        int64_t longest = 0;
        for (int64_t p = s * chunk; p < rows && p - s * chunk < chunk; ++p) {
            const int64_t r = perm[p];
            if (r < 0 || r >= rows) { bad += 1; continue; }
            rank[r] = p;
            const int64_t length = indptr[r + 1] - indptr[r];
            if (length < 0 || length > nnz) { bad += 1; continue; }
            longest = length > longest ? length : longest;
        }
        slice_ptr[s + 1] = longest;
    }
    if (bad) return -1;
    slice_ptr[0] = 0;
    for (int64_t s = 0; s < slices; ++s) {
        const int64_t longest = slice_ptr[s + 1];
        if (longest > 0 && (longest > INT64_MAX / chunk || slice_ptr[s] > INT64_MAX - longest * chunk))
            return -2;
        slice_ptr[s + 1] = slice_ptr[s] + longest * chunk;
    }
    return slice_ptr[slices];
}
"""

# One copy per element width: NAME becomes the width in bytes, ELEM the C type of that width.
# Every fill walks the rows in their CSR order, so reads stream; consecutive rows of one length
# hold consecutive ranks, so their writes land side by side and whole cache lines fill in cache.
FILL_TEMPLATE = """
/* ELL: row r's entries in slots [r*width, r*width + length), then padding (0, column -1). */
int64_t relayout_ell_fill_NAME(const int64_t *restrict indptr, const int64_t *restrict indices,
                               const ELEM *restrict data, int64_t rows, int64_t nnz, int64_t width,
                               int64_t *restrict out_indices, ELEM *restrict out_data) {
    static const ELEM zero;
    int64_t bad = 0;
    #pragma omp parallel for schedule(dynamic, SPARSE_ROWS_PER_CHUNK) reduction(+: bad) \\
        if (rows * (width + 1) > SPARSE_PARALLEL_MIN)
    for (int64_t r = 0; r < rows; ++r) {
        int64_t lo, length;
        bad += sparse_row(indptr, r, nnz, width, &lo, &length);
        int64_t *restrict to_indices = out_indices + r * width;
        ELEM *restrict to_data = out_data + r * width;
        memcpy(to_indices, indices + lo, (size_t)length * sizeof(int64_t));
        memcpy(to_data, data + lo, (size_t)length * sizeof(ELEM));
        for (int64_t j = length; j < width; ++j) {
            to_indices[j] = -1;
            to_data[j] = zero;
        }
    }
    return bad;
}

/* JDS: entry k of the row at rank q goes to jd_ptr[k] + q. */
int64_t relayout_jds_fill_NAME(const int64_t *restrict indptr, const int64_t *restrict indices,
                               const ELEM *restrict data, int64_t rows, int64_t nnz, int64_t depth,
                               const int64_t *restrict rank, const int64_t *restrict jd_ptr,
                               int64_t *restrict out_indices, ELEM *restrict out_data) {
    /* Diagonals that start at 0, end at nnz and never grow: then a rank inside the last diagonal
       a row reaches is inside every diagonal before it, and one check per row bounds its writes. */
    if (jd_ptr[0] != 0 || jd_ptr[depth] != nnz) return rows + 1;
    for (int64_t k = 0; k < depth; ++k) {
        const int64_t size = jd_ptr[k + 1] - jd_ptr[k];
        if (size < 0 || (k > 0 && size > jd_ptr[k] - jd_ptr[k - 1])) return rows + 1;
    }
    int64_t bad = 0;
    #pragma omp parallel for schedule(dynamic, SPARSE_ROWS_PER_CHUNK) reduction(+: bad) \\
        if (nnz + rows > SPARSE_PARALLEL_MIN)
    for (int64_t r = 0; r < rows; ++r) {
        int64_t lo, length;
        bad += sparse_row(indptr, r, nnz, depth, &lo, &length);
        const int64_t q = rank[r];
        if (length == 0) continue;
        if (q < 0 || q >= jd_ptr[length] - jd_ptr[length - 1]) {
            bad += 1;
            continue;
        }
        for (int64_t k = 0; k < length; ++k) {
            out_indices[jd_ptr[k] + q] = indices[lo + k];
            out_data[jd_ptr[k] + q] = data[lo + k];
        }
    }
    return bad;
}

/* SELL-C-sigma: entry j of slice s's row i at slice_ptr[s] + j*C + i; each row writes all its
   slice's columns (past its end, padding: 0 and column -1), then the last slice's rows past the
   matrix are all padding. */
int64_t relayout_sell_fill_NAME(const int64_t *restrict indptr, const int64_t *restrict indices,
                                const ELEM *restrict data, int64_t rows, int64_t nnz, int64_t chunk,
                                const int64_t *restrict rank, const int64_t *restrict slice_ptr,
                                int64_t slices, int64_t total, int64_t *restrict out_indices,
                                ELEM *restrict out_data) {
    static const ELEM zero;
    int64_t bad = 0;
    #pragma omp parallel for schedule(dynamic, SPARSE_ROWS_PER_CHUNK) reduction(+: bad) \\
        if (total + rows > SPARSE_PARALLEL_MIN)
    for (int64_t r = 0; r < rows; ++r) {
        const int64_t p = rank[r];
        int64_t base, width, lo, length;
        if (p < 0 || p >= rows || sell_slice(slice_ptr, p / chunk, chunk, total, &base, &width)) {
            bad += 1;
            continue;
        }
        bad += sparse_row(indptr, r, nnz, width, &lo, &length);
        int64_t *restrict to_indices = out_indices + base + p % chunk;
        ELEM *restrict to_data = out_data + base + p % chunk;
        for (int64_t j = 0; j < length; ++j) {
            to_indices[j * chunk] = indices[lo + j];
            to_data[j * chunk] = data[lo + j];
        }
        for (int64_t j = length; j < width; ++j) {
            to_indices[j * chunk] = -1;
            to_data[j * chunk] = zero;
        }
    }
    int64_t base, width;
    if (slices > 0 && rows % chunk != 0) {
        if (sell_slice(slice_ptr, slices - 1, chunk, total, &base, &width)) return bad + 1;
        /* i < chunk and j < width keep every slot inside the slice; none when width is 0. */
        for (int64_t j = 0; j < width; ++j) {
            for (int64_t i = rows - (slices - 1) * chunk; i < chunk; ++i) {
                out_indices[base + j * chunk + i] = -1;
                out_data[base + j * chunk + i] = zero;
            }
        }
    }
    return bad;
}
"""


def kernel_source() -> str:
    """The C text of every sparse kernel: the plans once, the fills once per element width."""
    fills = (
        FILL_TEMPLATE.replace("NAME", str(width)).replace("ELEM", c_type)
        for width, c_type in ELEMENT_TYPES.items()
    )
    return PRELUDE + "".join(fills)


_P = ctypes.c_void_p
_I = ctypes.c_int64
_SIGNATURES: dict[str, list[Any]] = {
    "relayout_sparse_max_row": [_P, _I, _I],
    "relayout_jds_plan": [_P, _I, _I, _P, _P, _P, _P],
    "relayout_sell_plan": [_P, _I, _I, _I, _I, _P, _P, _P],
}
for _width in ELEMENT_TYPES:
    _SIGNATURES[f"relayout_ell_fill_{_width}"] = [_P, _P, _P, _I, _I, _I, _P, _P]
    _SIGNATURES[f"relayout_jds_fill_{_width}"] = [_P, _P, _P, _I, _I, _I, _P, _P, _P, _P]
    _SIGNATURES[f"relayout_sell_fill_{_width}"] = [_P, _P, _P, _I, _I, _I, _P, _P, _I, _I, _P, _P]


@cache
def library() -> ctypes.CDLL | None:
    """The sparse kernels, built (or found in the build cache) once per process; None when they
    cannot be built here, so that the numpy reference runs instead."""
    # Imported here: relayout.convert loads its whole conversion machinery, which a caller of
    # relayout.sparse.formats that never converts should not pay for.
    from relayout.convert.build import BuildError, load_library

    try:
        loaded = load_library(kernel_source())
    except (BuildError, OSError, subprocess.SubprocessError):
        return None
    for name, argtypes in _SIGNATURES.items():
        function = getattr(loaded, name)
        function.argtypes = argtypes
        function.restype = ctypes.c_int64
    return loaded


def _pointer(array: npt.NDArray[Any]) -> int:
    return int(array.ctypes.data)


class _Input:
    """A CSR's buffers as the kernels take them, or None from `of` when they cannot take them."""

    def __init__(
        self, lib: ctypes.CDLL, indptr: np.ndarray, indices: np.ndarray, data: np.ndarray
    ) -> None:
        self.lib = lib
        self.indptr = np.ascontiguousarray(indptr, dtype=INDEX_DTYPE)
        self.indices = np.ascontiguousarray(indices, dtype=INDEX_DTYPE)
        self.data = np.ascontiguousarray(data)
        # The CSR is canonical by construction (canonical_csr checked it); the kernels still take
        # its outer extents on trust, so those are checked here (O(1), and not as asserts, which
        # python -O drops) and indptr by relayout_sparse_max_row.
        if self.indptr.ndim != 1 or self.indptr.shape[0] < 1:
            raise ValueError("indptr: expected rows + 1 entries (CSR not canonical)")
        if self.indices.ndim != 1 or self.data.shape != self.indices.shape:
            raise ValueError("data and indices: expected one index per value (CSR not canonical)")
        self.rows = self.indptr.shape[0] - 1
        self.nnz = self.indices.shape[0]
        self.width = self.data.dtype.itemsize
        longest = lib.relayout_sparse_max_row(_pointer(self.indptr), self.rows, self.nnz)
        if longest < 0:
            raise ValueError(
                f"indptr: not a non-decreasing run from 0 to nnz = {self.nnz} (CSR not canonical)"
            )
        self.longest = int(longest)

    @classmethod
    def of(cls, indptr: np.ndarray, indices: np.ndarray, data: np.ndarray) -> _Input | None:
        lib = library()
        dtype = np.asarray(data).dtype
        if lib is None or dtype.hasobject or dtype.itemsize not in ELEMENT_TYPES:
            return None
        made = cls(lib, indptr, indices, data)
        # Aligned so that the kernels may read the values as their width's integer type.
        return made if made.data.flags.aligned else None

    def fill(self, kernel: str, *args: Any) -> None:
        bad = getattr(self.lib, f"relayout_{kernel}_fill_{self.width}")(
            _pointer(self.indptr), _pointer(self.indices), _pointer(self.data), *args
        )
        if bad:
            raise ValueError(
                f"{kernel}: {bad} row(s) fell outside their buffers (CSR not canonical)"
            )


def _out(shape: int | tuple[int, int], data_dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    return np.empty(shape, dtype=data_dtype), np.empty(shape, dtype=INDEX_DTYPE)


def ell_from_csr(
    indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, width: int
) -> dict[str, np.ndarray] | None:
    """ELL buffers, [rows, max(width, longest row)]; None when the kernels cannot run here."""
    csr = _Input.of(indptr, indices, data)
    if csr is None:
        return None
    width = max(width, csr.longest)
    out_data, out_indices = _out((csr.rows, width), csr.data.dtype)
    csr.fill("ell", csr.rows, csr.nnz, width, _pointer(out_indices), _pointer(out_data))
    return {"data": out_data, "indices": out_indices}


def jds_from_csr(
    indptr: np.ndarray, indices: np.ndarray, data: np.ndarray
) -> dict[str, np.ndarray] | None:
    """JDS buffers (data, indices, perm, jd_ptr); None when the kernels cannot run here."""
    csr = _Input.of(indptr, indices, data)
    if csr is None:
        return None
    depth = csr.longest
    perm, rank = np.empty(csr.rows, dtype=INDEX_DTYPE), np.empty(csr.rows, dtype=INDEX_DTYPE)
    jd_ptr = np.empty(depth + 1, dtype=INDEX_DTYPE)
    scratch = np.empty(depth + 1, dtype=INDEX_DTYPE)
    planned = csr.lib.relayout_jds_plan(
        _pointer(csr.indptr),
        csr.rows,
        depth,
        _pointer(perm),
        _pointer(rank),
        _pointer(jd_ptr),
        _pointer(scratch),
    )
    if planned < 0:
        raise ValueError("jds: indptr changed under the conversion (CSR not canonical)")
    out_data, out_indices = _out(csr.nnz, csr.data.dtype)
    csr.fill(
        "jds",
        csr.rows,
        csr.nnz,
        depth,
        _pointer(rank),
        _pointer(jd_ptr),
        _pointer(out_indices),
        _pointer(out_data),
    )
    return {"data": out_data, "indices": out_indices, "perm": perm, "jd_ptr": jd_ptr}


def sell_from_csr(
    indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, chunk: int, sigma: int
) -> dict[str, np.ndarray] | None:
    """SELL-C-sigma buffers (data, indices, perm, slice_ptr); None when the kernels cannot run
    here (or C, sigma do not fit an int64)."""
    limit = np.iinfo(np.int64).max
    csr = _Input.of(indptr, indices, data) if chunk <= limit and sigma <= limit else None
    if csr is None:
        return None
    slices = -(-csr.rows // chunk)
    perm, rank = np.empty(csr.rows, dtype=INDEX_DTYPE), np.empty(csr.rows, dtype=INDEX_DTYPE)
    slice_ptr = np.empty(slices + 1, dtype=INDEX_DTYPE)
    total = csr.lib.relayout_sell_plan(
        _pointer(csr.indptr),
        csr.rows,
        csr.nnz,
        chunk,
        sigma,
        _pointer(perm),
        _pointer(rank),
        _pointer(slice_ptr),
    )
    if total == -2:
        raise ValueError(f"sell_c_sigma: C = {chunk} times the longest row overflows int64")
    if total < 0:
        raise ValueError("sell_c_sigma: indptr changed under the conversion (CSR not canonical)")
    out_data, out_indices = _out(int(total), csr.data.dtype)
    csr.fill(
        "sell",
        csr.rows,
        csr.nnz,
        chunk,
        _pointer(rank),
        _pointer(slice_ptr),
        slices,
        total,
        _pointer(out_indices),
        _pointer(out_data),
    )
    return {"data": out_data, "indices": out_indices, "perm": perm, "slice_ptr": slice_ptr}
