"""The reference of gmres (scipy's restarted GMRES(m) from x = 0 to ||b - A x|| <= tol ||b||) and
its inputs: a nonsymmetric CSR matrix whose symmetric part has lambda_min >= 1."""

from __future__ import annotations

import numpy as np
import scipy.sparse.linalg as spla

from hb.kernels.sparse_inputs import csr_matrix, distinct_columns, linear_system


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """k = nnz / N - 1 off-diagonal entries per row at distinct uniform columns, values uniform
    [-1, 1], and the diagonal 1 + the row's plus the column's absolute off-diagonal sums: the
    symmetric part (A + A^T) / 2 is then strictly diagonally dominant with every Gershgorin disc
    right of 1, so A is positive real (GMRES(m) converges for every m) and sigma_min(A) >= 1.
    b uniform [-1, 1]."""
    n, nnz = sizes["N"], sizes["nnz"]
    k = nnz // n - 1
    if (k + 1) * n != nnz or not 0 <= k < n:
        raise ValueError(f"gmres: nnz={nnz} must be N={n} times (off-diagonals per row + 1)")
    # Columns of [0, N - 1) shifted past the diagonal: distinct, sorted, never i.
    cols, _ = distinct_columns(np.full(n, k), np.zeros(n, np.int64), np.full(n, n - 1), rng)
    rows = np.repeat(np.arange(n, dtype=np.int64), k)
    cols = cols + (cols >= rows)
    values = rng.uniform(-1.0, 1.0, cols.shape[0])
    weight = np.abs(values)
    diagonal = (
        1.0
        + np.bincount(rows, weights=weight, minlength=n)
        + np.bincount(cols, weights=weight, minlength=n)
    )
    return linear_system("A", (rows, cols, values), diagonal, rng, dtype)


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    matrix = csr_matrix(arrays, "A", (sizes["N"], sizes["N"]))
    solution, _ = spla.gmres(
        matrix, arrays["b"], rtol=float(scalars["tol"]), atol=0.0, restart=sizes["m"],
        maxiter=int(scalars["max_iter"]),
    )  # fmt: skip
    arrays["x"][...] = solution
