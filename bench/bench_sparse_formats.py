"""Sparse format conversion throughput: relayout.sparse.formats against scipy's own conversions.

For each format, the time to convert a random banded CSR matrix into the format's buffers, as GB/s
of the CSR bytes read plus the format's bytes written, beside a peer measured in the same run:
scipy's conversion where scipy has the format (csc, coo, dia, bsr, with sorted block columns as
BCSR requires), else (ell, jds, sell_c_sigma) our own numpy reference, which the C kernels replace.
The targets: parity with scipy, a ratio of at least 0.5 where scipy converts too (both are
vectorised; ours also sorts and checks), and at least 2 x the numpy reference for the C kernels.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import scipy.sparse as sp

from relayout.sparse.formats import FORMATS, canonical_csr, from_csr, from_csr_reference

SCIPY_PEERS: dict[str, Callable[[sp.csr_array], object]] = {
    "csc": lambda m: m.tocsc(),
    "coo": lambda m: m.tocoo(),
    "dia": lambda m: m.todia(),
    "bcsr": lambda m: sorted_blocks(m.tobsr(blocksize=(4, 4))),
}


def sorted_blocks(bsr: sp.bsr_array) -> sp.bsr_array:
    """scipy leaves block columns in first-seen order; our BCSR (like CSR) keeps them sorted."""
    bsr.sort_indices()
    return bsr


PARAMS: dict[str, dict] = {"bcsr": {"block_size": [4, 4]}, "sell_c_sigma": {"C": 8, "sigma": 64}}
TARGET_VS_SCIPY = 0.5
# The formats scipy lacks run as C kernels; their peer is the numpy reference they replace.
NUMPY_PEERS = ("ell", "jds", "sell_c_sigma")
TARGET_VS_NUMPY = 2.0


def best_seconds(work: Callable[[], object], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def banded_matrix(rows: int, bandwidth: int, density: float, seed: int = 1) -> sp.csr_array:
    """A random matrix whose entries lie within ``bandwidth`` of the diagonal (DIA stays small)."""
    rng = np.random.default_rng(seed)
    per_row = max(1, int(density * bandwidth))
    r = np.repeat(np.arange(rows), per_row)
    c = np.clip(r + rng.integers(-bandwidth // 2, bandwidth // 2, r.shape[0]), 0, rows - 1)
    m = sp.coo_array((rng.standard_normal(r.shape[0]), (r, c)), shape=(rows, rows)).tocsr()
    m.sum_duplicates()
    m.sort_indices()
    return m


def main(full: bool) -> int:
    rows = 400_000 if full else 20_000
    repeats = 5 if full else 2
    reference = banded_matrix(rows, bandwidth=64, density=0.25)
    csr = canonical_csr(reference.data, reference.indices, reference.indptr, reference.shape)
    csr_bytes = csr.data.nbytes + csr.indices.nbytes + csr.indptr.nbytes
    print(f"matrix: {rows} x {rows}, nnz {csr.nnz}, CSR {csr_bytes / 2**20:.1f} MiB")
    header = (
        f"{'format':<14}{'ours GB/s':>11}{'scipy GB/s':>12}{'numpy GB/s':>12}{'ratio':>8}"
        f"{'target':>9}  status"
    )
    print(header)
    print("-" * len(header))
    failures = 0
    for name in FORMATS:
        params = PARAMS.get(name, {})
        out = from_csr(csr, name, **params)
        moved = csr_bytes + sum(b.nbytes for b in out.values())
        ours = moved / best_seconds(lambda n=name, p=params: from_csr(csr, n, **p), repeats) / 1e9
        peer = SCIPY_PEERS.get(name)
        if name == "csr":
            continue  # the canonical form itself: nothing is converted
        if peer is not None:
            theirs = moved / best_seconds(lambda f=peer: f(reference), repeats) / 1e9
            scipy_column, numpy_column, target = f"{theirs:.2f}", "-", TARGET_VS_SCIPY
        elif name in NUMPY_PEERS:
            theirs = (
                moved
                / best_seconds(lambda n=name, p=params: from_csr_reference(csr, n, **p), repeats)
                / 1e9
            )
            scipy_column, numpy_column, target = "-", f"{theirs:.2f}", TARGET_VS_NUMPY
        else:
            print(f"{name:<14}{ours:>11.2f}{'-':>12}{'-':>12}{'-':>8}{'-':>9}  (no peer)")
            continue
        ratio = ours / theirs
        ok = ratio >= target
        failures += not ok
        print(
            f"{name:<14}{ours:>11.2f}{scipy_column:>12}{numpy_column:>12}{ratio:>8.2f}"
            f"{target:>9.2f}  {'ok' if ok else 'below target'}"
        )
    print(f"{failures} format(s) below target" if failures else "all formats at target")
    return 0
