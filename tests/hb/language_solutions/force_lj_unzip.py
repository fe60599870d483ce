"""force_lj with pos unzipped along its last dimension: px, py, pz of N each."""

import numpy as np


def force_lj_fp64(px, py, pz, force, N, epsilon, sigma, workspace, workspace_bytes):
    dx = px[:, None] - px[None, :]
    dy = py[:, None] - py[None, :]
    dz = pz[:, None] - pz[None, :]
    r2 = dx * dx + dy * dy + dz * dz
    np.fill_diagonal(r2, np.inf)
    q = sigma * sigma / r2
    s6 = q * q * q
    m = 24.0 * epsilon * (2.0 * s6 * s6 - s6) / r2
    force[:, 0] = (m * dx).sum(axis=1)
    force[:, 1] = (m * dy).sum(axis=1)
    force[:, 2] = (m * dz).sum(axis=1)
