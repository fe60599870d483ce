"""The judge's sparse side without a service: every format's reference solution of spmv and spmm,
called through the C ABI that hb.sparse lays out, matches the reference on awkward matrices; every
extent the ABI states is the buffer's; the default ABI is the manifest's; and the refusals."""

from __future__ import annotations

import ctypes
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hb import abi, kernels, sparse
from hb.precision import TOLERANCE_MATRIX
from hb.requests_api import RequestAllowances, Requests
from relayout.sparse.formats import FORMATS, canonical_csr, to_csr
from tests.hb.sparse_support import (
    SOLUTIONS,
    SPMM_FORMATS,
    build_solution,
    call_kernel,
    dense_of,
    field_sets,
    format_request,
    random_triple,
)

SPMV = kernels.load_manifest("spmv")
SPMM = kernels.load_manifest("spmm")
FP64 = TOLERANCE_MATRIX["fp64"]


@pytest.fixture(scope="session")
def solution_libraries(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ctypes.CDLL]:
    """Every format's reference solution, built once: keyed spmv_<format>, spmm_<format>."""
    out = tmp_path_factory.mktemp("sparse-solutions")
    return {
        f"{kernel}_{to}": build_solution(source, out, f"{kernel}_{to}")
        for kernel, sources in SOLUTIONS.items()
        for to, source in sorted(sources.items())
    }


def test_every_format_has_an_spmv_solution_and_spmm_the_required_ones() -> None:
    assert set(SOLUTIONS["spmv"]) == set(FORMATS)
    assert {"csr", "ell", "sell_c_sigma"} <= set(SPMM_FORMATS)


# ---------------------------------------------------------------------------------------------
# Solutions through the ABI.


def run_spmv(
    library: ctypes.CDLL,
    triple: tuple[np.ndarray, ...],
    shape: tuple[int, int],
    request: dict[str, Any],
    x: np.ndarray,
    precision: str = "fp64",
) -> tuple[np.ndarray, sparse.SparseRun]:
    sizes = {"M": shape[0], "N": shape[1], "nnz": int(triple[2][-1])}
    inputs = {
        "A_data": triple[0],
        "A_indices": triple[1],
        "A_indptr": triple[2],
        "x": x,
        "y": np.full(shape[0], np.nan, dtype=x.dtype),  # the kernel must write every row
    }
    run = sparse.prepare_sparse_run(SPMV, request, precision, sizes, {}, inputs)
    call_kernel(library, f"spmv_{precision}", run.pointers, run.inputs, run.trailing_arguments)
    return run.inputs["y"], run


def assert_spmv_matches(
    library: ctypes.CDLL, triple, shape, request, rng: np.random.Generator
) -> None:
    x = rng.uniform(-1.0, 1.0, shape[1])
    got, _ = run_spmv(library, triple, shape, request, x)
    want = dense_of(*triple, shape) @ x
    np.testing.assert_allclose(got, want, rtol=FP64.rtol, atol=FP64.atol)


