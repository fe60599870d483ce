"""The reference of gather_dot (TSVC s4115): the gathered dot product in float64, rounded once; and
its inputs."""

from __future__ import annotations

import numpy as np


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """a and b uniform in [-1, 1], ip uniform over [0, N): a random gather."""
    n = sizes["N"]
    return {
        "a": rng.uniform(-1.0, 1.0, n).astype(dtype),
        "b": rng.uniform(-1.0, 1.0, n).astype(dtype),
        "ip": rng.integers(0, n, n).astype(np.int64),
        "sum": np.zeros(1, dtype=dtype),
    }


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    a, b, ip = arrays["a"], arrays["b"], arrays["ip"]
    arrays["sum"][0] = np.dot(a.astype(np.float64), b[ip].astype(np.float64))
