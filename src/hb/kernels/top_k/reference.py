"""The numpy reference of top_k (each row's K largest values, descending). The catalog's default
inputs (uniform in [-1, 1]) serve: ties among values do not change the values returned."""

from __future__ import annotations

import numpy as np


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    count = sizes["K"]
    if not 0 < count <= sizes["C"]:
        raise ValueError(f"top_k: K={count} must lie in [1, C={sizes['C']}]")
    largest = np.partition(arrays["x"], sizes["C"] - count, axis=-1)[:, sizes["C"] - count :]
    arrays["values"][...] = np.sort(largest, axis=-1)[:, ::-1]
