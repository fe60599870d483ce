"""`hb report`: the results database's leaderboards (hb.metrics) written as report.md and PNG plots
(fast_p curves per group, speedup distributions per track, the operations correct submissions
used), with each task's speedup and its 95% interval, on SQLite or PostgreSQL alike; an empty
database gives a report that says so."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, get_args

from sqlalchemy.engine import Engine

from hb import kernels, metrics, results_db
from hb.metrics import FAST_P, OVERALL, Leaderboard, TaskResult

TRACKS = list(get_args(kernels.Track))
LEADERBOARD_HEADER = [
    "agent / setup",
    "tasks",
    "grades",
    "suspect",
    "noisy",
    "correct rate",
    *(f"geomean {track}" for track in TRACKS),
    "geomean overall",
    *(f"fast_{metrics.fast_p_key(p)}" for p in FAST_P),
    "judges",
]
CONVERSION_HEADER = ["agent / setup", "request kind", "(convert_in + convert_out) / kernel", "n"]
PAIRED_HEADER = [
    "a",
    "b",
    "paired tasks",
    "only a correct",
    "only b correct",
    "McNemar p",
    "both correct",
    "median speedup a/b",
    "Wilcoxon p",
]
JUDGES_HEADER = ["judge", "machine", "grades"]
TASKS_HEADER = [
    "agent / setup",
    "kernel",
    "preset",
    "datatype",
    "track",
    "correct",
    "speedup [95% CI]",
    "grade",
]


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A Markdown table (header only when there are no rows)."""

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |"

    return [line(header), "|" + "---|" * len(header), *(line(row) for row in rows), ""]


def leaderboard_rows(board: Leaderboard) -> list[list[str]]:
    rows = []
    for group in board.groups:
        geomeans = [group.geomean_speedup.get(t) for t in (*TRACKS, OVERALL)]
        rows.append(
            [
                group.label,
                str(group.tasks),
                str(group.grades),
                str(group.suspect),
                str(group.noisy),
                group.correct_rate.shown(),
                *(g.shown_interval() if g is not None else "-" for g in geomeans),
                *(group.fast_p[metrics.fast_p_key(p)].shown() for p in FAST_P),
                ", ".join(group.judges) or "-",
            ]
        )
    return rows


def task_speedup(result: TaskResult) -> str:
    """A task's credited speedup with its 95% interval, `1.02 [0.97, 1.08]`, a noisy one marked
    with its estimate; "-" for an incorrect result."""
    if not result.correct:
        return "-"
    shown = f"{result.speedup:.3g}"
    if result.speedup_ci is not None:
        shown += f" [{result.speedup_ci[0]:.3g}, {result.speedup_ci[1]:.3g}]"
    if result.noisy:
        shown += f" noisy (estimate {result.measured_speedup:.3g})"
    return shown


def task_rows(board: Leaderboard) -> list[list[str]]:
    return [
        [
            group.label,
            *result.task,
            result.track,
            "yes" if result.correct else "no",
            task_speedup(result),
            f"#{result.grade_id}",
        ]
        for group in board.groups
        for result in group.results
    ]


def conversion_rows(board: Leaderboard) -> list[list[str]]:
    return [
        [group.label, kind, share.shown(), str(share.n)]
        for group in board.groups
        for kind, share in group.conversion_share.items()
    ]


def paired_rows(board: Leaderboard) -> list[list[str]]:
    return [
        [
            test.a,
            test.b,
            str(test.paired_tasks),
            str(test.a_only_correct),
            str(test.b_only_correct),
            test.mcnemar_p.shown(),
            str(test.both_correct),
            f"{test.median_speedup_ratio:.3g}" if test.median_speedup_ratio is not None else "-",
            test.wilcoxon_p.shown(),
        ]
        for test in board.paired
    ]


