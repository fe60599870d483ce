"""The reference of statement_reorder (TSVC s211), reordered as the dependences allow."""

from __future__ import annotations

import numpy as np


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    a, b, c, d, e = (arrays[k] for k in "abcde")
    old = b.copy()
    b[1:-1] = old[2:] - e[1:-1] * d[1:-1]
    a[1] = old[0] + c[1] * d[1]
    a[2:-1] = b[1:-2] + c[2:-1] * d[2:-1]
