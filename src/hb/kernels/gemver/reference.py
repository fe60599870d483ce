"""The numpy reference of gemver (a rank-2 update, then A^T y and A x) and its input generator."""

from __future__ import annotations

import numpy as np


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """Every array uniform in [0, 1) (alpha and beta are positive): each step adds non-negative
    sums, so no cancellation leaves a near-zero value outside fp32's relative band."""
    n = sizes["N"]
    arrays = {"A": rng.random((n, n)).astype(dtype)}
    for name in ("u1", "v1", "u2", "v2", "w", "x", "y", "z"):
        arrays[name] = rng.random(n).astype(dtype)
    return arrays


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    wide = {name: value.astype(np.float64) for name, value in arrays.items()}
    a = wide["A"] + np.outer(wide["u1"], wide["v1"]) + np.outer(wide["u2"], wide["v2"])
    x = wide["x"] + scalars["beta"] * (a.T @ wide["y"]) + wide["z"]
    arrays["A"][...] = a
    arrays["x"][...] = x
    arrays["w"][...] = wide["w"] + scalars["alpha"] * (a @ x)
