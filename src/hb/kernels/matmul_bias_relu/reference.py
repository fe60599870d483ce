"""The numpy reference of matmul_bias_relu (Y = relu(X W^T + b)) and the ML track's linear-layer
inputs: activations uniform in [-1, 1], weights and biases uniform in [-1, 1] / sqrt(fan_in)
(PyTorch's default nn.Linear initialisation), so every pre-activation stays of order one."""

from __future__ import annotations

import numpy as np


def fan_in_uniform(
    rng: np.random.Generator, shape: tuple[int, ...], fan_in: int, dtype: np.dtype
) -> np.ndarray:
    """Uniform in [-1, 1] / sqrt(fan_in): the bound that keeps a layer's outputs of order one."""
    return (rng.uniform(-1.0, 1.0, shape) / np.sqrt(fan_in)).astype(dtype)


def linear(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """torch.nn.functional.linear in float64: x W^T + b with W stored [out, in]."""
    return x.astype(np.float64) @ weight.astype(np.float64).T + bias.astype(np.float64)


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    rows, inner, cols = sizes["N"], sizes["K"], sizes["M"]
    return {
        "X": rng.uniform(-1.0, 1.0, (rows, inner)).astype(dtype),
        "W": fan_in_uniform(rng, (cols, inner), inner, dtype),
        "b": fan_in_uniform(rng, (cols,), inner, dtype),
        "Y": np.zeros((rows, cols), dtype=dtype),
    }


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    arrays["Y"][...] = np.maximum(linear(arrays["X"], arrays["W"], arrays["b"]), 0.0)
