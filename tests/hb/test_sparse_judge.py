"""Sparse formats through the judge: every format's reference solution built by the judge's build
and run in its sandboxed runner on hb.sparse's buffers grades correct at preset S; the setup's
allowance refuses format; and the same end to end through JudgeHandler.grade and check, the HTTP
routes (/score, /submit, /requests/check, /task/{kernel}) and the hb command (submit, check), with
the conversion's time recorded in convert_in_ns and the refusals naming the entry."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient

from hb import cli, kernels, results_db, sparse
from hb.envelope import RequestsCheckBody, Submission
from hb.execution import build, runner
from hb.judge.grading import compare_outputs
from hb.precision import TOLERANCE_MATRIX
from hb.requests_api import Requests
from hb.service import JudgeHandler, create_app
from relayout.sparse.formats import FORMATS
from tests.hb.conftest import make_config
from tests.hb.sparse_support import SOLUTIONS, SPMM_FORMATS, field_sets, format_request

CASES = [("spmv", to) for to in sorted(FORMATS)] + [("spmm", to) for to in SPMM_FORMATS]


def solution(kernel: str, to: str) -> str:
    return SOLUTIONS[kernel][to].read_text()


def echoed(document: dict[str, Any]) -> dict[str, Any]:
    """The request as the judge echoes it in an answer: relayout's JSON of the validated request."""
    return dict(json.loads(Requests.validate(document).to_json()))


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
        reps=[runner.RepInput(prepared.inputs, prepared.trailing_arguments)],
        workspace_bytes=manifest.workspace_size(sizes),
        output_names=kernels.output_names(manifest),
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
# End to end through the service.

ALLOW = ["load", "cast", "layout", "sparse_format"]


@pytest.fixture(scope="module")
def sparse_handler(tmp_path_factory: pytest.TempPathFactory) -> JudgeHandler:
    config = make_config(
        tmp_path_factory.mktemp("sparse-judge"),
        requests={"allow": ALLOW, "precisions": ["fp32"]},
    )
    return JudgeHandler(config)


@pytest.fixture(scope="module")
def sparse_client(sparse_handler: JudgeHandler) -> Iterator[TestClient]:
    with TestClient(create_app(sparse_handler.config)) as test_client:
        yield test_client


@pytest.mark.parametrize("kernel, to", CASES)
def test_solution_grades_correct_through_the_judge(
    sparse_handler: JudgeHandler, kernel: str, to: str
) -> None:
    request = format_request("A", to, **grading_fields(to))
    result = sparse_handler.grade(
        Submission(kernel=kernel, source=solution(kernel, to), preset="S", requests=request),
        "score",
    ).model_dump()
    assert result["correct"], result["reason"]
    assert result["max_rel_error"] < 1e-9
    row = results_db.get_grade(sparse_handler.engine, result["grade_id"])
    assert row is not None and row["correct"]
    assert row["convert_in_ns"] == result["convert_in_ns"]
    assert results_db.requests_of_row(row).operations[0].action == "format"
    if to != "csr":
        assert result["convert_in_ns"] > 0


@pytest.mark.parametrize("kernel, to", CASES)
def test_check_route_answers_the_format_abi(
    sparse_handler: JudgeHandler, kernel: str, to: str
) -> None:
    manifest = kernels.load_manifest(kernel)
    request = format_request("A", to, **grading_fields(to))
    answer = sparse_handler.check(RequestsCheckBody(kernel=kernel, requests=request))
    expected = sparse.check_answer(manifest, request, "fp64")
    assert answer["accepted"] and answer["signature"] == expected["signature"]
    assert list(answer["arrays"]) == list(expected["arrays"])


def test_service_refusals_are_the_sparse_ones(sparse_handler: JudgeHandler) -> None:
    for request in (
        format_request("x", "csr"),
        format_request("y", "csr"),
        format_request("A_data", "csr"),
        {"operations": [{"action": "cast", "array": "A", "to": "fp32"}]},
        {"operations": [{"action": "permute", "array": "A", "order": ["i1", "i0"]}]},
    ):
        answer = sparse_handler.check(RequestsCheckBody(kernel="spmv", requests=request))
        expected = sparse.sparse_refusal(request, kernels.load_manifest("spmv"))
        assert expected is not None and expected.startswith("operations[0] (")
        assert answer == {"accepted": False, "refusal": expected}


def test_a_format_and_a_cast_of_a_dense_array_combine(sparse_handler: JudgeHandler) -> None:
    # x narrowed to fp32 is graded in fp64's band: the grade fails by fp32's rounding alone, which
    # shows that both conversions reached the kernel (the format's and relayout's cast).
    source = solution("spmv", "csc").replace("const T *restrict x", "const float *restrict x")
    request = {
        "operations": [
            {"action": "format", "array": "A", "to": "csc"},
            {"action": "cast", "array": "x", "to": "fp32"},
        ]
    }
    answer = sparse_handler.check(RequestsCheckBody(kernel="spmv", requests=request))
    assert answer["accepted"] and "const float *restrict x" in answer["signature"]
    assert [answer["arrays"][name].get("format") for name in ("A_data", "x")] == ["csc", None]
    result = sparse_handler.grade(
        Submission(kernel="spmv", source=source, preset="S", requests=request), "score"
    ).model_dump()
    assert result["correct"] is False and "rtol=1e-09" in result["reason"]
    assert 1e-9 < result["max_rel_error"] < 1e-3
    assert result["convert_in_ns"] > 0