@st.composite
def sparse_cases(draw: st.DrawFn) -> tuple[tuple[np.ndarray, ...], tuple[int, int], int]:
    rows, cols = draw(st.integers(0, 40)), draw(st.integers(0, 40))
    density = draw(st.sampled_from([0.0, 0.05, 0.2, 0.6, 1.0]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    triple = random_triple(rows, cols, density, rng, dense_row=draw(st.booleans()))
    return triple, (rows, cols), seed


@pytest.mark.parametrize("to", sorted(FORMATS))
@settings(max_examples=25, deadline=None)
@given(case=sparse_cases())
def test_spmv_solution_matches_the_reference_in_every_format(
    solution_libraries: dict[str, ctypes.CDLL], to: str, case
) -> None:
    triple, shape, seed = case
    for fields in field_sets(to):
        assert_spmv_matches(
            solution_libraries[f"spmv_{to}"],
            triple,
            shape,
            format_request("A", to, **fields),
            np.random.default_rng(seed + 1),
        )


AWKWARD = {
    "empty 0x0": (0, 0, 0.0, False),
    "no rows": (0, 7, 0.0, False),
    "no columns": (6, 0, 0.0, False),
    "all rows empty": (9, 5, 0.0, False),
    "one dense row, the rest empty": (13, 11, 0.0, True),
    "dense matrix": (7, 9, 1.0, False),
    "sparse, tall, unsorted": (57, 5, 0.3, True),
    "sparse, wide, unsorted": (5, 61, 0.2, True),
}


@pytest.mark.parametrize("to", sorted(FORMATS))
@pytest.mark.parametrize("case", sorted(AWKWARD))
def test_spmv_awkward_matrices(
    solution_libraries: dict[str, ctypes.CDLL], to: str, case: str
) -> None:
    rows, cols, density, dense_row = AWKWARD[case]
    rng = np.random.default_rng(len(case))
    triple = random_triple(rows, cols, density, rng, dense_row=dense_row)
    for fields in field_sets(to):
        assert_spmv_matches(
            solution_libraries[f"spmv_{to}"],
            triple,
            (rows, cols),
            format_request("A", to, **fields),
            rng,
        )


@pytest.mark.parametrize("to", sorted(FORMATS))
def test_spmv_fp32_solution_in_the_fp32_band(
    solution_libraries: dict[str, ctypes.CDLL], to: str
) -> None:
    rng = np.random.default_rng(5)
    shape = (37, 29)
    triple = random_triple(*shape, 0.2, rng, dense_row=True, dtype=np.float32)
    x = rng.uniform(-1.0, 1.0, shape[1]).astype(np.float32)
    band = TOLERANCE_MATRIX["fp32"]
    for fields in field_sets(to):
        got, _ = run_spmv(
            solution_libraries[f"spmv_{to}"],
            triple,
            shape,
            format_request("A", to, **fields),
            x,
            "fp32",
        )
        assert got.dtype == np.float32
        want = dense_of(*triple, shape) @ x.astype(np.float64)
        np.testing.assert_allclose(got, want, rtol=band.rtol, atol=band.atol)


@pytest.mark.parametrize("to", SPMM_FORMATS)
@pytest.mark.parametrize(
    "shape, density, dense_row",
    [
        ((0, 0, 3), 0.0, False),
        ((11, 13, 4), 0.0, True),
        ((41, 23, 5), 0.15, True),
        ((8, 8, 1), 1.0, False),
    ],
)
def test_spmm_solution_matches_the_reference(
    solution_libraries: dict[str, ctypes.CDLL], to: str, shape, density: float, dense_row: bool
) -> None:
    rows, inner, cols = shape
    rng = np.random.default_rng(rows * 7 + cols)
    triple = random_triple(rows, inner, density, rng, dense_row=dense_row)
    sizes = {"M": rows, "K": inner, "N": cols, "nnz": int(triple[2][-1])}
    b = rng.uniform(-1.0, 1.0, (inner, cols))
    for fields in field_sets(to):
        inputs = {
            "A_data": triple[0],
            "A_indices": triple[1],
            "A_indptr": triple[2],
            "B": b,
            "C": np.full((rows, cols), np.nan),
        }
        run = sparse.prepare_sparse_run(
            SPMM, format_request("A", to, **fields), "fp64", sizes, {}, inputs
        )
        call_kernel(
            solution_libraries[f"spmm_{to}"],
            "spmm_fp64",
            run.pointers,
            run.inputs,
            run.trailing_arguments,
        )
        want = dense_of(*triple, (rows, inner)) @ b
        np.testing.assert_allclose(run.inputs["C"], want, rtol=FP64.rtol, atol=FP64.atol)


def test_spmv_reference_is_the_dense_product_with_empty_rows() -> None:
    # Rows 0, 3, 4 and the last one hold no entry: each must read 0 (a reduceat over indptr would
    # repeat the next row's first product there, and fail on a trailing empty row).
    rng = np.random.default_rng(11)
    rows, cols = 9, 7
    dense = rng.uniform(-1.0, 1.0, (rows, cols)) * (rng.random((rows, cols)) < 0.5)
    dense[[0, 3, 4, rows - 1], :] = 0.0
    dense[1, 0] = dense[2, cols - 1] = 0.5  # two rows that are surely not empty
    r, c = np.nonzero(dense)
    indptr = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(r, minlength=rows), out=indptr[1:])
    x = rng.uniform(-1.0, 1.0, cols)
    inputs = {
        "A_data": dense[r, c],
        "A_indices": c.astype(np.int64),
        "A_indptr": indptr,
        "x": x,
        "y": np.full(rows, np.nan),
    }
    sizes = {"M": rows, "N": cols, "nnz": int(r.size)}
    y = kernels.reference_outputs(SPMV, inputs, sizes, {})["y"]
    assert (y[[0, 3, 4, rows - 1]] == 0.0).all()
    np.testing.assert_allclose(y, dense @ x, rtol=1e-14, atol=1e-15)


def test_spmm_catalog_inputs_have_uneven_rows_and_the_reference_agrees() -> None:
    sizes = SPMM.preset_sizes("S")
    inputs = kernels.make_inputs(SPMM, sizes, 3, np.dtype(np.float64))
    lengths = np.diff(inputs["A_indptr"])
    assert lengths.sum() == sizes["nnz"] and (lengths == 0).any() and lengths.max() > lengths.mean()
    for row in range(sizes["M"]):
        columns = inputs["A_indices"][inputs["A_indptr"][row] : inputs["A_indptr"][row + 1]]
        assert (np.diff(columns) > 0).all() and (columns < sizes["K"]).all()
    want = (
        dense_of(
            inputs["A_data"], inputs["A_indices"], inputs["A_indptr"], (sizes["M"], sizes["K"])
        )
        @ inputs["B"]
    )
    got = kernels.reference_outputs(SPMM, inputs, sizes, {})["C"]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


# ---------------------------------------------------------------------------------------------
# The ABI: stated extents are the buffers', sizes in order, the default is the manifest's.


def _evaluate(extent: str, namespace: dict[str, Any]) -> int:
    # Extents are our own expressions over size names and buffers (A_slice_ptr[A_nslices]).
    return int(eval(extent, {"__builtins__": {}}, namespace))


@pytest.mark.parametrize("to", sorted(FORMATS))
def test_stated_extents_are_the_buffer_shapes(to: str) -> None:
    rng = np.random.default_rng(11)
    shape = (23, 17)
    triple = random_triple(*shape, 0.25, rng, dense_row=True)
    sizes = {"M": shape[0], "N": shape[1], "nnz": int(triple[2][-1])}
    inputs = {"A_data": triple[0], "A_indices": triple[1], "A_indptr": triple[2],
              "x": np.zeros(shape[1]), "y": np.zeros(shape[0])}  # fmt: skip
    for fields in field_sets(to):
        request = format_request("A", to, **fields)
        run = sparse.prepare_sparse_run(SPMV, request, "fp64", sizes, {}, inputs)
        size_values = {
            a: int(v["value"])
            for a, v in zip(run.abi.size_arguments, run.trailing_arguments[3:], strict=True)
        }
        namespace: dict[str, Any] = {**sizes, **size_values, **run.inputs}
        for name, entry in run.abi.arrays.items():
            buffer = run.inputs[name]
            # A dense pointer's extents are over d0, d1, ...: its dims at the sizes.
            dense = [a for a in SPMV.arrays if a.name == name and not a.is_sparse]
            dims = SPMV.shape_of(dense[0], sizes) if dense else ()
            namespace.update({f"d{i}": extent for i, extent in enumerate(dims)})
            assert [_evaluate(e, namespace) for e in entry["extents"]] == list(buffer.shape), (
                name,
                entry,
            )
            expected_dtype = "int64" if buffer.dtype == np.int64 else "fp64"
            assert entry["dtype"] == expected_dtype and str(buffer.dtype) in ("int64", "float64")
            if name.startswith("A_"):
                assert entry["format"] == to
        assert run.abi.size_arguments == tuple(f"A_{s}" for s in sparse.SIZE_ARGUMENTS[to])


@pytest.mark.parametrize("manifest", [SPMV, SPMM], ids=lambda m: m.name)
@pytest.mark.parametrize("precision", ["fp64", "fp32"])
def test_the_default_abi_is_the_manifest_one(manifest, precision: str) -> None:
    for request in (None, {}, format_request("A", "csr")):
        kernel = sparse.kernel_abi(manifest, request, precision)
        assert kernel.signature == abi.default_signature(manifest, precision)
        assert list(kernel.pointers) == kernels.pointer_names(manifest)
        assert kernel.size_arguments == ()


def test_no_request_leaves_the_inputs_untouched_and_untimed() -> None:
    sizes = SPMV.preset_sizes("S")
    inputs = kernels.make_inputs(SPMV, sizes, 1, np.dtype(np.float64))
    run = sparse.prepare_sparse_run(SPMV, None, "fp64", sizes, {}, inputs)
    assert run.convert_in_ns == 0 and all(run.inputs[n] is inputs[n] for n in inputs)
    assert run.trailing_arguments == abi.trailing_arguments(SPMV, sizes, {}, "fp64")
    timed = sparse.prepare_sparse_run(SPMV, format_request("A", "jds"), "fp64", sizes, {}, inputs)
    assert timed.convert_in_ns > 0 and "A_indptr" not in timed.inputs


GOLDEN_SIGNATURES = {
    "ell": "void spmv_fp64(const double *restrict A_data, const int64_t *restrict A_indices, "
    "const double *restrict x, double *restrict y, int64_t M, int64_t N, int64_t nnz, int64_t A_width, "
    "void *workspace, int64_t workspace_bytes);",
    "sell_c_sigma": "void spmv_fp64(const double *restrict A_data, const int64_t *restrict A_indices, "
    "const int64_t *restrict A_perm, const int64_t *restrict A_slice_ptr, const double *restrict x, "
    "double *restrict y, int64_t M, int64_t N, int64_t nnz, int64_t A_C, int64_t A_nslices, "
    "void *workspace, int64_t workspace_bytes);",
    "bcsr": "void spmv_fp64(const double *restrict A_data, const int64_t *restrict A_indices, "
    "const int64_t *restrict A_indptr, const double *restrict x, double *restrict y, int64_t M, "
    "int64_t N, int64_t nnz, int64_t A_block_rows, int64_t A_block_cols, int64_t A_nblocks, "
    "void *workspace, int64_t workspace_bytes);",
    "coo": "void spmv_fp64(const double *restrict A_data, const int64_t *restrict A_row, "
    "const int64_t *restrict A_col, const double *restrict x, double *restrict y, int64_t M, int64_t N, "
    "int64_t nnz, void *workspace, int64_t workspace_bytes);",
}


@pytest.mark.parametrize("to", sorted(GOLDEN_SIGNATURES))
def test_golden_signatures(to: str) -> None:
    assert (
        sparse.kernel_abi(SPMV, format_request("A", to), "fp64").signature == GOLDEN_SIGNATURES[to]
    )


def test_documented_signatures_are_the_rendered_ones() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "sparse.md").read_text()
    for to in FORMATS:
        fields = field_sets(to)[-1]
        rendered = sparse.kernel_abi(SPMV, format_request("A", to, **fields), "fp64").signature
        assert rendered in text, f"docs/sparse.md lacks the {to} signature: {rendered}"


