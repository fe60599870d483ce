"""The numpy reference of two_mm (D <- alpha A B C + beta D) and its input generator."""

from __future__ import annotations

import numpy as np


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """Every matrix uniform in [0, 1) (alpha and beta are positive): both products sum
    non-negative terms, so no cancellation leaves a near-zero value outside fp32's band."""
    ni, nj, nk, nl = sizes["NI"], sizes["NJ"], sizes["NK"], sizes["NL"]
    shapes = {"A": (ni, nk), "B": (nk, nj), "C": (nj, nl), "D": (ni, nl)}
    return {name: rng.random(shape).astype(dtype) for name, shape in shapes.items()}


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    wide = {name: value.astype(np.float64) for name, value in arrays.items()}
    tmp = scalars["alpha"] * (wide["A"] @ wide["B"])
    arrays["D"][...] = tmp @ wide["C"] + scalars["beta"] * wide["D"]
