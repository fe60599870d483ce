"""The numpy reference of deriche: PolyBench's coefficients (b1 = 2^-alpha as PolyBench writes
it) and its four second-order recursions, each a scipy.signal.lfilter with zero initial state."""

from __future__ import annotations

import math

import numpy as np
from scipy.signal import lfilter


def coefficients(alpha: float) -> tuple[float, float, float, float, float, float]:
    """a1, a2, a3, a4, b1, b2 of PolyBench's deriche (a5..a8 equal a1..a4, c1 = c2 = 1)."""
    e = math.exp(-alpha)
    k = (1.0 - e) * (1.0 - e) / (1.0 + 2.0 * alpha * e - math.exp(2.0 * alpha))
    return (k, k * e * (alpha - 1.0), k * e * (alpha + 1.0), -k * math.exp(-2.0 * alpha),
            2.0**-alpha, -math.exp(-2.0 * alpha))  # fmt: skip


def smooth(x: np.ndarray, axis: int, alpha: float) -> np.ndarray:
    """y1 + y2 along `axis`: y1[n] = a1 x[n] + a2 x[n-1] + b1 y1[n-1] + b2 y1[n-2] forwards,
    y2[n] = a3 x[n+1] + a4 x[n+2] + b1 y2[n+1] + b2 y2[n+2] backwards."""
    a1, a2, a3, a4, b1, b2 = coefficients(alpha)
    poles = [1.0, -b1, -b2]
    causal = lfilter([a1, a2], poles, x, axis=axis)
    backwards = np.flip(x, axis=axis)
    anti_causal = np.flip(lfilter([0.0, a3, a4], poles, backwards, axis=axis), axis=axis)
    return np.asarray(causal + anti_causal)


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """An image of intensities uniform in [0, 1) (PolyBench's is a ramp in [0, 1]); the
    recursions' poles lie inside the unit circle (|z|^2 = exp(-2 alpha)), so they stay bounded."""
    w, h = sizes["W"], sizes["H"]
    return {"imgIn": rng.random((w, h)).astype(dtype), "imgOut": np.zeros((w, h), dtype=dtype)}


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    alpha = scalars["alpha"]
    rows = smooth(arrays["imgIn"].astype(np.float64), 1, alpha)
    arrays["imgOut"][...] = smooth(rows, 0, alpha)