def test_dense_arrays_from_relayout_keep_their_order_and_the_sparse_one_expands() -> None:
    dense = {
        "A": {
            "dtype": "fp64",
            "extents": ["M", "N"],
            "declaration": "/* sparse */",
            "format": "csr",
        },
        "x": {"dtype": "fp32", "extents": ["N"], "declaration": "const float *restrict x"},
        "y": {"dtype": "fp64", "extents": ["M"], "declaration": "double *restrict y"},
    }
    kernel = sparse.kernel_abi(SPMV, format_request("A", "dia"), "fp64", dense)
    assert kernel.pointers == ("A_data", "A_offsets", "x", "y")
    assert "const float *restrict x" in kernel.signature and "int64_t A_ndiag" in kernel.signature


def test_a_check_answer_lists_every_buffer() -> None:
    answer = sparse.check_answer(SPMM, format_request("A", "sell_c_sigma", C=4), "fp64")
    assert answer["accepted"] and list(answer["arrays"]) == [
        "A_data",
        "A_indices",
        "A_perm",
        "A_slice_ptr",
        "B",
        "C",
    ]
    assert answer["arrays"]["A_slice_ptr"]["extents"] == ["A_nslices + 1"]
    refused = sparse.check_answer(SPMM, format_request("B", "ell"), "fp64")
    assert refused == {"accepted": False, "refusal": refused["refusal"]}
    assert refused["refusal"].startswith("operations[0] (format): B is a dense array")


