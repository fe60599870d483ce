"""The catalog's manifests and ABI: every manifest validates and the three fixed ABIs are exactly as
published (test_catalog.py grades every kernel's solution.c at preset S in every precision)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hb import abi, kernels
from hb.envelope import Submission
from hb.service import JudgeHandler, RequestFault
from tests.hb.conftest import make_config

FIXED_SIGNATURES = {
    "scaled_add": "void scaled_add_fp64(const double *restrict x, double *restrict y, int64_t N, double alpha, "
    "void *workspace, int64_t workspace_bytes);",
    "mat_scaled_add": "void mat_scaled_add_fp64(const double *restrict A, double *restrict B, int64_t M, "
    "int64_t N, double alpha, void *workspace, int64_t workspace_bytes);",
    "spmv": "void spmv_fp64(const double *restrict A_data, const int64_t *restrict A_indices, "
    "const int64_t *restrict A_indptr, const double *restrict x, double *restrict y, int64_t M, int64_t N, "
    "int64_t nnz, void *workspace, int64_t workspace_bytes);",
}


def test_catalog_holds_the_issue_kernels() -> None:
    names = set(kernels.kernel_names())
    assert {
        "scaled_add",
        "mat_scaled_add",
        "spmv",
        "gemm",
        "jacobi_2d",
        "heat_3d",
        "force_lj",
    } <= names
    assert any(
        kernels.load_manifest(n).fp64_only and len(kernels.load_manifest(n).arrays) >= 3
        for n in names
    )


@pytest.mark.parametrize("name", sorted(FIXED_SIGNATURES))
def test_fixed_abi(name: str) -> None:
    assert abi.default_signature(kernels.load_manifest(name), "fp64") == FIXED_SIGNATURES[name]


def test_a_cast_never_changes_a_scalar_type() -> None:
    manifest = kernels.load_manifest("scaled_add")
    arguments = abi.trailing_arguments(manifest, {"N": 8}, {"alpha": 2.0}, "fp64")
    assert arguments == [{"kind": "int64", "value": 8}, {"kind": "double", "value": 2.0}]


def test_unknown_kernel_names_the_catalog() -> None:
    with pytest.raises(KeyError, match="scaled_add"):
        kernels.load_manifest("no_such_kernel")


def test_inputs_are_seeded_and_reproducible() -> None:
    manifest = kernels.load_manifest("spmv")
    sizes = manifest.preset_sizes("S")
    first = kernels.make_inputs(manifest, sizes, 3, np.dtype(np.float64))
    again = kernels.make_inputs(manifest, sizes, 3, np.dtype(np.float64))
    other = kernels.make_inputs(manifest, sizes, 4, np.dtype(np.float64))
    assert list(first) == kernels.pointer_names(manifest)
    assert all(np.array_equal(first[n], again[n]) for n in first)
    assert not np.array_equal(first["x"], other["x"])


def test_workspace_expression_is_evaluated_without_eval() -> None:
    # relayout's parser and int64 evaluator, the one every request's expression goes through.
    assert kernels.evaluate_size_expression("24 * ny * nx", {"ny": 2, "nx": 3}) == 144
    with pytest.raises(ValueError, match="unexpected character"):
        kernels.evaluate_size_expression("__import__('os')", {})
    with pytest.raises(ValueError, match="unknown size symbol"):
        kernels.evaluate_size_expression("N * 8", {})
    with pytest.raises(ValueError, match="int64"):
        kernels.evaluate_size_expression("N * N", {"N": 2**40})


def test_fp32_problem_of_scaled_add(data_dir: Path) -> None:
    fp32 = JudgeHandler(make_config(data_dir, grading={"datatype": "fp32"}))
    result = fp32.grade(
        Submission(kernel="scaled_add", source=kernels.solution_source("scaled_add")), "score"
    ).model_dump()
    assert result["correct"], result["reason"]
    assert result["datatype"] == "fp32"


DENSE_KERNELS = [
    n
    for n in kernels.kernel_names()
    if not any(a.is_sparse for a in kernels.load_manifest(n).arrays)
]


@pytest.mark.parametrize("name", DENSE_KERNELS)
def test_default_signature_agrees_with_relayout(name: str) -> None:
    from relayout.check import c_signature

    manifest = kernels.load_manifest(name)
    precision = manifest.precisions[0]
    theirs = c_signature(
        abi.symbol(manifest, precision),
        abi.relayout_arrays(manifest, precision),
        {},
        abi.abi_scalars(manifest, precision),
    )
    assert theirs == abi.default_signature(manifest, precision)


def test_precision_override_grades_an_fp64_only_kernel_in_the_fp32_band(data_dir: Path) -> None:
    from tests.hb.conftest import make_config

    overridden = JudgeHandler(
        make_config(
            data_dir, grading={"datatype": "fp32", "precision_override_kernels": ["channel_flow"]}
        )
    )
    source = kernels.solution_source("channel_flow")
    result = overridden.grade(
        Submission(kernel="channel_flow", source=source, preset="S"), "score"
    ).model_dump()
    assert result["correct"], result["reason"]
    assert result["datatype"] == "fp64" and result["precision_override"] == "fp32"
    plain = JudgeHandler(make_config(data_dir, grading={"datatype": "fp32"}))
    with pytest.raises(RequestFault, match="channel_flow runs at"):
        plain.grade(
            Submission(kernel="channel_flow", source=source, preset="S"), "score"
        ).model_dump()


def test_the_baseline_keeps_its_fastest_time_and_submit_times_it_again(tmp_path: Path) -> None:
    from hb import results_db

    # A judge of its own: the absurd baseline below must not reach other tests' grades. The
    # stored baseline is min_of_k's (paired timing times its baseline in the grade).
    handler = JudgeHandler(make_config(tmp_path, grading={"timing": "min_of_k"}))
    source = kernels.solution_source("scaled_add")
    grading = handler.config.grading
    slow = 10**12  # a baseline timed while the machine was busy, say
    for seed in (grading.public_seed, handler.hidden_seed):
        results_db.set_baseline(handler.engine, "scaled_add", "S", "fp64", seed, slow)
    scored = handler.grade(
        Submission(kernel="scaled_add", source=source, preset="S"), "score"
    ).model_dump()
    assert scored["baseline_ns"] == slow  # /score reads the stored baseline
    assert scored["suspect"] is True and scored["speedup"] == 0.0  # far beyond belief
    submitted = handler.grade(Submission(kernel="scaled_add", source=source), "submit").model_dump()
    assert 0 < submitted["baseline_ns"] < slow  # /submit times it again and keeps the fastest
    stored = results_db.get_baseline(handler.engine, "scaled_add", "S", "fp64", handler.hidden_seed)
    assert stored == submitted["baseline_ns"]


def test_a_preset_binds_integer_sizes() -> None:
    raw = kernels.load_manifest("scaled_add").model_dump()
    assert isinstance(raw["presets"]["S"]["N"], int)
    raw["presets"]["S"]["N"] = 4096.5
    with pytest.raises(ValueError, match=r"presets.S: sizes \['N'\] must be integers"):
        kernels.Manifest.model_validate(raw)
