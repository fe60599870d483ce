"""How precisely the judge grades a submission that is its own baseline: the catalog's `solution.c`
of kernels from all three tracks, graded three times each through /score at presets S and M, first
on a quiet machine and then beside one busy neighbour (a process this benchmark starts, spinning on
a core, and ends before it returns). The submission is the baseline's own source, built with the
same flags, so an honest judge answers a speedup of 1; what matters is how close to 1 it stays and
how little three grades of the same source disagree.

Each row (kernel, preset, condition) prints the median of the three measured speedups (the judge's
estimate over its pairs of baseline and submission runs), their spread (the largest over the
smallest, as x1.xx), the median width of the 95% interval relative to the estimate, the pairs a
grade used and how many of the three grades the judge called noisy, beside the row's targets and a
mark. A second table prints the wall time of a grade per preset and condition: what timing the
baseline beside every submission costs. A field a grade does not answer (a failed grade's interval)
prints as "-".

Every grade and every row is also written, one JSON object a line, to
bench/results/grade_precision-<timestamp>.jsonl (the folder ignores its own contents in git).

The short form grades one kernel at S once, quiet only: it shows the benchmark runs, and its
figures mean nothing. The full form grades an untimed warm-up first for each kernel and preset (its
build and inputs), then the table. Missed targets are printed, not failed: this is a measurement.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from fastapi.testclient import TestClient

from bench.bench_timing import bench_config
from hb import kernels, metrics
from hb.config import load_config
from hb.service import create_app

# Kernels whose solution.c grades in a few seconds at S and M, from each track.
# (The normalisations, softmax and layernorm, take 20-60 s a grade at M: left out.)
KERNELS = (
    # loop_level
    "cond_sum",
    "running_sum",
    "gather_dot",
    "wavefront_2d",
    # scientific_computing
    "gemm",
    "jacobi_2d",
    "spmv",
    "nbody",
    "heat_2d",
    # machine_learning
    "conv2d",
    "conv1d",
    "linear_backward",
    "attention",
)
PRESETS = ("S", "M")
GRADES_PER_ROW = 3


@dataclass(frozen=True)
class Target:
    """The honest answer's band for the median self-speedup, and the largest spread (max/min)."""

    low: float
    high: float
    spread: float

    def __str__(self) -> str:
        return f"[{self.low:.2f},{self.high:.2f}] <=x{self.spread:.2f}"


# Targets on a 2-core machine.
TARGETS = {
    "quiet": Target(0.95, 1.05, 1.10),
    "neighbour": Target(0.90, 1.10, 1.25),
}

RESULTS_DIR = Path(__file__).resolve().parent / "results"

# The busy neighbour: one core's worth of spinning, which also ends itself should its parent be
# gone (a benchmark killed before its finally block runs leaves no spinner behind).
NEIGHBOUR = """
import os
parent = os.getppid()
while os.getppid() == parent:
    for _ in range(1_000_000):
        pass
"""


@dataclass
class Grade:
    """What one /score answer says about a self-grade, with defaults for what it does not carry."""

    kernel: str
    preset: str
    condition: str
    wall_s: float
    correct: bool
    speedup: float | None
    measured_speedup: float | None
    speedup_ci: list[float] | None
    noisy: bool | None
    pairs: int
    ratios: list[float]
    reps_ns: list[int]
    baseline_reps_ns: list[int]
    reason: str | None = None

    @property
    def estimate(self) -> float | None:
        """The judge's estimate: its measured speedup, or the credited one where it has none."""
        return self.measured_speedup if self.measured_speedup is not None else self.speedup

    @property
    def relative_width(self) -> float | None:
        """The 95% interval's width over the estimate; None without an interval."""
        if self.speedup_ci is None or not self.estimate:
            return None
        low, high = self.speedup_ci
        return (high - low) / self.estimate


def _float(value: Any) -> float | None:
    try:
        return None if value is None else float(value)
    except (TypeError, ValueError):
        return None


def _interval(value: Any) -> list[float] | None:
    """[low, high] from an answer's interval; None where it has none (or not two numbers)."""
    if not isinstance(value, list | tuple) or len(value) != 2:
        return None
    low, high = _float(value[0]), _float(value[1])
    return None if low is None or high is None else [low, high]


