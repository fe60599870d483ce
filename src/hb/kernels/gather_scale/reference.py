"""The reference of gather_scale (TSVC s4112) and its inputs."""

from __future__ import annotations

import numpy as np


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """a and b uniform in [-1, 1], ip uniform over [0, N)."""
    n = sizes["N"]
    return {
        "b": rng.uniform(-1.0, 1.0, n).astype(dtype),
        "ip": rng.integers(0, n, n).astype(np.int64),
        "a": rng.uniform(-1.0, 1.0, n).astype(dtype),
    }


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    arrays["a"] += arrays["b"][arrays["ip"]] * arrays["a"].dtype.type(scalars["s"])
