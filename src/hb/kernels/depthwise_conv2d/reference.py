"""The numpy reference of depthwise_conv2d ('same', K odd, groups = C), in float64, tap by tap over
the zero-padded input, on conv1d's convolution inputs (weights uniform in [-1, 1] / sqrt(K K):
outputs of order one)."""

from __future__ import annotations

import numpy as np

from hb.kernels import load_reference


def input_ranges(sizes: dict[str, int]) -> dict[str, tuple[float, float]]:
    taps = sizes["K"]
    return load_reference("conv1d").convolution_ranges((sizes["C"], 1, taps, taps))


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    height, width, taps = sizes["H"], sizes["W"], sizes["K"]
    if taps % 2 == 0:
        raise ValueError(f"'same' padding needs an odd kernel width, not K={taps}")
    pad = taps // 2
    padded = np.pad(arrays["x"].astype(np.float64), [(0, 0), (0, 0), (pad, pad), (pad, pad)])
    weight = arrays["w"].astype(np.float64)[:, 0]
    out = np.empty(arrays["y"].shape, dtype=np.float64)
    out[...] = arrays["b"].astype(np.float64)[None, :, None, None]
    for i in range(taps):
        for j in range(taps):
            out += weight[None, :, i, j, None, None] * padded[:, :, i : i + height, j : j + width]
    arrays["y"][...] = out
