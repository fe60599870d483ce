"""The numpy reference of linear_backward (dW = dY^T X, db = sum over the batch of dY), in float64.
Inputs: X uniform in [-1, 1] and dY uniform in [-1, 1] / N, the gradient of a loss averaged over
the batch, so the N-term sums stay of order one."""

from __future__ import annotations

import numpy as np


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    rows, inner, cols = sizes["N"], sizes["K"], sizes["M"]
    return {
        "X": rng.uniform(-1.0, 1.0, (rows, inner)).astype(dtype),
        "dY": (rng.uniform(-1.0, 1.0, (rows, cols)) / rows).astype(dtype),
        "dW": np.zeros((cols, inner), dtype=dtype),
        "db": np.zeros(cols, dtype=dtype),
    }


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    grad = arrays["dY"].astype(np.float64)
    arrays["dW"][...] = grad.T @ arrays["X"].astype(np.float64)
    arrays["db"][...] = grad.sum(axis=0)
