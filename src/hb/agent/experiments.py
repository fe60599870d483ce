"""Experiments (experiments/experiments.toml): each names a request preset and its setups; a setup's
environment is rendered once (.rendered/<experiment>/<setup>.env, the snapshot of requests_api.md
§0), every (task, setup) is a problem line, and a run starts a judge per setup and an agent command
per problem line, within a wall-clock budget, and sums the grades the judges recorded."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shlex
import signal
import socket
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from hb import kernels, prompts
from hb.agent.client import JudgeClient, JudgeUnavailable
from hb.agent.mcp_server import REQUEST_ACTIONS_VARIABLE
from hb.config import EXPERIMENTS_FILE, load_config, preset_environment
from hb.envelope import Caller
from hb.requests_api import RequestAllowances

RENDERED_DIR = Path(".rendered")
RUNS_DIR = Path("runs")
# The judge's allowances: a setup's judge reads them; an agent's environment never carries them
# (requests_api.md §0: the tools do not guess the config defaults).
ALLOWANCE_VARIABLES = ("HPCAGENT_BENCH_REQUESTS_ALLOW", "HPCAGENT_BENCH_REQUESTS_PRECISIONS")
JUDGE_START_S = 60.0


class Setup(BaseModel):
    """One setup of an experiment: its request preset (default: the experiment's) and any other
    variables its judge runs with."""

    model_config = ConfigDict(extra="forbid")

    requests: str | None = None
    env: dict[str, str] = Field(default_factory=dict)


class Experiment(BaseModel):
    """An [experiments.<name>] table: the request preset, the kernels (default: the catalog), the
    judge's config file, each problem's wall-clock budget and the setups (default: one, named
    `default`)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    requests: str
    kernels: list[str] | None = None
    config: str | None = None
    budget_s: float = Field(900.0, gt=0)
    setups: dict[str, Setup] = Field(default_factory=lambda: {"default": Setup()})


def load_experiment(name: str, path: Path = EXPERIMENTS_FILE) -> Experiment:
    """The experiment `name` of `path`; ValueError naming what is wrong, and where."""
    with open(path, "rb") as handle:
        document = tomllib.load(handle)
    tables = document.get("experiments", {})
    if name not in tables:
        raise ValueError(f"{path}: no experiment {name!r}; it has {sorted(tables)}")
    try:
        experiment = Experiment.model_validate({"name": name, **tables[name]})
    except ValidationError as error:
        item = error.errors(include_url=False)[0]
        where = ".".join(str(p) for p in item["loc"])
        raise ValueError(f"{path}: experiments.{name}.{where}: {item['msg']}") from None
    presets = document.get("requests", {})
    for setup_name, setup in experiment.setups.items():
        preset = setup.requests or experiment.requests
        if preset not in presets:
            raise ValueError(
                f"{path}: experiments.{name}.setups.{setup_name}: unknown request preset "
                f"{preset!r}; [requests.*] has {sorted(presets)}"
            )
    known = set(kernels.kernel_names())
    unknown = sorted(set(experiment.kernels or ()) - known)
    if unknown:
        raise ValueError(f"{path}: experiments.{name}.kernels: unknown {unknown}")
    return experiment


def setup_environment(experiment: Experiment, setup: str) -> dict[str, str]:
    """The variables a setup's judge runs with: its preset's HPCAGENT_BENCH_REQUESTS_* keys, the
    experiment and setup names, and the setup's own env."""
    chosen = experiment.setups[setup]
    return {
        **preset_environment(chosen.requests or experiment.requests),
        "HB_EXPERIMENT": experiment.name,
        "HB_SETUP": setup,
        **chosen.env,
    }


def render(experiment: Experiment, directory: Path = RENDERED_DIR) -> list[Path]:
    """Write each setup's environment to <directory>/<experiment>/<setup>.env; the files written."""
    written = []
    for setup in experiment.setups:
        target = directory / experiment.name / f"{setup}.env"
        target.parent.mkdir(parents=True, exist_ok=True)
        environment = setup_environment(experiment, setup)
        target.write_text("".join(f"{k}={shlex.quote(v)}\n" for k, v in environment.items()))
        written.append(target)
    return written


class ProblemLine(BaseModel):
    """One (task, setup) of an experiment: the task's facts, the setup's allowances, the task's
    offer (request_actions, as $HPCAGENT_BENCH_REQUEST_ACTIONS carries it) and the environment an
    agent runs with for it."""

    model_config = ConfigDict(extra="forbid")

    experiment: str
    setup: str
    kernel: str
    precision: str
    preset: str
    allow: list[str]
    precisions: list[str]
    grid: str
    request_actions: str
    env: dict[str, str]


def problem_lines(experiment: Experiment, only: Sequence[str] | None = None) -> list[ProblemLine]:
    """Every (task, setup) of the experiment, setups in their order and kernels in the catalog's;
    `only` narrows the kernels."""
    names = experiment.kernels or kernels.kernel_names()
    if only:
        unknown = sorted(set(only) - set(names))
        if unknown:
            raise ValueError(f"--kernels: {unknown} are not kernels of {experiment.name} ({names})")
        names = [n for n in names if n in only]
    lines = []
    for setup in experiment.setups:
        environment = setup_environment(experiment, setup)
        config = load_config(experiment.config, environ=environment)
        allowances = RequestAllowances.from_config(config)
        for name in names:
            manifest = kernels.load_manifest(name)
            precision, override = prompts.task_precision(manifest, config)
            offer = prompts.task_actions(
                manifest, allowances, config.mpi.grade_distributed, "c", override, precision
            )
            lines.append(
                ProblemLine(
                    experiment=experiment.name,
                    setup=setup,
                    kernel=name,
                    precision=precision,
                    preset=config.grading.preset,
                    allow=sorted(allowances.allow),
                    precisions=list(allowances.precisions),
                    grid=allowances.grid,
                    request_actions=offer.to_env(),
                    env={
                        "HB_TASK": name,
                        REQUEST_ACTIONS_VARIABLE: offer.to_env(),
                        "HB_EXPERIMENT": experiment.name,
                        "HB_SETUP": setup,
                    },
                )
            )
    return lines


# ---------------------------------------------------------------------------------------------
# Judges.


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def started_judge(
    environment: Mapping[str, str], config: str | None = None, log: Path | None = None
) -> Iterator[str]:
    """`hb serve` on a free local port with `environment` over this process's; yields its URL once
    it answers /health, and stops it afterwards. RuntimeError where it does not start."""
    port = _free_port()
    argv = [sys.executable, "-m", "hb.cli", *(["--config", config] if config else []),
            "serve", "--host", "127.0.0.1", "--port", str(port)]  # fmt: skip
    sink = open(log, "ab") if log else subprocess.DEVNULL  # noqa: SIM115
    process = subprocess.Popen(
        argv, env={**os.environ, **environment}, stdout=sink, stderr=sink, start_new_session=True
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + JUDGE_START_S
        while True:
            try:
                if JudgeClient(url, timeout_s=2).get("/health").ok:
                    break
            except JudgeUnavailable:
                pass
            if process.poll() is not None:
                raise RuntimeError(f"the judge for {url} exited with status {process.returncode}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the judge for {url} did not answer within {JUDGE_START_S:g} s")
            time.sleep(0.2)
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        if log:
            sink.close()  # type: ignore[union-attr]


@contextlib.contextmanager
def judges_for(
    experiment: Experiment, judge_url: str | None, log_dir: Path | None = None,
    judges: Sequence[str] = (),
) -> Iterator[dict[str, list[str]]]:  # fmt: skip
    """The judges each setup's problems are graded by: `judges` (a campaign: judges sharing one
    database, each line going to one that serves its task) or `judge_url` for all of them, else
    one judge started per setup with its environment (stopped when the run ends)."""
    if judges or judge_url:
        yield {setup: list(judges or [judge_url or ""]) for setup in experiment.setups}
        return
    with contextlib.ExitStack() as stack:
        urls = {}
        for setup in experiment.setups:
            log = log_dir / f"judge-{setup}.log" if log_dir else None
            urls[setup] = [
                stack.enter_context(
                    started_judge(setup_environment(experiment, setup), experiment.config, log)
                )
            ]
        yield urls


def served_tasks(url: str) -> set[str]:
    """The kernels a judge serves (its GET /tasks)."""
    answer = JudgeClient(url, Caller()).get("/tasks")
    if not answer.ok:
        raise RuntimeError(f"GET /tasks at {url}: {answer.refusal}")
    return {str(task["kernel"]) for task in answer.body}


def spread(lines: Sequence[ProblemLine], judges: Mapping[str, Sequence[str]]) -> list[str]:
    """The judge of each line: among its setup's judges that serve its task, the one given the
    fewest lines so far (the first listed on a tie). RuntimeError naming a task none serves."""
    serving = {url: served_tasks(url) for urls in judges.values() for url in dict.fromkeys(urls)}
    given = dict.fromkeys(serving, 0)
    chosen = []
    for line in lines:
        candidates = [url for url in judges[line.setup] if line.kernel in serving[url]]
        if not candidates:
            raise RuntimeError(
                f"no judge of {list(judges[line.setup])} serves task {line.kernel!r} "
                f"(setup {line.setup})"
            )
        url = min(candidates, key=lambda candidate: given[candidate])
        given[url] += 1
        chosen.append(url)
    return chosen


# ---------------------------------------------------------------------------------------------
# Running an agent per problem line.


@dataclass
class AgentRun:
    """One agent command on one problem line: how it ended."""

    setup: str
    kernel: str
    round: int
    status: str  # ok | failed | overran | not started
    returncode: int | None
    wall_s: float
    log: str

    def to_json(self) -> dict[str, Any]:
        return self.__dict__.copy()


def agent_environment(
    line: ProblemLine, judge_url: str, agent_id: str, round_: int
) -> dict[str, str]:
    """The agent's environment for one problem line: this process's without the judge's
    allowances, and the line's (offer, task, judge, caller)."""
    base = {k: v for k, v in os.environ.items() if k not in ALLOWANCE_VARIABLES}
    return {**base, **line.env, "HB_JUDGE_URL": judge_url, "HB_AGENT_ID": agent_id,
            "HB_AGENT_ROUND": str(round_)}  # fmt: skip


def run_agent(command: Sequence[str], environment: Mapping[str, str], budget_s: float,
              log: Path) -> tuple[str, int | None, float]:  # fmt: skip
    """Run the agent command to its end or its budget (then its whole process group is killed);
    its output goes to `log`. Returns the status, the exit code and the wall time."""
    started = time.monotonic()
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "wb") as sink:
        try:
            process = subprocess.Popen(
                list(command), env=dict(environment), stdout=sink, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True,
            )  # fmt: skip
        except OSError as error:
            sink.write(f"the agent command could not start: {error}\n".encode())
            return "not started", None, time.monotonic() - started
        try:
            code = process.wait(timeout=budget_s)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            sink.write(
                f"\nhb experiment: the agent overran its budget of {budget_s:g} s\n".encode()
            )
            return "overran", None, time.monotonic() - started
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)  # what it left running
    return ("ok" if code == 0 else "failed"), code, time.monotonic() - started


