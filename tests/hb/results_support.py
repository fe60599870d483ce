"""Recorded grades for the results' tests and the docs' screenshot: two agents of one experiment
on the same eight tasks (three tracks), with requests, a suspect grade, a refusal and a grade
whose object makes MPI calls; each row made by GradeOutcome.record() as the judge makes it. The
paired timing's columns (a 95% interval, noisy, the baseline's reps) given to grades by hand, and
grades made with them (record_paired). And a judge's application served on a loopback port for a browser."""

from __future__ import annotations

import contextlib
import random
import socket
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import uvicorn
from fastapi import FastAPI
from sqlalchemy.engine import Engine

from hb import results_db
from hb.calls import Finding, PpmCall
from hb.judge.outcome import GradeOutcome

EXPERIMENT = "demo"
# Two of each track and two more scientific ones: eight tasks.
KERNELS = (
    "gemm",
    "atax",
    "bicg",
    "cholesky",
    "adam_update",
    "attention",
    "break_update",
    "carried_scalar",
)
CAST = {"operations": [{"action": "cast", "array": "A", "to": "fp32"}]}
LOAD = {"startup": {"load": ["openblas"]}}


def speedups(agent: str) -> list[float | None]:
    """The agent's speedup per task of KERNELS; None for an incorrect grade."""
    if agent == "agent-a":
        return [2.0, 3.0, 1.5, 4.0, 1.2, 2.5, 0.9, None]
    return [1.0, 1.5, None, 2.0, 1.1, 1.0, 0.8, 1.2]


def record(engine: Engine, grade: GradeOutcome, requests: Any = None, **columns: Any) -> int:
    return results_db.add_grade(engine, {**grade.record(), **columns}, requests)


def record_demo(
    engine: Engine,
    judge_id: str = "judge-demo",
    machine: str = "demo (cpu)",
    kernels: tuple[str, ...] = KERNELS,
) -> dict[str, int]:
    """Record the demo experiment's grades of `kernels`; the ids of the notable ones by name."""
    ids: dict[str, int] = {}
    for agent in ("agent-a", "agent-b"):
        caller = {
            "agent_id": agent,
            "agent_round": 0,
            "experiment": EXPERIMENT,
            "setup": "default",
            "judge_id": judge_id,
            "machine": machine,
        }
        for index, (kernel, ratio) in enumerate(zip(KERNELS, speedups(agent), strict=True)):
            if kernel not in kernels:
                continue
            native = 1_000_000
            requests = CAST if agent == "agent-a" and index % 2 == 0 else None
            if kernel == "gemm" and agent == "agent-b":
                requests = LOAD
            grade = GradeOutcome(
                kernel=kernel,
                preset="S",
                datatype="fp64",
                route="submit",
                correct=ratio is not None,
                native_ns=native if ratio else 0,
                baseline_ns=round(native * (ratio or 0)),
                speedup=ratio or 0.0,
                measured_speedup=ratio or 0.0,
                convert_in_ns=100_000 if requests == CAST else 0,
                convert_out_ns=50_000 if requests == CAST else 0,
                reason=None if ratio else "hidden inputs: an output is outside the tolerance",
                source_sha256=f"{index:02d}" * 32,
                protections=["namespaces", "seccomp"],
            )
            if kernel == "gemm" and agent == "agent-a":
                grade = grade.model_copy(
                    update={
                        "ppm_calls": [
                            PpmCall(
                                symbol="MPI_Allreduce",
                                key="mpi:mpi_allreduce",
                                name="MPI_Allreduce",
                                model="mpi",
                            )
                        ],
                        "findings": [
                            Finding(
                                kind="blocking_collective_timed",
                                symbol="MPI_Allreduce",
                                key="mpi:mpi_allreduce",
                                message="a blocking collective inside the timed call",
                                source="usis",
                            )
                        ],
                    }
                )
            grade_id = record(engine, grade, requests, **caller)
            ids[f"{agent}:{kernel}"] = grade_id
        if "gemm" in kernels:
            # A suspect grade (left out of the leaderboard) and a refused call.
            suspect = GradeOutcome(
                kernel="gemm",
                preset="S",
                datatype="fp64",
                route="submit",
                correct=True,
                native_ns=1000,
                baseline_ns=5_000_000,
                speedup=0.0,
                measured_speedup=5000.0,
                suspect=True,
            )
            ids[f"{agent}:suspect"] = record(engine, suspect, **caller)
            ids[f"{agent}:refused"] = results_db.add_grade(
                engine,
                {
                    "kernel": "gemm",
                    "preset": "S",
                    "datatype": "fp64",
                    "language": "c",
                    "route": "submit.refused",
                    "correct": False,
                    "detail": "operations[0] (cast): fp8_e4m3 is not an allowed precision",
                    **caller,
                },
            )
    return ids


