"""The reference of switch_dispatch (TSVC s442) and its inputs."""

from __future__ import annotations

import numpy as np


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """indx uniform over 1 .. 4, the arrays uniform in [-1, 1]."""
    n = sizes["N"]
    arrays = {"indx": rng.integers(1, 5, n).astype(np.int64)}
    for name in "bcdea":
        arrays[name] = rng.uniform(-1.0, 1.0, n).astype(dtype)
    return arrays


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    choices = np.stack([arrays[k] * arrays[k] for k in "bcde"])
    arrays["a"] += np.take_along_axis(choices, (arrays["indx"] - 1)[None, :], axis=0)[0]
