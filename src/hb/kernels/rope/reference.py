"""The numpy reference of rope (rotary position embedding over adjacent pairs), in float64 on the
catalog's default inputs (x uniform in [-1, 1]). The angles m * theta_i reach L radians; they are
formed in float64, as the kernel must to keep long positions' phases to the problem precision."""

from __future__ import annotations

import numpy as np


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    length, pairs = sizes["L"], sizes["R"]
    theta = scalars["base"] ** (-np.arange(pairs, dtype=np.float64) / pairs)
    angle = np.arange(length, dtype=np.float64)[:, None] * theta[None, :]
    cos, sin = np.cos(angle)[:, None, :], np.sin(angle)[:, None, :]
    x = arrays["x"].astype(np.float64)
    first, second = x[..., 0], x[..., 1]
    arrays["y"][..., 0] = first * cos - second * sin
    arrays["y"][..., 1] = first * sin + second * cos
