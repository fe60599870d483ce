"""The numpy reference of mvt (x1 += A y_1, x2 += A^T y_2) and its input generator."""

from __future__ import annotations

import numpy as np


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """Every array uniform in [0, 1): both updates add non-negative sums, so no cancellation
    leaves a near-zero value outside fp32's relative band."""
    n = sizes["N"]
    names = ("x1", "x2", "y_1", "y_2")
    arrays = {name: rng.random(n).astype(dtype) for name in names}
    arrays["A"] = rng.random((n, n)).astype(dtype)
    return arrays


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    a = arrays["A"].astype(np.float64)
    arrays["x1"][...] = arrays["x1"].astype(np.float64) + a @ arrays["y_1"].astype(np.float64)
    arrays["x2"][...] = arrays["x2"].astype(np.float64) + a.T @ arrays["y_2"].astype(np.float64)
