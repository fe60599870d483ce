"""The reference of three_way_branch (TSVC s441) and its inputs."""

from __future__ import annotations

import numpy as np


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """a, b, c and d uniform in [-1, 1], a tenth of d set to exactly 0 so every branch is taken."""
    n = sizes["N"]
    d = rng.uniform(-1.0, 1.0, n)
    d[rng.random(n) < 0.1] = 0.0
    return {
        "b": rng.uniform(-1.0, 1.0, n).astype(dtype),
        "c": rng.uniform(-1.0, 1.0, n).astype(dtype),
        "d": d.astype(dtype),
        "a": rng.uniform(-1.0, 1.0, n).astype(dtype),
    }


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    a, b, c, d = arrays["a"], arrays["b"], arrays["c"], arrays["d"]
    a += np.where(d < 0, b * c, np.where(d == 0, b * b, c * c))
