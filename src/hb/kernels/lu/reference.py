"""The numpy reference of lu (Doolittle without pivoting, in place), its diagonally dominant
inputs, and the factorisation ludcmp's reference reuses."""

from __future__ import annotations

import numpy as np
from scipy.linalg import solve_triangular


def diagonally_dominant(n: int, rng: np.random.Generator) -> np.ndarray:
    """Entries uniform in [-1, 1) plus N on the diagonal: strictly diagonally dominant by rows and
    columns, so elimination without pivoting is stable and every pivot stays near N."""
    return rng.uniform(-1.0, 1.0, (n, n)) + n * np.eye(n)


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    return {"A": diagonally_dominant(sizes["N"], rng).astype(dtype)}


def factor_in_place(a: np.ndarray) -> None:
    """Doolittle LU without pivoting of the float64 square `a`, in place, recursively by halves:
    the same factors as PolyBench's loop, with the work in triangular solves and one product."""
    n = a.shape[0]
    if n <= 64:
        for k in range(n - 1):
            a[k + 1 :, k] /= a[k, k]
            a[k + 1 :, k + 1 :] -= np.outer(a[k + 1 :, k], a[k, k + 1 :])
        return
    h = n // 2
    factor_in_place(a[:h, :h])
    a[:h, h:] = solve_triangular(a[:h, :h], a[:h, h:], lower=True, unit_diagonal=True)
    a[h:, :h] = solve_triangular(a[:h, :h], a[h:, :h].T, trans="T").T
    a[h:, h:] -= a[h:, :h] @ a[:h, h:]
    factor_in_place(a[h:, h:])


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    a = arrays["A"].astype(np.float64)
    factor_in_place(a)
    arrays["A"][...] = a
