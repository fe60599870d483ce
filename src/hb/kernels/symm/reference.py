"""The numpy reference of symm (C <- alpha S B + beta C, S symmetric from A's lower triangle)."""

from __future__ import annotations

import numpy as np


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """C, A and B uniform in [0, 1) (alpha and beta are positive): every entry sums non-negative
    terms, so no cancellation leaves a near-zero value outside fp32's band. A's upper triangle is
    never read."""
    m, n = sizes["M"], sizes["N"]
    return {
        "C": rng.random((m, n)).astype(dtype),
        "A": rng.random((m, m)).astype(dtype),
        "B": rng.random((m, n)).astype(dtype),
    }


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    a = arrays["A"].astype(np.float64)
    symmetric = np.tril(a) + np.tril(a, -1).T
    product = symmetric @ arrays["B"].astype(np.float64)
    arrays["C"][...] = scalars["alpha"] * product + scalars["beta"] * arrays["C"]
