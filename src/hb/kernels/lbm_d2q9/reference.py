"""The numpy reference of lbm_d2q9 and its inputs. Velocities e_k, k = 0..8: rest, the four axes
(+x, +y, -x, -y) and the four diagonals (+x+y, -x+y, -x-y, +x-y), x along the columns; weights
4/9, 1/9 and 1/36. Each step: density and velocity from the moments, the BGK relaxation
f <- f - omega (f - f_eq) with f_eq = w rho (1 + 3 e.u + 9/2 (e.u)^2 - 3/2 u.u), then
f_k(x + e_k) <- f_k(x), periodic."""

from __future__ import annotations

import numpy as np

EX = (0, 1, 0, -1, 0, 1, -1, -1, 1)
EY = (0, 0, 1, 0, -1, 1, 1, -1, -1)
WEIGHTS = (4 / 9, 1 / 9, 1 / 9, 1 / 9, 1 / 9, 1 / 36, 1 / 36, 1 / 36, 1 / 36)


def _equilibrium(rho: np.ndarray, ux: np.ndarray, uy: np.ndarray, k: int) -> np.ndarray:
    kind = rho.dtype.type
    eu = kind(EX[k]) * ux + kind(EY[k]) * uy
    usq = ux * ux + uy * uy
    return (kind(WEIGHTS[k]) * rho) * (
        ((kind(1.0) + kind(3.0) * eu) + (kind(4.5) * eu) * eu) - kind(1.5) * usq
    )


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """Near equilibrium: density in [0.95, 1.05] and velocity components in [-0.05, 0.05]
    (Mach number well below the lattice's sound speed 1/sqrt(3)), each population its equilibrium
    times 1 + a seeded [-0.01, 0.01] disturbance; every population stays positive."""
    shape = (sizes["ny"], sizes["nx"])
    rho = rng.uniform(0.95, 1.05, shape)
    ux, uy = rng.uniform(-0.05, 0.05, shape), rng.uniform(-0.05, 0.05, shape)
    f = np.stack([_equilibrium(rho, ux, uy, k) for k in range(9)])
    f *= 1.0 + rng.uniform(-0.01, 0.01, f.shape)
    return {"f": f.astype(dtype)}


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    f = arrays["f"]
    omega = f.dtype.type(scalars["omega"])
    for _ in range(int(scalars["TSTEPS"])):
        rho = f[0].copy()
        for k in range(1, 9):
            rho += f[k]
        ux = ((f[1] + f[5]) + f[8] - ((f[3] + f[6]) + f[7])) / rho
        uy = ((f[2] + f[5]) + f[6] - ((f[4] + f[7]) + f[8])) / rho
        for k in range(9):
            relaxed = f[k] - omega * (f[k] - _equilibrium(rho, ux, uy, k))
            f[k] = np.roll(relaxed, (EY[k], EX[k]), axis=(0, 1))
