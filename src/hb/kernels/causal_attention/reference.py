"""The numpy reference of causal_attention (attention's, with the causal mask), in float64 on the
catalog's default inputs (uniform in [-1, 1]: scaled scores of order one)."""

from __future__ import annotations

import numpy as np

from hb.kernels import load_reference


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    attention = load_reference("attention").attention
    arrays["O"][...] = attention(arrays["Q"], arrays["K"], arrays["V"], causal=True)
