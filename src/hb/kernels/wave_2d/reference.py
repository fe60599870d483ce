"""The numpy reference of wave_2d: TSTEPS pairs of leapfrog steps, each writing the next time
level over the older one, u_next = 2 u - u_prev + C2 (5-point Laplacian of u)."""

from __future__ import annotations

import numpy as np


def _step(older: np.ndarray, now: np.ndarray, c2: np.floating) -> None:
    two, four = now.dtype.type(2.0), now.dtype.type(4.0)
    mid = now[1:-1, 1:-1]
    laplacian = ((now[:-2, 1:-1] + now[2:, 1:-1]) + (now[1:-1, :-2] + now[1:-1, 2:])) - four * mid
    older[1:-1, 1:-1] = (two * mid - older[1:-1, 1:-1]) + c2 * laplacian


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    u0, u1 = arrays["U0"], arrays["U1"]
    c2 = u0.dtype.type(scalars["C2"])
    for _ in range(int(scalars["TSTEPS"])):
        _step(u0, u1, c2)
        _step(u1, u0, c2)
