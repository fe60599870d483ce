"""The numpy reference of multi_head_attention (self-attention with input and output projections),
in float64. Inputs: x uniform in [-1, 1], the projections uniform in [-1, 1] / sqrt(D) (PyTorch's
nn.Linear bound), so queries, keys and scores stay of order one."""

from __future__ import annotations

import numpy as np

from hb.kernels import load_reference


def input_ranges(sizes: dict[str, int]) -> dict[str, tuple[float, float]]:
    """Each input's uniform range (hb.kernels.inputs)."""
    projection = load_reference("matmul_bias_relu").fan_in_range(sizes["D"])
    return {"x": (-1.0, 1.0)} | {name: projection for name in ("wq", "wk", "wv", "wo")}


def multi_head_attention(
    x: np.ndarray, weights: tuple[np.ndarray, ...], heads: int, causal: bool
) -> np.ndarray:
    """Self-attention of x [B,L,D] over `heads` heads with weights (wq, wk, wv, wo), in float64."""
    batch, length, width = x.shape
    if width % heads:
        raise ValueError(f"multi_head_attention: H={heads} must divide D={width}")
    wq, wk, wv, wo = (w.astype(np.float64) for w in weights)
    wide = x.astype(np.float64)

    def heads_of(weight: np.ndarray) -> np.ndarray:
        projected = (wide @ weight.T).reshape(batch, length, heads, width // heads)
        return projected.transpose(0, 2, 1, 3)

    context = load_reference("attention").attention(
        heads_of(wq), heads_of(wk), heads_of(wv), causal
    )
    return context.transpose(0, 2, 1, 3).reshape(batch, length, width) @ wo.T


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    weights = tuple(arrays[name] for name in ("wq", "wk", "wv", "wo"))
    arrays["y"][...] = multi_head_attention(arrays["x"], weights, sizes["H"], causal=False)
