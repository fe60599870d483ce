"""The reference of goto_branch_nest (TSVC s279), with masks."""

from __future__ import annotations

import numpy as np


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    a, b, c, d, e = (arrays[k] for k in "abcde")
    positive = a > 0
    b_new = np.where(positive, b, -b + d * d)
    more = ~positive & (b_new > a)
    c_new = np.where(positive, -c + e * e, np.where(more, c + d * e, c))
    b[...] = b_new
    c[...] = c_new
    a[...] = b_new + c_new * d
