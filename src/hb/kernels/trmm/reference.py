"""The numpy reference of trmm (B <- alpha (I + L)^T B, L = A's strict lower triangle)."""

from __future__ import annotations

import numpy as np


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """A and B uniform in [0, 1) (alpha is positive): every entry of the product sums
    non-negative terms, so no cancellation leaves a near-zero value outside fp32's band."""
    m, n = sizes["M"], sizes["N"]
    return {"A": rng.random((m, m)).astype(dtype), "B": rng.random((m, n)).astype(dtype)}


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    # B[i][j] += sum_{k > i} A[k][i] B[k][j] over the rows below i, which PolyBench's ascending
    # i loop reads before it updates them.
    b = arrays["B"].astype(np.float64)
    lower = np.tril(arrays["A"].astype(np.float64), -1)
    arrays["B"][...] = scalars["alpha"] * (b + lower.T @ b)
