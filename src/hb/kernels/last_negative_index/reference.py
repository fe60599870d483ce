"""The reference of last_negative_index (TSVC s331) and its inputs."""

from __future__ import annotations

import numpy as np


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """a uniform in [0, 1) with three negative values planted in the first half: the last match
    lies far from the end, so a scan from the end must pass half the array."""
    n = sizes["N"]
    a = rng.uniform(0.0, 1.0, n)
    a[rng.choice(n // 2, 3, replace=False)] = -rng.uniform(0.1, 1.0, 3)
    return {"a": a.astype(dtype), "last": np.zeros(1, dtype=np.int64)}


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    hits = np.flatnonzero(arrays["a"] < 0)
    arrays["last"][0] = int(hits[-1]) if hits.size else -1
