"""The reference of pagerank (iters pull steps of the damped power iteration from the uniform
vector) and its inputs: a random link graph with no dangling page."""

from __future__ import annotations

import numpy as np

from hb.kernels.sparse_inputs import (
    csr_matrix,
    csr_of,
    distinct_columns,
    prefixed,
    uneven_lengths,
)


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """Every page links to between about half and 1.5 times nnz / N distinct uniform pages (at
    least one, so no page dangles and P is column-stochastic); P in pull form holds 1 / out-degree
    of the linking page. Each step is a convex combination, so ranks stay positive and sum to 1:
    the iteration is a contraction by the damping factor, and rounding errors do not grow."""
    n, nnz = sizes["N"], sizes["nnz"]
    out_degree = uneven_lengths(n, nnz, n, rng)
    targets, _ = distinct_columns(out_degree, np.zeros(n, np.int64), np.full(n, n), rng)
    sources = np.repeat(np.arange(n, dtype=np.int64), out_degree)
    matrix = csr_of(targets, sources, 1.0 / out_degree[sources], n, dtype)
    return {**prefixed("P", matrix), "rank": np.zeros(n, dtype=dtype)}


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    n = sizes["N"]
    dtype = arrays["rank"].dtype
    links = csr_matrix(arrays, "P", (n, n))
    damping = dtype.type(scalars["damping"])
    teleport = (dtype.type(1) - damping) / dtype.type(n)
    rank = np.full(n, dtype.type(1) / dtype.type(n), dtype=dtype)
    for _ in range(int(scalars["iters"])):
        rank = teleport + damping * (links @ rank)
    arrays["rank"][...] = rank
