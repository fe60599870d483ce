"""Counter-based inputs: every element a pure function of (seed, array stream, global flat index),
so that any rank's shard is generated on its own, bit for bit the slice of the whole array the
judge generates for the reference (the machine_learning track's kernels, hb.kernels)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

# splitmix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", OOPSLA
# 2014; the finaliser with Stafford's Mix13 constants, as in java.util.SplittableRandom): its n-th
# output from state s is mix64(s + n * GAMMA), a counter-based generator by construction.
GAMMA = 0x9E3779B97F4A7C15
MIX1 = 0xBF58476D1CE4E5B9
MIX2 = 0x94D049BB133111EB
MASK64 = (1 << 64) - 1
# The default range of a floating input: the catalog's convention for a kernel without its own.
DEFAULT_RANGE = (-1.0, 1.0)

Ranges = dict[str, tuple[float, float] | None]


def mix64(z: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser over uint64 words (wrapping arithmetic)."""
    z = z.astype(np.uint64, copy=True)
    shifted = np.empty_like(z)
    for shift, factor in ((30, MIX1), (27, MIX2)):
        np.right_shift(z, np.uint64(shift), out=shifted)
        z ^= shifted
        z *= np.uint64(factor)
    np.right_shift(z, np.uint64(31), out=shifted)
    z ^= shifted
    return z


def stream_state(seed: int, array_index: int) -> int:
    """The state of array `array_index`'s stream under `seed`: splitmix64's output number
    array_index + 1 from state `seed`, so that the arrays of one seed are independent streams."""
    start = (seed + (array_index + 1) * GAMMA) & MASK64
    return int(mix64(np.array([start], dtype=np.uint64))[0])


def words_at(seed: int, array_index: int, flat: np.ndarray) -> np.ndarray:
    """The 64-bit words of elements `flat` (global row-major indices, int64, >= 0) of an array:
    splitmix64's output number flat + 1 from the array's stream state."""
    counters = flat.astype(np.uint64)
    counters += np.uint64(1)
    counters *= np.uint64(GAMMA)
    counters += np.uint64(stream_state(seed, array_index))
    return mix64(counters)


def uniform_at(
    seed: int, array_index: int, flat: np.ndarray, low: float, high: float, dtype: np.dtype
) -> np.ndarray:
    """Elements `flat` of an array uniform in [low, high): the word's top 53 bits as a double u in
    [0, 1), low + (high - low) * u in float64 (two roundings, no fused multiply-add), then rounded
    to `dtype`. A negative index (a dead cell of a local layout) reads zero."""
    flat = np.asarray(flat, dtype=np.int64)
    dead = flat < 0
    words = words_at(seed, array_index, np.where(dead, 0, flat) if dead.any() else flat)
    words >>= np.uint64(11)
    values = words.astype(np.float64)
    values *= 2.0**-53
    values *= high - low
    values += low
    if dead.any():
        values[dead] = 0.0
    return values.astype(dtype, copy=False)


def generated_tile(entry: Mapping[str, Any] | None, seed: int, flat: np.ndarray,
                   dtype: np.dtype) -> np.ndarray:  # fmt: skip
    """One rank's packed tile of one array (`entry` from generation_job) at its global indices."""
    if entry is None:
        return np.zeros(len(flat), dtype=dtype)
    return uniform_at(seed, int(entry["stream"]), flat, float(entry["low"]),
                      float(entry["high"]), dtype)  # fmt: skip
