"""The numpy reference of gelu (exact: 0.5 x (1 + erf(x / sqrt 2))), evaluated in float64. Inputs
are uniform in [-4, 4], so the activation's whole bend (and its flat negative tail) is exercised."""

from __future__ import annotations

import numpy as np
from scipy.special import erf


def gelu(x: np.ndarray) -> np.ndarray:
    """torch.nn.functional.gelu(approximate='none') in float64."""
    wide = x.astype(np.float64)
    return 0.5 * wide * (1.0 + erf(wide / np.sqrt(2.0)))


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    count = sizes["N"]
    return {
        "x": rng.uniform(-4.0, 4.0, count).astype(dtype),
        "y": np.zeros(count, dtype=dtype),
    }


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    arrays["y"][...] = gelu(arrays["x"])
