"""The reference of sddmm (out = S_data * rowwise dot of A[i] and B[j] over S's entries) and its
inputs."""

from __future__ import annotations

import numpy as np

from hb.kernels.sparse_inputs import equal_rows

CHUNK = 1 << 16  # entries per block of the reference: A[i] and B[j] gathered a block at a time


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """S with nnz // M entries in every row at distinct uniform columns, values uniform [-1, 1];
    A and B uniform [-1, 1] (each output is one K-term dot product: no cancellation grows with
    the size)."""
    rows, cols, inner, nnz = sizes["M"], sizes["N"], sizes["K"], sizes["nnz"]
    indices, indptr = equal_rows("sddmm", rows, cols, nnz, rng)
    return {
        "S_data": rng.uniform(-1.0, 1.0, nnz).astype(dtype),
        "S_indices": indices,
        "S_indptr": indptr,
        "A": rng.uniform(-1.0, 1.0, (rows, inner)).astype(dtype),
        "B": rng.uniform(-1.0, 1.0, (cols, inner)).astype(dtype),
        "out": np.zeros(nnz, dtype=dtype),
    }


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    indptr, indices, a, b = arrays["S_indptr"], arrays["S_indices"], arrays["A"], arrays["B"]
    rows = np.repeat(np.arange(indptr.shape[0] - 1), np.diff(indptr))
    out = arrays["out"]
    for start in range(0, out.shape[0], CHUNK):
        block = slice(start, start + CHUNK)
        dots = np.einsum("ek,ek->e", a[rows[block]], b[indices[block]])
        out[block] = arrays["S_data"][block] * dots
