"""The numpy reference of three_mm (G <- (A B)(C D)) and its input generator."""

from __future__ import annotations

import numpy as np


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """Every input uniform in [0, 1): the three products sum non-negative terms, so no
    cancellation leaves a near-zero value outside fp32's band."""
    ni, nj, nk, nl, nm = (sizes[s] for s in ("NI", "NJ", "NK", "NL", "NM"))
    shapes = {"A": (ni, nk), "B": (nk, nj), "C": (nj, nm), "D": (nm, nl)}
    arrays = {name: rng.random(shape).astype(dtype) for name, shape in shapes.items()}
    arrays["G"] = np.zeros((ni, nl), dtype=dtype)
    return arrays


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    wide = {name: value.astype(np.float64) for name, value in arrays.items()}
    arrays["G"][...] = (wide["A"] @ wide["B"]) @ (wide["C"] @ wide["D"])
