"""The numpy reference of seidel_2d. Along a row the sweep is the first-order recurrence
x[j] = (c[j] + x[j - 1]) / 9, c[j] the sum of the other eight points (the row above already swept,
the row below and the point's right neighbour not yet), so each row is one linear filter
(scipy.signal.lfilter) instead of a Python loop over its points; computed in fp64 and rounded to
the problem precision once at the end."""

from __future__ import annotations

import numpy as np
from scipy.signal import lfilter

_ONE_NINTH = 1.0 / 9.0


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    a = arrays["A"].astype(np.float64)
    n = sizes["N"]
    denominator = np.array([1.0, -_ONE_NINTH])
    for _ in range(int(scalars["TSTEPS"])):
        for i in range(1, n - 1):
            above, row, below = a[i - 1], a[i], a[i + 1]
            c = (
                (above[:-2] + above[1:-1] + above[2:])
                + (row[1:-1] + row[2:])
                + (below[:-2] + below[1:-1] + below[2:])
            )
            swept, _ = lfilter([_ONE_NINTH], denominator, c, zi=[_ONE_NINTH * row[0]])
            row[1:-1] = swept
    arrays["A"][...] = a
