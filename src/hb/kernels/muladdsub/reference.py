"""The reference of muladdsub (RAJAPerf Basic MULADDSUB)."""

from __future__ import annotations

import numpy as np


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    x, y = arrays["in1"], arrays["in2"]
    arrays["out1"][...] = x * y
    arrays["out2"][...] = x + y
    arrays["out3"][...] = x - y
