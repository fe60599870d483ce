"""The numpy reference of cholesky (L overwrites A's lower triangle) and its SPD inputs."""

from __future__ import annotations

import numpy as np


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """A = G G^T / N + I with G uniform in [-1, 1): symmetric positive definite with its
    eigenvalues in about [1, 2.4], so the factor is well conditioned in fp32 as in fp64."""
    n = sizes["N"]
    g = rng.uniform(-1.0, 1.0, (n, n))
    return {"A": (g @ g.T / n + np.eye(n)).astype(dtype)}


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    # numpy's factorisation reads only the lower triangle, as PolyBench's loop does.
    factor = np.linalg.cholesky(arrays["A"].astype(np.float64))
    lower = np.tril_indices(sizes["N"])
    arrays["A"][lower] = factor[lower]
