"""The numpy reference of fft_radix2 (numpy.fft.fft over interleaved complex values) and its
inputs."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """Real and imaginary parts uniform in [-1, 1] scaled by 1 / sqrt(N): the spectrum is O(1)
    whatever N, so the transform's rounding (about eps log2 N relative to the vector's norm) stays
    inside the band's atol even at outputs near zero."""
    n = sizes["N"]
    x = rng.uniform(-1.0, 1.0, (n, 2)) / np.sqrt(n)
    return {"x": x.astype(dtype), "y": np.zeros((n, 2), dtype=dtype)}


def interleaved(
    arrays: dict[str, np.ndarray], transform: Callable[[np.ndarray], np.ndarray]
) -> None:
    """y <- transform(x), both [N, 2] interleaved (re, im) pairs, computed in complex128."""
    x = arrays["x"].astype(np.float64)
    result = transform(x[:, 0] + 1j * x[:, 1])
    arrays["y"][...] = np.stack([result.real, result.imag], axis=1)


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    interleaved(arrays, np.fft.fft)
