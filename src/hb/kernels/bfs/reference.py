"""The reference of bfs (scipy's unweighted shortest-path lengths from the source, -1 where
unreachable) and its inputs: a random directed graph of uneven out-degrees."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import shortest_path

from hb.kernels.sparse_inputs import distinct_columns, uneven_lengths


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """Every vertex has between about half and 1.5 times nnz / N successors, distinct and
    uniform (self-loops allowed); edge values uniform [-1, 1], which BFS does not read. With
    several successors each, almost every vertex is reachable, in few levels."""
    n, nnz = sizes["N"], sizes["nnz"]
    lengths = uneven_lengths(n, nnz, n, rng)
    indices, indptr = distinct_columns(lengths, np.zeros(n, np.int64), np.full(n, n), rng)
    return {
        "A_data": rng.uniform(-1.0, 1.0, nnz).astype(dtype),
        "A_indices": indices,
        "A_indptr": indptr,
        "level": np.zeros(n, dtype=np.int64),
    }


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    n = sizes["N"]
    ones = np.ones(arrays["A_indices"].shape[0])
    graph = sp.csr_array((ones, arrays["A_indices"], arrays["A_indptr"]), shape=(n, n))
    distance = shortest_path(graph, directed=True, unweighted=True, indices=int(scalars["source"]))
    arrays["level"][...] = np.where(np.isinf(distance), -1, distance).astype(np.int64)
