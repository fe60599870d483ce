"""The numpy reference of advection_1d: LeVeque's upwind update of the color equation,
Q_i <- Q_i - r (u_{i-1/2}^+ (Q_i - Q_{i-1}) + u_{i+1/2}^- (Q_{i+1} - Q_i)), periodic, with
u[i] = u_{i-1/2}. The inputs are the default uniform [-1, 1] for q and u, which the Courant
condition r |u| <= 0.9 keeps stable (each new value is a convex combination of old ones)."""

from __future__ import annotations

import numpy as np


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    q, u = arrays["q"], arrays["u"]
    kind = q.dtype.type
    r, zero = kind(scalars["r"]), kind(0.0)
    right = np.minimum(np.roll(u, -1), zero)  # u_{i+1/2}^-
    left = np.maximum(u, zero)  # u_{i-1/2}^+
    for _ in range(int(scalars["TSTEPS"])):
        q[...] = q - r * (left * (q - np.roll(q, 1)) + right * (np.roll(q, -1) - q))
