"""The numpy reference of gelu (exact: 0.5 x (1 + erf(x / sqrt 2))), evaluated in float64. Inputs
are uniform in [-4, 4], so the activation's whole bend (and its flat negative tail) is exercised."""

from __future__ import annotations

import numpy as np
from scipy.special import erf


def gelu(x: np.ndarray) -> np.ndarray:
    """torch.nn.functional.gelu(approximate='none') in float64."""
    wide = x.astype(np.float64)
    return 0.5 * wide * (1.0 + erf(wide / np.sqrt(2.0)))


def input_ranges(sizes: dict[str, int]) -> dict[str, tuple[float, float]]:
    """x's uniform range (hb.kernels.inputs): both tails of the activation and its bend."""
    return {"x": (-4.0, 4.0)}


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    arrays["y"][...] = gelu(arrays["x"])