def read_grade(
    answer: dict[str, Any], kernel: str, preset: str, condition: str, wall_s: float
) -> Grade:
    """A Grade from a /score answer, each field it lacks read as None (or 0, or empty)."""
    timing = answer.get("timing") or {}
    reason = answer.get("reason") or answer.get("detail")
    return Grade(
        kernel=kernel,
        preset=preset,
        condition=condition,
        wall_s=wall_s,
        correct=bool(answer.get("correct")),
        speedup=_float(answer.get("speedup")),
        measured_speedup=_float(answer.get("measured_speedup")),
        speedup_ci=_interval(answer.get("speedup_ci")),
        noisy=answer.get("noisy"),
        pairs=int(timing.get("pairs") or 0),
        ratios=[float(r) for r in timing.get("ratios") or []],
        reps_ns=[int(ns) for ns in timing.get("reps_ns") or []],
        baseline_reps_ns=[int(ns) for ns in timing.get("baseline_reps_ns") or []],
        reason=None if answer.get("correct") else str(reason)[:500],
    )


def grade_once(client: TestClient, kernel: str, preset: str, condition: str) -> Grade:
    body = {
        "kernel": kernel,
        "language": "c",
        "source": kernels.solution_source(kernel),
        "preset": preset,
    }
    started = time.perf_counter()
    response = client.post("/score", json=body)
    wall_s = time.perf_counter() - started
    try:
        answer = response.json()
    except ValueError:
        answer = {"correct": False, "reason": f"HTTP {response.status_code}: {response.text}"}
    if not isinstance(answer, dict):
        answer = {"correct": False, "reason": f"HTTP {response.status_code}: {answer!r}"}
    return read_grade(answer, kernel, preset, condition, wall_s)


@dataclass
class Row:
    """Three self-grades of one kernel at one preset under one condition, against its target."""

    kernel: str
    preset: str
    condition: str
    grades: list[Grade] = field(default_factory=list)

    @property
    def estimates(self) -> list[float]:
        return [g.estimate for g in self.grades if g.correct and g.estimate is not None]

    @property
    def complete(self) -> bool:
        return bool(self.grades) and len(self.estimates) == len(self.grades)

    @property
    def median(self) -> float | None:
        return statistics.median(self.estimates) if self.estimates else None

    @property
    def credited_median(self) -> float | None:
        credited = [g.speedup for g in self.grades if g.correct and g.speedup is not None]
        return statistics.median(credited) if credited else None

    @property
    def spread(self) -> float | None:
        estimates = self.estimates
        if not self.complete or min(estimates) <= 0:
            return None
        return max(estimates) / min(estimates)

    @property
    def width(self) -> float | None:
        widths = [w for g in self.grades if (w := g.relative_width) is not None]
        return statistics.median(widths) if widths else None

    @property
    def pairs(self) -> int:
        return int(statistics.median(g.pairs for g in self.grades)) if self.grades else 0

    @property
    def noisy(self) -> int:
        return sum(bool(g.noisy) for g in self.grades)

    @property
    def target(self) -> Target:
        return TARGETS[self.condition]

    @property
    def met(self) -> bool:
        median, spread, target = self.median, self.spread, self.target
        return (
            self.complete
            and median is not None
            and spread is not None
            and target.low <= median <= target.high
            and spread <= target.spread
        )

    def record(self) -> dict[str, Any]:
        return {
            "kind": "row",
            "kernel": self.kernel,
            "track": metrics.track_of(self.kernel),
            "preset": self.preset,
            "condition": self.condition,
            "grades": len(self.grades),
            "correct": len(self.estimates),
            "median_speedup": self.median,
            "median_credited_speedup": self.credited_median,
            "spread": self.spread,
            "median_relative_ci_width": self.width,
            "pairs": self.pairs,
            "noisy": self.noisy,
            "target": {
                "low": self.target.low,
                "high": self.target.high,
                "spread": self.target.spread,
            },
            "met": self.met,
        }


