"""The numpy reference of conv1d ('same' cross-correlation, K odd) and the ML track's convolution
inputs: x uniform in [-1, 1], weights and biases uniform in [-1, 1] / sqrt(fan_in) with fan_in the
weight's inputs per output (PyTorch's default bound), so outputs stay of order one."""

from __future__ import annotations

import numpy as np

from hb.kernels import load_reference


def convolution_ranges(w_shape: tuple[int, ...]) -> dict[str, tuple[float, float]]:
    """x in [-1, 1], w [out, in, kernel...] and b [out] fan-in scaled (hb.kernels.inputs),
    fan_in being the product of w's trailing axes."""
    bound = load_reference("matmul_bias_relu").fan_in_range(int(np.prod(w_shape[1:])))
    return {"x": (-1.0, 1.0), "w": bound, "b": bound}


def same_windows(x: np.ndarray, width: int, axes: tuple[int, ...]) -> np.ndarray:
    """x in float64 zero-padded by width // 2 on both sides of `axes`, with a window of `width`
    cells at every original position (new trailing axes, one per entry of `axes`)."""
    if width % 2 == 0:
        raise ValueError(f"'same' padding needs an odd kernel width, not K={width}")
    padding = [(width // 2, width // 2) if a in axes else (0, 0) for a in range(x.ndim)]
    padded = np.pad(x.astype(np.float64), padding)
    return np.lib.stride_tricks.sliding_window_view(padded, (width,) * len(axes), axis=axes)


def input_ranges(sizes: dict[str, int]) -> dict[str, tuple[float, float]]:
    return convolution_ranges((sizes["CO"], sizes["CI"], sizes["K"]))


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    windows = same_windows(arrays["x"], sizes["K"], axes=(2,))
    out = np.einsum("nclk,ock->nol", windows, arrays["w"].astype(np.float64), optimize=True)
    arrays["y"][...] = out + arrays["b"].astype(np.float64)[None, :, None]
