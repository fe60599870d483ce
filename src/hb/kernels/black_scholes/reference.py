"""The numpy reference of black_scholes (closed-form European call and put prices) and its inputs."""

from __future__ import annotations

import numpy as np
from scipy.special import ndtr


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """Options near the money (K / S in [0.9, 1.1]) with volatility in [0.2, 0.6], rate in
    [0.01, 0.05] and expiry in [0.5, 2] years: |d1|, |d2| stay below about 1.2, so neither price
    is a tiny difference of two large terms and both are at least about 1% of the spot."""
    n = sizes["N"]
    spot = rng.uniform(50.0, 150.0, n)
    return {
        "S": spot.astype(dtype),
        "K": (spot * rng.uniform(0.9, 1.1, n)).astype(dtype),
        "r": rng.uniform(0.01, 0.05, n).astype(dtype),
        "v": rng.uniform(0.2, 0.6, n).astype(dtype),
        "T": rng.uniform(0.5, 2.0, n).astype(dtype),
        "call": np.zeros(n, dtype=dtype),
        "put": np.zeros(n, dtype=dtype),
    }


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    spot, strike, rate, vol, expiry = (
        arrays[name].astype(np.float64) for name in ("S", "K", "r", "v", "T")
    )
    spread = vol * np.sqrt(expiry)
    d1 = (np.log(spot / strike) + (rate + 0.5 * vol * vol) * expiry) / spread
    d2 = d1 - spread
    discounted = strike * np.exp(-rate * expiry)
    arrays["call"][...] = spot * ndtr(d1) - discounted * ndtr(d2)
    arrays["put"][...] = discounted * ndtr(-d2) - spot * ndtr(-d1)
