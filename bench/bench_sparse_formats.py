"""Sparse format conversion throughput: relayout.sparse_formats against scipy's own conversions.

For each format, the time to convert a random CSR matrix (about 1% dense) into the format's buffers,
as GB/s of the CSR bytes read plus the format's bytes written, beside scipy's conversion where scipy
has the format (csc, coo, dia, bsr, with sorted block columns as BCSR requires), measured in the
same run. The target is parity with scipy:
a ratio of at least 0.5 where scipy converts too (both are vectorised; ours also sorts and checks).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import scipy.sparse as sp

from relayout.sparse_formats import FORMATS, canonical_csr, from_csr

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
    header = f"{'format':<14}{'ours GB/s':>11}{'scipy GB/s':>12}{'ratio':>8}{'target':>9}  status"
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
        if peer is None:
            print(f"{name:<14}{ours:>11.2f}{'-':>12}{'-':>8}{'-':>9}  (scipy has no {name})")
            continue
        theirs = moved / best_seconds(lambda f=peer: f(reference), repeats) / 1e9
        ratio = ours / theirs
        ok = ratio >= TARGET_VS_SCIPY
        failures += not ok
        print(
            f"{name:<14}{ours:>11.2f}{theirs:>12.2f}{ratio:>8.2f}{TARGET_VS_SCIPY:>9.2f}  "
            f"{'ok' if ok else 'below target'}"
        )
    print(f"{failures} format(s) below target" if failures else "all formats at target")
    return 0
