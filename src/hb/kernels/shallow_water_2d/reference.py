"""The numpy reference of shallow_water_2d and its inputs: the Lax-Friedrichs update
U <- (U_E + U_W + U_N + U_S) / 4 - dt / (2 dx) (F_E - F_W) - dt / (2 dy) (G_N - G_S) of
U = (h, hu, hv) with F = (hu, hu^2/h + g h^2/2, hu hv/h), G = (hv, hu hv/h, hv^2/h + g h^2/2),
x along the columns and y along the rows, both periodic."""

from __future__ import annotations

import numpy as np


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """Depth uniform in [0.9, 1.1] and velocities in [-0.1, 0.1]: h stays positive (the scheme
    averages it) and the flow subcritical, so hu^2/h and the CFL number stay bounded."""
    shape = (sizes["ny"], sizes["nx"])
    h = rng.uniform(0.9, 1.1, shape)
    hu = h * rng.uniform(-0.1, 0.1, shape)
    hv = h * rng.uniform(-0.1, 0.1, shape)
    return {"h": h.astype(dtype), "hu": hu.astype(dtype), "hv": hv.astype(dtype)}


def _step(
    f: np.ndarray, fx: np.ndarray, gy: np.ndarray, cx: np.floating, cy: np.floating
) -> np.ndarray:
    quarter = f.dtype.type(0.25)
    east, west = np.roll(f, -1, axis=1), np.roll(f, 1, axis=1)
    north, south = np.roll(f, -1, axis=0), np.roll(f, 1, axis=0)
    return (
        quarter * (((east + west) + north) + south)
        - cx * (np.roll(fx, -1, axis=1) - np.roll(fx, 1, axis=1))
    ) - cy * (np.roll(gy, -1, axis=0) - np.roll(gy, 1, axis=0))


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    h, hu, hv = arrays["h"], arrays["hu"], arrays["hv"]
    kind = h.dtype.type
    two = kind(2.0)
    half_g = kind(scalars["g"]) / two
    dt = kind(scalars["dt"])
    cx, cy = dt / (two * kind(scalars["dx"])), dt / (two * kind(scalars["dy"]))
    for _ in range(int(scalars["TSTEPS"])):
        pressure = (half_g * h) * h
        flux_x = (hu * hu) / h + pressure
        flux_y = (hv * hv) / h + pressure
        cross = (hu * hv) / h
        h_next = _step(h, hu, hv, cx, cy)
        hu_next = _step(hu, flux_x, cross, cx, cy)
        hv_next = _step(hv, cross, flux_y, cx, cy)
        h[...], hu[...], hv[...] = h_next, hu_next, hv_next