@contextmanager
def busy_neighbour() -> Iterator[subprocess.Popen[bytes]]:
    """One process spinning on a core for as long as the block runs, ended (killed and reaped) on
    the way out, however the block ends."""
    process = subprocess.Popen(
        [sys.executable, "-c", NEIGHBOUR],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield process
    finally:
        process.kill()
        process.wait(timeout=30)


def results_file(stamp: str) -> Path:
    """This run's results file, in a folder that ignores its own contents in git."""
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    ignore = RESULTS_DIR / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# Benchmark results, one file per run: not part of the repository.\n*\n")
    return RESULTS_DIR / f"grade_precision-{stamp}.jsonl"


def _write(out: TextIO, record: dict[str, Any]) -> None:
    out.write(json.dumps(record) + "\n")
    out.flush()


def _number(value: float | None, form: str) -> str:
    return "-" if value is None else format(value, form)


def print_rows(rows: list[Row]) -> None:
    print(
        f"{'kernel':<17}{'preset':<7}{'condition':<10}{'self-speedup':>13}{'credited':>9}"
        f"{'spread':>8}{'ci width':>9}{'pairs':>6}{'noisy':>6}  {'target':<21}status"
    )
    for row in rows:
        spread = "-" if row.spread is None else f"x{row.spread:.2f}"
        width = "-" if row.width is None else f"{100 * row.width:.1f}%"
        pairs = str(row.pairs) if row.pairs else "-"
        status = "met" if row.met else "MISS"
        if not row.complete:
            failed = next((g for g in row.grades if not g.correct), None)
            why = failed.reason if failed is not None else "no grade"
            status += f" ({len(row.estimates)}/{len(row.grades)} graded: {str(why)[:60]})"
        print(
            f"{row.kernel:<17}{row.preset:<7}{row.condition:<10}"
            f"{_number(row.median, '.3f'):>13}{_number(row.credited_median, '.3f'):>9}"
            f"{spread:>8}{width:>9}{pairs:>6}{f'{row.noisy}/{len(row.grades)}':>6}  "
            f"{row.target!s:<21}{status}"
        )


def wall_records(rows: list[Row]) -> list[dict[str, Any]]:
    """The wall time of a grade per preset and condition, over every graded row."""
    records = []
    for preset in PRESETS:
        for condition in TARGETS:
            walls = [
                g.wall_s
                for row in rows
                if row.preset == preset and row.condition == condition
                for g in row.grades
            ]
            if walls:
                records.append(
                    {
                        "kind": "wall",
                        "preset": preset,
                        "condition": condition,
                        "grades": len(walls),
                        "median_s": statistics.median(walls),
                        "max_s": max(walls),
                        "total_s": sum(walls),
                    }
                )
    return records


def main(full: bool) -> int:
    names = KERNELS if full else KERNELS[:1]
    presets = PRESETS if full else PRESETS[:1]
    conditions = tuple(TARGETS) if full else ("quiet",)
    per_row = GRADES_PER_ROW if full else 1
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = results_file(stamp)
    rows: list[Row] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="hb-bench-") as scratch, path.open("w") as out:
        # The judge as configured by default (its reps, its pairing), on fp64 inputs.
        reps = load_config(None, environ={"HB_DATA_DIR": scratch}).grading.reps
        config = bench_config(Path(scratch), reps)
        _write(
            out,
            {
                "kind": "run",
                "stamp": stamp,
                "full": full,
                "cpus": os.cpu_count(),
                "load_average": os.getloadavg(),
                "reps": reps,
                "kernels": list(names),
                "presets": list(presets),
                "conditions": list(conditions),
                "grades_per_row": per_row,
            },
        )
        with TestClient(create_app(config)) as client:
            if full:
                # Each kernel's build and inputs, once, before anything is timed.
                for name in names:
                    for preset in presets:
                        warm = grade_once(client, name, preset, "warm-up")
                        _write(out, {"kind": "warm-up", **warm.__dict__})
            for condition in conditions:
                load = " ".join(f"{v:.2f}" for v in os.getloadavg())
                print(f"condition {condition}: load average {load}", flush=True)
                with busy_neighbour() if condition == "neighbour" else nullcontext():
                    for name in names:
                        for preset in presets:
                            row = Row(name, preset, condition)
                            for _ in range(per_row):
                                grade = grade_once(client, name, preset, condition)
                                row.grades.append(grade)
                                _write(out, {"kind": "grade", **grade.__dict__})
                            rows.append(row)
                            _write(out, row.record())
        walls = wall_records(rows)
        met = sum(row.met for row in rows)
        summary = {
            "kind": "summary",
            "rows": len(rows),
            "met": met,
            "missed": len(rows) - met,
            "wall_s": time.perf_counter() - started,
        }
        for record in [*walls, summary]:
            _write(out, record)
    print(
        f"self-grades of the catalog's solution.c ({len(names)} kernels, presets "
        f"{', '.join(presets)}, {per_row} grade(s) a row, reps {reps}); an honest judge answers 1"
    )
    print_rows(rows)
    print(f"{'wall per grade':<17}{'preset':<7}{'condition':<10}{'median s':>9}{'max s':>8}")
    for record in walls:
        print(
            f"{'':<17}{record['preset']:<7}{record['condition']:<10}"
            f"{record['median_s']:>9.2f}{record['max_s']:>8.2f}"
        )
    print(
        f"rows met: {met} of {len(rows)}, missed: {len(rows) - met} "
        f"({summary['wall_s']:.0f} s); results in {path}"
    )
    return 0
