"""The numpy reference of sgd_momentum (torch.optim.SGD's step with an existing momentum buffer),
in float64 on the catalog's default inputs (param, grad and buf uniform in [-1, 1])."""

from __future__ import annotations

import numpy as np


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    param = arrays["param"].astype(np.float64)
    grad = arrays["grad"] + scalars["weight_decay"] * param
    buf = scalars["momentum"] * arrays["buf"] + grad
    arrays["param"][...] = param - scalars["lr"] * buf
    arrays["buf"][...] = buf
