"""The reference of first_above (TSVC s332) and its inputs."""

from __future__ import annotations

import numpy as np


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """a uniform in [-1, 1) (below t = 1) with four values in (1, 2) planted in the second half: the
    first match is somewhere past the middle."""
    n = sizes["N"]
    a = rng.uniform(-1.0, 1.0, n)
    a[n // 2 + rng.choice(n - n // 2, 4, replace=False)] = rng.uniform(1.25, 2.0, 4)
    return {
        "a": a.astype(dtype),
        "index": np.zeros(1, dtype=np.int64),
        "value": np.zeros(1, dtype=dtype),
    }


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    a = arrays["a"]
    hits = np.flatnonzero(a > a.dtype.type(scalars["t"]))
    arrays["index"][0] = int(hits[0]) if hits.size else -2
    arrays["value"][0] = a[hits[0]] if hits.size else -1
