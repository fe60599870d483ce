"""The reference of weighted_histogram: numpy.bincount with weights (float64), rounded once; and
its inputs."""

from __future__ import annotations

import numpy as np


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """bins uniform over [0, B), weights uniform in [0, 1): positive sums, no cancellation."""
    n, bins = sizes["N"], sizes["B"]
    return {
        "bins": rng.integers(0, bins, n).astype(np.int64),
        "w": rng.uniform(0.0, 1.0, n).astype(dtype),
        "hist": np.zeros(bins, dtype=dtype),
    }


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    counts = np.bincount(
        arrays["bins"], weights=arrays["w"].astype(np.float64), minlength=sizes["B"]
    )
    arrays["hist"][...] = counts
