"""The numpy reference of prefix_sum (an inclusive scan accumulated in float64) and its inputs."""

from __future__ import annotations

import numpy as np


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """x uniform in [0, 1): the partial sums grow monotonically, so no prefix cancels to near zero
    and every prefix is known to the band's relative precision whatever the summation order."""
    n = sizes["N"]
    return {"x": rng.uniform(0.0, 1.0, n).astype(dtype), "y": np.zeros(n, dtype=dtype)}


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    arrays["y"][...] = np.cumsum(arrays["x"], dtype=np.float64)