# ---------------------------------------------------------------------------------------------
# Refusals (issue §2), each naming the entry.


def ops(*operations: dict[str, Any], grid: list[str] | None = None) -> dict[str, Any]:
    document: dict[str, Any] = {"operations": list(operations)}
    if grid:
        document["startup"] = {"grid": grid}
    return document


FORMAT_A = {"action": "format", "array": "A", "to": "ell"}
REFUSALS = [
    (ops({"action": "permute", "array": "A", "order": ["i1", "i0"]}),
     "operations[0] (permute): A is a sparse array (csr); it takes format, replicate and place, never a digit operation"),
    (ops(FORMAT_A, {"action": "block", "array": "A", "digit": "i0", "factor": 4, "into": ["b", "f"]}),
     "operations[1] (block): A is a sparse array (csr)"),
    (ops({"action": "pad", "array": "A_data", "digit": "i0", "amount": 3}),
     "operations[0] (pad): A_data is a buffer of the sparse array A"),
    (ops(FORMAT_A, FORMAT_A, {"action": "cast", "array": "A", "to": "fp32"}),
     "operations[2] (cast): A is a sparse array (csr); a cast of sparse values is not supported"),
    (ops({"action": "cast", "array": "A_data", "to": "fp32"}),
     "operations[0] (cast): A_data is a buffer of the sparse array A"),
    (ops({"action": "format", "array": "A", "to": "csc"}, grid=["P"]),
     "startup.grid: spmv has the sparse array(s) A, and distributing a sparse format is not implemented yet"),
    (ops({"action": "zip", "arrays": ["A_data", "x"], "into": "ax"}),
     "operations[0] (zip): A_data is a buffer of the sparse array A; sparse arrays and their buffers never regroup"),
    (ops({"action": "unzip", "array": "A", "into": ["a0", "a1"]}),
     "operations[0] (unzip): A is a sparse array (csr); sparse arrays and their buffers never regroup"),
    (ops({"action": "format", "array": "x", "to": "csr"}),
     "operations[0] (format): x is a dense array; format applies only to the sparse arrays of spmv (A)"),
    (ops({"action": "format", "array": "Q", "to": "csr"}),
     "operations[0] (format): spmv has no array 'Q'; its sparse arrays: A"),
    (ops({"action": "format", "array": "A_indptr", "to": "csr"}),
     "operations[0] (format): A_indptr is a buffer of A; format names the sparse array (A)"),
    (ops({"action": "format", "array": "A", "to": "hyb"}),
     "operations[0] (format): unknown sparse format 'hyb'; accepted: csr, csc, coo, ell, dia, bcsr, jds, sell_c_sigma"),
    (ops({"action": "format", "array": "A", "to": "ell", "block_size": [2, 2]}),
     "operations[0] (format): block_size applies only to bcsr; format ell takes no other fields"),
    (ops({"action": "format", "array": "A", "to": "bcsr", "C": 4}),
     "operations[0] (format): C applies only to sell_c_sigma; format bcsr takes block_size"),
    (ops({"action": "format", "array": "A", "to": "bcsr", "block_size": [2, 0]}),
     "operations[0] (format): block_size[1]: expected a positive integer, got 0"),
    (ops({"action": "format", "array": "A", "to": "sell_c_sigma", "C": 0}),
     "operations[0] (format): C: expected a positive integer, got 0"),
    (ops({"action": "format", "array": "A", "to": "sell_c_sigma", "sigma": True}),
     "operations[0] (format): sigma: expected a positive integer, got True"),
]  # fmt: skip


