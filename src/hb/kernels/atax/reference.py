"""The numpy reference of atax (y <- A^T (A x)) and its input generator."""

from __future__ import annotations

import numpy as np


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """A and x uniform in [0, 1): both products sum non-negative terms, so no cancellation
    leaves a near-zero y outside fp32's relative band."""
    m, n = sizes["M"], sizes["N"]
    return {
        "A": rng.random((m, n)).astype(dtype),
        "x": rng.random(n).astype(dtype),
        "y": np.zeros(n, dtype=dtype),
    }


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    a = arrays["A"].astype(np.float64)
    arrays["y"][...] = a.T @ (a @ arrays["x"].astype(np.float64))
