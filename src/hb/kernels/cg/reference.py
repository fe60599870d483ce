"""The reference of cg (scipy's conjugate gradients from x = 0 to ||b - A x|| <= tol ||b||) and its
inputs: a symmetric positive definite CSR matrix with lambda_min >= 1."""

from __future__ import annotations

import numpy as np
import scipy.sparse.linalg as spla

from hb.kernels.sparse_inputs import csr_matrix, linear_system, lower_entries, strictly_lower


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """A = L + L^T + D: L strictly lower with min(k, i) uniform [-1, 1] entries in row i (k solved
    from nnz), D = 1 + the row's absolute off-diagonal sum. A is symmetric and strictly
    diagonally dominant with a positive diagonal, so by Gershgorin its eigenvalues lie in
    [1, 1 + 2 max row sum]: positive definite, condition number below 1 + 4 k. b uniform [-1, 1]."""
    n, nnz = sizes["N"], sizes["nnz"]
    if (nnz - n) % 2:
        raise ValueError(f"cg: nnz={nnz} must be N={n} plus an even number of off-diagonals")
    row, col, value = strictly_lower(n, lower_entries(n, (nnz - n) // 2), rng)
    rows, cols = np.concatenate([row, col]), np.concatenate([col, row])
    values = np.concatenate([value, value])
    diagonal = 1.0 + np.bincount(rows, weights=np.abs(values), minlength=n)
    return linear_system("A", (rows, cols, values), diagonal, rng, dtype)


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    matrix = csr_matrix(arrays, "A", (sizes["N"], sizes["N"]))
    solution, _ = spla.cg(
        matrix, arrays["b"], rtol=float(scalars["tol"]), atol=0.0, maxiter=int(scalars["max_iter"])
    )
    arrays["x"][...] = solution
