"""The reference of odd_stride_recurrence (TSVC s111): the odd elements from the even ones, which
the loop never writes."""

from __future__ import annotations

import numpy as np


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    a = arrays["a"]
    a[1::2] = a[0:-1:2][: a[1::2].shape[0]] + arrays["b"][1::2]
