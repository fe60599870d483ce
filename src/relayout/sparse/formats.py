"""Sparse storage formats: conversion from the canonical CSR to each format's buffers and back.

A sparse array arrives as canonical CSR (``data``, ``indices``, ``indptr``; int64 indices, column
indices sorted within each row, no duplicates). ``from_csr`` lays it out in one of ``FORMATS`` as a
dict of named buffers (the C ABI names them ``<array>_<role>``); ``to_csr`` reads such buffers back.
Conversions that scipy has (csc, bsr) use scipy's compiled counting sorts. ELL, JDS and
SELL-C-sigma, which scipy lacks, run as C kernels (relayout.sparse.kernels: OpenMP, built once
through relayout.convert.build's cache); the rest are vectorised numpy, O(nnz + rows) with at most
one sort. ``from_csr_reference`` converts without the C kernels (their vectorised numpy
conversion): the reference they must equal byte for byte, and what ``from_csr`` runs when no
kernel library can be built (no C compiler) or the values are not 1, 2, 4, 8 or 16-byte plain data.

Padding conventions, chosen so that a kernel never needs a branch to stay in bounds yet a round trip
is exact: padded slots of ELL and SELL-C-sigma hold value 0 and column -1; DIA and BCSR store whole
diagonals and blocks, so their padding cells hold 0 and an explicit zero of the CSR input reads back
as no entry (the dense matrix is unchanged).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from relayout.sparse import kernels as sparse_kernels
from relayout.types import SPARSE_FORMAT_DEFAULTS, SPARSE_FORMATS

INDEX_DTYPE = np.dtype(np.int64)


class SparseFormatError(ValueError):
    """A sparse input or a format's parameters are invalid; the message says what and where."""


@dataclass(frozen=True)
class Csr:
    """A canonical CSR matrix: rows of sorted, unique column indices."""

    shape: tuple[int, int]
    data: np.ndarray
    indices: np.ndarray
    indptr: np.ndarray

    @property
    def nnz(self) -> int:
        return int(self.indptr[-1])

    def row_of_entry(self) -> np.ndarray:
        """The row index of every stored entry, in storage order."""
        return np.repeat(np.arange(self.shape[0], dtype=INDEX_DTYPE), np.diff(self.indptr))

    def to_dense(self) -> np.ndarray:
        dense = np.zeros(self.shape, dtype=self.data.dtype)
        dense[self.row_of_entry(), self.indices] = self.data
        return dense

    def same_as(self, other: Csr) -> bool:
        """Equal shape, structure and values (NaN equal to NaN), bit for bit in dtype."""
        return (
            self.shape == other.shape
            and self.data.dtype == other.data.dtype
            and np.array_equal(self.indptr, other.indptr)
            and np.array_equal(self.indices, other.indices)
            and np.array_equal(self.data, other.data, equal_nan=True)
        )


def canonical_csr(
    data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, shape: tuple[int, int]
) -> Csr:
    """Checks CSR buffers and returns them canonical: int64 indices, columns sorted in each row.

    Unsorted columns within a row are sorted (values move with them); a duplicate column in a row
    is refused, since summing it would change what the caller stored.
    """
    rows, cols = (int(shape[0]), int(shape[1]))
    if rows < 0 or cols < 0:
        raise SparseFormatError(f"shape {shape}: extents must be non-negative")
    data = np.asarray(data)
    indices = np.asarray(indices)
    indptr = np.asarray(indptr)
    for name, buf in (("indices", indices), ("indptr", indptr)):
        if buf.ndim != 1 or not np.issubdtype(buf.dtype, np.integer):
            raise SparseFormatError(
                f"{name}: expected a 1-D integer array, got {buf.dtype}{buf.shape}"
            )
    if data.ndim != 1:
        raise SparseFormatError(f"data: expected a 1-D array, got shape {data.shape}")
    if indptr.shape[0] != rows + 1:
        raise SparseFormatError(
            f"indptr: expected {rows + 1} entries (rows + 1), got {indptr.shape[0]}"
        )
    indptr = indptr.astype(INDEX_DTYPE)
    if indptr[0] != 0:
        raise SparseFormatError(f"indptr[0]: expected 0, got {indptr[0]}")
    steps = np.diff(indptr)
    if (steps < 0).any():
        row = int(np.flatnonzero(steps < 0)[0])
        raise SparseFormatError(
            f"indptr[{row + 1}]: decreases ({indptr[row]} -> {indptr[row + 1]})"
        )
    nnz = int(indptr[-1])
    if indices.shape[0] != nnz or data.shape[0] != nnz:
        raise SparseFormatError(
            f"indptr[-1] = {nnz} entries, but indices has {indices.shape[0]} and data {data.shape[0]}"
        )
    indices = indices.astype(INDEX_DTYPE)
    bad = (indices < 0) | (indices >= cols)
    if bad.any():
        at = int(np.flatnonzero(bad)[0])
        raise SparseFormatError(f"indices[{at}] = {indices[at]}: outside the {cols} columns")
    row_of = np.repeat(np.arange(rows, dtype=INDEX_DTYPE), steps)
    order = np.lexsort((indices, row_of))
    indices, data = indices[order], data[order]
    repeated = (np.diff(indices) == 0) & (np.diff(row_of) == 0)
    if repeated.any():
        at = int(np.flatnonzero(repeated)[0])
        raise SparseFormatError(
            f"row {row_of[at]}: column {indices[at]} is stored twice (duplicates are refused)"
        )
    return Csr((rows, cols), np.ascontiguousarray(data), indices, indptr)


