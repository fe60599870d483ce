"""The leaderboard's metrics over recorded grades (docs/results.md states each formula): per
experiment and (agent, setup) the correct rate, geometric-mean speedups per track and overall with
the geometric means of the tasks' interval bounds beside them, fast_p on the lower bounds, the
noisy tasks, the conversion overhead per request kind, and paired tests between two (agent, setup)
groups on the same tasks; every figure with its sample size, or "n too small"."""

from __future__ import annotations

import itertools
import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from hb import kernels, results_db

# The leaderboard's route: grades on the hidden inputs; a refused call on it is an attempt too.
LEADERBOARD_ROUTES = ("submit", "submit.refused")
FAST_P = (0.0, 1.0, 1.5, 2.0, 4.0)
# Fewer tasks than this (or grades, for a request kind's overhead) and a rate, a mean or a share
# says "n too small": one or two tasks describe a task, not an agent.
MIN_TASKS = 3
# Fewer paired tasks than this and a paired test says "n too small": with 5 pairs the smallest
# two-sided p either exact test can reach is 2 * 0.5**5 = 0.0625, so no difference could show.
MIN_PAIRS = 6
OVERALL = "overall"
NO_OPERATION = "(none)"


class Estimate(BaseModel):
    """One figure and the samples it rests on; `value` is None where n < minimum. A geometric-mean
    speedup also has `low` and `high`: the same mean over its tasks' lower and upper bounds."""

    value: float | None
    n: int
    minimum: int
    low: float | None = None
    high: float | None = None

    def shown(self, digits: int = 3) -> str:
        if self.value is None:
            return f"n too small ({self.n} < {self.minimum})"
        return f"{self.value:.{digits}g}"

    def shown_interval(self, digits: int = 3) -> str:
        """The value with its bounds, `1.02 [0.97, 1.08]`; the value alone where it has none (or
        they are the value itself: no task had an interval)."""
        if self.value is None or self.low is None or self.high is None:
            return self.shown(digits)
        if self.low == self.value == self.high:
            return self.shown(digits)
        return f"{self.value:.{digits}g} [{self.low:.{digits}g}, {self.high:.{digits}g}]"


def estimate(values: Sequence[Any], minimum: int, combine: Callable[[Any], float]) -> Estimate:
    """`combine(values)`, or None where there are fewer than `minimum` values."""
    if len(values) < minimum:
        return Estimate(value=None, n=len(values), minimum=minimum)
    return Estimate(value=float(combine(values)), n=len(values), minimum=minimum)


