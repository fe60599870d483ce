"""The numpy reference of gesummv (y <- alpha A x + beta B x) and its input generator."""

from __future__ import annotations

import numpy as np


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """A, B and x uniform in [0, 1): each y[i] sums non-negative terms, so no cancellation leaves
    a near-zero value outside fp32's relative band."""
    n = sizes["N"]
    return {
        "A": rng.random((n, n)).astype(dtype),
        "B": rng.random((n, n)).astype(dtype),
        "x": rng.random(n).astype(dtype),
        "y": np.zeros(n, dtype=dtype),
    }


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    x = arrays["x"].astype(np.float64)
    tmp = arrays["A"].astype(np.float64) @ x
    y = arrays["B"].astype(np.float64) @ x
    arrays["y"][...] = scalars["alpha"] * tmp + scalars["beta"] * y
