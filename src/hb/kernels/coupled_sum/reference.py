"""The reference of coupled_sum (TSVC s319): a and b at the precision, their sum in float64 rounded
once."""

from __future__ import annotations

import numpy as np


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    c, d, e = arrays["c"], arrays["d"], arrays["e"]
    arrays["a"][...] = c + d
    arrays["b"][...] = c + e
    arrays["sum"][0] = arrays["a"].sum(dtype=np.float64) + arrays["b"].sum(dtype=np.float64)
