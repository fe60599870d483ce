"""The reference of distance4_recurrence (TSVC s1221): each of the four chains a float64 cumulative
sum, rounded once; and its inputs."""

from __future__ import annotations

import numpy as np


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """a and b uniform in [0, 1) (N a multiple of 4): positive terms, so the chains' partial sums
    grow and a reordered sum keeps a small relative error."""
    n = sizes["N"]
    if n % 4:
        raise ValueError(f"distance4_recurrence: N={n} must be a multiple of 4")
    return {
        "a": rng.uniform(0.0, 1.0, n).astype(dtype),
        "b": rng.uniform(0.0, 1.0, n).astype(dtype),
    }


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    a = arrays["a"].reshape(-1, 4).astype(np.float64)
    b = arrays["b"].reshape(-1, 4)
    chains = b[0].astype(np.float64) + np.cumsum(a[1:], axis=0)
    b[1:] = chains
