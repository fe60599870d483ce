"""The numpy reference of ifft_radix2 (numpy.fft.ifft over interleaved complex values, as
fft_radix2's reference lays them out) and its inputs."""

from __future__ import annotations

import numpy as np

from hb.kernels import load_reference


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """A spectrum with real and imaginary parts uniform in [-1, 1]: the signal is then
    O(1 / sqrt(N)), and the transform's rounding (about eps log2 N relative to the vector's norm)
    far inside the band's atol at every output."""
    n = sizes["N"]
    return {
        "x": rng.uniform(-1.0, 1.0, (n, 2)).astype(dtype),
        "y": np.zeros((n, 2), dtype=dtype),
    }


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    load_reference("fft_radix2").interleaved(arrays, np.fft.ifft)
