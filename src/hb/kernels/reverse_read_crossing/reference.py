"""The reference of reverse_read_crossing (TSVC s281), split at the middle as the dependences
allow."""

from __future__ import annotations

import numpy as np


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    a, b, c = arrays["a"], arrays["b"], arrays["c"]
    n = a.shape[0]
    half = (n + 1) // 2  # i < half reads an a[N-1-i] the loop has not written yet
    x = a[::-1][:half] + b[:half] * c[:half]
    a[:half] = x - a.dtype.type(1)
    b[:half] = x
    rest = np.arange(half, n)
    x = a[n - 1 - rest] + b[half:] * c[half:]
    a[half:] = x - a.dtype.type(1)
    b[half:] = x
