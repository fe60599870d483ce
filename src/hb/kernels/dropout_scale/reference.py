"""The numpy reference of dropout_scale: the keep mask from SplitMix64's output function at
seed + (i + 1) * golden gamma (uint64 arithmetic wraps as C's does), the kept elements scaled by
1 / (1 - p). p is compared at the problem precision, as the kernel receives it. Inputs: the
catalog's default (x uniform in [-1, 1])."""

from __future__ import annotations

import numpy as np

GOLDEN_GAMMA = np.uint64(0x9E3779B97F4A7C15)


def splitmix64(state: np.ndarray) -> np.ndarray:
    """SplitMix64's output function (Steele, Lea and Flood 2014) of each uint64 state."""
    z = state.copy()
    z ^= z >> np.uint64(30)
    z *= np.uint64(0xBF58476D1CE4E5B9)
    z ^= z >> np.uint64(27)
    z *= np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def uniform_at(seed: int, count: int) -> np.ndarray:
    """The draw u(i) in [0, 1) of each index i < count: 53 high bits of the mixed counter."""
    counter = np.arange(1, count + 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        state = np.uint64(seed % 2**64) + counter * GOLDEN_GAMMA
        bits = splitmix64(state)
    return (bits >> np.uint64(11)).astype(np.float64) * 2.0**-53


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    kind = arrays["x"].dtype.type
    p = float(kind(scalars["p"]))
    keep = uniform_at(int(scalars["seed"]), sizes["N"]) >= p
    arrays["y"][...] = np.where(keep, arrays["x"].astype(np.float64) / (1.0 - p), 0.0)