@dataclass
class Progress:
    """A one-line progress bar on a stream (a line per step where the stream is not a terminal)."""

    total: int
    stream: TextIO = field(default_factory=lambda: sys.stderr)
    done: int = 0

    def step(self, label: str) -> None:
        self.done += 1
        width = 24
        filled = width * self.done // max(self.total, 1)
        bar = "#" * filled + "-" * (width - filled)
        line = f"[{bar}] {self.done}/{self.total} {label}"
        if self.stream.isatty():
            end = "\n" if self.done == self.total else ""
            self.stream.write(f"\r\x1b[K{line}{end}")
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


SUMMARY_HEADER = ["setup", "kernel", "best submit speedup", "best score speedup", "calls",
                  "incorrect", "agent failures"]  # fmt: skip


def summary_rows(grades: Sequence[Mapping[str, Any]], runs: Sequence[AgentRun]) -> list[list[str]]:
    """Per (setup, task): the best correct speedup on submit and on score, the calls recorded, the
    incorrect or refused ones, and the agent runs that failed or overran."""
    keys = list(dict.fromkeys((run.setup, run.kernel) for run in runs))
    rows = [SUMMARY_HEADER]
    for setup, kernel in keys:
        mine = [g for g in grades if g.get("setup") == setup and g.get("kernel") == kernel]

        def best(route: str, mine: list[Mapping[str, Any]] = mine) -> str:
            speedups = [float(g["speedup"]) for g in mine if g["route"] == route and g["correct"]]
            return f"{max(speedups):.3g}" if speedups else "-"

        failures = sum(
            1 for r in runs if (r.setup, r.kernel) == (setup, kernel) and r.status != "ok"
        )
        rows.append([setup, kernel, best("submit"), best("score"), str(len(mine)),
                     str(sum(1 for g in mine if not g["correct"])), str(failures)])  # fmt: skip
    return rows