def _indptr_from_counts(counts: np.ndarray) -> np.ndarray:
    indptr = np.zeros(counts.shape[0] + 1, dtype=INDEX_DTYPE)
    np.cumsum(counts, out=indptr[1:])
    return indptr


def _csr_from_entries(rows: np.ndarray, cols: np.ndarray, values: np.ndarray, shape) -> Csr:
    """CSR from (row, col, value) triples of unique cells, in any order."""
    order = np.lexsort((cols, rows))
    counts = np.bincount(rows, minlength=shape[0]).astype(INDEX_DTYPE)
    return Csr(
        (int(shape[0]), int(shape[1])),
        np.ascontiguousarray(values[order]),
        cols[order].astype(INDEX_DTYPE),
        _indptr_from_counts(counts),
    )


def _positive_int(params: Mapping[str, object], name: str, default: int | None = None) -> int:
    value = params.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise SparseFormatError(f"{name}: expected a positive integer, got {value!r}")
    return int(value)


# --- each format: csr -> buffers, buffers -> csr -------------------------------------------------


def _csr_out(csr: Csr, params) -> dict[str, np.ndarray]:
    return {"data": csr.data, "indices": csr.indices, "indptr": csr.indptr}


def _csr_in(buffers, shape, params) -> Csr:
    return canonical_csr(buffers["data"], buffers["indices"], buffers["indptr"], shape)


def _scipy_csr(csr: Csr) -> sp.csr_array:
    return sp.csr_array((csr.data, csr.indices, csr.indptr), shape=csr.shape, copy=False)


def _csc_out(csr: Csr, params) -> dict[str, np.ndarray]:
    # scipy's counting sort keeps rows ascending inside each column and explicit zeros as entries.
    csc = _scipy_csr(csr).tocsc()
    return {
        "data": csc.data,
        "indices": csc.indices.astype(INDEX_DTYPE, copy=False),
        "indptr": csc.indptr.astype(INDEX_DTYPE, copy=False),
    }


def _csc_in(buffers, shape, params) -> Csr:
    transposed = canonical_csr(
        buffers["data"], buffers["indices"], buffers["indptr"], (shape[1], shape[0])
    )
    return _csr_from_entries(transposed.indices, transposed.row_of_entry(), transposed.data, shape)


def _coo_out(csr: Csr, params) -> dict[str, np.ndarray]:
    return {"data": csr.data, "row": csr.row_of_entry(), "col": csr.indices}


def _coo_in(buffers, shape, params) -> Csr:
    rows = np.asarray(buffers["row"], dtype=INDEX_DTYPE)
    cols = np.asarray(buffers["col"], dtype=INDEX_DTYPE)
    values = np.asarray(buffers["data"])
    if not rows.shape == cols.shape == values.shape:
        raise SparseFormatError("coo: data, row and col must have one entry each per stored value")
    if rows.size and (rows.min() < 0 or rows.max() >= shape[0]):
        raise SparseFormatError(f"coo row: an index lies outside the {shape[0]} rows")
    order = np.lexsort((cols, rows))
    counts = np.bincount(rows, minlength=shape[0]).astype(INDEX_DTYPE)
    return canonical_csr(values[order], cols[order], _indptr_from_counts(counts), shape)


