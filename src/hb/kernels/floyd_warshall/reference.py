"""The numpy reference of floyd_warshall (one min-plus relaxation per intermediate vertex) and its
integer-valued weights."""

from __future__ import annotations

import numpy as np

NO_EDGE = 10_000.0


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """Weights are integers in [1, 100) on about half the pairs and NO_EDGE elsewhere (PolyBench's
    999 plays that part): every path length is an integer far below 2^24, so each sum is exact in
    fp32 as in fp64 and the answer does not depend on the order of the relaxations."""
    n = sizes["N"]
    weights = rng.integers(1, 100, (n, n)).astype(np.float64)
    weights[rng.random((n, n)) < 0.5] = NO_EDGE
    return {"paths": weights.astype(dtype)}


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    # Step k leaves row and column k unchanged (paths[k][k] >= 0), so a whole-matrix update per
    # k is PolyBench's in-place loop.
    paths = arrays["paths"].astype(np.float64)
    for k in range(sizes["N"]):
        np.minimum(paths, paths[:, k, None] + paths[None, k, :], out=paths)
    arrays["paths"][...] = paths
