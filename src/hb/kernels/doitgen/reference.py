"""The numpy reference of doitgen (A[r][q][:] <- A[r][q][:] C4) and its input generator."""

from __future__ import annotations

import numpy as np


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """A and C4 uniform in [0, 1): every entry of the product sums non-negative terms, so no
    cancellation leaves a near-zero value outside fp32's band."""
    nr, nq, np_ = sizes["NR"], sizes["NQ"], sizes["NP"]
    return {
        "A": rng.random((nr, nq, np_)).astype(dtype),
        "C4": rng.random((np_, np_)).astype(dtype),
    }


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    arrays["A"][...] = arrays["A"].astype(np.float64) @ arrays["C4"].astype(np.float64)
