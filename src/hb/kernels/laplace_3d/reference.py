"""The numpy reference of laplace_3d: TSTEPS pairs of Jacobi sweeps A -> B -> A, each interior
point replaced by the mean of its six neighbours (the boundary planes are the Dirichlet data)."""

from __future__ import annotations

import numpy as np


def _sweep(s: np.ndarray, t: np.ndarray) -> None:
    sixth = s.dtype.type(1.0 / 6.0)
    t[1:-1, 1:-1, 1:-1] = sixth * (
        ((s[:-2, 1:-1, 1:-1] + s[2:, 1:-1, 1:-1]) + (s[1:-1, :-2, 1:-1] + s[1:-1, 2:, 1:-1]))
        + (s[1:-1, 1:-1, :-2] + s[1:-1, 1:-1, 2:])
    )


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    a, b = arrays["A"], arrays["B"]
    for _ in range(int(scalars["TSTEPS"])):
        _sweep(a, b)
        _sweep(b, a)
