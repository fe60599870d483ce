"""The numpy reference of durbin (the Yule-Walker solve) and its positive definite inputs."""

from __future__ import annotations

import numpy as np
from scipy.linalg import solve_toeplitz


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """r[k] = rho[k + 1], rho the autocorrelation of fractionally integrated noise (Hosking 1981)
    with d uniform in [0.1, 0.2]: rho[k] = rho[k-1] (k - 1 + d) / (k - d). The Toeplitz matrix of
    rho is positive definite (condition number below 20 at the presets), every reflection
    coefficient stays inside (-1, 1), and the solution decays like k^-(1+d) instead of
    vanishing, so every entry of y is checked."""
    n = sizes["N"]
    d = rng.uniform(0.1, 0.2)
    k = np.arange(1, n + 1)
    rho = np.cumprod((k - 1 + d) / (k - d))
    return {"r": rho.astype(dtype), "y": np.zeros(n, dtype=dtype)}


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    r = arrays["r"].astype(np.float64)
    column = np.concatenate(([1.0], r[:-1]))
    arrays["y"][...] = solve_toeplitz(column, -r)
