"""The scaling curve of one submission: a grade at each rank count its grid spans (a point it does
not span is skipped with a note), time, speedup and efficiency per point, a table and a PNG plot."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hb.distributed.engine import DistributedGrade
from hb.distributed.signature import grid_at


@dataclass
class ScalingPoint:
    """One rank count of the curve: graded (time, speedup and efficiency against the smallest
    graded rank count), failed (the grade's reason), or skipped (the grid's note)."""

    ranks: int
    grid: tuple[int, ...] | None
    credited_s: float | None = None
    correct: bool | None = None
    speedup: float | None = None
    efficiency: float | None = None
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "ranks": self.ranks,
            "grid": list(self.grid) if self.grid else None,
            "credited_s": self.credited_s,
            "correct": self.correct,
            "speedup": self.speedup,
            "efficiency": self.efficiency,
            "note": self.note,
        }


GradeAt = Callable[[int, tuple[int, ...]], DistributedGrade]


def scaling_curve(
    rank_counts: Sequence[int], grid: Sequence[str | int], grade_at: GradeAt
) -> list[ScalingPoint]:
    """Grade at every rank count `grid` spans, via `grade_at(ranks, grid_extents)`.

    Strong scaling: speedup(P) = T(P0) / T(P) and efficiency(P) = speedup(P) * P0 / P, where P0
    is the smallest rank count with a correct grade. An incorrect or failed grade is a point with
    its reason and no time.
    """
    points: list[ScalingPoint] = []
    for ranks in sorted(set(rank_counts)):
        extents, note = grid_at(grid, ranks)
        if extents is None:
            points.append(ScalingPoint(ranks, None, note=f"skipped: {note}"))
            continue
        grade = grade_at(ranks, extents)
        point = ScalingPoint(ranks, extents, correct=grade.correct)
        if grade.correct:
            point.credited_s = grade.credited_s
        else:
            reason = grade.failure or "; ".join(grade.mismatches) or "incorrect"
            point.note = f"not credited: {reason}"
        points.append(point)
    timed = [p for p in points if p.credited_s]
    if timed:
        base = timed[0]
        assert base.credited_s is not None
        for point in timed:
            assert point.credited_s is not None
            point.speedup = base.credited_s / point.credited_s
            point.efficiency = point.speedup * base.ranks / point.ranks
    return points


def scaling_table(points: Sequence[ScalingPoint]) -> str:
    """The curve as aligned text: ranks, grid, time, speedup, efficiency, note."""
    header = f"{'ranks':>5}  {'grid':<10} {'time_s':>12} {'speedup':>8} {'efficiency':>10}  note"
    lines = [header]
    for p in points:
        grid = "x".join(str(e) for e in p.grid) if p.grid else "-"
        time_s = f"{p.credited_s:.6e}" if p.credited_s is not None else "-"
        speedup = f"{p.speedup:.3f}" if p.speedup is not None else "-"
        efficiency = f"{p.efficiency:.1%}" if p.efficiency is not None else "-"
        lines.append(
            f"{p.ranks:>5}  {grid:<10} {time_s:>12} {speedup:>8} {efficiency:>10}  {p.note or ''}".rstrip()
        )
    return "\n".join(lines) + "\n"


def plot_scaling(points: Sequence[ScalingPoint], path: Path, title: str) -> Path:
    """Write the curve as a PNG: time per rank count (log-log) and efficiency; skipped and failed
    points appear as marks on the axis with their rank count only."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    timed = [p for p in points if p.credited_s is not None]
    figure, (time_axis, efficiency_axis) = plt.subplots(1, 2, figsize=(10, 4))
    if timed:
        ranks = [p.ranks for p in timed]
        time_axis.plot(ranks, [p.credited_s for p in timed], "o-", label="credited time")
        ideal = [timed[0].credited_s * timed[0].ranks / r for r in ranks]  # type: ignore[operator]
        time_axis.plot(ranks, ideal, "--", color="gray", label="ideal")
        efficiency_axis.plot(ranks, [100.0 * (p.efficiency or 0.0) for p in timed], "o-")
    missing = [p.ranks for p in points if p.credited_s is None]
    if missing:
        efficiency_axis.plot(
            missing, [0.0] * len(missing), "x", color="red", label="skipped or failed"
        )
        efficiency_axis.legend()
    for axis in (time_axis, efficiency_axis):
        axis.set_xlabel("ranks")
        axis.set_xscale("log", base=2)
        axis.set_xticks([p.ranks for p in points], [str(p.ranks) for p in points])
    time_axis.set_yscale("log")
    time_axis.set_ylabel("seconds (max over ranks, fastest repeat)")
    if timed:
        time_axis.legend()
    efficiency_axis.set_ylabel("parallel efficiency (%)")
    efficiency_axis.set_ylim(0, 110)
    figure.suptitle(title)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, format="png", dpi=100)
    plt.close(figure)
    return path
