"""The numpy reference of gramschmidt (QR of A, R with a positive diagonal) and its inputs."""

from __future__ import annotations

import numpy as np


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """A uniform in [-1, 1) with M >= 2 N rows (the presets): a random tall matrix has full rank
    and a condition number near (1 + sqrt(N/M)) / (1 - sqrt(N/M)), below 6, so modified
    Gram-Schmidt keeps Q orthonormal to a few ulps in fp32 as in fp64."""
    m, n = sizes["M"], sizes["N"]
    if m < n:
        raise ValueError(f"gramschmidt: M={m} must be at least N={n}")
    return {
        "A": rng.uniform(-1.0, 1.0, (m, n)).astype(dtype),
        "R": np.zeros((n, n), dtype=dtype),
        "Q": np.zeros((m, n), dtype=dtype),
    }


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    # The QR factorisation with R's diagonal positive is unique, and is the one Gram-Schmidt
    # builds; LAPACK's Householder QR computes it more accurately than Gram-Schmidt itself.
    q, r = np.linalg.qr(arrays["A"].astype(np.float64))
    signs = np.sign(np.diag(r))
    q, r = q * signs, r * signs[:, None]
    arrays["Q"][...] = q
    arrays["R"][...] = r
    # PolyBench's A ends as column k less its projections on q_0 .. q_{k-1}: q_k R[k][k].
    arrays["A"][...] = q * np.diag(r)
