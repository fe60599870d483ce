"""The reference of scatter_permute (TSVC s491) and its inputs."""

from __future__ import annotations

import numpy as np


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """b, c and d uniform in [-1, 1]; ip a uniform random permutation (every a[k] written once)."""
    n = sizes["N"]
    return {
        "b": rng.uniform(-1.0, 1.0, n).astype(dtype),
        "c": rng.uniform(-1.0, 1.0, n).astype(dtype),
        "d": rng.uniform(-1.0, 1.0, n).astype(dtype),
        "ip": rng.permutation(n).astype(np.int64),
        "a": np.zeros(n, dtype=dtype),
    }


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    arrays["a"][arrays["ip"]] = arrays["b"] + arrays["c"] * arrays["d"]