def geometric_mean(values: Sequence[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def interval_of(row: Mapping[str, Any]) -> tuple[float, float] | None:
    """A grade row's 95% interval of its speedup (`speedup_ci_low`, `speedup_ci_high`); None where
    it has none (a row older than the paired timing, a failed or a distributed grade) or the
    columns do not make a positive interval."""
    low, high = row.get("speedup_ci_low"), row.get("speedup_ci_high")
    if low is None or high is None:
        return None
    low, high = float(low), float(high)
    if not (0 < low <= high < math.inf):
        return None
    return low, high


class TaskResult(BaseModel):
    """A group's result on one task: its best non-suspect leaderboard grade (correct before
    incorrect, then the higher speedup), with that grade's 95% interval of the speedup (None for
    a grade without one) and whether it was noisy (then `speedup` is the interval's lower bound
    and `measured_speedup` the estimate)."""

    model_config = ConfigDict(frozen=True)

    task: tuple[str, str, str]  # kernel, preset, datatype
    track: str
    correct: bool
    speedup: float
    grade_id: int
    speedup_ci: tuple[float, float] | None = None
    noisy: bool = False
    measured_speedup: float = 0.0

    @property
    def bounds(self) -> tuple[float, float]:
        """The interval widened where needed to hold the credited speedup; (speedup, speedup)
        for a task without one."""
        if self.speedup_ci is None:
            return self.speedup, self.speedup
        return min(self.speedup_ci[0], self.speedup), max(self.speedup_ci[1], self.speedup)


class GroupMetrics(BaseModel):
    """The metrics of one (agent, setup) in one experiment."""

    experiment: str
    agent_id: str
    setup: str
    label: str
    tasks: int
    grades: int
    suspect: int
    noisy: int
    correct_rate: Estimate
    geomean_speedup: dict[str, Estimate]
    fast_p: dict[str, Estimate]
    conversion_share: dict[str, Estimate]
    operations_used: dict[str, int]
    judges: list[str]
    results: list[TaskResult]


class PairedTest(BaseModel):
    """Two groups on the tasks both attempted: McNemar's exact test on correctness and the
    Wilcoxon signed-rank test on the log speedups of the tasks both solved, with their p-values."""

    experiment: str
    a: str
    b: str
    paired_tasks: int
    a_only_correct: int
    b_only_correct: int
    mcnemar_p: Estimate
    both_correct: int
    median_speedup_ratio: float | None
    wilcoxon_p: Estimate


class Leaderboard(BaseModel):
    """One experiment's groups (best overall speedup first) and their paired tests."""

    experiment: str
    groups: list[GroupMetrics]
    paired: list[PairedTest]


def track_of(kernel: str) -> str:
    """The catalog's track of `kernel` ("unknown" for a kernel it no longer has)."""
    try:
        return str(kernels.load_manifest(kernel).track)
    except KeyError:
        return "unknown"


def fast_p_key(p: float) -> str:
    return f"{p:g}"


def operations_of(row: Mapping[str, Any]) -> list[str]:
    """The operations a grade's recorded request names (its actions, and each library loaded as
    `load <library>`), in request order without repeats; none where it cannot be read back."""
    try:
        requests = results_db.requests_of_row(row)
    except ValueError:
        return []
    names = [f"load {library}" for library in requests.startup.load]
    names += [operation.action for operation in requests.operations]
    return list(dict.fromkeys(names))


def task_results(rows: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str, str], TaskResult]:
    """Each task's best non-suspect leaderboard grade among `rows`."""
    best: dict[tuple[str, str, str], TaskResult] = {}
    for row in rows:
        if row["route"] not in LEADERBOARD_ROUTES or row.get("suspect"):
            continue
        task = (str(row["kernel"]), str(row["preset"]), str(row["datatype"]))
        correct = bool(row["correct"])
        result = TaskResult(
            task=task,
            track=track_of(task[0]),
            correct=correct,
            speedup=float(row.get("speedup") or 0.0) if correct else 0.0,
            grade_id=int(row["id"]),
            speedup_ci=interval_of(row) if correct else None,
            noisy=correct and bool(row.get("noisy")),
            measured_speedup=float(row.get("measured_speedup") or 0.0) if correct else 0.0,
        )
        held = best.get(task)
        if held is None or (result.correct, result.speedup) > (held.correct, held.speedup):
            best[task] = result
    return best


def group_metrics(
    experiment: str, agent_id: str, setup: str, rows: Sequence[Mapping[str, Any]]
) -> GroupMetrics:
    """The metrics of one group's grades (all its routes: the leaderboard's are picked here)."""
    leaderboard = [row for row in rows if row["route"] in LEADERBOARD_ROUTES]
    results = list(task_results(leaderboard).values())
    correct = [r for r in results if r.correct and r.speedup > 0]
    by_track: dict[str, list[TaskResult]] = defaultdict(list)
    for result in correct:
        by_track[result.track].append(result)
    geomeans = {track: track_geomean(tasks) for track, tasks in sorted(by_track.items())}
    geomeans[OVERALL] = overall_geomean(list(geomeans.values()))
    shares: dict[str, list[tuple[int, int]]] = defaultdict(list)
    used: Counter[str] = Counter()
    for row in leaderboard:
        if not row["correct"] or row.get("suspect"):
            continue
        names = operations_of(row)
        used.update(names)
        native = int(row.get("native_ns") or 0)
        if native <= 0:
            continue
        converted = int(row.get("convert_in_ns") or 0) + int(row.get("convert_out_ns") or 0)
        actions = [name for name in names if not name.startswith("load ")] or [NO_OPERATION]
        for action in actions:
            shares[action].append((converted, native))
    return GroupMetrics(
        experiment=experiment,
        agent_id=agent_id,
        setup=setup,
        label=group_label(agent_id, setup),
        tasks=len(results),
        grades=len(leaderboard),
        suspect=sum(1 for row in leaderboard if row.get("suspect")),
        noisy=sum(1 for r in results if r.noisy),
        correct_rate=estimate([float(r.correct) for r in results], MIN_TASKS, _mean),
        geomean_speedup=geomeans,
        fast_p={
            fast_p_key(p): estimate(
                [float(r.correct and r.bounds[0] >= p) for r in results], MIN_TASKS, _mean
            )
            for p in FAST_P
        },
        conversion_share={
            action: estimate(pairs, MIN_TASKS, _ratio_of_sums)
            for action, pairs in sorted(shares.items())
        },
        operations_used=dict(used.most_common()),
        judges=sorted({str(row.get("judge_id") or "") for row in rows} - {""}),
        results=sorted(results, key=lambda r: r.task),
    )


def track_geomean(tasks: Sequence[TaskResult]) -> Estimate:
    """The geometric mean of the tasks' speedups, with the geometric means of their lower and of
    their upper bounds as `low` and `high`."""
    mean = estimate([t.speedup for t in tasks], MIN_TASKS, geometric_mean)
    if mean.value is None:
        return mean
    lows, highs = zip(*(t.bounds for t in tasks), strict=True)
    return mean.model_copy(update={"low": geometric_mean(lows), "high": geometric_mean(highs)})


def overall_geomean(tracks: Sequence[Estimate]) -> Estimate:
    """Two levels: the geometric mean of the tracks' means (and of their bounds) over the tracks
    with enough tasks, so a track with many kernels weighs as one."""
    counted = [e for e in tracks if e.value is not None]
    if not counted:
        # Where no track has enough, n is the largest track's count (below the minimum).
        return Estimate(value=None, n=max((e.n for e in tracks), default=0), minimum=MIN_TASKS)

    def mean(values: list[float | None]) -> float:
        return geometric_mean([v for v in values if v is not None])

    return Estimate(
        value=mean([e.value for e in counted]),
        n=sum(e.n for e in counted),
        minimum=MIN_TASKS,
        low=mean([e.low for e in counted]),
        high=mean([e.high for e in counted]),
    )


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def _ratio_of_sums(pairs: Sequence[tuple[int, int]]) -> float:
    return sum(c for c, _ in pairs) / sum(n for _, n in pairs)


def group_label(agent_id: str, setup: str) -> str:
    return f"{agent_id or '(no agent)'} / {setup or '(no setup)'}"


def paired_test(
    experiment: str,
    a: str,
    b: str,
    first: Mapping[tuple[str, str, str], TaskResult],
    second: Mapping[tuple[str, str, str], TaskResult],
) -> PairedTest:
    """McNemar (exact: a binomial test on the discordant tasks) and Wilcoxon signed-rank on the
    log speedup ratios of the tasks both groups solved."""
    from scipy import stats  # imported here: the judge starts without it

    shared = sorted(set(first) & set(second))
    a_only = sum(1 for t in shared if first[t].correct and not second[t].correct)
    b_only = sum(1 for t in shared if second[t].correct and not first[t].correct)
    mcnemar = Estimate(value=None, n=len(shared), minimum=MIN_PAIRS)
    if len(shared) >= MIN_PAIRS:
        p = stats.binomtest(a_only, a_only + b_only, 0.5).pvalue if a_only + b_only else 1.0
        mcnemar = mcnemar.model_copy(update={"value": float(p)})
    logs = [
        math.log(first[t].speedup) - math.log(second[t].speedup)
        for t in shared
        if first[t].correct and second[t].correct and first[t].speedup > 0 < second[t].speedup
    ]
    wilcoxon = Estimate(value=None, n=len(logs), minimum=MIN_PAIRS)
    if len(logs) >= MIN_PAIRS:
        p = stats.wilcoxon(logs).pvalue if any(logs) else 1.0
        wilcoxon = wilcoxon.model_copy(update={"value": float(p)})
    median = math.exp(statistics.median(logs)) if logs else None
    return PairedTest(
        experiment=experiment,
        a=a,
        b=b,
        paired_tasks=len(shared),
        a_only_correct=a_only,
        b_only_correct=b_only,
        mcnemar_p=mcnemar,
        both_correct=len(logs),
        median_speedup_ratio=median,
        wilcoxon_p=wilcoxon,
    )


def leaderboards(rows: Iterable[Mapping[str, Any]]) -> list[Leaderboard]:
    """Every experiment among `rows` (by name; "" for grades outside one) with its groups and the
    paired tests of every two of them."""
    grouped: dict[str, dict[tuple[str, str], list[Mapping[str, Any]]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for row in rows:
        key = (str(row.get("agent_id") or ""), str(row.get("setup") or ""))
        grouped[str(row.get("experiment") or "")][key].append(row)
    boards = []
    for experiment, groups in sorted(grouped.items()):
        metrics = [
            group_metrics(experiment, agent, setup, group_rows)
            for (agent, setup), group_rows in sorted(groups.items())
        ]
        metrics.sort(key=lambda m: -(m.geomean_speedup[OVERALL].value or 0.0))
        results = {m.label: {r.task: r for r in m.results} for m in metrics}
        paired = [
            paired_test(experiment, a, b, results[a], results[b])
            for a, b in itertools.combinations(results, 2)
        ]
        boards.append(Leaderboard(experiment=experiment, groups=metrics, paired=paired))
    return boards
