"""The numpy reference of spmv (y <- A x over canonical CSR) and its input generator."""

from __future__ import annotations

import numpy as np


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """A CSR matrix with nnz // M entries in every row, x, and y: row entries fall one in each of
    nnz // M equal column bands, at a random place in the band, so columns are distinct and sorted."""
    rows, cols, nnz = sizes["M"], sizes["N"], sizes["nnz"]
    per_row = nnz // rows
    if per_row * rows != nnz or per_row > cols:
        raise ValueError(
            f"spmv: nnz={nnz} must be a multiple of M={rows} with at most N={cols} per row"
        )
    band = cols // per_row
    indices = (np.arange(per_row) * band + rng.integers(0, band, (rows, per_row))).reshape(-1)
    return {
        "A_data": rng.uniform(-1.0, 1.0, nnz).astype(dtype),
        "A_indices": indices.astype(np.int64),
        "A_indptr": (np.arange(rows + 1, dtype=np.int64) * per_row),
        "x": rng.uniform(-1.0, 1.0, cols).astype(dtype),
        "y": np.zeros(rows, dtype=dtype),
    }


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    data, indices, indptr, x = (
        arrays["A_data"],
        arrays["A_indices"],
        arrays["A_indptr"],
        arrays["x"],
    )
    # Sum each row's products by row index: empty rows give 0 (np.add.reduceat would not).
    rows = np.repeat(np.arange(indptr.shape[0] - 1), np.diff(indptr))
    summed = np.bincount(rows, weights=data * x[indices], minlength=indptr.shape[0] - 1)
    arrays["y"][...] = summed
