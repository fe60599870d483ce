"""The kinds of grade are strategies behind one interface: the judge picks a grader per call
(dense, sparse, distributed) and answers with the GradeOutcome that grader returns."""

from __future__ import annotations

from pathlib import Path

import pytest

from hb import kernels
from hb.envelope import Submission
from hb.judge import graders
from hb.judge.outcome import GradeOutcome
from hb.requests_api import Requests
from hb.service import JudgeHandler
from tests.hb.conftest import make_config

GRID = Requests.validate(
    {
        "startup": {"grid": ["P"]},
        "operations": [
            {"action": "distribute", "array": "x", "grid_dim": 0, "dim": 0},
            {"action": "distribute", "array": "y", "grid_dim": 0, "dim": 0},
        ],
    }
)


@pytest.fixture
def handler(tmp_path: Path) -> JudgeHandler:
    return JudgeHandler(make_config(tmp_path))


def test_each_call_gets_the_grader_of_its_kind(handler: JudgeHandler) -> None:
    def kind(name: str, requests: Requests) -> str:
        manifest = kernels.load_manifest(name)
        return graders.grader_for(handler.graders, manifest, requests).kind

    assert kind("scaled_add", Requests()) == "dense"
    assert kind("spmv", Requests()) == "sparse"
    assert kind("scaled_add", GRID) == "distributed"
    assert all(isinstance(g, graders.Grader) for g in handler.graders.values())
    assert isinstance(handler.graders["sparse"], graders.DenseGrader)  # sparse refines dense


def test_the_judge_answers_with_what_the_grader_returns(
    handler: JudgeHandler, monkeypatch: pytest.MonkeyPatch
) -> None:
    jobs: list[graders.Job] = []

    def grade(job: graders.Job) -> GradeOutcome:
        jobs.append(job)
        return job.outcome.model_copy(update={"correct": True, "reason": "graded by the stand-in"})

    monkeypatch.setattr(handler.graders["dense"], "grade", grade)
    source = kernels.solution_source("scaled_add")
    answer = handler.grade(Submission(kernel="scaled_add", source=source, preset="S"), "score")
    assert answer.reason == "graded by the stand-in" and answer.grade_id is not None
    (job,) = jobs
    assert job.outcome.kernel == "scaled_add" and job.outcome.preset == "S"
    # The call as checking left it rides along, so the grade lowers nothing again.
    assert job.checked is not None and job.checked.sizes == job.manifest.preset_sizes("S")
