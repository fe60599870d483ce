"""Seeded CSR structures for the catalog's sparse kernels' inputs: distinct, sorted columns in every
row (the canonical CSR the judge's format conversions take), with an exact entry count so that a
preset's nnz is known before any input is drawn."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def distinct_columns(
    lengths: np.ndarray, low: np.ndarray, high: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """indices and indptr of rows holding lengths[i] distinct, sorted columns drawn uniformly from
    [low[i], high[i]): sorted draws from [low, high - length] plus each entry's slot in its row are
    distinct and sorted (requires lengths <= high - low)."""
    lengths = np.asarray(lengths, dtype=np.int64)
    if (lengths > high - low).any():
        raise ValueError("a row holds more entries than its column range")
    indptr = np.zeros(lengths.shape[0] + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    row = np.repeat(np.arange(lengths.shape[0], dtype=np.int64), lengths)
    draws = rng.integers(low[row], high[row] - lengths[row] + 1)
    # One sort of row-major keys puts the draws in order within each row (rows are ascending).
    span = int(high.max(initial=0)) + 1
    ordered = np.sort(row * span + draws) - row * span
    slot = np.arange(indptr[-1], dtype=np.int64) - indptr[row]
    return ordered + slot, indptr


def lower_entries(n: int, nnz_lower: int) -> int:
    """The entries per row k of a strictly lower pattern with min(k, i) entries in row i holding
    nnz_lower entries in all (k N - k (k + 1) / 2); ValueError naming the counts that fit."""
    for k in range(n):
        count = k * n - k * (k + 1) // 2
        if count == nnz_lower:
            return k
        if count > nnz_lower:
            break
    fits = [k * n - k * (k + 1) // 2 for k in range(1, 5)]
    raise ValueError(
        f"{nnz_lower} strictly lower entries do not make min(k, i) per row of {n} (k = 1..4 "
        f"give {fits})"
    )


def strictly_lower(
    n: int, k: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row, column and value (uniform in [-1, 1]) of a strictly lower pattern: min(k, i) distinct
    columns of [0, i) in row i, drawn uniformly."""
    rows = np.arange(n, dtype=np.int64)
    lengths = np.minimum(k, rows)
    indices, _ = distinct_columns(lengths, np.zeros(n, dtype=np.int64), rows, rng)
    row = np.repeat(rows, lengths)
    return row, indices, rng.uniform(-1.0, 1.0, indices.shape[0])


def csr_of(
    rows: np.ndarray, cols: np.ndarray, values: np.ndarray, n: int, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """Distinct (row, col) entries of an n x n matrix as canonical CSR buffers (data, indices,
    indptr), columns sorted in each row."""
    order = np.argsort(rows * n + cols)  # the keys are distinct: no stability needed
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
    return {
        "data": values[order].astype(dtype),
        "indices": cols[order].astype(np.int64),
        "indptr": indptr,
    }


def prefixed(name: str, csr: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """CSR buffers under the pointer names of sparse array `name` (A -> A_data, A_indices, ...)."""
    return {f"{name}_{role}": buffer for role, buffer in csr.items()}


def uneven_lengths(rows: int, nnz: int, cols: int, rng: np.random.Generator) -> np.ndarray:
    """Row lengths summing to exactly nnz, between about half and one and a half times the mean
    nnz / rows and never below 1: the mean plus a uniform draw in [-s, s] (s = (mean - 1) // 4)
    minus the previous row's draw, so the draws cancel in the sum."""
    mean = nnz // rows
    if mean * rows != nnz or not 1 <= mean <= cols:
        raise ValueError(f"nnz={nnz} must be a multiple of {rows} rows with 1..{cols} per row")
    spread = max(min((mean - 1) // 4, (cols - mean) // 2), 0)
    delta = rng.integers(-spread, spread + 1, rows)
    return mean + delta - np.roll(delta, 1)


def equal_rows(
    kernel: str, rows: int, cols: int, nnz: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """indices and indptr of rows x cols with nnz / rows distinct uniform columns in every row;
    ValueError naming the kernel where nnz does not divide so."""
    per_row = nnz // rows
    if per_row * rows != nnz or per_row > cols:
        raise ValueError(
            f"{kernel}: nnz={nnz} must be a multiple of the {rows} rows with at most {cols} per row"
        )
    return distinct_columns(
        np.full(rows, per_row), np.zeros(rows, np.int64), np.full(rows, cols), rng
    )


def linear_system(
    name: str,
    off: tuple[np.ndarray, np.ndarray, np.ndarray],
    diagonal: np.ndarray,
    rng: np.random.Generator,
    dtype: np.dtype,
) -> dict[str, np.ndarray]:
    """The inputs of a solve of A x = b: A (canonical CSR under `name`) holds the off-diagonal
    (row, column, value) entries `off` and `diagonal`; b is uniform in [-1, 1] and x zero."""
    n = diagonal.shape[0]
    rows, cols, values = off
    every = np.arange(n, dtype=np.int64)
    matrix = csr_of(
        np.concatenate([rows, every]),
        np.concatenate([cols, every]),
        np.concatenate([values, diagonal]),
        n,
        dtype,
    )
    return {
        **prefixed(name, matrix),
        "b": rng.uniform(-1.0, 1.0, n).astype(dtype),
        "x": np.zeros(n, dtype=dtype),
    }


def csr_matrix(arrays: dict[str, np.ndarray], name: str, shape: tuple[int, int]) -> sp.csr_array:
    """Sparse array `name`'s CSR buffers among a kernel's arrays, as a scipy CSR array."""
    buffers = (arrays[f"{name}_data"], arrays[f"{name}_indices"], arrays[f"{name}_indptr"])
    return sp.csr_array(buffers, shape=shape)
