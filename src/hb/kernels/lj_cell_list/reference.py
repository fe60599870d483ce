"""The numpy reference of lj_cell_list (shifted-force Lennard-Jones forces within a cutoff in a
periodic box; the pairs found by scipy's periodic k-d tree) and its inputs."""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

SPACING = 1.25


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """Particles on the sites of a cubic lattice of spacing 1.25 (a box of side 1.25 ceil(N^(1/3)),
    the presets' `box`), each moved by up to 0.08 per axis: no pair comes closer than about 0.97
    sigma, so every pair force is O(10) and the sums far from cancelling to rounding. The box side
    and every site are multiples of 1/16, exact in float32."""
    count = sizes["N"]
    side = int(np.ceil(round(count ** (1.0 / 3.0), 9)))
    grid = np.stack(np.meshgrid(*([np.arange(side)] * 3), indexing="ij"), axis=-1).reshape(-1, 3)
    positions = SPACING * (grid[:count] + 0.5) + rng.uniform(-0.08, 0.08, (count, 3))
    return {"pos": positions.astype(dtype), "force": np.zeros((count, 3), dtype=dtype)}


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    box, rc = scalars["box"], scalars["rc"]
    if not 0 < 2 * rc <= box:
        raise ValueError(f"lj_cell_list: the cutoff rc={rc} must be at most half the box {box}")
    pos = np.mod(arrays["pos"].astype(np.float64), box)
    pairs = cKDTree(pos, boxsize=box).query_pairs(rc, output_type="ndarray")
    first, second = pairs[:, 0], pairs[:, 1]
    delta = pos[first] - pos[second]
    delta -= box * np.round(delta / box)
    r2 = np.einsum("ij,ij->i", delta, delta)
    inside = r2 < rc * rc
    first, second, delta, r2 = first[inside], second[inside], delta[inside], r2[inside]
    scale, s2 = 24.0 * scalars["epsilon"], scalars["sigma"] ** 2
    at_cutoff = scale * (2.0 * (s2 / rc**2) ** 6 - (s2 / rc**2) ** 3) / rc
    s6 = (s2 / r2) ** 3
    magnitude = scale * (2.0 * s6 * s6 - s6) / r2 - at_cutoff / np.sqrt(r2)
    pair_force = magnitude[:, None] * delta
    count = sizes["N"]
    for axis in range(3):
        arrays["force"][:, axis] = np.bincount(
            first, weights=pair_force[:, axis], minlength=count
        ) - np.bincount(second, weights=pair_force[:, axis], minlength=count)