def _from_kernels(
    kernel: Callable[..., dict[str, np.ndarray] | None], csr: Csr, *args: int
) -> dict[str, np.ndarray] | None:
    """A C kernel's buffers, None where there is no kernel library; its refusal (a CSR that is
    not canonical) as a SparseFormatError."""
    try:
        made: dict[str, np.ndarray] | None = kernel(csr.indptr, csr.indices, csr.data, *args)
    except ValueError as error:
        raise SparseFormatError(str(error)) from None
    return made


def _ell_width(params) -> int:
    return _positive_int(params, "width") if "width" in params else 0


def _ell_out(csr: Csr, params) -> dict[str, np.ndarray]:
    width = _ell_width(params)
    made = _from_kernels(sparse_kernels.ell_from_csr, csr, width)
    return _ell_out_numpy(csr, params) if made is None else made


def _ell_out_numpy(csr: Csr, params) -> dict[str, np.ndarray]:
    lengths = np.diff(csr.indptr)
    width = max(int(lengths.max(initial=0)), _ell_width(params))
    rows = csr.row_of_entry()
    slot = np.arange(csr.nnz, dtype=INDEX_DTYPE) - csr.indptr[rows]
    data = np.zeros((csr.shape[0], width), dtype=csr.data.dtype)
    indices = np.full((csr.shape[0], width), -1, dtype=INDEX_DTYPE)
    data[rows, slot] = csr.data
    indices[rows, slot] = csr.indices
    return {"data": data, "indices": indices}


def _ell_in(buffers, shape, params) -> Csr:
    indices = np.asarray(buffers["indices"], dtype=INDEX_DTYPE)
    live = indices >= 0
    counts = live.sum(axis=1).astype(INDEX_DTYPE)
    return canonical_csr(
        np.asarray(buffers["data"])[live], indices[live], _indptr_from_counts(counts), shape
    )


def _dia_out(csr: Csr, params) -> dict[str, np.ndarray]:
    rows = csr.row_of_entry()
    diagonal = csr.indices - rows
    offsets = np.unique(diagonal)
    data = np.zeros((offsets.shape[0], csr.shape[1]), dtype=csr.data.dtype)
    data[np.searchsorted(offsets, diagonal), csr.indices] = csr.data
    return {"data": data, "offsets": offsets.astype(INDEX_DTYPE)}


def _dia_in(buffers, shape, params) -> Csr:
    data = np.asarray(buffers["data"])
    offsets = np.asarray(buffers["offsets"], dtype=INDEX_DTYPE)
    if data.ndim != 2 or data.shape[0] != offsets.shape[0] or data.shape[1] < shape[1]:
        raise SparseFormatError(
            f"dia: data must be [{offsets.shape[0]}, >= {shape[1]}], got {list(data.shape)}"
        )
    k, cols = np.nonzero(data[:, : shape[1]])
    rows = cols - offsets[k]
    inside = (rows >= 0) & (rows < shape[0])
    return _csr_from_entries(rows[inside], cols[inside], data[k[inside], cols[inside]], shape)


def _block_shape(params) -> tuple[int, int]:
    block = params.get("block_size", (1, 1))
    if isinstance(block, int | np.integer) and not isinstance(block, bool):
        block = (int(block), int(block))
    if not (isinstance(block, list | tuple) and len(block) == 2):
        raise SparseFormatError(f"block_size: expected [rows, cols] or one integer, got {block!r}")
    return (
        _positive_int({"block_size[0]": block[0]}, "block_size[0]"),
        _positive_int({"block_size[1]": block[1]}, "block_size[1]"),
    )


