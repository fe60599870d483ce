"""The reference of running_sum (TSVC s3112): numpy's cumsum in float64, rounded once; and its
inputs."""

from __future__ import annotations

import numpy as np


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """a uniform in [0, 1): positive terms, so the partial sums grow and no cancellation makes the
    relative error of a reordered sum large."""
    n = sizes["N"]
    return {
        "a": rng.uniform(0.0, 1.0, n).astype(dtype),
        "b": np.zeros(n, dtype=dtype),
        "sum": np.zeros(1, dtype=dtype),
    }


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    partial = np.cumsum(arrays["a"], dtype=np.float64)
    arrays["b"][...] = partial
    arrays["sum"][0] = partial[-1]
