"""The parallel-programming calls the judge reads from a built submission: real submissions built
by the judge (an MPI solution calling the deprecated MPI_Info_get and MPI_Allreduce, a single-node
one calling omp_set_num_threads, one declaring an MPI call it cannot have), the findings usis
supports, what is recorded, grading.refuse_findings, and the reference solution's calls in /task
and the prompt."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from hb import calls, kernels, prompts, results_db
from hb.distributed.driver import mpicc_path
from hb.judge.outcome import GradeOutcome
from hb.requests_api import RequestAllowances
from hb.service import JudgeHandler, create_app
from tests.hb.conftest import make_config

SCALED_ADD = kernels.solution_source("scaled_add")

# scaled_add on ranks that also asks an info object for a key (MPI_Info_get, deprecated in
# MPI-4.0) and sums a count over the ranks (MPI_Allreduce); the result is still correct.
MPI_INFO_ALLREDUCE = """
#include <mpi.h>
#include <stdint.h>

void scaled_add_mpi_fp64(const double *restrict x, double *restrict y, int64_t N, double alpha,
                         MPI_Comm comm, void *workspace, int64_t workspace_bytes) {
    (void)workspace;
    (void)workspace_bytes;
    MPI_Info info;
    MPI_Info_create(&info);
    char value[8];
    int flag = 0;
    MPI_Info_get(info, "hb", (int)sizeof value - 1, value, &flag);
    MPI_Info_free(&info);
    long local = (long)N, total = 0;
    MPI_Allreduce(&local, &total, 1, MPI_LONG, MPI_SUM, comm);
    for (int64_t i = 0; i < N; ++i) y[i] += alpha * x[i];
}
"""

# scaled_add that sets its own team size, overriding the judge's OMP_NUM_THREADS.
OMP_SET_NUM_THREADS = """
#include <omp.h>
#include <stdint.h>

void scaled_add_fp64(const double *restrict x, double *restrict y, int64_t N, double alpha,
                     void *workspace, int64_t workspace_bytes) {
    (void)workspace;
    (void)workspace_bytes;
    omp_set_num_threads(1);
#pragma omp parallel for
    for (int64_t i = 0; i < N; ++i) y[i] += alpha * x[i];
}
"""

# A single-node submission that declares and calls MPI_Barrier itself: it builds (a shared
# object may leave names undefined), and nothing in a single-node grade provides MPI.
SINGLE_NODE_MPI = """
#include <stdint.h>
typedef int MPI_Comm;
int MPI_Barrier(MPI_Comm comm);

