"""The reference of linear_recurrence (TSVC s321), by a doubling scan of affine maps in float64,
rounded once; and its inputs."""

from __future__ import annotations

import numpy as np


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """a uniform in [-1, 1], b uniform in [-0.5, 0.5]: every step contracts by at least 2, so
    rounding errors do not grow along the recurrence, whatever order composes it."""
    n = sizes["N"]
    return {
        "b": rng.uniform(-0.5, 0.5, n).astype(dtype),
        "a": rng.uniform(-1.0, 1.0, n).astype(dtype),
    }


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    scale = arrays["b"].astype(np.float64)
    scale[0] = 0.0  # a[0] is kept: x_0 = a_0 + 0 * x_{-1}
    value = arrays["a"].astype(np.float64)
    step = 1
    while step < value.shape[0]:  # compose x -> m x + c with the map `step` places earlier
        value[step:] = value[step:] + scale[step:] * value[:-step]
        scale[step:] = scale[step:] * scale[:-step]
        step *= 2
    arrays["a"][...] = value
