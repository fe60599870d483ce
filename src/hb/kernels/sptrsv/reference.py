"""The reference of sptrsv (scipy's sparse lower-triangular solve) and its inputs: a diagonally
dominant lower-triangular CSR matrix, so forward substitution is stable in every precision."""

from __future__ import annotations

import numpy as np
import scipy.sparse.linalg as spla

from hb.kernels.sparse_inputs import csr_matrix, linear_system, lower_entries, strictly_lower


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """min(k, i) uniform [-1, 1] entries at distinct uniform columns left of the diagonal in row i
    (k solved from nnz), and the diagonal 1 + the row's absolute off-diagonal sum: L is strictly
    diagonally dominant, so every x_i is a convex-like mix of b_i and earlier x_j, bounded by
    max |b| and free of growth. b uniform [-1, 1]."""
    n, nnz = sizes["N"], sizes["nnz"]
    row, col, value = strictly_lower(n, lower_entries(n, nnz - n), rng)
    diagonal = 1.0 + np.bincount(row, weights=np.abs(value), minlength=n)
    return linear_system("L", (row, col, value), diagonal, rng, dtype)


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    matrix = csr_matrix(arrays, "L", (sizes["N"], sizes["N"]))
    arrays["x"][...] = spla.spsolve_triangular(matrix, arrays["b"], lower=True)
