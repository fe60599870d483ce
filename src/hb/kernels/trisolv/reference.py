"""The numpy reference of trisolv (x <- L^-1 b, forward substitution) and its inputs."""

from __future__ import annotations

import numpy as np
from scipy.linalg import solve_triangular


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """L's strict lower triangle uniform in [-1, 1) and each diagonal entry 1 + the sum of its
    row's magnitudes: diagonally dominant, so the solve is well conditioned (a random triangular
    matrix is not); the upper triangle is never read. b uniform in [-1, 1)."""
    n = sizes["N"]
    lower = np.tril(rng.uniform(-1.0, 1.0, (n, n)), -1)
    lower[np.diag_indices(n)] = 1.0 + np.abs(lower).sum(axis=1)
    return {
        "L": lower.astype(dtype),
        "x": np.zeros(n, dtype=dtype),
        "b": rng.uniform(-1.0, 1.0, n).astype(dtype),
    }


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    lower = arrays["L"].astype(np.float64)
    arrays["x"][...] = solve_triangular(lower, arrays["b"].astype(np.float64), lower=True)
