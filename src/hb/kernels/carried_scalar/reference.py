"""The reference of carried_scalar (TSVC s252)."""

from __future__ import annotations

import numpy as np


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    s = arrays["b"] * arrays["c"]
    arrays["a"][0] = s[0]
    arrays["a"][1:] = s[1:] + s[:-1]
