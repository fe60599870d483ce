"""The numpy reference of attention (scaled dot-product attention), in float64. The catalog's
default inputs (Q, K, V uniform in [-1, 1]) keep the scaled scores of order one."""

from __future__ import annotations

import numpy as np

from hb.kernels import load_reference


def attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool) -> np.ndarray:
    """softmax(q k^T / sqrt(E)) v over the last two axes, in float64; `causal` masks every key
    after its query (torch's is_causal=True)."""
    scores = q.astype(np.float64) @ k.astype(np.float64).swapaxes(-1, -2) / np.sqrt(q.shape[-1])
    if causal:
        length = scores.shape[-1]
        scores[..., np.triu(np.ones((length, length), dtype=bool), k=1)] = -np.inf
    return load_reference("softmax").softmax(scores) @ v.astype(np.float64)


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    arrays["O"][...] = attention(arrays["Q"], arrays["K"], arrays["V"], causal=False)
