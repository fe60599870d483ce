"""Sparse formats through the judge: every format's reference solution built by the judge's build
and run in its sandboxed runner on hb.sparse's buffers grades correct at preset S; the setup's
allowance refuses format; and, once the service takes format operations, the same end to end
through JudgeHandler.grade and /requests/check (skipped, with the reason, until then)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from hb import build, kernels, runner, sparse
from hb.envelope import RequestsCheckBody, Submission
from hb.grading import compare_outputs
from hb.precision import TOLERANCE_MATRIX
from hb.requests_api import RequestError, Requests
from hb.service import JudgeHandler, conversions_available
from relayout.sparse_formats import FORMATS
from tests.hb.conftest import make_config
from tests.hb.sparse_support import SOLUTIONS, field_sets, format_request

SPMM_FORMATS = sorted(p.stem.removeprefix("spmm_") for p in SOLUTIONS["spmm"].glob("spmm_*.c"))
CASES = [("spmv", to) for to in sorted(FORMATS)] + [("spmm", to) for to in SPMM_FORMATS]


def solution(kernel: str, to: str) -> str:
    return (SOLUTIONS[kernel] / f"{kernel}_{to}.c").read_text()


def grading_fields(to: str) -> dict[str, Any]:
    # The richest parameter set: blocks that straddle the edges, sorting windows wider than C.
    return field_sets(to)[-1]


@pytest.mark.parametrize("kernel, to", CASES)
def test_solution_grades_correct_in_the_sandboxed_runner(
    handler: JudgeHandler, kernel: str, to: str
) -> None:
    manifest = kernels.load_manifest(kernel)
    sizes, scalars = manifest.preset_sizes("S"), manifest.preset_scalars("S")
    inputs = kernels.make_inputs(manifest, sizes, 7, np.dtype(np.float64))
    request = format_request("A", to, **grading_fields(to))
    assert sparse.sparse_refusal(request, manifest) is None
    prepared = sparse.prepare_sparse_run(manifest, request, "fp64", sizes, scalars, inputs)
    built = build.build(
        solution(kernel, to), "c", [], handler.config.build_cache_dir, handler.build_limits
    )
    assert built.ok and built.library is not None, built.log
    run = runner.run_kernel(
        library=built.library,
        symbol=prepared.abi.symbol,
        pointers=prepared.pointers,
        trailing_arguments=prepared.trailing_arguments,
        workspace_bytes=manifest.workspace_size(sizes),
        inputs=prepared.inputs,
        output_names=kernels.output_names(manifest),
        reps=1,
        warmup=0,
        workdir_root=handler.config.sandbox_dir,
        limits=handler.limits,
        threads=2,
    )
    assert run.ok, run.reason
    expected = kernels.reference_outputs(manifest, inputs, sizes, scalars)
    comparison = compare_outputs(run.outputs, expected, TOLERANCE_MATRIX["fp64"])
    assert comparison.correct, comparison.reason
    if to != "csr":
        assert prepared.convert_in_ns > 0


def test_format_needs_the_sparse_format_capability(handler: JudgeHandler) -> None:
    assert not sparse.format_allowed(handler.allowances)
    answer = handler.check(RequestsCheckBody(kernel="spmv", requests=format_request("A", "csc")))
    assert answer["accepted"] is False
    assert answer["refusal"].startswith(
        "operations[0] (format): this setup does not allow sparse_format requests"
    )


# ---------------------------------------------------------------------------------------------
# End to end through the service, once it routes sparse kernels through hb.sparse.


@pytest.fixture(scope="module")
def sparse_handler(tmp_path_factory: pytest.TempPathFactory) -> JudgeHandler:
    config = make_config(
        tmp_path_factory.mktemp("sparse-judge"),
        requests={"allow": ["load", "cast", "layout", "sparse_format"], "precisions": ["fp32"]},
    )
    return JudgeHandler(config)


def _service_gap(handler: JudgeHandler) -> str | None:
    """Why the service cannot grade format operations yet, or None when it can."""
    try:
        Requests.validate(format_request("A", "sell_c_sigma", C=4, sigma=8))
    except RequestError as error:
        return f"relayout's format operation does not take every format and field yet ({error})"
    answer = handler.check(RequestsCheckBody(kernel="spmv", requests=format_request("A", "ell")))
    if not answer["accepted"]:
        return f"the service refuses a format operation: {answer['refusal']}"
    if "int64_t A_width" not in (answer.get("signature") or ""):
        return "the service's /requests/check does not show a format's C ABI yet (hb.sparse.check_answer)"
    return None


@pytest.fixture(scope="module")
def service_takes_formats(sparse_handler: JudgeHandler) -> JudgeHandler:
    gap = _service_gap(sparse_handler)
    if gap is not None:
        pytest.skip(gap)
    return sparse_handler


@pytest.mark.parametrize("kernel, to", CASES)
def test_solution_grades_correct_through_the_judge(
    service_takes_formats: JudgeHandler, kernel: str, to: str
) -> None:
    request = format_request("A", to, **grading_fields(to))
    result = service_takes_formats.grade(
        Submission(kernel=kernel, source=solution(kernel, to), preset="S", requests=request),
        "score",
    )
    assert result["correct"], result["reason"]
    assert result["max_rel_error"] < 1e-9
    if to != "csr":
        assert result["convert_in_ns"] > 0


@pytest.mark.parametrize("kernel, to", CASES)
def test_check_route_answers_the_format_abi(
    service_takes_formats: JudgeHandler, kernel: str, to: str
) -> None:
    manifest = kernels.load_manifest(kernel)
    request = format_request("A", to, **grading_fields(to))
    answer = service_takes_formats.check(RequestsCheckBody(kernel=kernel, requests=request))
    expected = sparse.check_answer(manifest, request, "fp64")
    assert answer["accepted"] and answer["signature"] == expected["signature"]
    assert list(answer["arrays"]) == list(expected["arrays"])


def test_service_refusals_are_the_sparse_ones(service_takes_formats: JudgeHandler) -> None:
    for request in (
        format_request("x", "csr"),
        {"operations": [{"action": "cast", "array": "A", "to": "fp32"}]},
        {"operations": [{"action": "permute", "array": "A", "order": ["i1", "i0"]}]},
    ):
        answer = service_takes_formats.check(RequestsCheckBody(kernel="spmv", requests=request))
        expected = sparse.sparse_refusal(request, kernels.load_manifest("spmv"))
        assert answer == {"accepted": False, "refusal": expected}


def test_a_format_and_a_cast_of_a_dense_array_combine(service_takes_formats: JudgeHandler) -> None:
    # x narrowed to fp32 is graded in fp64's band: the grade fails by fp32's rounding alone, which
    # shows that both conversions reached the kernel (the format's and relayout's cast).
    if not conversions_available():
        pytest.skip("relayout.convert.compile_program is not in this checkout yet")
    source = solution("spmv", "csc").replace("const T *restrict x", "const float *restrict x")
    request = {
        "operations": [
            {"action": "format", "array": "A", "to": "csc"},
            {"action": "cast", "array": "x", "to": "fp32"},
        ]
    }
    result = service_takes_formats.grade(
        Submission(kernel="spmv", source=source, preset="S", requests=request), "score"
    )
    assert result["correct"] is False and "rtol=1e-09" in result["reason"]
    assert 1e-9 < result["max_rel_error"] < 1e-3
    assert result["convert_in_ns"] > 0
