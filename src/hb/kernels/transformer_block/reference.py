"""The numpy reference of transformer_block, composed of the catalog's own references (rmsnorm,
multi_head_attention with the causal mask, mlp_block), in float64. Inputs: x uniform in [-1, 1],
the gains uniform in [0.5, 1.5] (around RMSNorm's initial 1), every projection and bias uniform in
[-1, 1] / sqrt(fan_in), so the residual stream stays of order one."""

from __future__ import annotations

import numpy as np

from hb.kernels import load_reference


def input_ranges(sizes: dict[str, int]) -> dict[str, tuple[float, float]]:
    """Each input's uniform range (hb.kernels.inputs)."""
    fan_in_range = load_reference("matmul_bias_relu").fan_in_range
    width, hidden, gain = fan_in_range(sizes["D"]), fan_in_range(sizes["F"]), (0.5, 1.5)
    ranges = {"x": (-1.0, 1.0), "g1": gain, "g2": gain, "w1": width, "b1": width}
    ranges |= {"w2": hidden, "b2": hidden}
    return ranges | {name: width for name in ("wq", "wk", "wv", "wo")}


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    rms_norm = load_reference("rmsnorm").rms_norm
    attention = load_reference("multi_head_attention").multi_head_attention
    mlp = load_reference("mlp_block").mlp
    x, eps = arrays["x"].astype(np.float64), scalars["eps"]
    weights = tuple(arrays[name] for name in ("wq", "wk", "wv", "wo"))
    h = x + attention(rms_norm(x, arrays["g1"], eps), weights, sizes["H"], causal=True)
    feed = mlp(rms_norm(h, arrays["g2"], eps), *(arrays[n] for n in ("w1", "b1", "w2", "b2")))
    arrays["y"][...] = h + feed