def paired_timing(
    ratios: Sequence[float], low: float, high: float, noisy: bool = False,
    native_ns: int = 1_000_000,
) -> dict[str, Any]:  # fmt: skip
    """The timing columns of a grade whose pairs gave `ratios` (baseline / submission) and the
    interval [low, high]: its own reps at `native_ns`, the baseline's at ratio times that."""
    return {
        "rep_ns": ",".join(str(native_ns) for _ in ratios),
        "baseline_rep_ns": ",".join(str(round(native_ns * ratio)) for ratio in ratios),
        "speedup_ci_low": low,
        "speedup_ci_high": high,
        "noisy": noisy,
        "pairs": len(ratios),
    }


def add_paired_timing(engine: Engine, columns: Mapping[int, Mapping[str, Any]]) -> None:
    """Give recorded grades (by id) these columns of the paired timing."""
    with engine.begin() as connection:
        for grade_id, values in columns.items():
            connection.execute(
                results_db.grades.update()
                .where(results_db.grades.c.id == grade_id)
                .values(**values)
            )


# The paired demo: 40 pairs around 1.02, and a noisy grade's 12 pairs from 0.75 to 2.
_DRAWS = random.Random(1)
RATIOS = [round(1.02 * _DRAWS.lognormvariate(0, 0.04), 4) for _ in range(40)]
NOISY_RATIOS = [0.75, 1.9, 1.1, 1.4, 0.9, 2.0, 1.2, 1.05, 1.6, 0.95, 1.3, 1.5]


def score_grade(engine: Engine, kernel: str, speedup: float, measured: float) -> int:
    """A correct score grade (a route that shows its reps, counted in no leaderboard) of agent-a."""
    return results_db.add_grade(engine, {
        "kernel": kernel, "preset": "S", "datatype": "fp64", "language": "c", "route": "score",
        "correct": True, "native_ns": 1_000_000, "baseline_ns": round(1_000_000 * measured),
        "speedup": speedup, "measured_speedup": measured, "agent_id": "agent-a",
        "experiment": EXPERIMENT, "setup": "default", "judge_id": "judge-demo",
        "machine": "demo (cpu)",
    }, CAST)  # fmt: skip


def record_paired(engine: Engine, ids: Mapping[str, int]) -> dict[str, int]:
    """Grades with the paired timing's columns beside record_demo's (`ids`): a score grade with
    40 pairs, a noisy score grade, and the demo's hidden gemm grade of agent-a given an interval
    (its reps hidden); their ids by name."""
    grades = {
        "score": score_grade(engine, "gemm", 1.02, 1.02),
        "noisy": score_grade(engine, "atax", 0.97, 1.3),
        "hidden": ids["agent-a:gemm"],
    }
    add_paired_timing(engine, {
        grades["score"]: paired_timing(RATIOS, 0.99, 1.05),
        grades["noisy"]: paired_timing(NOISY_RATIOS, 0.97, 1.62, noisy=True),
        grades["hidden"]: paired_timing([2.0] * 30, 1.8, 2.2),
    })  # fmt: skip
    return grades


@contextlib.contextmanager
def served(app: FastAPI) -> Iterator[str]:
    """`app` served by uvicorn on a free loopback port in a thread; its URL while it runs."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError(f"the judge did not start on port {port}")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