def test_a_wrong_kernel_for_the_format_grades_incorrect(sparse_handler: JudgeHandler) -> None:
    # The CSR solution handed ELL's buffers reads them as a CSR triple: the signature is the
    # format's, not the default one, so the grade is a wrong answer (or a crash), never correct.
    result = sparse_handler.grade(
        Submission(
            kernel="spmv",
            source=solution("spmv", "csr"),
            preset="S",
            requests=format_request("A", "coo"),
        ),
        "score",
    ).model_dump()
    assert result["correct"] is False and result["reason"]


def test_http_routes_grade_check_and_refuse_formats(
    sparse_client: TestClient, sparse_handler: JudgeHandler
) -> None:
    request = format_request("A", "sell_c_sigma", C=4, sigma=8)
    # No preset: /submit takes none, and grading.preset is S.
    body = {"kernel": "spmv", "source": solution("spmv", "sell_c_sigma")}
    for route in ("score", "submit"):
        answer = sparse_client.post(f"/{route}", json={**body, "requests": request})
        assert answer.status_code == 200, answer.text
        graded = answer.json()
        assert graded["correct"] and graded["route"] == route and graded["convert_in_ns"] > 0
        assert graded["requests"] == echoed(request)

    checked = sparse_client.post("/requests/check", json={"kernel": "spmv", "requests": request})
    assert checked.status_code == 200
    assert "int64_t A_C, int64_t A_nslices" in checked.json()["signature"]

    refused = sparse_client.post("/submit", json={**body, "requests": format_request("x", "ell")})
    assert refused.status_code == 400
    assert refused.json()["detail"] == (
        "operations[0] (format): x is a dense array; format applies only to the sparse arrays of "
        "spmv (A)"
    )
    rows = results_db.list_grades(sparse_handler.engine, "spmv", "submit.refused", 5)
    assert rows and rows[0]["detail"] == refused.json()["detail"]
    # A field its format does not take is a malformed request: a 400 naming the entry.
    malformed = sparse_client.post(
        "/score", json={**body, "requests": format_request("A", "ell", sigma=2)}
    )
    assert malformed.status_code == 400
    assert malformed.json()["detail"].startswith(
        "operations[0] (format): sigma applies only to sell_c_sigma"
    )

    task = sparse_client.get("/task/spmv").json()
    assert "format" in task["request_actions"]["actions"]
    assert "## Sparse formats" in task["requests_section"]
    assert "A_slice_ptr[A_nslices + 1]" in task["requests_section"]
    dense_task = sparse_client.get("/task/scaled_add").json()
    assert "format" not in dense_task["request_actions"]["actions"]
    assert "Sparse formats" not in dense_task["requests_section"]


def test_a_setup_without_sparse_format_refuses_format_over_http(client: TestClient) -> None:
    answer = client.post(
        "/score",
        json={
            "kernel": "spmv",
            "source": solution("spmv", "csc"),
            "requests": format_request("A", "csc"),
        },
    )
    assert answer.status_code == 400
    assert answer.json()["detail"].startswith(
        "operations[0] (format): this setup does not allow sparse_format requests"
    )
    task = client.get("/task/spmv").json()
    assert "format" not in task["request_actions"]["actions"]
    assert "Sparse formats" not in task["requests_section"]


def test_hb_submit_and_check_take_a_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        f"data_dir: {tmp_path / 'data'}\n"
        "grading: {reps: 2, warmup: 1, max_pairs: 2, box_pairs: 1}\n"
        f"requests: {{allow: [{', '.join(ALLOW)}], precisions: [fp32]}}\n"
    )
    requests = tmp_path / "r.json"
    requests.write_text(json.dumps(format_request("A", "dia")))
    source = tmp_path / "spmv_dia.c"
    source.write_text(solution("spmv", "dia"))
    common = ["--config", str(config)]
    assert cli.main([*common, "check", "--kernel", "spmv", "--requests", str(requests)]) == 0
    checked = json.loads(capsys.readouterr().out)
    assert checked["accepted"] and "int64_t A_ndiag" in checked["signature"]
    submit = ["submit", str(source), "--kernel", "spmv", "--preset", "S"]
    assert cli.main([*common, *submit, "--requests", str(requests), "--json"]) == 0
    graded = json.loads(capsys.readouterr().out)
    assert graded["correct"] is True and graded["convert_in_ns"] > 0

    requests.write_text(json.dumps(format_request("x", "dia")))
    assert cli.main([*common, *submit, "--requests", str(requests)]) == 2
    assert "refused: operations[0] (format): x is a dense array" in capsys.readouterr().err
    requests.write_text(json.dumps(format_request("A", "dia", block_size=2)))
    assert cli.main([*common, *submit, "--requests", str(requests)]) == 2
    assert "operations[0] (format): block_size applies only to bcsr" in capsys.readouterr().err


@pytest.mark.parametrize("to", ["csr", "ell", "bcsr"])
def test_every_dense_pointer_is_written_over_d0_d1(sparse_handler: JudgeHandler, to: str) -> None:
    # Whatever else the request holds (a format here), dense pointers read like relayout's.
    requests = format_request("A", to, **grading_fields(to))
    answer = sparse_handler.check(RequestsCheckBody(kernel="spmv", requests=requests))
    assert answer["accepted"] is True, answer.get("refusal")
    assert answer["arrays"]["x"]["extents"] == ["d0"] and answer["arrays"]["y"]["extents"] == ["d0"]
    assert all(name.startswith("A_") for name in answer["arrays"] if name not in ("x", "y"))