@pytest.mark.parametrize("request_document, expected", REFUSALS)
def test_refusals_name_the_entry(request_document: dict[str, Any], expected: str) -> None:
    refusal = sparse.sparse_refusal(request_document, SPMV)
    assert refusal is not None and refusal.startswith(expected), refusal


def test_a_dense_kernel_refuses_every_format() -> None:
    refusal = sparse.sparse_refusal(
        ops({"action": "format", "array": "x", "to": "csr"}), kernels.load_manifest("scaled_add")
    )
    assert (
        refusal
        == "operations[0] (format): x is a dense array; format applies only to the sparse arrays of scaled_add (none)"
    )


def test_dense_operations_of_a_sparse_kernel_are_not_sparse_refusals() -> None:
    accepted = ops(
        {"action": "format", "array": "A", "to": "bcsr", "block_size": [2, 2]},
        {"action": "cast", "array": "x", "to": "fp32"},
        {"action": "permute", "array": "B", "order": ["i1", "i0"]},
    )
    assert sparse.sparse_refusal(accepted, SPMV) is None
    assert sparse.sparse_refusal(accepted, SPMM) is None


def test_the_last_format_of_an_array_wins() -> None:
    choices = sparse.format_choices(
        ops(FORMAT_A, {"action": "format", "array": "A", "to": "bcsr", "block_size": 3}), SPMV
    )
    assert choices["A"] == sparse.FormatChoice(
        "A", "bcsr", {"block_size": (3, 3)}, "operations[1] (format)"
    )
    assert sparse.format_choices(None, SPMV)["A"] == sparse.FormatChoice("A")


