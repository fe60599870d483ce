"""Every sparse format round-trips to canonical CSR exactly, and agrees with scipy where scipy has it."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from relayout.sparse_formats import (
    FORMATS,
    Csr,
    SparseFormatError,
    canonical_csr,
    from_csr,
    to_csr,
)

PARAMS = {
    "bcsr": [{"block_size": [1, 1]}, {"block_size": [2, 3]}, {"block_size": 4}],
    "sell_c_sigma": [
        {"C": 1, "sigma": 1},
        {"C": 4, "sigma": 1},
        {"C": 4, "sigma": 8},
        {"C": 3, "sigma": 5},
    ],
    "ell": [{}, {"width": 9}],
}
# DIA and BCSR store whole diagonals / blocks: a stored zero reads back as no entry.
KEEPS_EXPLICIT_ZEROS = {"csr", "csc", "coo", "ell", "jds", "sell_c_sigma"}


@st.composite
def csr_matrices(draw, allow_zero_values: bool = True) -> Csr:
    rows = draw(st.integers(0, 12))
    cols = draw(st.integers(0, 12))
    density = draw(st.sampled_from([0.0, 0.1, 0.4, 1.0]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    mask = rng.random((rows, cols)) < density
    if rows and cols and draw(st.booleans()):
        mask[draw(st.integers(0, rows - 1)), :] = True  # a dense row
    values = rng.standard_normal((rows, cols))
    if allow_zero_values and mask.any() and draw(st.booleans()):
        values[mask & (rng.random((rows, cols)) < 0.2)] = 0.0  # explicit zeros stay entries
    r, c = np.nonzero(mask)
    indptr = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum(mask.sum(axis=1), out=indptr[1:])
    data, indices = values[r, c], c.astype(np.int64)
    if draw(st.booleans()):  # unsorted columns inside each row
        shuffled = np.concatenate(
            [rng.permutation(np.arange(indptr[i], indptr[i + 1])) for i in range(rows)]
            or [np.zeros(0, dtype=np.int64)]
        ).astype(np.int64)
        data, indices = data[shuffled], indices[shuffled]
    return canonical_csr(data, indices, indptr, (rows, cols))


def parameter_sets(name: str) -> list[dict]:
    return PARAMS.get(name, [{}])


@pytest.mark.parametrize("name", sorted(FORMATS))
@settings(max_examples=60, deadline=None)
@given(csr=csr_matrices())
def test_round_trip_is_exact(name: str, csr: Csr) -> None:
    for params in parameter_sets(name):
        buffers = from_csr(csr, name, **params)
        assert tuple(buffers) == FORMATS[name].roles
        back = to_csr(name, buffers, csr.shape, **params)
        if name in KEEPS_EXPLICIT_ZEROS:
            assert back.same_as(csr), (name, params)
        else:
            np.testing.assert_array_equal(back.to_dense(), csr.to_dense())
            stored = csr.data != 0
            assert back.nnz == int(stored.sum())


@pytest.mark.parametrize("name", sorted(FORMATS))
@settings(max_examples=40, deadline=None)
@given(csr=csr_matrices(allow_zero_values=False))
def test_round_trip_without_explicit_zeros_keeps_structure(name: str, csr: Csr) -> None:
    for params in parameter_sets(name):
        assert to_csr(name, from_csr(csr, name, **params), csr.shape, **params).same_as(csr)


def scipy_of(csr: Csr) -> sp.csr_array:
    return sp.csr_array((csr.data, csr.indices, csr.indptr), shape=csr.shape)


@settings(max_examples=60, deadline=None)
@given(csr=csr_matrices(allow_zero_values=False))
def test_agrees_with_scipy(csr: Csr) -> None:
    reference = scipy_of(csr)
    csc = from_csr(csr, "csc")
    theirs = reference.tocsc()
    theirs.sort_indices()
    np.testing.assert_array_equal(csc["indptr"], theirs.indptr)
    np.testing.assert_array_equal(csc["indices"], theirs.indices)
    np.testing.assert_array_equal(csc["data"], theirs.data)

    coo = from_csr(csr, "coo")
    theirs_coo = reference.tocoo()
    np.testing.assert_array_equal(coo["row"], theirs_coo.row)
    np.testing.assert_array_equal(coo["col"], theirs_coo.col)

    dia = from_csr(csr, "dia")
    dense_from_dia = sp.dia_array((dia["data"], dia["offsets"]), shape=csr.shape).toarray()
    np.testing.assert_array_equal(dense_from_dia, csr.to_dense())

    if csr.shape[0] % 2 == 0 and csr.shape[1] % 3 == 0:
        bcsr = from_csr(csr, "bcsr", block_size=[2, 3])
        bsr = sp.bsr_array(
            (bcsr["data"], bcsr["indices"], bcsr["indptr"]), shape=csr.shape, blocksize=(2, 3)
        )
        np.testing.assert_array_equal(bsr.toarray(), csr.to_dense())


def test_spmv_in_every_format_matches_dense() -> None:
    rng = np.random.default_rng(7)
    dense = np.where(rng.random((37, 23)) < 0.2, rng.standard_normal((37, 23)), 0.0)
    dense[5, :] = 1.5  # a dense row
    dense[:, 4] = 0.0  # an empty column
    r, c = np.nonzero(dense)
    indptr = np.concatenate([[0], np.cumsum((dense != 0).sum(axis=1))])
    csr = canonical_csr(dense[r, c], c, indptr, dense.shape)
    x = rng.standard_normal(23)
    expected = dense @ x

    ell = from_csr(csr, "ell")
    safe = np.where(ell["indices"] >= 0, ell["indices"], 0)
    np.testing.assert_allclose((ell["data"] * x[safe]).sum(axis=1), expected, rtol=1e-13)

    sell = from_csr(csr, "sell_c_sigma", C=4, sigma=8)
    y = np.zeros(37)
    for s in range(sell["slice_ptr"].shape[0] - 1):
        lo, hi = sell["slice_ptr"][s], sell["slice_ptr"][s + 1]
        block_cols = sell["indices"][lo:hi].reshape(-1, 4)
        block_vals = sell["data"][lo:hi].reshape(-1, 4)
        for i in range(4):
            row = s * 4 + i
            if row < 37:
                live = block_cols[:, i] >= 0
                y[sell["perm"][row]] += block_vals[live, i] @ x[block_cols[live, i]]
    np.testing.assert_allclose(y, expected, rtol=1e-13)

    jds = from_csr(csr, "jds")
    y = np.zeros(37)
    for k in range(jds["jd_ptr"].shape[0] - 1):
        for q in range(jds["jd_ptr"][k + 1] - jds["jd_ptr"][k]):
            at = jds["jd_ptr"][k] + q
            y[jds["perm"][q]] += jds["data"][at] * x[jds["indices"][at]]
    np.testing.assert_allclose(y, expected, rtol=1e-13)


def test_empty_matrices() -> None:
    for shape in [(0, 0), (0, 5), (5, 0), (4, 4)]:
        empty = canonical_csr(
            np.zeros(0), np.zeros(0, np.int64), np.zeros(shape[0] + 1, np.int64), shape
        )
        for name in FORMATS:
            for params in parameter_sets(name):
                assert to_csr(name, from_csr(empty, name, **params), shape, **params).same_as(empty)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (([1.0], [5], [0, 1], (1, 3)), "indices[0] = 5: outside the 3 columns"),
        (([1.0, 2.0], [1, 1], [0, 2], (1, 3)), "row 0: column 1 is stored twice"),
        (([1.0], [0], [0, 1, 0], (2, 3)), "indptr[2]: decreases"),
        (([1.0], [0], [0, 1], (2, 3)), "indptr: expected 3 entries"),
        (([1.0], [0], [1, 1], (1, 3)), "indptr[0]: expected 0"),
    ],
)
def test_bad_csr_is_refused_with_the_place(args, message: str) -> None:
    with pytest.raises(SparseFormatError, match=message.replace("[", r"\[").replace("]", r"\]")):
        canonical_csr(np.asarray(args[0]), np.asarray(args[1]), np.asarray(args[2]), args[3])


def test_bad_parameters_are_refused() -> None:
    csr = canonical_csr(np.ones(1), np.zeros(1, np.int64), np.array([0, 1]), (1, 1))
    with pytest.raises(SparseFormatError, match="unknown sparse format 'hyb'"):
        from_csr(csr, "hyb")
    with pytest.raises(SparseFormatError, match="C: expected a positive integer"):
        from_csr(csr, "sell_c_sigma", C=0)
    with pytest.raises(SparseFormatError, match=r"unknown parameter\(s\) \['sigma'\]"):
        from_csr(csr, "bcsr", sigma=2)
    with pytest.raises(SparseFormatError, match="block_size"):
        from_csr(csr, "bcsr", block_size=[1, 2, 3])
