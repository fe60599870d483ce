"""The numpy reference of bicg (s <- A^T r, q <- A p) and its input generator."""

from __future__ import annotations

import numpy as np


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """A, p and r uniform in [0, 1): both products sum non-negative terms (no cancellation, so
    fp32 keeps its relative band)."""
    m, n = sizes["M"], sizes["N"]
    return {
        "A": rng.random((n, m)).astype(dtype),
        "s": np.zeros(m, dtype=dtype),
        "q": np.zeros(n, dtype=dtype),
        "p": rng.random(m).astype(dtype),
        "r": rng.random(n).astype(dtype),
    }


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    a = arrays["A"].astype(np.float64)
    arrays["s"][...] = a.T @ arrays["r"].astype(np.float64)
    arrays["q"][...] = a @ arrays["p"].astype(np.float64)
