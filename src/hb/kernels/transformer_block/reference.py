"""The numpy reference of transformer_block, composed of the catalog's own references (rmsnorm,
multi_head_attention with the causal mask, mlp_block), in float64. Inputs: x uniform in [-1, 1],
the gains uniform in [0.5, 1.5] (around RMSNorm's initial 1), every projection and bias uniform in
[-1, 1] / sqrt(fan_in), so the residual stream stays of order one."""

from __future__ import annotations

import numpy as np

from hb.kernels import load_reference


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    fan_in_uniform = load_reference("matmul_bias_relu").fan_in_uniform
    shape, width, hidden = (sizes["B"], sizes["L"], sizes["D"]), sizes["D"], sizes["F"]
    arrays = {"x": rng.uniform(-1.0, 1.0, shape).astype(dtype)}
    arrays["g1"] = rng.uniform(0.5, 1.5, width).astype(dtype)
    for name in ("wq", "wk", "wv", "wo"):
        arrays[name] = fan_in_uniform(rng, (width, width), width, dtype)
    arrays["g2"] = rng.uniform(0.5, 1.5, width).astype(dtype)
    arrays["w1"] = fan_in_uniform(rng, (hidden, width), width, dtype)
    arrays["b1"] = fan_in_uniform(rng, (hidden,), width, dtype)
    arrays["w2"] = fan_in_uniform(rng, (width, hidden), hidden, dtype)
    arrays["b2"] = fan_in_uniform(rng, (width,), hidden, dtype)
    arrays["y"] = np.zeros(shape, dtype=dtype)
    return arrays


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
