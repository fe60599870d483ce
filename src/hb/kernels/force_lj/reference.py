"""The numpy reference of force_lj (all-pairs Lennard-Jones forces) and its input generator."""

from __future__ import annotations

import numpy as np


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """Particles on a cubic lattice of spacing 1.2 with a small jitter, so no pair comes too close."""
    count = sizes["N"]
    side = int(np.ceil(count ** (1.0 / 3.0)))
    grid = np.stack(np.meshgrid(*([np.arange(side)] * 3), indexing="ij"), axis=-1).reshape(-1, 3)
    positions = 1.2 * grid[:count] + rng.uniform(-0.05, 0.05, (count, 3))
    return {"pos": positions.astype(dtype), "force": np.zeros((count, 3), dtype=dtype)}


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    pos = arrays["pos"]
    kind = pos.dtype.type
    delta = pos[:, None, :] - pos[None, :, :]
    r2 = np.einsum("ijk,ijk->ij", delta, delta)
    np.fill_diagonal(r2, np.inf)
    s6 = (kind(scalars["sigma"]) ** 2 / r2) ** 3
    magnitude = kind(24.0 * scalars["epsilon"]) * (kind(2.0) * s6 * s6 - s6) / r2
    arrays["force"][...] = np.einsum("ij,ijk->ik", magnitude, delta)