def judge_rows(rows: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    counts = Counter((str(r.get("judge_id") or "-"), str(r.get("machine") or "-")) for r in rows)
    return [[judge, machine, str(n)] for (judge, machine), n in sorted(counts.items())]


def file_stem(experiment: str) -> str:
    """A file name's part for an experiment's plots."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", experiment) or "no-experiment"


def write_report(engine: Engine, out: Path, experiment: str | None = None) -> Path:
    """Write <out>/report.md and its plots from the grades of `experiment` (default: all);
    the report's path."""
    rows = results_db.list_grades(engine, limit=None, experiment=experiment)
    boards = metrics.leaderboards(rows)
    out.mkdir(parents=True, exist_ok=True)
    scope = f"experiment {experiment!r}" if experiment else "every experiment"
    lines = [f"# Results: {scope}", ""]
    if not rows:
        lines += [
            f"The database holds no grades{f' of {scope}' if experiment else ''}: every table "
            "below is empty.",
            "",
            "## Leaderboard",
            "",
            *markdown_table(LEADERBOARD_HEADER, []),
            "## Tasks",
            "",
            *markdown_table(TASKS_HEADER, []),
            "## Conversion overhead per request kind",
            "",
            *markdown_table(CONVERSION_HEADER, []),
            "## Paired tests",
            "",
            *markdown_table(PAIRED_HEADER, []),
            "## Judges",
            "",
            *markdown_table(JUDGES_HEADER, []),
        ]
    else:
        lines += [
            f"{len(rows)} grades; the leaderboard counts route submit (and its refusals), a "
            "task's result being its best non-suspect grade there. Suspect grades are left out "
            f"and counted apart. A figure over fewer than {metrics.MIN_TASKS} tasks, or a "
            f"paired test over fewer than {metrics.MIN_PAIRS} tasks, says n too small "
            "(docs/results.md gives every formula). A speedup's brackets hold its 95% interval; "
            "a geomean's, the geomeans of its tasks' lower and upper bounds (a task without an "
            "interval counting its speedup for both). fast_p counts a task by its lower bound. "
            "A noisy grade (an interval wider than the judge allows) is credited by its lower "
            "bound.",
            "",
            "## Judges",
            "",
            *markdown_table(JUDGES_HEADER, judge_rows(rows)),
        ]
        for board in boards:
            stem = file_stem(board.experiment)
            plots = write_plots(board, out, stem)
            lines += [
                f"## Experiment {board.experiment or '(none)'}",
                "",
                "### Leaderboard",
                "",
                *markdown_table(LEADERBOARD_HEADER, leaderboard_rows(board)),
                "### Tasks",
                "",
                *markdown_table(TASKS_HEADER, task_rows(board)),
                "### Conversion overhead per request kind",
                "",
                *markdown_table(CONVERSION_HEADER, conversion_rows(board)),
                "### Paired tests",
                "",
                *markdown_table(PAIRED_HEADER, paired_rows(board)),
                *(f"![{title}]({path.name})\n" for title, path in plots),
            ]
    report = out / "report.md"
    report.write_text("\n".join(lines).rstrip() + "\n")
    return report


def write_plots(board: Leaderboard, out: Path, stem: str) -> list[tuple[str, Path]]:
    """The experiment's three plots as PNGs: their titles and paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results = {group.label: group.results for group in board.groups}
    written = []

    figure, axis = plt.subplots(figsize=(7, 4))
    thresholds = [i / 50 for i in range(0, 251)]
    for label, tasks in results.items():
        if tasks:
            shares = [
                sum(t.correct and t.bounds[0] >= p for t in tasks) / len(tasks) for p in thresholds
            ]
            axis.plot(thresholds, shares, label=f"{label} ({len(tasks)} tasks)")
    for p in FAST_P:
        axis.axvline(p, color="gray", linewidth=0.5, linestyle=":")
    axis.set_xlabel("speedup threshold p")
    axis.set_ylabel("fast_p: share of tasks correct with lower bound >= p")
    axis.set_ylim(0, 1.05)
    axis.legend(fontsize=7)
    written.append(("fast_p per agent and setup", _save(figure, out / f"fast_p-{stem}.png")))

    figure, axis = plt.subplots(figsize=(8, 4))
    labels, data = [], []
    for track in TRACKS:
        for label, tasks in results.items():
            speedups = [
                t.speedup for t in tasks if t.correct and t.speedup > 0 and t.track == track
            ]
            if speedups:
                labels.append(f"{track}\n{label}")
                data.append(speedups)
    if data:
        axis.boxplot(data)
        axis.set_xticks(range(1, len(labels) + 1), labels, fontsize=6, rotation=20, ha="right")
        axis.set_yscale("log")
    else:
        axis.text(0.5, 0.5, "no correct grade", ha="center", transform=axis.transAxes)
    axis.axhline(1.0, color="gray", linewidth=0.5)
    axis.set_ylabel("speedup over the baseline (correct tasks)")
    written.append(("speedups per track", _save(figure, out / f"speedups-{stem}.png")))

    figure, axis = plt.subplots(figsize=(8, 4))
    names = sorted({name for group in board.groups for name in group.operations_used})
    width = 0.8 / max(len(board.groups), 1)
    for index, group in enumerate(board.groups):
        axis.bar(
            [i + index * width for i in range(len(names))],
            [group.operations_used.get(name, 0) for name in names],
            width,
            label=group.label,
        )
    if names:
        axis.set_xticks(
            [i + 0.4 - width / 2 for i in range(len(names))], names, rotation=30, fontsize=7
        )
        axis.legend(fontsize=7)
    else:
        axis.text(
            0.5, 0.5, "no correct grade made a request", ha="center", transform=axis.transAxes
        )
    axis.set_ylabel("correct submit grades using it")
    written.append(
        ("requests used by correct submissions", _save(figure, out / f"requests-{stem}.png"))
    )
    return written


def _save(figure: Any, path: Path) -> Path:
    import matplotlib.pyplot as plt

    figure.tight_layout()
    figure.savefig(path, format="png", dpi=100)
    plt.close(figure)
    return path
