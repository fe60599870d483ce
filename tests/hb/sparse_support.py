"""Helpers of the sparse tests: random CSR triples with the awkward cases, each format's parameter
sets, the reference C solutions built once per session, and a ctypes call through the C ABI."""

from __future__ import annotations

import ctypes
import subprocess
from pathlib import Path
from typing import Any

import numpy as np

from hb import kernels


def _solution_sources(kernel: str) -> dict[str, Path]:
    # The kernel's solution.c is the csr (default format) solution as well as the baseline, so
    # solutions/ holds only the other formats' <kernel>_<format>.c.
    folder = kernels.CATALOG_DIR / kernel / "solutions"
    sources = {p.stem.removeprefix(f"{kernel}_"): p for p in folder.glob(f"{kernel}_*.c")}
    return {"csr": kernels.CATALOG_DIR / kernel / "solution.c", **sources}


# The reference C solutions of spmv and spmm, one per format: kernel -> format -> source file.
SOLUTIONS = {kernel: _solution_sources(kernel) for kernel in ("spmv", "spmm")}
SPMM_FORMATS = sorted(SOLUTIONS["spmm"])

# The format operation's fields, beyond action / array / to, that each format is tested with.
FORMAT_FIELDS: dict[str, list[dict[str, Any]]] = {
    "bcsr": [{"block_size": [1, 1]}, {"block_size": [2, 3]}, {"block_size": 4}],
    "sell_c_sigma": [{}, {"C": 1, "sigma": 1}, {"C": 4, "sigma": 8}, {"C": 3, "sigma": 5}],
}

_CTYPES = {"int64": ctypes.c_int64, "double": ctypes.c_double, "float": ctypes.c_float}


def field_sets(name: str) -> list[dict[str, Any]]:
    return FORMAT_FIELDS.get(name, [{}])


def format_request(array: str, to: str, **fields: Any) -> dict[str, Any]:
    return {"operations": [{"action": "format", "array": array, "to": to, **fields}]}


def random_triple(
    rows: int,
    cols: int,
    density: float,
    rng: np.random.Generator,
    dense_row: bool = False,
    shuffle_rows: bool = True,
    dtype: Any = np.float64,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A CSR triple (data, int64 indices, int64 indptr) of a random rows x cols matrix; with
    `shuffle_rows` the columns inside each row come unsorted, as a caller may store them."""
    mask = rng.random((rows, cols)) < density
    if dense_row and rows and cols:
        mask[rng.integers(rows), :] = True
    values = rng.uniform(-1.0, 1.0, (rows, cols))
    r, c = np.nonzero(mask)
    indptr = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum(mask.sum(axis=1), out=indptr[1:])
    data, indices = values[r, c].astype(dtype), c.astype(np.int64)
    if shuffle_rows and data.size:
        order = np.concatenate(
            [indptr[i] + rng.permutation(int(indptr[i + 1] - indptr[i])) for i in range(rows)]
        )
        data, indices = data[order], indices[order]
    return data, indices, indptr


def dense_of(data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, shape) -> np.ndarray:
    dense = np.zeros(shape, dtype=np.float64)
    rows = np.repeat(np.arange(shape[0]), np.diff(indptr))
    dense[rows, indices] = data
    return dense


def build_solution(source: Path, out_dir: Path, name: str) -> ctypes.CDLL:
    """The solution built with gcc -O2 -fopenmp into out_dir/lib<name>.so and loaded."""
    library = out_dir / f"lib{name}.so"
    subprocess.run(
        ["gcc", "-O2", "-fopenmp", "-shared", "-fPIC", "-Wall", "-Werror", "-o", str(library),
         str(source), "-lm"],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    return ctypes.CDLL(str(library))


def call_kernel(
    library: ctypes.CDLL,
    symbol: str,
    pointers: list[str],
    buffers: dict[str, np.ndarray],
    trailing: list[dict[str, Any]],
) -> None:
    """Call `symbol` with each pointer's buffer (contiguous) and the trailing arguments, as the
    judge's runner does."""
    kernel = getattr(library, symbol)
    kernel.argtypes = (
        [ctypes.c_void_p] * len(pointers)
        + [_CTYPES[argument["kind"]] for argument in trailing]
        + [ctypes.c_void_p, ctypes.c_int64]
    )
    kernel.restype = None
    for name in pointers:
        assert buffers[name].flags.c_contiguous, name
    workspace = np.zeros(1, dtype=np.uint8)
    kernel(
        *[buffers[name].ctypes.data for name in pointers],
        *[argument["value"] for argument in trailing],
        workspace.ctypes.data,
        0,
    )