def recorded_grades(url: str, experiment: str, agent_id: str) -> list[dict[str, Any]]:
    """The grades a judge's database holds for this run (GET /grades by experiment and caller)."""
    answer = JudgeClient(url, Caller()).get(
        f"/grades?experiment={experiment}&agent_id={agent_id}&limit=1000"
    )
    if not answer.ok:
        raise RuntimeError(f"GET /grades at {url}: {answer.refusal}")
    rows: list[dict[str, Any]] = answer.body
    return rows


@dataclass
class RunReport:
    """What a run did: its directory, agent id, each agent run and the summary table's rows."""

    directory: Path
    agent_id: str
    runs: list[AgentRun]
    summary: list[list[str]]


def run_experiment(
    experiment: Experiment, agent_command: str, judge_url: str | None = None,
    only: Sequence[str] | None = None, rounds: int = 1, budget_s: float | None = None,
    out: Path | None = None, stream: TextIO | None = None, judges: Sequence[str] = (),
) -> RunReport:  # fmt: skip
    """Run `agent_command` once per problem line (and round) against its setup's judge (or, with
    `judges`, the one `spread` gives it), each within the budget; a failed or overrun agent is
    recorded and the run goes on."""
    command = shlex.split(agent_command)
    if not command:
        raise ValueError("--agent: give the command that runs the agent")
    lines = problem_lines(experiment, only)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    agent_id = f"{experiment.name}-{stamp}-{secrets.token_hex(3)}"
    directory = out or RUNS_DIR / agent_id
    directory.mkdir(parents=True, exist_ok=True)
    render(experiment, directory)
    (directory / "problems.jsonl").write_text(
        "".join(line.model_dump_json() + "\n" for line in lines)
    )
    budget = budget_s if budget_s is not None else experiment.budget_s
    progress = Progress(len(lines) * rounds, stream or sys.stderr)
    runs: list[AgentRun] = []
    grades: list[dict[str, Any]] = []
    with judges_for(experiment, judge_url, directory, judges) as by_setup:
        for line, url in zip(lines, spread(lines, by_setup), strict=True):
            for round_ in range(rounds):
                log = directory / "logs" / f"{line.setup}-{line.kernel}-{round_}.log"
                environment = agent_environment(line, url, agent_id, round_)
                status, code, wall = run_agent(command, environment, budget, log)
                run = AgentRun(line.setup, line.kernel, round_, status, code, round(wall, 2),
                               str(log.relative_to(directory)))  # fmt: skip
                runs.append(run)
                with open(directory / "agents.jsonl", "a") as sink:
                    sink.write(json.dumps(run.to_json()) + "\n")
                progress.step(f"{line.setup} {line.kernel} round {round_}: {status} ({wall:.1f} s)")
        # Each setup's rows from its own judges (setups and judges may share one database: a row
        # is counted once, by the judge that made it and its id).
        seen: set[tuple[str, int]] = set()
        for setup, urls in by_setup.items():
            for url in dict.fromkeys(urls):
                for row in recorded_grades(url, experiment.name, agent_id):
                    key = (str(row.get("judge_id")), int(row["id"]))
                    if row.get("setup") == setup and key not in seen:
                        seen.add(key)
                        grades.append(row)
    return RunReport(directory, agent_id, runs, summary_rows(grades, runs))
