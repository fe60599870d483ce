"""The reference of distribute_interchange (TSVC s2275)."""

from __future__ import annotations

import numpy as np


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    arrays["aa"] += arrays["bb"] * arrays["cc"]
    arrays["a"][...] = arrays["b"] + arrays["c"] * arrays["d"]
