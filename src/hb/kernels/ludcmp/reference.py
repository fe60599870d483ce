"""The numpy reference of ludcmp (LU without pivoting, then the two triangular solves) and its
inputs; the factorisation and the diagonally dominant matrix are lu's."""

from __future__ import annotations

import numpy as np
from scipy.linalg import solve_triangular

from hb.kernels import load_reference


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """lu's diagonally dominant A (no pivoting needed, condition number near 1) and b uniform in
    [-1, 1)."""
    n = sizes["N"]
    a = load_reference("lu").diagonally_dominant(n, rng)
    return {
        "A": a.astype(dtype),
        "b": rng.uniform(-1.0, 1.0, n).astype(dtype),
        "x": np.zeros(n, dtype=dtype),
        "y": np.zeros(n, dtype=dtype),
    }


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    a = arrays["A"].astype(np.float64)
    load_reference("lu").factor_in_place(a)
    y = solve_triangular(a, arrays["b"].astype(np.float64), lower=True, unit_diagonal=True)
    arrays["A"][...] = a
    arrays["y"][...] = y
    arrays["x"][...] = solve_triangular(a, y)
