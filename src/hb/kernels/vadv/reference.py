"""The numpy reference of vadv (NPBench's vertical advection: a Thomas solve per column, vectorised
over the I x J columns) and its inputs."""

from __future__ import annotations

import numpy as np

BET_M = 0.5
BET_P = 0.5


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """wcon uniform in [-0.1, 0.1], every other field uniform in [-1, 1]. With dtr_stage = 3/20
    the sub- and super-diagonals are at most 0.025 in magnitude and the diagonal at least 0.1, so
    every column's system is diagonally dominant by a factor of 2 and the Thomas sweep stable."""
    i, j, k = sizes["I"], sizes["J"], sizes["K"]
    if sizes["I1"] != i + 1:
        raise ValueError(f"vadv: I1 must be I + 1 (wcon is staggered in i), got {sizes}")
    field = {
        name: rng.uniform(-1.0, 1.0, (i, j, k)).astype(dtype)
        for name in ("utens_stage", "u_stage", "u_pos", "utens")
    }
    field["wcon"] = rng.uniform(-0.1, 0.1, (i + 1, j, k)).astype(dtype)
    return {name: field[name] for name in ("utens_stage", "u_stage", "wcon", "u_pos", "utens")}


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    utens_stage = arrays["utens_stage"]
    u_stage, u_pos, utens, wcon = (
        arrays[name].astype(np.float64) for name in ("u_stage", "u_pos", "utens", "wcon")
    )
    stage = utens_stage.astype(np.float64)
    dtr = scalars["dtr_stage"]
    levels = sizes["K"]
    ccol = np.empty_like(stage)
    dcol = np.empty_like(stage)
    for k in range(levels):
        # The forward sweep: a (below), b (diagonal), c (above) and the right-hand side d.
        correction = np.zeros_like(stage[:, :, k])
        acol = np.zeros_like(correction)
        ccol_k = np.zeros_like(correction)
        if k > 0:
            gav = -0.25 * (wcon[1:, :, k] + wcon[:-1, :, k])
            acol = gav * BET_P
            correction -= gav * BET_M * (u_stage[:, :, k - 1] - u_stage[:, :, k])
        if k < levels - 1:
            gcv = 0.25 * (wcon[1:, :, k + 1] + wcon[:-1, :, k + 1])
            ccol_k = gcv * BET_P
            correction -= gcv * BET_M * (u_stage[:, :, k + 1] - u_stage[:, :, k])
        bcol = dtr - acol - ccol_k
        dcol[:, :, k] = dtr * u_pos[:, :, k] + utens[:, :, k] + stage[:, :, k] + correction
        if k == 0:
            divided = 1.0 / bcol
            dcol[:, :, k] *= divided
        else:
            divided = 1.0 / (bcol - ccol[:, :, k - 1] * acol)
            dcol[:, :, k] = (dcol[:, :, k] - dcol[:, :, k - 1] * acol) * divided
        ccol[:, :, k] = ccol_k * divided
    # The backward substitution, writing utens_stage = dtr_stage (u - u_pos) level by level.
    data = dcol[:, :, levels - 1]
    utens_stage[:, :, levels - 1] = dtr * (data - u_pos[:, :, levels - 1])
    for k in range(levels - 2, -1, -1):
        data = dcol[:, :, k] - ccol[:, :, k] * data
        utens_stage[:, :, k] = dtr * (data - u_pos[:, :, k])
