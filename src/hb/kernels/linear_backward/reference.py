"""The numpy reference of linear_backward (dW = dY^T X, db = sum over the batch of dY), in float64.
Inputs: X uniform in [-1, 1] and dY uniform in [-1, 1] / N, the gradient of a loss averaged over
the batch, so the N-term sums stay of order one."""

from __future__ import annotations

import numpy as np


def input_ranges(sizes: dict[str, int]) -> dict[str, tuple[float, float]]:
    """Each input's uniform range (hb.kernels.inputs)."""
    return {"X": (-1.0, 1.0), "dY": (-1.0 / sizes["N"], 1.0 / sizes["N"])}


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    grad = arrays["dY"].astype(np.float64)
    arrays["dW"][...] = grad.T @ arrays["X"].astype(np.float64)
    arrays["db"][...] = grad.sum(axis=0)
