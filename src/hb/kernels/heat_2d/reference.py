"""The numpy reference of heat_2d: TSTEPS pairs of 5-point sweeps A -> B -> A, heat-3d's update
with the third axis dropped."""

from __future__ import annotations

import numpy as np


def _sweep(s: np.ndarray, t: np.ndarray) -> None:
    kind = s.dtype.type
    c, two = kind(0.125), kind(2.0)
    mid = s[1:-1, 1:-1]
    t[1:-1, 1:-1] = (
        c * (s[2:, 1:-1] - two * mid + s[:-2, 1:-1])
        + c * (s[1:-1, 2:] - two * mid + s[1:-1, :-2])
        + mid
    )


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    a, b = arrays["A"], arrays["B"]
    for _ in range(int(scalars["TSTEPS"])):
        _sweep(a, b)
        _sweep(b, a)
