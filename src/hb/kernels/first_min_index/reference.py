"""The reference of first_min_index (Livermore kernel 24): numpy's argmin, which returns the first
minimum."""

from __future__ import annotations

import numpy as np


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    arrays["loc"][0] = int(np.argmin(arrays["x"]))
