"""The HTTP service: health, tasks, the task view, /score and /submit with their 400 / 404 / 200
answers, /requests/check (accepted, refused, malformed; 200 concurrent calls), the OpenAPI
document, and what is recorded."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from hb import kernels, results_db
from hb.envelope import RequestsCheckBody
from hb.execution.runner import RunResult
from hb.service import JudgeHandler, create_app
from tests.hb.conftest import make_config

SCALED_ADD = kernels.solution_source("scaled_add")

SIX_OPERATIONS = {
    "operations": [
        {"action": "cast", "array": "A", "to": "fp32"},
        {"action": "permute", "array": "A", "order": ["i1", "i0"]},
        {"action": "block", "array": "B", "digit": "i1", "factor": 4, "into": ["b", "f"]},
        {"action": "pad", "array": "A", "digit": "i0", "amount": 3},
        {"action": "split", "array": "B", "digit": "i0", "parts": 2, "into": ["band", "offset"]},
        {"action": "cast", "array": "B", "to": "fp16"},
    ]
}


def test_health_and_tasks(client: TestClient) -> None:
    health = client.get("/health").json()
    assert health["status"] == "ok" and health["kernels"] == len(kernels.kernel_names())
    listed = [task["kernel"] for task in client.get("/tasks").json()]
    assert listed == kernels.kernel_names()


def test_task_view(client: TestClient) -> None:
    task = client.get("/task/scaled_add").json()
    assert task["arrays"] == {"x": "fp64[N]", "y": "fp64[N]:inout"}
    assert task["signature"].startswith("void scaled_add_fp64(const double *restrict x")
    assert set(task["presets"]) == {"S", "M", "L"}
    assert "cast" in task["request_actions"]["actions"]
    assert client.get("/task/nope").status_code == 404


def test_openapi_is_served(client: TestClient) -> None:
    document = client.get("/openapi.json").json()
    assert {"/score", "/submit", "/requests/check", "/task/{kernel}"} <= set(document["paths"])


def test_score_grades_and_records(client: TestClient, handler: JudgeHandler) -> None:
    answer = client.post(
        "/score", json={"kernel": "scaled_add", "source": SCALED_ADD, "preset": "S"}
    )
    assert answer.status_code == 200
    body = answer.json()
    assert body["correct"] and body["route"] == "score" and body["speedup"] > 0
    row = results_db.get_grade(handler.engine, body["grade_id"])
    assert row is not None and row["route"] == "score" and row["correct"] and row["requests"] == ""


def test_submit_is_the_leaderboard_route(client: TestClient) -> None:
    # /submit takes no preset: it grades at grading.preset (test_submit_secrecy.py).
    body = client.post("/submit", json={"kernel": "scaled_add", "source": SCALED_ADD}).json()
    assert body["correct"] and body["route"] == "submit" and body["preset"] == "S"


def test_unknown_kernel_is_404(client: TestClient) -> None:
    answer = client.post("/score", json={"kernel": "nope", "source": SCALED_ADD})
    assert answer.status_code == 404 and "scaled_add" in answer.json()["detail"]


def test_undeclared_field_is_400(client: TestClient) -> None:
    answer = client.post(
        "/score", json={"kernel": "scaled_add", "source": SCALED_ADD, "datatype": "fp32"}
    )
    assert answer.status_code == 400
    assert answer.json()["detail"].startswith("datatype: is not a field of this envelope")


def test_malformed_request_is_400_naming_the_entry(client: TestClient) -> None:
    requests = {
        "operations": [
            {"action": "cast", "array": "x", "to": "fp32"},
            {"action": "distribute", "array": "x"},
        ]
    }
    answer = client.post(
        "/score", json={"kernel": "scaled_add", "source": SCALED_ADD, "requests": requests}
    )
    assert answer.status_code == 400
    assert answer.json()["detail"].startswith("operations[1] (distribute): ")


def test_refused_request_is_400_and_recorded_as_refused(
    client: TestClient, handler: JudgeHandler
) -> None:
    requests = {"operations": [{"action": "cast", "array": "x", "to": "fp8_e4m3"}]}
    answer = client.post(
        "/submit", json={"kernel": "scaled_add", "source": SCALED_ADD, "requests": requests}
    )
    assert answer.status_code == 400
    assert answer.json() == {
        "detail": "operations[0] (cast): this setup does not allow casts to fp8_e4m3 "
        "(requests.precisions: ['fp32', 'fp16', 'bf16'])"
    }
    refused = results_db.list_grades(handler.engine, route="submit.refused", limit=1)[0]
    assert refused["detail"].startswith("operations[0] (cast)") and not refused["correct"]


def test_unknown_library_is_refused(client: TestClient) -> None:
    requests = {"startup": {"load": ["openblas", "mkl"]}}
    answer = client.post("/score", json={"kernel": "gemm", "source": "", "requests": requests})
    assert answer.status_code == 400 and answer.json()["detail"].startswith(
        "startup.load[1]: 'mkl'"
    )


def test_grid_is_refused_with_what_is_missing(client: TestClient) -> None:
    answer = client.post(
        "/requests/check", json={"kernel": "scaled_add", "requests": {"startup": {"grid": ["P"]}}}
    )
    assert answer.status_code == 200 and not answer.json()["accepted"]
    assert answer.json()["refusal"].startswith("startup.grid:")


def test_openblas_submission(client: TestClient) -> None:
    source = """
