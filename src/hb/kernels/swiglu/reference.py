"""The numpy reference of swiglu (SiLU(gate) * up), in float64. Projections of order one: gate
uniform in [-4, 4] (the SiLU's whole bend), up uniform in [-1, 1]."""

from __future__ import annotations

import numpy as np


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    shape = (sizes["N"], sizes["F"])
    return {
        "gate": rng.uniform(-4.0, 4.0, shape).astype(dtype),
        "up": rng.uniform(-1.0, 1.0, shape).astype(dtype),
        "y": np.zeros(shape, dtype=dtype),
    }


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    gate = arrays["gate"].astype(np.float64)
    arrays["y"][...] = gate / (1.0 + np.exp(-gate)) * arrays["up"]
