"""The numpy reference of mat_scaled_add: B <- B + alpha * A."""

from __future__ import annotations

import numpy as np


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    arrays["B"] += arrays["B"].dtype.type(scalars["alpha"]) * arrays["A"]
