"""Every sparse format round-trips to canonical CSR exactly, and agrees with scipy where scipy has it;
the C kernels (ell, jds, sell_c_sigma) equal the numpy reference byte for byte, stay inside their
buffers on a bad CSR, and give way to numpy where no kernel library can be built."""

from __future__ import annotations

import os
import re
import shutil

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from relayout.convert import build
from relayout.sparse import formats as sparse_formats
from relayout.sparse import kernels as sparse_kernels
from relayout.sparse.formats import (
    FORMATS,
    Csr,
    SparseFormatError,
    canonical_csr,
    from_csr,
    from_csr_reference,
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
def csr_matrices(
    draw, allow_zero_values: bool = True, dtypes: tuple[type, ...] = (np.float64,)
) -> Csr:
    rows = draw(st.integers(0, 12))
    cols = draw(st.integers(0, 12))
    density = draw(st.sampled_from([0.0, 0.1, 0.4, 1.0]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    mask = rng.random((rows, cols)) < density
    if rows and cols and draw(st.booleans()):
        mask[draw(st.integers(0, rows - 1)), :] = True  # a dense row
    values = rng.standard_normal((rows, cols)).astype(draw(st.sampled_from(dtypes)))
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


# --- the C kernels against the numpy reference -------------------------------------------------

C_FORMATS = ("ell", "jds", "sell_c_sigma")


def assert_same_bytes(ours: dict[str, np.ndarray], reference: dict[str, np.ndarray]) -> None:
    """Same roles in the same order, each with the reference's dtype, shape and bytes."""
    assert list(ours) == list(reference)
    for role, buffer in ours.items():
        expected = reference[role]
        assert buffer.dtype == expected.dtype, role
        assert buffer.shape == expected.shape, role
        assert buffer.flags.c_contiguous, role
        assert buffer.tobytes() == expected.tobytes(), role


@pytest.fixture
def fresh_library():
    """sparse_kernels.library() asked anew inside the test, and anew after it."""
    sparse_kernels.library.cache_clear()
    yield
    sparse_kernels.library.cache_clear()


def test_kernels_build_where_there_is_a_compiler() -> None:
    # Otherwise every comparison below would compare numpy with itself.
    if shutil.which(os.environ.get("RELAYOUT_CC") or "gcc") is None:
        pytest.skip("no C compiler here: the numpy fallback is all there is")
    assert sparse_kernels.library() is not None


@pytest.mark.parametrize("name", C_FORMATS)
def test_public_path_runs_the_kernels(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if sparse_kernels.library() is None:
        pytest.skip("no kernel library here")

    def refuse(*args: object) -> None:
        raise AssertionError("the numpy reference ran although the kernels are built")

    for attr in ("_ell_out_numpy", "_jds_out_numpy", "_sell_out_numpy"):
        monkeypatch.setattr(sparse_formats, attr, refuse)
    csr = canonical_csr(np.ones(3), np.array([0, 2, 1]), np.array([0, 2, 2, 3]), (3, 3))
    assert to_csr(name, from_csr(csr, name), csr.shape).same_as(csr)


@pytest.mark.parametrize("name", C_FORMATS)
@settings(max_examples=80, deadline=None)
@given(csr=csr_matrices(dtypes=(np.float64, np.float32)))
def test_kernels_equal_the_numpy_reference(name: str, csr: Csr) -> None:
    for params in parameter_sets(name):
        assert_same_bytes(from_csr(csr, name, **params), from_csr_reference(csr, name, **params))


def awkward_matrix(rows: int, cols: int, dtype: type, seed: int = 3) -> Csr:
    """Large enough for the kernels' parallel loops, with what stresses each of them: empty rows,
    a dense row, rows far longer than their neighbours (so SELL windows sort by counting on the
    stack, by counting on the heap and by insertion), NaN payloads, -0.0 and explicit zeros."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 21, rows)
    lengths[rng.random(rows) < 0.05] = 0
    lengths[rows // 2] = cols  # a dense row
    lengths[rng.choice(rows, 40, replace=False)] = rng.integers(cols - 40, cols, 40)
    indptr = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    indices = np.concatenate([np.sort(rng.choice(cols, n, replace=False)) for n in lengths]).astype(
        np.int64
    )
    data = rng.standard_normal(indices.shape[0]).astype(dtype)
    specials = rng.choice(data.shape[0], 30, replace=False)
    bits = data.view(np.uint64 if data.dtype.itemsize == 8 else np.uint32)
    payload_nan = 0x7FF0_0000_0000_0ABC if data.dtype.itemsize == 8 else 0x7F80_0ABC
    bits[specials[:10]] = payload_nan
    data[specials[10:20]] = -0.0
    data[specials[20:]] = 0.0
    return canonical_csr(data, indices, indptr, (rows, cols))


LARGE_PARAMS = {
    "ell": [{}, {"width": 333}],
    "jds": [{}],
    "sell_c_sigma": [
        {"C": 8, "sigma": 1},
        {"C": 8, "sigma": 64},
        {"C": 4, "sigma": 1000},
        {"C": 3, "sigma": 5},
        {"C": 32, "sigma": 10**6},
        {"C": 1, "sigma": 300},
    ],
}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", C_FORMATS)
def test_kernels_equal_the_reference_on_a_large_awkward_matrix(name: str, dtype: type) -> None:
    # 320 columns: rows of 280 to 320 entries beside ones of 0 to 20 make a SELL window's range of
    # lengths wider than the 256 a stack count holds. ELL pads every row to the longest, so it
    # gets fewer rows; still past the kernels' threshold for a parallel loop.
    csr = awkward_matrix(5_000 if name == "ell" else 60_000, 320, dtype)
    for params in LARGE_PARAMS[name]:
        assert_same_bytes(from_csr(csr, name, **params), from_csr_reference(csr, name, **params))


@pytest.mark.parametrize("dtype", [np.int8, np.float16, np.int32, np.complex128])
@pytest.mark.parametrize("name", C_FORMATS)
def test_every_element_width_moves_bits(name: str, dtype: type) -> None:
    rng = np.random.default_rng(11)
    mask = rng.random((40, 30)) < 0.3
    values = (rng.standard_normal((40, 30)) * 50).astype(dtype)
    r, c = np.nonzero(mask)
    indptr = np.concatenate([[0], np.cumsum(mask.sum(axis=1))])
    csr = canonical_csr(values[r, c], c, indptr, mask.shape)
    for params in parameter_sets(name):
        assert_same_bytes(from_csr(csr, name, **params), from_csr_reference(csr, name, **params))


def test_empty_matrices_in_the_kernels() -> None:
    for shape in [(0, 0), (0, 5), (5, 0), (4, 4)]:
        for dtype in (np.float64, np.float32):
            empty = canonical_csr(
                np.zeros(0, dtype), np.zeros(0, np.int64), np.zeros(shape[0] + 1, np.int64), shape
            )
            for name in C_FORMATS:
                for params in parameter_sets(name):
                    assert_same_bytes(
                        from_csr(empty, name, **params), from_csr_reference(empty, name, **params)
                    )


@pytest.mark.parametrize(
    "failure", ["no compiler", "build fails", "cache unwritable"], ids=lambda f: f.replace(" ", "-")
)
@pytest.mark.usefixtures("fresh_library")
def test_without_a_kernel_library_the_numpy_reference_runs(
    failure: str, monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    if failure == "no compiler":
        monkeypatch.setenv("RELAYOUT_CC", str(tmp_path / "no-such-cc"))
    elif failure == "build fails":

        def fail(*args: object, **kwargs: object) -> None:
            raise build.BuildError("generated kernels did not compile")

        monkeypatch.setattr(build, "build_library", fail)
    else:
        blocked = tmp_path / "file"
        blocked.write_text("a file where the cache directory should be")
        monkeypatch.setenv("RELAYOUT_CACHE_DIR", str(blocked / "cache"))
    assert sparse_kernels.library() is None
    csr = awkward_matrix(2_000, 400, np.float32)
    for name in C_FORMATS:
        for params in parameter_sets(name):
            buffers = from_csr(csr, name, **params)
            assert_same_bytes(buffers, from_csr_reference(csr, name, **params))
            assert to_csr(name, buffers, csr.shape, **params).same_as(csr)


@pytest.mark.parametrize("name", C_FORMATS)
def test_a_hand_made_bad_csr_is_refused_not_overrun(name: str) -> None:
    if sparse_kernels.library() is None:
        pytest.skip("no kernel library here")
    data, indices = np.ones(3), np.array([0, 1, 2], dtype=np.int64)
    for indptr in ([0, 3, 1, 3], [0, 1, 2, 4], [1, 2, 3, 3], [0, -5, 3, 3]):
        bad = Csr((3, 3), data, indices, np.array(indptr, dtype=np.int64))
        with pytest.raises(SparseFormatError, match="CSR not canonical"):
            from_csr(bad, name)


def _guarded(n: int, dtype: type) -> tuple[np.ndarray, np.ndarray]:
    """A buffer of n elements inside a larger one whose margins hold a sentinel."""
    whole = np.full(n + 64, 77, dtype=dtype)
    return whole, whole[32 : 32 + n]


def test_the_fills_stay_inside_their_buffers_on_corrupt_plans() -> None:
    lib = sparse_kernels.library()
    if lib is None:
        pytest.skip("no kernel library here")
    csr = canonical_csr(
        np.arange(1.0, 7.0), np.array([0, 1, 2, 0, 1, 0]), np.array([0, 3, 5, 6]), (3, 3)
    )

    def p(array: np.ndarray) -> int:
        return int(array.ctypes.data)

    args = (p(csr.indptr), p(csr.indices), p(csr.data), 3, 6)
    # JDS with ranks out of place: a rank past a row's diagonals, a negative one.
    jd_ptr = np.array([0, 3, 5, 6], dtype=np.int64)
    for rank in ([0, 2, 1], [-1, 1, 2], [0, 1, 99]):
        whole_i, out_i = _guarded(6, np.int64)
        whole_d, out_d = _guarded(6, np.float64)
        rank_a = np.array(rank, dtype=np.int64)
        bad = lib.relayout_jds_fill_8(*args, 3, p(rank_a), p(jd_ptr), p(out_i), p(out_d))
        assert bad > 0
        assert (whole_i[:32] == 77).all() and (whole_i[-32:] == 77).all()
        assert (whole_d[:32] == 77).all() and (whole_d[-32:] == 77).all()
    # SELL with slices that claim more slots than there are, or rows whose slice is too narrow.
    for slice_ptr, rank in (([0, 4, 8], [0, 1, 2]), ([0, 2, 4], [0, 1, 2]), ([0, 6, 8], [5, 1, 2])):
        whole_i, out_i = _guarded(6, np.int64)
        whole_d, out_d = _guarded(6, np.float64)
        ptr, rank_a = np.array(slice_ptr, dtype=np.int64), np.array(rank, dtype=np.int64)
        bad = lib.relayout_sell_fill_8(*args, 2, p(rank_a), p(ptr), 2, 6, p(out_i), p(out_d))
        assert bad > 0
        assert (whole_i[:32] == 77).all() and (whole_i[-32:] == 77).all()
        assert (whole_d[:32] == 77).all() and (whole_d[-32:] == 77).all()
    # ELL narrower than the longest row.
    whole_i, out_i = _guarded(6, np.int64)
    whole_d, out_d = _guarded(6, np.float64)
    assert lib.relayout_ell_fill_8(*args, 2, p(out_i), p(out_d)) > 0
    assert (whole_i[:32] == 77).all() and (whole_i[-32:] == 77).all()


def test_format_params_are_validated_once() -> None:
    from relayout.sparse.formats import SparseFormatError, format_params

    assert format_params("bcsr", {"block_size": 3})["block_size"] == (3, 3)
    assert format_params("bcsr", {"block_size": [2, 4]})["block_size"] == (2, 4)
    assert format_params("sell_c_sigma", {"C": 4})["C"] == 4
    for name, fields, message in [
        ("bcsr", {"block_size": [2, 0]}, "block_size[1]: expected a positive integer, got 0"),
        ("bcsr", {"block_size": [1, 2, 3]}, "block_size: expected [rows, cols] or one integer"),
        ("sell_c_sigma", {"sigma": True}, "sigma: expected a positive integer, got True"),
        ("ell", {"C": 2}, "ell: unknown parameter(s) ['C']"),
    ]:
        with pytest.raises(SparseFormatError, match=re.escape(message)):
            format_params(name, fields)
