"""The numpy reference of gemm: C <- alpha * A B + beta * C, and its inputs."""

from __future__ import annotations

import numpy as np


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """A, B and C uniform in [0, 1) (alpha and beta are positive): every entry of the result sums
    non-negative terms, so no cancellation leaves a near-zero value outside fp32's band."""
    ni, nj, nk = sizes["NI"], sizes["NJ"], sizes["NK"]
    return {
        "A": rng.random((ni, nk)).astype(dtype),
        "B": rng.random((nk, nj)).astype(dtype),
        "C": rng.random((ni, nj)).astype(dtype),
    }


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    # Accumulated in double and rounded once to the problem precision.
    a, b, c = (arrays[name].astype(np.float64) for name in ("A", "B", "C"))
    arrays["C"][...] = scalars["alpha"] * (a @ b) + scalars["beta"] * c