def test_relayout_requests_are_read_like_documents() -> None:
    requests = Requests.validate(ops({"action": "format", "array": "A", "to": "coo"}))
    assert sparse.format_choices(requests, SPMV)["A"].to == "coo"
    assert sparse.sparse_refusal(requests, SPMV) is None
    dense = Requests.validate(ops({"action": "format", "array": "x", "to": "coo"}))
    assert (sparse.sparse_refusal(dense, SPMV) or "").startswith(
        "operations[0] (format): x is a dense array"
    )


def test_sparse_format_is_a_capability_no_default_grants() -> None:
    assert not sparse.format_allowed(RequestAllowances.resolve(None, None))
    assert not sparse.format_allowed(
        RequestAllowances.resolve(["load", "layout", "distribute"], None)
    )
    assert sparse.format_allowed(RequestAllowances.resolve(["load", "sparse_format"], None))


@pytest.mark.parametrize("to", sorted(FORMATS))
@settings(max_examples=20, deadline=None)
@given(case=sparse_cases())
def test_the_kernel_buffers_read_back_to_the_canonical_csr(to: str, case) -> None:
    triple, shape, _ = case
    sizes = {"M": shape[0], "N": shape[1], "nnz": int(triple[2][-1])}
    inputs = {"A_data": triple[0], "A_indices": triple[1], "A_indptr": triple[2]}
    canonical = canonical_csr(*triple, shape)
    for fields in field_sets(to):
        request = format_request("A", to, **fields)
        converted = sparse.convert_sparse_inputs(SPMV, request, inputs, sizes)
        choice = sparse.format_choices(request, SPMV)["A"]
        buffers = {role: converted.inputs[f"A_{role}"] for role in FORMATS[to].roles}
        back = to_csr(to, buffers, shape, **choice.params)
        np.testing.assert_array_equal(back.to_dense(), canonical.to_dense())
        if to not in ("dia", "bcsr"):  # whole diagonals and blocks drop stored zeros, no others
            assert back.same_as(canonical)


def test_the_prompt_section_states_every_format_and_its_sizes() -> None:
    section = sparse.sparse_prompt_section(SPMM, "fp64")
    for to in FORMATS:
        assert f"- `{to}`:" in section
        for size in sparse.SIZE_ARGUMENTS[to]:
            assert f"A_{size}" in section
    assert "A_indptr[K + 1]" in section  # csc compresses spmm's K columns
    assert sparse.sparse_prompt_section(kernels.load_manifest("scaled_add"), "fp64") == ""
