"""The reference of half_index_read (TSVC s4117)."""

from __future__ import annotations

import numpy as np


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    n = sizes["N"]
    arrays["a"][...] = arrays["b"] + arrays["c"][np.arange(n) // 2] * arrays["d"]
