"""The numpy reference of mc_pi (Monte Carlo pi over a counter-based splitmix64) and its inputs.

Point i is (x, y) = (u(2i), u(2i+1)) / 2^31, u(c) the top 31 bits of splitmix64's output for the
counter c: z = key + (c + 1) * 0x9E3779B97F4A7C15 (mod 2^64), then splitmix64's finaliser. It lies
inside the quarter disc when x^2 + y^2 < 2^62 in exact integer arithmetic, so every
implementation counts the same hits and the estimate is reproducible to the last bit.
"""

from __future__ import annotations

import numpy as np

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
MIX1 = np.uint64(0xBF58476D1CE4E5B9)
MIX2 = np.uint64(0x94D049BB133111EB)
CHUNK = 1 << 22


def splitmix64(key: np.uint64, counters: np.ndarray) -> np.ndarray:
    """splitmix64's output for each counter under the seed `key` (uint64 arithmetic, wrapping)."""
    z = key + (counters + np.uint64(1)) * GOLDEN
    z = (z ^ (z >> np.uint64(30))) * MIX1
    z = (z ^ (z >> np.uint64(27))) * MIX2
    return z ^ (z >> np.uint64(31))


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """The generator's key drawn from the seed; the estimate starts at zero."""
    return {
        "key": rng.integers(0, np.iinfo(np.int64).max, 1, dtype=np.int64),
        "estimate": np.zeros(1, dtype=dtype),
    }


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    n = sizes["N"]
    key = np.uint64(int(arrays["key"][0]) % (1 << 64))
    hits = 0
    for first in range(0, n, CHUNK):
        points = np.arange(first, min(first + CHUNK, n), dtype=np.uint64)
        x = splitmix64(key, np.uint64(2) * points) >> np.uint64(33)
        y = splitmix64(key, np.uint64(2) * points + np.uint64(1)) >> np.uint64(33)
        hits += int(np.count_nonzero(x * x + y * y < np.uint64(1 << 62)))
    arrays["estimate"][0] = 4.0 * hits / n
