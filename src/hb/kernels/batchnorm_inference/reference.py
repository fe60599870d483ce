"""The numpy reference of batchnorm_inference (batch normalisation with running statistics), in
float64. Inputs: x, mean, weight and bias uniform in [-1, 1]; the running variance uniform in
[0.5, 1.5], a variance well away from zero as a trained network's is."""

from __future__ import annotations

import numpy as np


def input_ranges(sizes: dict[str, int]) -> dict[str, tuple[float, float]]:
    """Each input's uniform range (hb.kernels.inputs)."""
    unit = (-1.0, 1.0)
    return {"x": unit, "mean": unit, "var": (0.5, 1.5), "weight": unit, "bias": unit}


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    def channel(name: str) -> np.ndarray:
        return arrays[name].astype(np.float64)[None, :, None]

    normed = (arrays["x"] - channel("mean")) / np.sqrt(channel("var") + scalars["eps"])
    arrays["y"][...] = normed * channel("weight") + channel("bias")
