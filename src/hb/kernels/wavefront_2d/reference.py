"""The reference of wavefront_2d (TSVC s2111, divisor 2), one anti-diagonal at a time (each cell
rounds exactly as the row-major loop does)."""

from __future__ import annotations

import numpy as np


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    aa = arrays["aa"]
    n = aa.shape[0]
    two = aa.dtype.type(2)
    for diagonal in range(2, 2 * n - 1):
        j = np.arange(max(1, diagonal - n + 1), min(n - 1, diagonal - 1) + 1)
        i = diagonal - j
        aa[j, i] = (aa[j, i - 1] + aa[j - 1, i]) / two
