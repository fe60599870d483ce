"""The numpy reference of correlation (PolyBench's: a standard deviation at or below 0.1 counts
as 1) and its inputs."""

from __future__ import annotations

import numpy as np

EPS = 0.1


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """Observations uniform in [0, 1): every mean is near 0.5 and every standard deviation near
    0.29, far from the 0.1 cut-off, so fp32 and fp64 always take the same branch."""
    m, n = sizes["M"], sizes["N"]
    return {
        "data": rng.random((n, m)).astype(dtype),
        "corr": np.zeros((m, m), dtype=dtype),
        "mean": np.zeros(m, dtype=dtype),
        "stddev": np.zeros(m, dtype=dtype),
    }


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    n = sizes["N"]
    data = arrays["data"].astype(np.float64)
    mean = data.mean(axis=0)
    stddev = np.sqrt(((data - mean) ** 2).mean(axis=0))
    stddev = np.where(stddev <= EPS, 1.0, stddev)
    standardised = (data - mean) / (np.sqrt(n) * stddev)
    corr = standardised.T @ standardised
    corr[np.diag_indices(sizes["M"])] = 1.0
    arrays["mean"][...] = mean
    arrays["stddev"][...] = stddev
    arrays["data"][...] = standardised
    arrays["corr"][...] = corr
