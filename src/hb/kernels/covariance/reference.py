"""The numpy reference of covariance (mean, centred data, sample covariance) and its inputs."""

from __future__ import annotations

import numpy as np


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """Observations uniform in [0, 1): every mean is near 0.5, away from zero, and each covariance
    is a sum of N products of centred values divided by N - 1 (no growth with N)."""
    m, n = sizes["M"], sizes["N"]
    return {
        "data": rng.random((n, m)).astype(dtype),
        "cov": np.zeros((m, m), dtype=dtype),
        "mean": np.zeros(m, dtype=dtype),
    }


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    data = arrays["data"].astype(np.float64)
    mean = data.mean(axis=0)
    centred = data - mean
    arrays["mean"][...] = mean
    arrays["data"][...] = centred
    arrays["cov"][...] = centred.T @ centred / (sizes["N"] - 1.0)
