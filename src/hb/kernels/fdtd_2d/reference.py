"""The numpy reference of fdtd_2d: per step, ey's first row takes the source, then ey, ex and hz
are updated from hz, hz and the new ex, ey (PolyBench's coefficients 0.5 and 0.7)."""

from __future__ import annotations

import numpy as np


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    ex, ey, hz, fict = arrays["ex"], arrays["ey"], arrays["hz"], arrays["fict"]
    half, c = ex.dtype.type(0.5), ex.dtype.type(0.7)
    for t in range(sizes["TMAX"]):
        ey[0, :] = fict[t]
        ey[1:, :] = ey[1:, :] - half * (hz[1:, :] - hz[:-1, :])
        ex[:, 1:] = ex[:, 1:] - half * (hz[:, 1:] - hz[:, :-1])
        hz[:-1, :-1] = hz[:-1, :-1] - c * (
            ((ex[:-1, 1:] - ex[:-1, :-1]) + ey[1:, :-1]) - ey[:-1, :-1]
        )
