"""The reference of spgemm (scipy's sparse product A B, returned dense) and its inputs."""

from __future__ import annotations

import numpy as np

from hb.kernels.sparse_inputs import csr_matrix, equal_rows, prefixed


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """A and B with the same number of entries in every row, at distinct uniform columns, values
    uniform [-1, 1]; each C[i, j] then sums the few products whose inner index meets (about
    nnz_A/M * nnz_B/K / N on average), so no long cancelling sum arises."""
    m, k, n = sizes["M"], sizes["K"], sizes["N"]
    arrays = {"C": np.zeros((m, n), dtype=dtype)}
    for name, rows, cols in (("A", m, k), ("B", k, n)):
        nnz = sizes[f"nnz_{name}"]
        indices, indptr = equal_rows(f"spgemm ({name})", rows, cols, nnz, rng)
        data = rng.uniform(-1.0, 1.0, nnz).astype(dtype)
        arrays |= prefixed(name, {"data": data, "indices": indices, "indptr": indptr})
    return arrays


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    m, k, n = sizes["M"], sizes["K"], sizes["N"]
    product = csr_matrix(arrays, "A", (m, k)) @ csr_matrix(arrays, "B", (k, n))
    arrays["C"][...] = product.toarray()
