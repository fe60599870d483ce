"""The numpy reference of syr2k (lower triangle of C <- alpha (A B^T + B A^T) + beta C)."""

from __future__ import annotations

import numpy as np


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """C, A and B uniform in [0, 1) (alpha and beta are positive): every updated entry sums
    non-negative terms, so no cancellation leaves a near-zero value outside fp32's band."""
    n, m = sizes["N"], sizes["M"]
    return {
        "C": rng.random((n, n)).astype(dtype),
        "A": rng.random((n, m)).astype(dtype),
        "B": rng.random((n, m)).astype(dtype),
    }


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    a, b = arrays["A"].astype(np.float64), arrays["B"].astype(np.float64)
    product = a @ b.T
    updated = scalars["alpha"] * (product + product.T) + scalars["beta"] * arrays["C"]
    lower = np.tril_indices(sizes["N"])
    arrays["C"][lower] = updated[lower]
