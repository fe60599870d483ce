"""The reference of index_list (RAJAPerf INDEXLIST): the matching indices, then -1."""

from __future__ import annotations

import numpy as np


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    hits = np.flatnonzero(arrays["x"] < 0)
    arrays["list"][...] = -1
    arrays["list"][: hits.size] = hits
    arrays["count"][0] = hits.size
