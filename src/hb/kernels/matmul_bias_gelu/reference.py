"""The numpy reference of matmul_bias_gelu (Y = GELU(X W^T + b)), in float64; inputs are the linear
layer's of matmul_bias_relu (weights uniform in [-1, 1] / sqrt(K), pre-activations of order one)."""

from __future__ import annotations

import numpy as np

from hb.kernels import load_reference

input_ranges = load_reference("matmul_bias_relu").input_ranges


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    linear = load_reference("matmul_bias_relu").linear
    arrays["Y"][...] = load_reference("gelu").gelu(linear(arrays["X"], arrays["W"], arrays["b"]))
