"""The numpy reference of embedding_gather (out = table[idx]). Inputs: idx uniform over the V rows
(repeats included, as a batch of tokens has), table uniform in [-1, 1]."""

from __future__ import annotations

import numpy as np


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    count, rows, width = sizes["N"], sizes["V"], sizes["D"]
    return {
        "idx": rng.integers(0, rows, count, dtype=np.int64),
        "table": rng.uniform(-1.0, 1.0, (rows, width)).astype(dtype),
        "out": np.zeros((count, width), dtype=dtype),
    }


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    arrays["out"][...] = arrays["table"][arrays["idx"]]