def _bcsr_out(csr: Csr, params) -> dict[str, np.ndarray]:
    r, c = _block_shape(params)
    # scipy wants the extents to be multiples of the block: pad with empty rows and columns.
    padded = (-(-csr.shape[0] // r) * r, -(-csr.shape[1] // c) * c)
    indptr = np.concatenate(
        [csr.indptr, np.full(padded[0] - csr.shape[0], csr.indptr[-1], dtype=INDEX_DTYPE)]
    )
    whole = sp.csr_array((csr.data, csr.indices, indptr), shape=padded, copy=False)
    bsr = whole.tobsr(blocksize=(r, c))
    bsr.sort_indices()
    return {
        "data": bsr.data,
        "indices": bsr.indices.astype(INDEX_DTYPE, copy=False),
        "indptr": bsr.indptr.astype(INDEX_DTYPE, copy=False),
    }


def _bcsr_in(buffers, shape, params) -> Csr:
    r, c = _block_shape(params)
    data = np.asarray(buffers["data"])
    block_cols = np.asarray(buffers["indices"], dtype=INDEX_DTYPE)
    indptr = np.asarray(buffers["indptr"], dtype=INDEX_DTYPE)
    if data.ndim != 3 or data.shape[1:] != (r, c) or data.shape[0] != block_cols.shape[0]:
        raise SparseFormatError(f"bcsr: data must be [blocks, {r}, {c}], got {list(data.shape)}")
    block_row = np.repeat(np.arange(indptr.shape[0] - 1, dtype=INDEX_DTYPE), np.diff(indptr))
    b, i, j = np.nonzero(data)
    rows = block_row[b] * r + i
    cols = block_cols[b] * c + j
    inside = (rows < shape[0]) & (cols < shape[1])
    return _csr_from_entries(
        rows[inside], cols[inside], data[b[inside], i[inside], j[inside]], shape
    )


def _jds_out(csr: Csr, params) -> dict[str, np.ndarray]:
    made = _from_kernels(sparse_kernels.jds_from_csr, csr)
    return _jds_out_numpy(csr, params) if made is None else made


def _jds_out_numpy(csr: Csr, params) -> dict[str, np.ndarray]:
    lengths = np.diff(csr.indptr)
    perm = np.argsort(-lengths, kind="stable").astype(INDEX_DTYPE)
    rank = np.empty_like(perm)
    rank[perm] = np.arange(perm.shape[0], dtype=INDEX_DTYPE)
    depth = int(lengths.max(initial=0))
    # Rows sorted by decreasing length: jagged diagonal k holds the k-th entry of the first
    # count(lengths > k) permuted rows.
    per_diagonal = (lengths[None, :] > np.arange(depth)[:, None]).sum(axis=1).astype(INDEX_DTYPE)
    jd_ptr = _indptr_from_counts(per_diagonal)
    rows = csr.row_of_entry()
    slot = np.arange(csr.nnz, dtype=INDEX_DTYPE) - csr.indptr[rows]
    where = jd_ptr[slot] + rank[rows]
    data = np.empty_like(csr.data)
    indices = np.empty_like(csr.indices)
    data[where] = csr.data
    indices[where] = csr.indices
    return {"data": data, "indices": indices, "perm": perm, "jd_ptr": jd_ptr}


def _jds_in(buffers, shape, params) -> Csr:
    jd_ptr = np.asarray(buffers["jd_ptr"], dtype=INDEX_DTYPE)
    perm = np.asarray(buffers["perm"], dtype=INDEX_DTYPE)
    if perm.shape[0] != shape[0]:
        raise SparseFormatError(f"jds perm: expected {shape[0]} entries, got {perm.shape[0]}")
    slot = np.repeat(np.arange(jd_ptr.shape[0] - 1, dtype=INDEX_DTYPE), np.diff(jd_ptr))
    rank = np.arange(int(jd_ptr[-1]), dtype=INDEX_DTYPE) - jd_ptr[slot]
    rows = perm[rank]
    values = np.asarray(buffers["data"])
    return _csr_from_entries(rows, np.asarray(buffers["indices"], dtype=INDEX_DTYPE), values, shape)


def _sell_params(params) -> tuple[int, int]:
    return _positive_int(params, "C", 8), _positive_int(params, "sigma", 1)


def _sell_out(csr: Csr, params) -> dict[str, np.ndarray]:
    made = _from_kernels(sparse_kernels.sell_from_csr, csr, *_sell_params(params))
    return _sell_out_numpy(csr, params) if made is None else made


def _sell_out_numpy(csr: Csr, params) -> dict[str, np.ndarray]:
    chunk, sigma = _sell_params(params)
    rows_total = csr.shape[0]
    lengths = np.diff(csr.indptr)
    # Sort by decreasing length inside each window of sigma rows (sigma = 1 keeps the order).
    window = np.arange(rows_total, dtype=INDEX_DTYPE) // sigma
    perm = np.lexsort((np.arange(rows_total), -lengths, window)).astype(INDEX_DTYPE)
    slices = -(-rows_total // chunk)
    padded_lengths = np.zeros(slices * chunk, dtype=INDEX_DTYPE)
    padded_lengths[:rows_total] = lengths[perm]
    widths = padded_lengths.reshape(slices, chunk).max(axis=1, initial=0)
    slice_ptr = _indptr_from_counts(widths * chunk)
    rank = np.empty_like(perm)
    rank[perm] = np.arange(rows_total, dtype=INDEX_DTYPE)
    rows = csr.row_of_entry()
    slot = np.arange(csr.nnz, dtype=INDEX_DTYPE) - csr.indptr[rows]
    # Within a slice the storage is column-major: entry j of the slice's row i sits at j*C + i.
    where = slice_ptr[rank[rows] // chunk] + slot * chunk + rank[rows] % chunk
    data = np.zeros(int(slice_ptr[-1]), dtype=csr.data.dtype)
    indices = np.full(int(slice_ptr[-1]), -1, dtype=INDEX_DTYPE)
    data[where] = csr.data
    indices[where] = csr.indices
    return {"data": data, "indices": indices, "perm": perm, "slice_ptr": slice_ptr}


def _sell_in(buffers, shape, params) -> Csr:
    chunk, _ = _sell_params(params)
    slice_ptr = np.asarray(buffers["slice_ptr"], dtype=INDEX_DTYPE)
    perm = np.asarray(buffers["perm"], dtype=INDEX_DTYPE)
    indices = np.asarray(buffers["indices"], dtype=INDEX_DTYPE)
    if perm.shape[0] != shape[0] or indices.shape[0] != slice_ptr[-1]:
        raise SparseFormatError(
            "sell_c_sigma: perm must list every row and slice_ptr[-1] every slot"
        )
    slice_of = np.repeat(np.arange(slice_ptr.shape[0] - 1, dtype=INDEX_DTYPE), np.diff(slice_ptr))
    offset = np.arange(indices.shape[0], dtype=INDEX_DTYPE) - slice_ptr[slice_of]
    permuted_row = slice_of * chunk + offset % chunk
    live = indices >= 0
    rows = perm[permuted_row[live]]
    return _csr_from_entries(rows, indices[live], np.asarray(buffers["data"])[live], shape)


@dataclass(frozen=True)
class SparseFormat:
    """One storage format: its buffer roles (in C ABI order) and its parameters with defaults."""

    name: str
    roles: tuple[str, ...]
    index_roles: frozenset[str]
    params: Mapping[str, object] = field(default_factory=dict)
    description: str = ""

    def c_names(self, array: str) -> tuple[str, ...]:
        return tuple(f"{array}_{role}" for role in self.roles)


_CONVERTERS = {
    "csr": (_csr_out, _csr_in),
    "csc": (_csc_out, _csc_in),
    "coo": (_coo_out, _coo_in),
    "ell": (_ell_out, _ell_in),
    "dia": (_dia_out, _dia_in),
    "bcsr": (_bcsr_out, _bcsr_in),
    "jds": (_jds_out, _jds_in),
    "sell_c_sigma": (_sell_out, _sell_in),
}

_DEFINED = {
    f.name: f
    for f in (
        SparseFormat("csr", ("data", "indices", "indptr"), frozenset({"indices", "indptr"}), SPARSE_FORMAT_DEFAULTS["csr"],
                     "compressed rows: row r's entries are data[indptr[r]:indptr[r+1]]"),
        SparseFormat("csc", ("data", "indices", "indptr"), frozenset({"indices", "indptr"}), SPARSE_FORMAT_DEFAULTS["csc"],
                     "compressed columns: indices are row indices"),
        SparseFormat("coo", ("data", "row", "col"), frozenset({"row", "col"}), SPARSE_FORMAT_DEFAULTS["coo"],
                     "coordinates, row-major order"),
        SparseFormat("ell", ("data", "indices"), frozenset({"indices"}), SPARSE_FORMAT_DEFAULTS["ell"],
                     "[rows, width] slots, width = the longest row; padding has column -1"),
        SparseFormat("dia", ("data", "offsets"), frozenset({"offsets"}), SPARSE_FORMAT_DEFAULTS["dia"],
                     "data[k, j] = A[j - offsets[k], j] for each stored diagonal k"),
        SparseFormat("bcsr", ("data", "indices", "indptr"), frozenset({"indices", "indptr"}),
                     SPARSE_FORMAT_DEFAULTS["bcsr"], "CSR of dense [R, C] blocks over padded block rows"),
        SparseFormat("jds", ("data", "indices", "perm", "jd_ptr"),
                     frozenset({"indices", "perm", "jd_ptr"}), SPARSE_FORMAT_DEFAULTS["jds"],
                     "jagged diagonals of the rows sorted by decreasing length"),
        SparseFormat("sell_c_sigma", ("data", "indices", "perm", "slice_ptr"),
                     frozenset({"indices", "perm", "slice_ptr"}), SPARSE_FORMAT_DEFAULTS["sell_c_sigma"],
                     "slices of C rows, sorted by length within windows of sigma rows, "
                     "column-major inside a slice; padding has column -1"),
    )
}  # fmt: skip
# Every format of relayout.types' table, in its order, with its parameters from there.
FORMATS: dict[str, SparseFormat] = {name: _DEFINED[name] for name in SPARSE_FORMATS}


def sparse_format(name: str) -> SparseFormat:
    """The format named ``name``, or an error listing the formats there are."""
    try:
        return FORMATS[name]
    except KeyError:
        raise SparseFormatError(
            f"unknown sparse format {name!r}; expected one of {', '.join(FORMATS)}"
        ) from None


def format_params(name: str, given: Mapping[str, object]) -> dict[str, object]:
    """The parameters of format `name`: its defaults with `given` over them, each validated and
    normalized (bcsr's block_size a (rows, cols) pair of positive integers, one integer meaning
    both; sell_c_sigma's C and sigma positive integers). SparseFormatError names the parameter.
    The one validation of format parameters: the judge's refusals and the conversions use it."""
    fmt = sparse_format(name)
    params: dict[str, object] = {**fmt.params, **{k: v for k, v in given.items() if v is not None}}
    _check_params(fmt, params)
    if name == "bcsr":
        params["block_size"] = _block_shape(params)
    for key in ("C", "sigma"):
        if key in params:
            params[key] = _positive_int(params, key)
    return params


def _check_params(fmt: SparseFormat, params: Mapping[str, object]) -> None:
    extra = sorted(set(params) - set(fmt.params) - ({"width"} if fmt.name == "ell" else set()))
    if extra:
        raise SparseFormatError(f"{fmt.name}: unknown parameter(s) {extra}")


# The numpy form of the conversions that run as C kernels (the others are numpy or scipy alone).
_NUMPY_REFERENCES = {"ell": _ell_out_numpy, "jds": _jds_out_numpy, "sell_c_sigma": _sell_out_numpy}


def _converted(
    csr: Csr, name: str, params: Mapping[str, object], reference: bool
) -> dict[str, np.ndarray]:
    fmt = sparse_format(name)
    _check_params(fmt, params)
    convert = _NUMPY_REFERENCES.get(name) if reference else None
    buffers = (convert or _CONVERTERS[name][0])(csr, params)
    return {role: np.ascontiguousarray(buffers[role]) for role in fmt.roles}


def from_csr(csr: Csr, name: str, **params: object) -> dict[str, np.ndarray]:
    """The buffers of ``csr`` stored in format ``name``, keyed by role, contiguous."""
    return _converted(csr, name, params, reference=False)


def from_csr_reference(csr: Csr, name: str, **params: object) -> dict[str, np.ndarray]:
    """``from_csr`` without C kernels: the vectorised numpy conversion, which the kernels equal
    byte for byte (the tests compare them, the benchmark times them against it)."""
    return _converted(csr, name, params, reference=True)


def to_csr(
    name: str, buffers: Mapping[str, np.ndarray], shape: tuple[int, int], **params: object
) -> Csr:
    """The canonical CSR of a matrix stored in format ``name``."""
    fmt = sparse_format(name)
    _check_params(fmt, params)
    missing = [role for role in fmt.roles if role not in buffers]
    if missing:
        raise SparseFormatError(f"{name}: missing buffer(s) {missing}")
    return _CONVERTERS[name][1](buffers, (int(shape[0]), int(shape[1])), params)
