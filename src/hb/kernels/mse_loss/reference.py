"""The numpy reference of mse_loss (mean squared difference), in float64. The catalog's default
inputs (uniform in [-1, 1]) make every term non-negative, so the mean has no cancellation."""

from __future__ import annotations

import numpy as np


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    difference = arrays["pred"].astype(np.float64) - arrays["target"]
    arrays["loss"][0] = np.mean(difference * difference)
