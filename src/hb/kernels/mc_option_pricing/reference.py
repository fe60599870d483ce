"""The numpy reference of mc_option_pricing (European calls by Monte Carlo under geometric Brownian
motion) and its inputs.

Path i draws one standard normal by Box-Muller, z = sqrt(-2 ln u1) cos(2 pi u2), from
u1 = (s(2i) >> 11 + 1) 2^-53 in (0, 1] and u2 = (s(2i+1) >> 11) 2^-53 in [0, 1), s(c) splitmix64
of the counter c under the key, as mc_pi's generator (imported from it): every implementation
prices on the same normals, so the estimate is reproducible up to rounding and summation order.
"""

from __future__ import annotations

import numpy as np

from hb.kernels import load_reference

CHUNK = 1 << 16
splitmix64 = load_reference("mc_pi").splitmix64


def normals(key: np.uint64, first: int, last: int) -> np.ndarray:
    """The standard normals of paths first .. last - 1 under `key` (float64)."""
    paths = np.arange(first, last, dtype=np.uint64)
    bits1 = splitmix64(key, np.uint64(2) * paths) >> np.uint64(11)
    bits2 = splitmix64(key, np.uint64(2) * paths + np.uint64(1)) >> np.uint64(11)
    u1 = (bits1.astype(np.float64) + 1.0) * 2.0**-53
    u2 = bits2.astype(np.float64) * 2.0**-53
    return np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """Spots in [50, 150], strikes within 20% of the spot, expiries in [0.25, 2] years: every call
    has a substantial share of paths in the money, so its price is well above the band's atol."""
    m = sizes["M"]
    spot = rng.uniform(50.0, 150.0, m)
    return {
        "key": rng.integers(0, np.iinfo(np.int64).max, 1, dtype=np.int64),
        "S0": spot.astype(dtype),
        "K": (spot * rng.uniform(0.8, 1.2, m)).astype(dtype),
        "T": rng.uniform(0.25, 2.0, m).astype(dtype),
        "price": np.zeros(m, dtype=dtype),
    }


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    n = sizes["N"]
    key = np.uint64(int(arrays["key"][0]) % (1 << 64))
    spot, strike, expiry = (arrays[name].astype(np.float64)[:, None] for name in ("S0", "K", "T"))
    rate, vol = scalars["r"], scalars["sigma"]
    drift, spread = (rate - 0.5 * vol * vol) * expiry, vol * np.sqrt(expiry)
    total = np.zeros(sizes["M"])
    for first in range(0, n, CHUNK):
        z = normals(key, first, min(first + CHUNK, n))[None, :]
        total += np.maximum(spot * np.exp(drift + spread * z) - strike, 0.0).sum(axis=1)
    arrays["price"][...] = np.exp(-rate * expiry[:, 0]) * total / n
