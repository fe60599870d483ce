"""The numpy reference of mlp_block (linear, GELU, linear), in float64. Inputs: x uniform in
[-1, 1], each layer's weights and biases uniform in [-1, 1] / sqrt(fan_in) (D for the first, F for
the second), so the hidden and output activations stay of order one."""

from __future__ import annotations

import numpy as np

from hb.kernels import load_reference


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    fan_in_uniform = load_reference("matmul_bias_relu").fan_in_uniform
    rows, width, hidden = sizes["N"], sizes["D"], sizes["F"]
    return {
        "x": rng.uniform(-1.0, 1.0, (rows, width)).astype(dtype),
        "w1": fan_in_uniform(rng, (hidden, width), width, dtype),
        "b1": fan_in_uniform(rng, (hidden,), width, dtype),
        "w2": fan_in_uniform(rng, (width, hidden), hidden, dtype),
        "b2": fan_in_uniform(rng, (width,), hidden, dtype),
        "y": np.zeros((rows, width), dtype=dtype),
    }


def mlp(
    x: np.ndarray, w1: np.ndarray, b1: np.ndarray, w2: np.ndarray, b2: np.ndarray
) -> np.ndarray:
    """GELU(x W1^T + b1) W2^T + b2 over the last axis, in float64."""
    linear = load_reference("matmul_bias_relu").linear
    return linear(load_reference("gelu").gelu(linear(x, w1, b1)), w2, b2)


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    names = ("x", "w1", "b1", "w2", "b2")
    arrays["y"][...] = mlp(*(arrays[name] for name in names))
