"""The numpy reference of jacobi_1d: TSTEPS pairs of 3-point sweeps A -> B -> A, PolyBench's
constant 0.33333 as it is written there."""

from __future__ import annotations

import numpy as np


def _sweep(source: np.ndarray, target: np.ndarray) -> None:
    third = source.dtype.type(0.33333)
    target[1:-1] = third * ((source[:-2] + source[1:-1]) + source[2:])


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    a, b = arrays["A"], arrays["B"]
    for _ in range(int(scalars["TSTEPS"])):
        _sweep(a, b)
        _sweep(b, a)