#include <cblas.h>
#include <stdint.h>
void gemm_fp64(const double *restrict A, const double *restrict B, double *restrict C, int64_t NI,
               int64_t NJ, int64_t NK, double alpha, double beta, void *w, int64_t wb) {
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, NI, NJ, NK, alpha, A, NK, B, NJ, beta, C, NJ);
}
"""
    body = client.post(
        "/score",
        json={
            "kernel": "gemm",
            "source": source,
            "preset": "S",
            "requests": {"startup": {"load": ["openblas"]}},
        },
    ).json()
    assert body["correct"], body["reason"]
    assert body["requests"] == {"startup": {"load": ["openblas"]}}


def test_build_failure_is_a_200_with_the_reason(client: TestClient) -> None:
    body = client.post(
        "/score", json={"kernel": "scaled_add", "source": "void f( {", "preset": "S"}
    ).json()
    assert body["correct"] is False and body["reason"].startswith("build failed")


def test_wrong_answer_is_a_200_with_the_reason(client: TestClient) -> None:
    wrong = SCALED_ADD.replace("y[i] += alpha * x[i]", "y[i] += x[i]")
    body = client.post(
        "/score", json={"kernel": "scaled_add", "source": wrong, "preset": "S"}
    ).json()
    assert body["correct"] is False and "outside rtol" in body["reason"]


def test_missing_symbol_is_a_200_with_the_reason(client: TestClient) -> None:
    body = client.post(
        "/score", json={"kernel": "scaled_add", "source": "int unrelated;", "preset": "S"}
    ).json()
    assert body["correct"] is False and "scaled_add_fp64" in body["reason"]


def test_requests_check_answers(client: TestClient) -> None:
    accepted = client.post(
        "/requests/check",
        json={
            "kernel": "scaled_add",
            "language": "c",
            "requests": {"operations": [{"action": "cast", "array": "x", "to": "fp32"}]},
        },
    ).json()
    assert accepted["accepted"] is True
    assert accepted["signature"].startswith(
        "void scaled_add_fp64(const float *restrict x, double *restrict y"
    )
    assert accepted["arrays"]["x"]["dtype"] == "fp32"


def test_check_refusals(client: TestClient) -> None:
    refused = client.post(
        "/requests/check",
        json={
            "kernel": "channel_flow",
            "requests": {"operations": [{"action": "cast", "array": "u", "to": "fp32"}]},
        },
    ).json()
    assert refused["accepted"] is False and "fp64 only" in refused["refusal"]
    malformed = client.post(
        "/requests/check",
        json={"kernel": "scaled_add", "requests": {"operations": [{"action": "x"}]}},
    )
    assert malformed.status_code == 400 and malformed.json()["detail"].startswith("operations[0]")


def test_zip_check_shows_the_pointer_list(client: TestClient) -> None:
    requests = {"operations": [{"action": "zip", "arrays": ["u", "v"], "into": "uv"}]}
    answer = client.post(
        "/requests/check", json={"kernel": "channel_flow", "requests": requests}
    ).json()
    assert answer["accepted"] and list(answer["arrays"]) == ["uv", "p"]
    assert answer["arrays"]["uv"]["zips"] == ["u", "v"]


def test_check_records_nothing(client: TestClient, handler: JudgeHandler) -> None:
    before = len(results_db.list_grades(handler.engine, limit=10_000))
    client.post("/requests/check", json={"kernel": "gemm", "requests": SIX_OPERATIONS})
    assert len(results_db.list_grades(handler.engine, limit=10_000)) == before


def test_200_concurrent_checks_are_all_answered(client: TestClient) -> None:
    def call(index: int) -> int:
        kernel = "gemm" if index % 2 else "scaled_add"
        requests = SIX_OPERATIONS if kernel == "gemm" else {}
        return client.post(
            "/requests/check", json={"kernel": kernel, "requests": requests}
        ).status_code

    with ThreadPoolExecutor(max_workers=32) as pool:
        statuses = list(pool.map(call, range(200)))
    assert statuses == [200] * 200


def test_preset_must_exist(client: TestClient) -> None:
    # /score only: /submit refuses any preset (test_submit_secrecy.py).
    answer = client.post(
        "/score", json={"kernel": "scaled_add", "source": SCALED_ADD, "preset": "XL"}
    )
    assert answer.status_code == 400 and answer.json()["detail"].startswith("preset:")


CAST_U = {"operations": [{"action": "cast", "array": "u", "to": "fp32"}]}


def _override_handler(tmp_path: Path, datatype: str, override: list[str]) -> JudgeHandler:
    return JudgeHandler(
        make_config(
            tmp_path,
            requests={"allow": ["load", "cast"], "precisions": ["fp32"]},
            grading={"datatype": datatype, "precision_override_kernels": override},
        )
    )


@pytest.mark.parametrize("datatype", ["fp32", "float32"])
def test_override_lets_the_cast_stand_and_offers_it(tmp_path: Path, datatype: str) -> None:
    handler = _override_handler(tmp_path, datatype, ["channel_flow"])
    answer = handler.check(RequestsCheckBody(kernel="channel_flow", requests=CAST_U))
    assert answer["accepted"] is True, answer
    task = handler.task("channel_flow")
    assert "cast" in task["request_actions"]["actions"]
    assert task["request_actions"]["precisions"] == ["fp32"]
    assert "graded in fp32's tolerance band" in task["requests_section"]


def test_no_override_offers_no_cast_on_an_fp64_only_kernel(tmp_path: Path) -> None:
    handler = _override_handler(tmp_path, "fp64", ["channel_flow"])
    assert "cast" not in handler.task("channel_flow")["request_actions"]["actions"]
    refused = handler.check(RequestsCheckBody(kernel="channel_flow", requests=CAST_U))
    assert refused["accepted"] is False and "fp64 only" in refused["refusal"]


def test_check_answers_a_datatype_refusal_as_not_accepted(tmp_path: Path) -> None:
    handler = _override_handler(tmp_path, "float32", [])
    with TestClient(create_app(handler.config)) as client:
        answer = client.post("/requests/check", json={"kernel": "channel_flow", "requests": {}})
        assert answer.status_code == 200, answer.text
        assert answer.json() == {
            "accepted": False,
            "refusal": "datatype: channel_flow runs at ['fp64'], not fp32",
        }
        # /score keeps answering the datatype fault with a 400.
        score = client.post(
            "/score", json={"kernel": "channel_flow", "source": "", "language": "c"}
        )
        assert score.status_code == 400 and score.json()["detail"].startswith("datatype:")


def test_first_baseline_is_the_fastest_of_two_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    handler = JudgeHandler(make_config(tmp_path))
    manifest = kernels.load_manifest("scaled_add")
    timings = iter([900, 300, 700])
    calls: list[int] = []

    def fake_run(*_: object, **__: object) -> RunResult:
        calls.append(1)
        return RunResult(
            ok=True,
            rep_kernel_ns=[next(timings)],
            rep_convert_in_ns=[0],
            rep_convert_out_ns=[0],
            rep_outputs=[{}],
        )

    grader = handler.graders["dense"]
    monkeypatch.setattr(grader, "run", fake_run)
    sizes = manifest.preset_sizes("S")
    args = (manifest, "S", "fp64", 0, sizes, manifest.preset_scalars("S"), [])
    assert grader.baseline(*args) == 300 and len(calls) == 2
    assert results_db.get_baseline(handler.engine, "scaled_add", "S", "fp64", 0) == 300
    # A refresh times once more and keeps the fastest.
    assert grader.baseline(*args, refresh=True) == 300 and len(calls) == 3


def test_mannwhitney_timing_times_the_baseline_in_the_same_grade(tmp_path: Path) -> None:
    config = make_config(tmp_path, grading={"reps": 5, "warmup": 1, "timing": "mannwhitney"})
    with TestClient(create_app(config)) as client:
        body = client.post(
            "/score", json={"kernel": "scaled_add", "source": SCALED_ADD, "preset": "S"}
        ).json()
    assert body["correct"] is True and body["timing"]["mode"] == "mannwhitney"
    assert len(body["timing"]["reps_ns"]) == 5 and len(body["timing"]["baseline_reps_ns"]) == 5
    # The credited speedup is the gain the test defends on the reps the answer shows.
    from hb.judge.grading import mannwhitney_speedup

    timing = body["timing"]
    assert body["speedup"] > 0
    assert body["speedup"] == mannwhitney_speedup(timing["reps_ns"], timing["baseline_reps_ns"])
