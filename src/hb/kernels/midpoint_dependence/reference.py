"""The reference of midpoint_dependence (TSVC s1113), split at the middle."""

from __future__ import annotations

import numpy as np


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    a, b = arrays["a"], arrays["b"]
    middle = a.shape[0] // 2
    before = a[middle]
    after = before + b[middle]
    a[: middle + 1] = before + b[: middle + 1]
    a[middle + 1 :] = after + b[middle + 1 :]
