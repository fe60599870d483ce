"""The reference of transpose_tiled: numpy's transpose."""

from __future__ import annotations

import numpy as np


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    arrays["B"][...] = arrays["A"].T
