"""The numpy reference of conv1d ('same' cross-correlation, K odd) and the ML track's convolution
inputs: x uniform in [-1, 1], weights and biases uniform in [-1, 1] / sqrt(fan_in) with fan_in the
weight's inputs per output (PyTorch's default bound), so outputs stay of order one."""

from __future__ import annotations

import numpy as np

from hb.kernels import load_reference


def convolution_inputs(
    x_shape: tuple[int, ...],
    w_shape: tuple[int, ...],
    y_shape: tuple[int, ...],
    rng: np.random.Generator,
    dtype: np.dtype,
) -> dict[str, np.ndarray]:
    """x, w [out, in, kernel...], b [out] and a zero y; fan_in is the product of w's trailing axes."""
    fan_in = int(np.prod(w_shape[1:]))
    fan_in_uniform = load_reference("matmul_bias_relu").fan_in_uniform
    return {
        "x": rng.uniform(-1.0, 1.0, x_shape).astype(dtype),
        "w": fan_in_uniform(rng, w_shape, fan_in, dtype),
        "b": fan_in_uniform(rng, (w_shape[0],), fan_in, dtype),
        "y": np.zeros(y_shape, dtype=dtype),
    }


def same_windows(x: np.ndarray, width: int, axes: tuple[int, ...]) -> np.ndarray:
    """x in float64 zero-padded by width // 2 on both sides of `axes`, with a window of `width`
    cells at every original position (new trailing axes, one per entry of `axes`)."""
    if width % 2 == 0:
        raise ValueError(f"'same' padding needs an odd kernel width, not K={width}")
    padding = [(width // 2, width // 2) if a in axes else (0, 0) for a in range(x.ndim)]
    padded = np.pad(x.astype(np.float64), padding)
    return np.lib.stride_tricks.sliding_window_view(padded, (width,) * len(axes), axis=axes)


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    batch, length = sizes["N"], sizes["L"]
    return convolution_inputs(
        (batch, sizes["CI"], length),
        (sizes["CO"], sizes["CI"], sizes["K"]),
        (batch, sizes["CO"], length),
        rng,
        dtype,
    )


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    windows = same_windows(arrays["x"], sizes["K"], axes=(2,))
    out = np.einsum("nclk,ock->nol", windows, arrays["w"].astype(np.float64), optimize=True)
    arrays["y"][...] = out + arrays["b"].astype(np.float64)[None, :, None]
