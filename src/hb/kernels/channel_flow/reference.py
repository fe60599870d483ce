"""The numpy reference of channel_flow: a Jacobi pressure update from the velocity divergence,
then an explicit momentum step with a body force F, periodic in x and no-slip walls in y."""

from __future__ import annotations

import numpy as np


def _east(f: np.ndarray) -> np.ndarray:
    return np.roll(f, -1, axis=1)


def _west(f: np.ndarray) -> np.ndarray:
    return np.roll(f, 1, axis=1)


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    u, v, p = arrays["u"], arrays["v"], arrays["p"]
    dt, nu, h, force = scalars["dt"], scalars["nu"], scalars["h"], scalars["F"]
    inner = slice(1, -1)
    for _ in range(int(scalars["TSTEPS"])):
        ue, uw, ve, vw, pe, pw = _east(u), _west(u), _east(v), _west(v), _east(p), _west(p)
        div = ((ue[inner] - uw[inner]) + (v[2:] - v[:-2])) / (2.0 * h)
        p_new = p.copy()
        p_new[inner] = 0.25 * (((pe[inner] + pw[inner]) + p[2:]) + p[:-2]) - (0.25 * h * h) * div
        p_new[0], p_new[-1] = p_new[1], p_new[-2]
        pne, pnw = _east(p_new), _west(p_new)
        lap_u = ((((ue[inner] + uw[inner]) + u[2:]) + u[:-2]) - 4.0 * u[inner]) / (h * h)
        lap_v = ((((ve[inner] + vw[inner]) + v[2:]) + v[:-2]) - 4.0 * v[inner]) / (h * h)
        u_new = np.zeros_like(u)
        v_new = np.zeros_like(v)
        u_new[inner] = u[inner] + dt * (
            (nu * lap_u - (pne[inner] - pnw[inner]) / (2.0 * h)) + force
        )
        v_new[inner] = v[inner] + dt * (nu * lap_v - (p_new[2:] - p_new[:-2]) / (2.0 * h))
        u[...], v[...], p[...] = u_new, v_new, p_new
