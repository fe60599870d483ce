"""The reference of invariant_branches (TSVC s2710), with masks."""

from __future__ import annotations

import numpy as np


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    a, b, c, d, e = (arrays[k] for k in "abcde")
    taken = a > b
    one = a.dtype.type(1)
    c_taken = c + d * d if sizes["N"] > 10 else d * e + one
    c_other = a + d * d if scalars["x"] > 0 else c + e * e
    b_other = a + e * e
    a[...] = np.where(taken, a + b * d, a)
    c[...] = np.where(taken, c_taken, c_other)
    b[...] = np.where(taken, b, b_other)
