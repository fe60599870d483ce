"""Problem lines and experiments: each line's offer is the one the judge's task view states under
that setup, a rendered setup env carries its preset's keys, a run records an agent that fails or
overruns its budget and goes on, and `hb experiment run layouts --agent "hb agent scripted"` over
two kernels ends with recorded, correct grades."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hb import cli, kernels, results_db
from hb.agent import experiments
from hb.agent.client import JudgeClient
from hb.agent.mcp_server import ToolServer
from hb.config import load_config, preset_environment, request_presets
from hb.requests_api import RequestActions
from hb.service import JudgeHandler

EXPERIMENT_NAMES = ("baseline", "precision", "layouts", "scaling")
SMALL_CONFIG = (
    "grading: {{reps: 1, warmup: 0, max_pairs: 1, box_pairs: 1, hidden_seed: 7}}\n"
    "sandbox: {{timeout_s: 30, threads: 1}}\n"
    "data_dir: {data}\n"
)


@pytest.mark.parametrize("name", EXPERIMENT_NAMES)
def test_each_problem_line_offers_what_the_judges_task_states(name: str, tmp_path: Path) -> None:
    experiment = experiments.load_experiment(name)
    lines = experiments.problem_lines(experiment)
    assert len(lines) == len(kernels.kernel_names()) * len(experiment.setups)
    for setup in experiment.setups:
        environment = experiments.setup_environment(experiment, setup)
        handler = JudgeHandler(
            load_config(None, environ={**environment, "HB_DATA_DIR": str(tmp_path / setup)})
        )
        for line in (line for line in lines if line.setup == setup):
            stated = RequestActions(**handler.task(line.kernel)["request_actions"])
            assert line.request_actions == stated.to_env(), line.kernel
            assert line.env["HPCAGENT_BENCH_REQUEST_ACTIONS"] == line.request_actions
            assert line.env["HB_TASK"] == line.kernel and line.experiment == name


def test_problems_prints_one_json_line_per_task(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["problems", "--experiment", "precision", "--kernels", "gemm,spmv"]) == 0
    lines = [json.loads(text) for text in capsys.readouterr().out.splitlines()]
    assert [line["kernel"] for line in lines] == ["gemm", "spmv"]
    gemm = lines[0]
    assert gemm["allow"] == ["cast", "load"] and gemm["precisions"] == ["fp32", "fp16", "bf16"]
    assert gemm["request_actions"] == "cast:fp32|fp16|bf16,load"


def test_render_writes_each_setups_env_with_its_presets_keys(tmp_path: Path) -> None:
    assert cli.main(["experiment", "render", "layouts", "--out", str(tmp_path)]) == 0
    written = (tmp_path / "layouts" / "default.env").read_text().splitlines()
    keys = preset_environment("layout")
    assert f"HPCAGENT_BENCH_REQUESTS_ALLOW={keys['HPCAGENT_BENCH_REQUESTS_ALLOW']}" in written
    assert "HPCAGENT_BENCH_REQUESTS_PRECISIONS=''" in written
    assert "HB_EXPERIMENT=layouts" in written and "HB_SETUP=default" in written


def test_unknown_experiments_and_kernels_are_clear_errors(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["problems", "--experiment", "nope"]) == 2
    assert "no experiment 'nope'" in capsys.readouterr().err
    assert cli.main(["problems", "--experiment", "layouts", "--kernels", "gemm,nope"]) == 2
    assert "['nope'] are not kernels of layouts" in capsys.readouterr().err


def test_a_failing_or_overrunning_agent_is_recorded_and_the_run_goes_on(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(SMALL_CONFIG.format(data=tmp_path / "data"))
    experiment = experiments.load_experiment("baseline")
    with experiments.started_judge({}, str(config)) as url:
        failing = experiments.run_experiment(
            experiment, f"{sys.executable} -c 'import sys; sys.exit(3)'", judge_url=url,
            only=["scaled_add", "gemm"], out=tmp_path / "failing",
        )  # fmt: skip
        overrunning = experiments.run_experiment(
            experiment, f"{sys.executable} -c 'import time; time.sleep(60)'", judge_url=url,
            only=["scaled_add", "gemm"], budget_s=1, out=tmp_path / "overrunning",
        )  # fmt: skip
    assert [(r.kernel, r.status, r.returncode) for r in failing.runs] == [
        ("gemm", "failed", 3), ("scaled_add", "failed", 3),
    ]  # fmt: skip
    assert [(r.kernel, r.status) for r in overrunning.runs] == [
        ("gemm", "overran"), ("scaled_add", "overran"),
    ]  # fmt: skip
    assert all(r.wall_s < 10 for r in overrunning.runs)
    assert (
        "overran its budget of 1 s"
        in (tmp_path / "overrunning" / overrunning.runs[0].log).read_text()
    )
    recorded = [
        json.loads(t) for t in (tmp_path / "failing" / "agents.jsonl").read_text().splitlines()
    ]
    assert [r["status"] for r in recorded] == ["failed", "failed"]
    assert failing.summary[1][-1] == "1" and failing.summary[2][-1] == "1"


def test_the_scripted_agent_over_two_kernels_ends_with_correct_recorded_grades(
    tmp_path: Path,
) -> None:
    (tmp_path / "config.yaml").write_text(SMALL_CONFIG.format(data=tmp_path / "data"))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"}
    env.pop("HB_DATA_DIR", None)
    ended = subprocess.run(
        [sys.executable, "-m", "hb.cli", "experiment", "run", "layouts", "--agent",
         "hb agent scripted", "--kernels", "scaled_add,jacobi_2d", "--out", str(tmp_path / "run")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert ended.returncode == 0, ended.stdout + ended.stderr
    assert "[########################] 2/2" in ended.stderr
    summary = (tmp_path / "run" / "summary.txt").read_text()
    assert summary.splitlines()[0].split()[:2] == ["setup", "kernel"]
    engine = results_db.connect(f"sqlite:///{tmp_path / 'data' / 'hb.sqlite3'}")
    rows = results_db.list_grades(engine, experiment="layouts", limit=100)
    submits = {row["kernel"]: row for row in rows if row["route"] == "submit"}
    assert set(submits) == {"scaled_add", "jacobi_2d"}
    for row in submits.values():
        assert row["correct"] and row["setup"] == "default" and row["agent_round"] == 0
        assert row["agent_id"].startswith("layouts-")
    # The scripted agent tried one request from the offer (an identity permute) on score.
    tried = [row for row in rows if row["route"] == "score" and row["requests"]]
    assert {row["kernel"] for row in tried} == {"scaled_add", "jacobi_2d"}
    assert all(row["correct"] for row in rows)


def preset_tool_rows(kernel: str = "scaled_add") -> list[str]:
    """docs/agents.md's closing table: the tools under each request preset, for `kernel`."""
    rows = []
    for preset in request_presets():
        experiment = experiments.Experiment(name="tools", requests=preset)
        (line,) = experiments.problem_lines(experiment, [kernel])
        server = ToolServer(JudgeClient(), kernel, RequestActions.from_env(line.request_actions))
        tools = ", ".join(
            tool.name + (" (requests)" if "requests" in tool.input_schema["properties"] else "")
            for tool in server.tools()
        )
        offer = (line.request_actions or "(none)").replace("|", "\\|")
        rows.append(f"| {preset} | {tools} | `{offer}` |")
    return rows


def test_the_docs_tool_table_is_the_servers() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "agents.md").read_text()
    for row in preset_tool_rows():
        assert row in text, f"docs/agents.md lacks the row {row!r}"


def test_an_agents_environment_carries_the_offer_never_the_allowances(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HPCAGENT_BENCH_REQUESTS_ALLOW", "load,cast")
    monkeypatch.setenv("HPCAGENT_BENCH_REQUESTS_PRECISIONS", "fp32")
    (line,) = experiments.problem_lines(experiments.load_experiment("precision"), ["gemm"])
    env = experiments.agent_environment(line, "http://judge", "run-1", 2)
    assert not set(experiments.ALLOWANCE_VARIABLES) & set(env)
    assert env["HPCAGENT_BENCH_REQUEST_ACTIONS"] == "cast:fp32|fp16|bf16,load"
    assert (env["HB_JUDGE_URL"], env["HB_AGENT_ID"], env["HB_AGENT_ROUND"]) == (
        "http://judge", "run-1", "2",
    )  # fmt: skip
    assert (env["HB_TASK"], env["HB_EXPERIMENT"], env["HB_SETUP"]) == (
        "gemm",
        "precision",
        "default",
    )
