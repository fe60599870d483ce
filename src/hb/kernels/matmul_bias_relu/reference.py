"""The numpy reference of matmul_bias_relu (Y = relu(X W^T + b)) and the ML track's linear-layer
inputs: activations uniform in [-1, 1], weights and biases uniform in [-1, 1] / sqrt(fan_in)
(PyTorch's default nn.Linear initialisation), so every pre-activation stays of order one."""

from __future__ import annotations

import numpy as np


def linear(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """torch.nn.functional.linear in float64: x W^T + b with W stored [out, in]."""
    return x.astype(np.float64) @ weight.astype(np.float64).T + bias.astype(np.float64)


def fan_in_range(fan_in: int) -> tuple[float, float]:
    """A layer's weight range: [-1, 1] / sqrt(fan_in), PyTorch's nn.Linear bound."""
    bound = 1.0 / float(np.sqrt(fan_in))
    return (-bound, bound)


def input_ranges(sizes: dict[str, int]) -> dict[str, tuple[float, float]]:
    """Each input's uniform range (hb.kernels.inputs): X in [-1, 1], W and b fan-in scaled."""
    return {"X": (-1.0, 1.0), "W": fan_in_range(sizes["K"]), "b": fan_in_range(sizes["K"])}


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    arrays["Y"][...] = np.maximum(linear(arrays["X"], arrays["W"], arrays["b"]), 0.0)
