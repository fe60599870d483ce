"""The numpy reference of mlp_block (linear, GELU, linear), in float64. Inputs: x uniform in
[-1, 1], each layer's weights and biases uniform in [-1, 1] / sqrt(fan_in) (D for the first, F for
the second), so the hidden and output activations stay of order one."""

from __future__ import annotations

import numpy as np

from hb.kernels import load_reference


def input_ranges(sizes: dict[str, int]) -> dict[str, tuple[float, float]]:
    """Each input's uniform range (hb.kernels.inputs): x in [-1, 1], each layer fan-in scaled."""
    fan_in_range = load_reference("matmul_bias_relu").fan_in_range
    first, second = fan_in_range(sizes["D"]), fan_in_range(sizes["F"])
    return {"x": (-1.0, 1.0), "w1": first, "b1": first, "w2": second, "b2": second}


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
