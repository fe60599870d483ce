"""Campaigns: a judge's id (configured, or generated once and kept in its data directory) and its
machine recorded with every grade, a judge refusing a task it does not serve, and two judges on
loopback sharing the fixture's PostgreSQL, with `hb experiment run --judges` spreading the
problem lines over them and the report merging their grades."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient

from hb import cli, report, results_db
from hb.agent import experiments
from hb.config import JUDGE_ID_FILE, judge_id, machine_name
from hb.service import create_app
from tests.hb.conftest import make_config

CAMPAIGN_CONFIG = (
    "grading: {{reps: 1, warmup: 0, max_pairs: 1, box_pairs: 1, hidden_seed: 7}}\n"
    "sandbox: {{timeout_s: 30, threads: 1}}\n"
    "data_dir: {data}\n"
    "record: {{database: '{database}'}}\n"
    "service: {{judge_id: {judge}, tasks: [{tasks}]}}\n"
)
# An agent that submits the task's reference solution once, as the caller its environment names.
SUBMITTING_AGENT = """
import os, sys
from hb.agent.client import JudgeClient
from hb.envelope import Caller
from hb.kernels import CATALOG_DIR
task = os.environ["HB_TASK"]
client = JudgeClient(os.environ["HB_JUDGE_URL"], Caller.from_environment(os.environ))
source = (CATALOG_DIR / task / "solution.c").read_text()
answer = client.post("/submit", {"kernel": task, "source": source})
sys.exit(0 if answer.ok and answer.body["correct"] else 1)
"""


def test_a_judge_keeps_the_id_it_generated_and_a_configured_one_wins(tmp_path: Path) -> None:
    config = make_config(tmp_path / "data")
    first = judge_id(config)
    assert first.startswith("judge-") and judge_id(config) == first
    assert (tmp_path / "data" / JUDGE_ID_FILE).read_text().strip() == first
    assert judge_id(make_config(tmp_path / "data", service={"judge_id": "east"})) == "east"
    assert " (" in machine_name() and machine_name().endswith(")")


def test_a_judge_refuses_a_task_it_does_not_serve_naming_what_it_serves(tmp_path: Path) -> None:
    config = make_config(tmp_path / "data", service={"judge_id": "east", "tasks": ["gemm"]})
    with TestClient(create_app(config)) as client:
        assert [task["kernel"] for task in client.get("/tasks").json()] == ["gemm"]
        health = client.get("/health").json()
        assert (health["judge_id"], health["machine"]) == ("east", machine_name())
        expected = "task 'atax' is not served by judge east: it serves ['gemm'] (service.tasks)"
        for answer in (
            client.get("/task/atax"),
            client.post("/submit", json={"kernel": "atax", "source": "void f(void) {}"}),
            client.post("/requests/check", json={"kernel": "atax"}),
        ):
            assert (answer.status_code, answer.json()) == (404, {"detail": expected})
        engine = results_db.connect(config.database_url)
        assert results_db.list_grades(engine) == []  # refused before anything is recorded
    with pytest.raises(ValueError, match=r"service.tasks: \['nope'\] are not kernels"):
        create_app(make_config(tmp_path / "other", service={"tasks": ["nope"]}))


def test_judge_and_judges_together_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["experiment", "run", "baseline", "--agent", "true", "--judge", "http://a",
            "--judges", "http://a,http://b"]  # fmt: skip
    assert cli.main(argv) == 2
    assert "give --judge or --judges, not both" in capsys.readouterr().err


@pytest.mark.postgres
def test_two_judges_sharing_postgresql_split_a_campaign_and_the_report_merges_them(
    postgres_url: str, tmp_path: Path
) -> None:
    engine = results_db.connect(postgres_url)
    with engine.begin() as connection:
        connection.execute(
            sa.text("TRUNCATE grades, grade_requests, baselines RESTART IDENTITY CASCADE")
        )
    configs = {}
    for judge, tasks in (("east", "scaled_add"), ("west", "jacobi_2d, scaled_add")):
        configs[judge] = tmp_path / f"{judge}.yaml"
        configs[judge].write_text(CAMPAIGN_CONFIG.format(
            data=tmp_path / judge, database=postgres_url, judge=judge, tasks=tasks,
        ))  # fmt: skip
    agent = tmp_path / "agent.py"
    agent.write_text(SUBMITTING_AGENT)
    experiment = experiments.load_experiment("baseline")
    with (
        experiments.started_judge({}, str(configs["east"])) as east,
        experiments.started_judge({}, str(configs["west"])) as west,
    ):
        with pytest.raises(RuntimeError, match=r"serves task 'gemm' \(setup default\)"):
            experiments.run_experiment(
                experiment, "true", judges=[east, west], only=["gemm"], out=tmp_path / "none"
            )
        ran = experiments.run_experiment(
            experiment, f"{sys.executable} {agent}", judges=[east, west],
            only=["scaled_add", "jacobi_2d"], out=tmp_path / "run",
        )  # fmt: skip
    assert [(run.kernel, run.status) for run in ran.runs] == [
        ("jacobi_2d", "ok"), ("scaled_add", "ok"),
    ]  # fmt: skip
    rows = results_db.list_grades(engine, experiment="baseline", limit=None)
    # jacobi_2d only west serves; scaled_add went to east, which had no line yet.
    assert {(row["kernel"], row["judge_id"]) for row in rows} == {
        ("jacobi_2d", "west"), ("scaled_add", "east"),
    }  # fmt: skip
    assert {row["machine"] for row in rows} == {machine_name()}
    assert all(row["correct"] for row in rows if row["route"] == "submit")
    # The run's summary counts each grade once, though both judges read the same database.
    calls = {row[1]: int(row[4]) for row in ran.summary[1:]}
    assert calls == {k: sum(1 for row in rows if row["kernel"] == k) for k in calls}
    text = report.write_report(engine, tmp_path / "report", "baseline").read_text()
    for judge in ("east", "west"):
        count = sum(1 for row in rows if row["judge_id"] == judge)
        assert f"| {judge} | {machine_name()} | {count} |" in text
    leaderboard = f"| {ran.agent_id} / default | 2 | 2 | 0 |"  # two tasks, two grades
    (group,) = [line for line in text.splitlines() if line.startswith(leaderboard)]
    assert group.endswith("| east, west |")
