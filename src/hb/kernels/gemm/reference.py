"""The numpy reference of gemm: C <- alpha * A B + beta * C."""

from __future__ import annotations

import numpy as np


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    kind = arrays["C"].dtype.type
    product = arrays["A"] @ arrays["B"]
    arrays["C"][...] = kind(scalars["alpha"]) * product + kind(scalars["beta"]) * arrays["C"]
