"""The numpy reference of jacobi_2d: TSTEPS pairs of 5-point sweeps A -> B -> A."""

from __future__ import annotations

import numpy as np


def _sweep(source: np.ndarray, target: np.ndarray) -> None:
    fifth = source.dtype.type(0.2)
    target[1:-1, 1:-1] = fifth * (
        source[1:-1, 1:-1]
        + source[1:-1, :-2]
        + source[1:-1, 2:]
        + source[2:, 1:-1]
        + source[:-2, 1:-1]
    )


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    a, b = arrays["A"], arrays["B"]
    for _ in range(int(scalars["TSTEPS"])):
        _sweep(a, b)
        _sweep(b, a)
