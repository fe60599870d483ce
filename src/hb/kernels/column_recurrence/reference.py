"""The reference of column_recurrence (TSVC s231): a sequential cumulative sum down each column
(each cell rounds as the loop does)."""

from __future__ import annotations

import numpy as np


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    aa, bb = arrays["aa"], arrays["bb"]
    aa[1:] = np.cumsum(np.concatenate([aa[:1], bb[1:]]), axis=0)[1:]
