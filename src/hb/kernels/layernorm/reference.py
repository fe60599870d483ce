"""The numpy reference of layernorm over the last axis, in float64. The catalog's default inputs
(x, gamma and beta uniform in [-1, 1]) keep every row's variance near 1/3, far above eps."""

from __future__ import annotations

import numpy as np


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    x = arrays["x"].astype(np.float64)
    centred = x - x.mean(axis=-1, keepdims=True)
    variance = (centred * centred).mean(axis=-1, keepdims=True)
    normed = centred / np.sqrt(variance + scalars["eps"])
    arrays["y"][...] = normed * arrays["gamma"].astype(np.float64) + arrays["beta"]
