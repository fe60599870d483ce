"""The reference of fission_prefix (TSVC s221): a at the precision, b's recurrence as a float64
cumulative sum rounded once; and its inputs."""

from __future__ import annotations

import numpy as np


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """Every array uniform in [0, 1): b's recurrence adds positive terms, so partial sums grow and
    no cancellation makes a reordered sum's relative error large."""
    n = sizes["N"]
    return {name: rng.uniform(0.0, 1.0, n).astype(dtype) for name in "cdab"}


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    a, b, c, d = arrays["a"], arrays["b"], arrays["c"], arrays["d"]
    a[1:] += c[1:] * d[1:]
    step = a[1:].astype(np.float64) + d[1:].astype(np.float64)
    b[1:] = float(b[0]) + np.cumsum(step)
