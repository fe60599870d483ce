"""The numpy reference of softmax over the last axis, in float64 with the row maximum subtracted.
Logits are uniform in [-5, 5], so a row's probabilities span four orders of magnitude."""

from __future__ import annotations

import numpy as np


def make_logits(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """x [N,D] uniform in [-5, 5] and y [N,D] zero: the inputs of softmax and log_softmax."""
    shape = (sizes["N"], sizes["D"])
    return {"x": rng.uniform(-5.0, 5.0, shape).astype(dtype), "y": np.zeros(shape, dtype=dtype)}


def input_ranges(sizes: dict[str, int]) -> dict[str, tuple[float, float]]:
    """x's uniform range (hb.kernels.inputs), make_logits' [-5, 5]."""
    return {"x": (-5.0, 5.0)}


def log_softmax(x: np.ndarray) -> np.ndarray:
    """torch.nn.functional.log_softmax(x, dim=-1) in float64."""
    shifted = x.astype(np.float64) - x.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def softmax(x: np.ndarray) -> np.ndarray:
    """torch.nn.functional.softmax(x, dim=-1) in float64."""
    return np.exp(log_softmax(x))


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    arrays["y"][...] = softmax(arrays["x"])