void scaled_add_fp64(const double *restrict x, double *restrict y, int64_t N, double alpha,
                     void *workspace, int64_t workspace_bytes) {
    (void)workspace;
    (void)workspace_bytes;
    if (N < 0) MPI_Barrier(0);
    for (int64_t i = 0; i < N; ++i) y[i] += alpha * x[i];
}
"""

needs_mpicc = pytest.mark.skipif(
    not Path(mpicc_path()).exists(),
    reason="MPICH's mpicc is not beside the interpreter (make setup installs it)",
)


def kinds(grade: dict[str, Any]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for finding in grade["findings"]:
        found.setdefault(finding["kind"], set()).add(finding["symbol"])
    return found


def recorded_report(handler: JudgeHandler, grade_id: int) -> calls.CallReport:
    row = results_db.get_grade(handler.engine, grade_id)
    assert row is not None
    report = calls.CallReport.from_record(row["ppm_calls"])
    assert report is not None
    return report


def test_linked_names_map_to_their_usis_entries() -> None:
    assert calls.entry_key("MPI_Allreduce") == ("mpi", "mpi:mpi_allreduce")
    assert calls.entry_key("PMPI_Allreduce") == ("mpi", "mpi:mpi_allreduce")
    assert calls.entry_key("MPI_Bcast_c") == ("mpi", "mpi:mpi_bcast")
    assert calls.entry_key("omp_set_dynamic") == ("openmp", "openmp:omp_set_dynamic")
    assert calls.entry_key("MPI_Address") == ("mpi", None)  # removed in MPI-3.0
    assert calls.entry_key("memcpy") is None and calls.entry_key("GOMP_parallel") is None


def test_nm_output_is_read_without_versions_or_weak_names() -> None:
    output = (
        "                 U MPI_Init\n                 w __gmon_start__\n"
        "                 U omp_set_num_threads@OMP_1.0\n                 U omp_set_num_threads\n"
    )
    assert calls.parse_undefined(output) == ["MPI_Init", "omp_set_num_threads"]


def test_an_unknown_mpi_name_is_a_finding_and_a_clean_call_is_none() -> None:
    report = calls.report_of(["MPI_Address", "MPI_Comm_rank", "sqrt"], ["mpi", "openmp"])
    assert [c.symbol for c in report.calls] == ["MPI_Address", "MPI_Comm_rank"]
    assert [(f.kind, f.symbol) for f in report.findings] == [("unknown", "MPI_Address")]


def test_a_single_node_grade_records_omp_set_num_threads(
    client: TestClient, handler: JudgeHandler
) -> None:
    answer = client.post("/score", json={"kernel": "scaled_add", "source": OMP_SET_NUM_THREADS})
    assert answer.status_code == 200, answer.text
    grade = answer.json()
    # Findings inform: the grade stands.
    assert grade["correct"] is True and grade["speedup"] > 0
    # GCC lowers a static schedule to omp_get_num_threads and omp_get_thread_num: they are the
    # object's calls too.
    assert [c["key"] for c in grade["ppm_calls"]] == [
        "openmp:omp_get_num_threads", "openmp:omp_get_thread_num", "openmp:omp_set_num_threads",
    ]  # fmt: skip
    assert kinds(grade) == {"thread_settings": {"omp_set_num_threads"}}
    (finding,) = grade["findings"]
    assert "OMP_NUM_THREADS" in finding["message"]
    assert "usis openmp:omp_set_num_threads" in finding["source"]
    report = recorded_report(handler, grade["grade_id"])
    assert [f.kind for f in report.findings] == ["thread_settings"]
    row = results_db.get_grade(handler.engine, grade["grade_id"])
    assert row is not None
    shown = GradeOutcome.from_record(dict(row))
    assert shown.findings == report.findings and shown.ppm_calls == report.calls
    assert ["finding", f"thread_settings: {finding['message']}"] in shown.summary_rows()


def test_the_reference_solution_makes_no_parallel_call_worth_a_finding(client: TestClient) -> None:
    grade = client.post("/score", json={"kernel": "scaled_add", "source": SCALED_ADD}).json()
    assert grade["correct"] is True
    assert {c["key"] for c in grade["ppm_calls"]} <= {
        "openmp:omp_get_num_threads", "openmp:omp_get_thread_num",
    }  # fmt: skip
    assert grade["findings"] == []


def test_an_mpi_call_in_a_single_node_grade_is_a_model_the_grade_does_not_offer(
    client: TestClient,
) -> None:
    grade = client.post("/score", json={"kernel": "scaled_add", "source": SINGLE_NODE_MPI}).json()
    assert [c["key"] for c in grade["ppm_calls"]] == ["mpi:mpi_barrier"]
    assert grade["correct"] is False  # nothing provides MPI_Barrier when the object is loaded
    assert kinds(grade) == {
        "model_not_offered": {"MPI_Barrier"},
        "blocking_collective_timed": {"MPI_Barrier"},
    }
    offered = next(f for f in grade["findings"] if f["kind"] == "model_not_offered")
    assert offered["message"].endswith("this grade offers openmp")


def test_refuse_findings_fails_the_grade_with_the_finding_named(tmp_path: Path) -> None:
    config = make_config(tmp_path, grading={"refuse_findings": ["thread_settings"]})
    with TestClient(create_app(config)) as client:
        for route in ("score", "submit"):
            answer = client.post(
                f"/{route}", json={"kernel": "scaled_add", "source": OMP_SET_NUM_THREADS}
            )
            assert answer.status_code == 200, answer.text
            grade = answer.json()
            assert grade["correct"] is False and grade["speedup"] == 0
            # Read from the build alone, the refusal is public on a hidden route too.
            assert grade["reason"].startswith(
                "refused by grading.refuse_findings: thread_settings: omp_set_num_threads"
            )
            assert kinds(grade) == {"thread_settings": {"omp_set_num_threads"}}
        clean = client.post("/score", json={"kernel": "scaled_add", "source": SCALED_ADD})
        assert clean.json()["correct"] is True


def test_refuse_findings_names_only_known_kinds(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="refuse_findings"):
        make_config(tmp_path, grading={"refuse_findings": ["slow"]})


@pytest.fixture(scope="module")
def two_ranks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    config = make_config(
        tmp_path_factory.mktemp("hb-calls-mpi"),
        requests={"allow": ["load", "distribute"]},
        mpi={"ranks": 2},
    )
    with TestClient(create_app(config)) as client:
        yield client


@pytest.mark.mpi
@needs_mpicc
def test_an_mpi_grade_reads_the_submissions_calls_not_the_drivers(two_ranks: TestClient) -> None:
    request = {
        "startup": {"grid": ["P"]},
        "operations": [
            {"action": "distribute", "array": a, "grid_dim": 0, "dim": 0, "scheme": "block"}
            for a in ("x", "y")
        ],
    }
    answer = two_ranks.post(
        "/submit", json={"kernel": "scaled_add", "source": MPI_INFO_ALLREDUCE, "requests": request}
    )
    assert answer.status_code == 200, answer.text
    grade = answer.json()
    assert grade["correct"] is True and grade["speedup"] > 0
    # The driver's own MPI_Init, MPI_Bcast and MPI_Reduce are not the submission's.
    keys = [c["key"] for c in grade["ppm_calls"]]
    assert keys == ["mpi:mpi_allreduce", "mpi:mpi_info_create", "mpi:mpi_info_free",
                    "mpi:mpi_info_get"]  # fmt: skip
    allreduce = grade["ppm_calls"][0]
    assert allreduce["collective"] is True and allreduce["blocking"] is True
    assert allreduce["api_group"] == "collective"
    assert kinds(grade) == {
        "deprecated": {"MPI_Info_get"},
        "blocking_collective_timed": {"MPI_Allreduce"},
    }
    deprecated = next(f for f in grade["findings"] if f["kind"] == "deprecated")
    assert deprecated["message"] == (
        "MPI_Info_get is deprecated in MPI-4.0; use mpi:mpi_info_get_string"
    )
    assert "curated/mpi/deprecations.yaml" in deprecated["source"]
    handler: JudgeHandler = two_ranks.app.state.handler  # type: ignore[attr-defined]
    report = recorded_report(handler, grade["grade_id"])
    assert [c.key for c in report.calls] == keys
    assert json.loads(report.to_record())["findings"] == grade["findings"]


def test_task_and_prompt_describe_the_reference_solutions_mpi_calls(tmp_path: Path) -> None:
    config = make_config(tmp_path, requests={"allow": ["load", "distribute"]})
    with TestClient(create_app(config)) as client:
        task = client.get("/task/jacobi_2d").json()
    described = {c["name"]: c["desc"] for c in task["mpi"]["reference_calls"]}
    assert described["MPI_Sendrecv"] == ("Sends one message and receives another in a single call.")
    assert set(described) == {"MPI_Abort", "MPI_Comm_rank", "MPI_Comm_size", "MPI_Sendrecv"}
    context = prompts.build_context(
        kernels.load_manifest("jacobi_2d"),
        RequestAllowances.from_config(config),
        "fp64",
        distributed=True,
    )
    assert (
        "  - `MPI_Sendrecv`: Sends one message and receives another in a single call."
        in context.requests_section
    )
