"""The reference of cond_sum (TSVC s3111): the sum of the positive a[i], in float64, rounded once."""

from __future__ import annotations

import numpy as np


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    a = arrays["a"]
    arrays["sum"][0] = a[a > 0].sum(dtype=np.float64)
