"""The reference of spmm (C <- A B, A in canonical CSR, B and C dense row-major) and its inputs."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def row_lengths(rows: int, cols: int, nnz: int, rng: np.random.Generator) -> np.ndarray:
    """Uneven row lengths summing to nnz: rows pair up around nnz // rows, one longer by as much as
    the other is shorter, so that some rows are empty and some twice the mean (formats that pad
    or sort rows by length then have work to do)."""
    mean = nnz // rows
    if mean * rows != nnz or mean > cols:
        raise ValueError(
            f"spmm: nnz={nnz} must be a multiple of M={rows} with at most K={cols} per row"
        )
    lengths = np.full(rows, mean, dtype=np.int64)
    spread = min(mean, cols - mean)
    pairs = rows // 2
    delta = rng.integers(-spread, spread + 1, pairs)
    lengths[0 : 2 * pairs : 2] += delta
    lengths[1 : 2 * pairs : 2] -= delta
    return lengths


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """A CSR matrix with uneven rows (distinct, sorted columns), B uniform in [-1, 1], C zero."""
    rows, inner, cols, nnz = sizes["M"], sizes["K"], sizes["N"], sizes["nnz"]
    lengths = row_lengths(rows, inner, nnz, rng)
    indptr = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    row = np.repeat(np.arange(rows, dtype=np.int64), lengths)
    # Sorted draws from [0, K - length] plus the slot number are distinct, sorted columns.
    draws = rng.integers(0, inner - lengths[row] + 1)
    order = np.lexsort((draws, row))
    slot = np.arange(nnz, dtype=np.int64) - indptr[row]
    indices = draws[order] + slot
    return {
        "A_data": rng.uniform(-1.0, 1.0, nnz).astype(dtype),
        "A_indices": indices.astype(np.int64),
        "A_indptr": indptr,
        "B": rng.uniform(-1.0, 1.0, (inner, cols)).astype(dtype),
        "C": np.zeros((rows, cols), dtype=dtype),
    }


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    matrix = sp.csr_array(
        (arrays["A_data"], arrays["A_indices"], arrays["A_indptr"]),
        shape=(sizes["M"], sizes["K"]),
    )
    arrays["C"][...] = matrix @ arrays["B"]
