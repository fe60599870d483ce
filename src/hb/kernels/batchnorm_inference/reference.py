"""The numpy reference of batchnorm_inference (batch normalisation with running statistics), in
float64. Inputs: x, mean, weight and bias uniform in [-1, 1]; the running variance uniform in
[0.5, 1.5], a variance well away from zero as a trained network's is."""

from __future__ import annotations

import numpy as np


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    shape, channels = (sizes["N"], sizes["C"], sizes["HW"]), sizes["C"]
    return {
        "x": rng.uniform(-1.0, 1.0, shape).astype(dtype),
        "mean": rng.uniform(-1.0, 1.0, channels).astype(dtype),
        "var": rng.uniform(0.5, 1.5, channels).astype(dtype),
        "weight": rng.uniform(-1.0, 1.0, channels).astype(dtype),
        "bias": rng.uniform(-1.0, 1.0, channels).astype(dtype),
        "y": np.zeros(shape, dtype=dtype),
    }


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    def channel(name: str) -> np.ndarray:
        return arrays[name].astype(np.float64)[None, :, None]

    normed = (arrays["x"] - channel("mean")) / np.sqrt(channel("var") + scalars["eps"])
    arrays["y"][...] = normed * channel("weight") + channel("bias")
