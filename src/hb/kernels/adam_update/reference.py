"""The numpy reference of adam_update (torch.optim.Adam's step with L2 weight decay), in float64.
Inputs as after a few steps: param and grad uniform in [-1, 1], the first moment m uniform in
[-0.1, 0.1] and the second moment v uniform in [0, 0.01] (a variance: never negative)."""

from __future__ import annotations

import numpy as np


def input_ranges(sizes: dict[str, int]) -> dict[str, tuple[float, float]]:
    """Each input's uniform range (hb.kernels.inputs): moments of a few steps' gradients."""
    return {"param": (-1.0, 1.0), "grad": (-1.0, 1.0), "m": (-0.1, 0.1), "v": (0.0, 0.01)}


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    beta1, beta2, step = scalars["beta1"], scalars["beta2"], int(scalars["step"])
    param = arrays["param"].astype(np.float64)
    grad = arrays["grad"] + scalars["weight_decay"] * param
    m = beta1 * arrays["m"] + (1.0 - beta1) * grad
    v = beta2 * arrays["v"] + (1.0 - beta2) * grad * grad
    m_hat, v_hat = m / (1.0 - beta1**step), v / (1.0 - beta2**step)
    arrays["param"][...] = param - scalars["lr"] * m_hat / (np.sqrt(v_hat) + scalars["eps"])
    arrays["m"][...] = m
    arrays["v"][...] = v
