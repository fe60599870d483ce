"""The numpy reference of conv2d ('same' cross-correlation, K odd), in float64, on conv1d's
convolution inputs (weights uniform in [-1, 1] / sqrt(CI K K): outputs of order one)."""

from __future__ import annotations

import numpy as np

from hb.kernels import load_reference


def input_ranges(sizes: dict[str, int]) -> dict[str, tuple[float, float]]:
    taps = sizes["K"]
    return load_reference("conv1d").convolution_ranges((sizes["CO"], sizes["CI"], taps, taps))


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    windows = load_reference("conv1d").same_windows(arrays["x"], sizes["K"], axes=(2, 3))
    weight = arrays["w"].astype(np.float64)
    out = np.einsum("nchwij,ocij->nohw", windows, weight, optimize=True)
    arrays["y"][...] = out + arrays["b"].astype(np.float64)[None, :, None, None]
