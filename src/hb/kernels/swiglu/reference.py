"""The numpy reference of swiglu (SiLU(gate) * up), in float64. Projections of order one: gate
uniform in [-4, 4] (the SiLU's whole bend), up uniform in [-1, 1]."""

from __future__ import annotations

import numpy as np


def input_ranges(sizes: dict[str, int]) -> dict[str, tuple[float, float]]:
    """Each input's uniform range (hb.kernels.inputs): the gate spans SiLU's bend and tails."""
    return {"gate": (-4.0, 4.0), "up": (-1.0, 1.0)}


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    gate = arrays["gate"].astype(np.float64)
    arrays["y"][...] = gate / (1.0 + np.exp(-gate)) * arrays["up"]
