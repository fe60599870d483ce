"""The numpy reference of rmsnorm over the last axis, in float64. The catalog's default inputs (x
and g uniform in [-1, 1]) keep every row's mean square near 1/3, far above eps."""

from __future__ import annotations

import numpy as np


def rms_norm(x: np.ndarray, gain: np.ndarray, eps: float) -> np.ndarray:
    """x / sqrt(mean(x^2) + eps) * gain over the last axis, in float64."""
    wide = x.astype(np.float64)
    scale = 1.0 / np.sqrt((wide * wide).mean(axis=-1, keepdims=True) + eps)
    return wide * scale * gain.astype(np.float64)


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    arrays["y"][...] = rms_norm(arrays["x"], arrays["g"], scalars["eps"])
