"""The numpy reference of scaled_add: y <- y + alpha * x."""

from __future__ import annotations

import numpy as np


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    arrays["y"] += arrays["y"].dtype.type(scalars["alpha"]) * arrays["x"]
