"""The numpy reference of cavity_flow and its inputs: Barba's step 11 (the form NPBench
benchmarks), its constant factors gathered once per run in the problem precision."""

from __future__ import annotations

import numpy as np


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """A smoothly perturbed fluid at rest (NPBench starts from exact zeros, which no seed would
    change): u, v and p each a sum of the nine modes sin(k pi y) sin(l pi x), k, l <= 3, with
    seeded amplitudes in [-0.01, 0.01]; smooth, so the divergence in the pressure source does
    not grow as 1 / dx on the finer presets as grid-scale noise would make it. The steps are far
    inside the explicit scheme's limits (nu dt / dx^2 = 0.0025 and |u| dt / dx <= 0.00125 at
    every preset), so the velocities stay bounded by the lid's; the pressure answering the lid's
    impulsive start grows large (about 2e2 at M), which is why the kernel is fp64 only."""
    ny, nx = sizes["ny"], sizes["nx"]
    y, x = np.linspace(0.0, 1.0, ny), np.linspace(0.0, 1.0, nx)
    fields = {}
    for name in ("u", "v", "p"):
        field = np.zeros((ny, nx))
        for k in range(1, 4):
            for m in range(1, 4):
                mode = np.outer(np.sin(k * np.pi * y), np.sin(m * np.pi * x))
                field += rng.uniform(-0.01, 0.01) * mode
        fields[name] = field.astype(dtype)
    return fields


def _source(u: np.ndarray, v: np.ndarray, k: dict[str, np.floating]) -> np.ndarray:
    """The pressure source b on the interior."""
    dudx = (u[1:-1, 2:] - u[1:-1, :-2]) / k["two_dx"]
    dvdy = (v[2:, 1:-1] - v[:-2, 1:-1]) / k["two_dy"]
    dudy = (u[2:, 1:-1] - u[:-2, 1:-1]) / k["two_dy"]
    dvdx = (v[1:-1, 2:] - v[1:-1, :-2]) / k["two_dx"]
    return k["rho"] * (
        ((k["inv_dt"] * (dudx + dvdy) - dudx * dudx) - k["two"] * (dudy * dvdx)) - dvdy * dvdy
    )


def _poisson(p: np.ndarray, b: np.ndarray, nit: int, k: dict[str, np.floating]) -> None:
    for _ in range(nit):
        pn = p.copy()
        p[1:-1, 1:-1] = (
            (pn[1:-1, 2:] + pn[1:-1, :-2]) * k["dy2"] + (pn[2:, 1:-1] + pn[:-2, 1:-1]) * k["dx2"]
        ) * k["inv_2sum"] - k["b_factor"] * b
        p[:, -1] = p[:, -2]  # dp/dx = 0 at x = 2
        p[0, :] = p[1, :]  # dp/dy = 0 at y = 0
        p[:, 0] = p[:, 1]  # dp/dx = 0 at x = 0
        p[-1, :] = 0  # p = 0 at y = 2


def _momentum(
    f: np.ndarray, un: np.ndarray, vn: np.ndarray, dp: np.ndarray, k: dict[str, np.floating]
) -> np.ndarray:
    """The interior of the next u (f = un, dp = p's x difference) or v (f = vn, its y one)."""
    mid = f[1:-1, 1:-1]
    return (
        (
            (mid - (un[1:-1, 1:-1] * k["cx"]) * (mid - f[1:-1, :-2]))
            - (vn[1:-1, 1:-1] * k["cy"]) * (mid - f[:-2, 1:-1])
        )
        - dp
        + k["nu"]
        * (
            k["cxx"] * ((f[1:-1, 2:] - k["two"] * mid) + f[1:-1, :-2])
            + k["cyy"] * ((f[2:, 1:-1] - k["two"] * mid) + f[:-2, 1:-1])
        )
    )


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    u, v, p = arrays["u"], arrays["v"], arrays["p"]
    kind = u.dtype.type
    dt, dx, dy = kind(scalars["dt"]), kind(scalars["dx"]), kind(scalars["dy"])
    rho, two = kind(scalars["rho"]), kind(2.0)
    dx2, dy2 = dx * dx, dy * dy
    k = {
        "two": two, "rho": rho, "nu": kind(scalars["nu"]), "inv_dt": kind(1.0) / dt,
        "two_dx": two * dx, "two_dy": two * dy, "dx2": dx2, "dy2": dy2,
        "inv_2sum": kind(1.0) / (two * (dx2 + dy2)), "b_factor": dx2 * dy2 / (two * (dx2 + dy2)),
        "cx": dt / dx, "cy": dt / dy, "cxx": dt / dx2, "cyy": dt / dy2,
        "cpx": dt / (two * rho * dx), "cpy": dt / (two * rho * dy),
    }  # fmt: skip
    for _ in range(int(scalars["TSTEPS"])):
        un, vn = u.copy(), v.copy()
        b = _source(u, v, k)
        _poisson(p, b, int(scalars["nit"]), k)
        u[1:-1, 1:-1] = _momentum(un, un, vn, k["cpx"] * (p[1:-1, 2:] - p[1:-1, :-2]), k)
        v[1:-1, 1:-1] = _momentum(vn, un, vn, k["cpy"] * (p[2:, 1:-1] - p[:-2, 1:-1]), k)
        u[0, :], u[:, 0], u[:, -1] = 0, 0, 0
        u[-1, :] = 1  # the lid
        v[0, :], v[-1, :], v[:, 0], v[:, -1] = 0, 0, 0, 0
