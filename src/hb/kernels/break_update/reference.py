"""The reference of break_update (TSVC s482) and its inputs."""

from __future__ import annotations

import numpy as np


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """b uniform in [0.5, 1), c uniform in [-1, 0.5) (so c < b) except two elements planted in the
    middle half with c > b: the loop exits somewhere between N / 4 and 3 N / 4."""
    n = sizes["N"]
    b = rng.uniform(0.5, 1.0, n)
    c = rng.uniform(-1.0, 0.5, n)
    c[n // 4 + rng.choice(n // 2, 2, replace=False)] = 1.5
    return {
        "b": b.astype(dtype),
        "c": c.astype(dtype),
        "a": rng.uniform(-1.0, 1.0, n).astype(dtype),
    }


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    a, b, c = arrays["a"], arrays["b"], arrays["c"]
    hits = np.flatnonzero(c > b)
    stop = int(hits[0]) + 1 if hits.size else a.shape[0]
    a[:stop] += b[:stop] * c[:stop]
