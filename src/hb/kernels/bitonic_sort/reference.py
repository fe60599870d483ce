"""The numpy reference of bitonic_sort: the input in ascending order (a sort's output is the same
whatever the algorithm); inputs uniform in [-1, 1] from the default generator."""

from __future__ import annotations

import numpy as np


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    arrays["y"][...] = np.sort(arrays["x"])
