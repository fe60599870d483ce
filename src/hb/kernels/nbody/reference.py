"""The numpy reference of nbody (softened direct-sum gravitational accelerations) and its inputs."""

from __future__ import annotations

import numpy as np

ROWS = 256


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """Bodies uniform in the unit ball with masses uniform in [0.5, 1.5] / N (a total mass of
    about 1): with the softening every pair term is bounded by G m / eps^2, so the sums stay O(1)
    and their rounding far inside the band."""
    n = sizes["N"]
    direction = rng.normal(size=(n, 3))
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    radius = rng.uniform(0.0, 1.0, (n, 1)) ** (1.0 / 3.0)
    return {
        "pos": (radius * direction).astype(dtype),
        "mass": (rng.uniform(0.5, 1.5, n) / n).astype(dtype),
        "acc": np.zeros((n, 3), dtype=dtype),
    }


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    pos = arrays["pos"].astype(np.float64)
    mass = arrays["mass"].astype(np.float64)
    eps2 = scalars["eps"] ** 2
    for first in range(0, sizes["N"], ROWS):
        delta = pos[None, :, :] - pos[first : first + ROWS, None, :]
        r2 = np.einsum("ijk,ijk->ij", delta, delta) + eps2
        weight = mass[None, :] / (r2 * np.sqrt(r2))
        arrays["acc"][first : first + ROWS] = scalars["G"] * np.einsum("ij,ijk->ik", weight, delta)
