"""hb.metrics against figures worked by hand and against scipy called directly: a task's result is
its best non-suspect submit grade (with that grade's interval), the overall mean weighs each track
once, the geomeans' bounds are the geomeans of the tasks' bounds, fast_p counts tasks by their
lower bounds, noisy tasks are counted, conversion overhead is a ratio of sums per request kind,
paired tests give scipy's p-values, and too few samples say "n too small"."""

from __future__ import annotations

import math
from itertools import count
from typing import Any

import pytest
from scipy import stats

from hb import metrics
from hb.requests_api import Requests, to_recorded

_ids = count(1)


def row(kernel: str, speedup: float | None, route: str = "submit", agent: str = "a",
        **columns: Any) -> dict[str, Any]:  # fmt: skip
    """A grades row as results_db returns it (only the columns the metrics read)."""
    return {
        "id": next(_ids), "kernel": kernel, "preset": "S", "datatype": "fp64", "route": route,
        "correct": speedup is not None, "speedup": speedup or 0.0, "suspect": False,
        "native_ns": 1000, "convert_in_ns": 0, "convert_out_ns": 0, "requests": "",
        "agent_id": agent, "setup": "default", "experiment": "e", "judge_id": "j1",
        **columns,
    }  # fmt: skip


SCIENTIFIC = ["gemm", "atax", "bicg", "cholesky", "cg", "channel_flow"]
LEARNING = ["adam_update", "attention", "avgpool2d"]


def test_the_tracks_used_here_are_the_catalogs() -> None:
    assert {metrics.track_of(k) for k in SCIENTIFIC} == {"scientific_computing"}
    assert {metrics.track_of(k) for k in LEARNING} == {"machine_learning"}
    assert metrics.track_of("no_such_kernel") == "unknown"


def test_the_overall_mean_weighs_each_track_once() -> None:
    rows = [row(k, 2.0) for k in SCIENTIFIC] + [row(k, 8.0) for k in LEARNING]
    (group,) = metrics.leaderboards(rows)[0].groups
    assert group.geomean_speedup["scientific_computing"].value == pytest.approx(2.0)
    assert group.geomean_speedup["machine_learning"].value == pytest.approx(8.0)
    # sqrt(2 * 8), where the mean of all nine tasks would be 2 ** (5 / 3).
    assert group.geomean_speedup["overall"].value == pytest.approx(4.0)
    assert group.geomean_speedup["overall"].n == 9


def test_a_task_counts_its_best_non_suspect_grade_and_suspects_are_counted_apart() -> None:
    rows = [
        row("gemm", None),
        row("gemm", 1.5),
        row("gemm", 0.0, suspect=True, correct=True),
        row("atax", None, route="submit.refused"),
        row("bicg", 3.0),
        row("bicg", 9.0, route="score"),  # not the leaderboard's route
        row("cholesky", None),
    ]
    (group,) = metrics.leaderboards(rows)[0].groups
    assert (group.tasks, group.suspect, group.grades) == (4, 1, 6)
    assert {r.task[0]: (r.correct, r.speedup) for r in group.results} == {
        "gemm": (True, 1.5), "atax": (False, 0.0), "bicg": (True, 3.0), "cholesky": (False, 0.0),
    }  # fmt: skip
    assert group.correct_rate.value == pytest.approx(2 / 4)
    assert {p: e.value for p, e in group.fast_p.items()} == pytest.approx(
        {"0": 0.5, "1": 0.5, "1.5": 0.5, "2": 0.25, "4": 0.0}
    )
    # Two correct scientific tasks: below the minimum of three.
    mean = group.geomean_speedup["scientific_computing"]
    assert (mean.value, mean.n, mean.shown()) == (None, 2, "n too small (2 < 3)")
    assert group.geomean_speedup["overall"].shown() == "n too small (2 < 3)"


def ci(low: float, high: float, **columns: Any) -> dict[str, Any]:
    """The paired timing's columns of a grade with the interval [low, high]."""
    return {"speedup_ci_low": low, "speedup_ci_high": high, "noisy": False, "pairs": 30,
            **columns}  # fmt: skip


def test_fast_p_counts_a_task_by_its_intervals_lower_bound() -> None:
    rows = [
        row("gemm", 1.2, **ci(0.97, 1.45)),  # its interval reaches below 1: not fast_1
        row("atax", 1.2),  # no interval (an older row): its speedup, as before
        row("bicg", 1.6, **ci(1.5, 1.7)),
        # Noisy: credited by the lower bound, which is then its speedup.
        row("cholesky", 0.9, measured_speedup=1.3, **ci(0.9, 1.9, noisy=True)),
    ]
    (group,) = metrics.leaderboards(rows)[0].groups
    assert {p: e.value for p, e in group.fast_p.items()} == pytest.approx(
        {"0": 1.0, "1": 0.5, "1.5": 0.25, "2": 0.0, "4": 0.0}
    )
    assert group.noisy == 1
    by_kernel = {r.task[0]: r for r in group.results}
    assert by_kernel["gemm"].speedup_ci == (0.97, 1.45) and by_kernel["atax"].speedup_ci is None
    noisy = by_kernel["cholesky"]
    assert (noisy.noisy, noisy.speedup, noisy.measured_speedup) == (True, 0.9, 1.3)
    # Without the interval the same grades count gemm at fast_1 too.
    plain = [{k: v for k, v in r.items() if not k.startswith("speedup_ci")} for r in rows]
    (group,) = metrics.leaderboards(plain)[0].groups
    assert group.fast_p["1"].value == pytest.approx(0.75)
    mean = group.geomean_speedup["scientific_computing"]  # no task with an interval: no bounds
    assert mean.shown_interval() == mean.shown() == f"{(1.2 * 1.2 * 1.6 * 0.9) ** 0.25:.3g}"


def test_the_geomean_has_the_geomeans_of_the_tasks_bounds_beside_it() -> None:
    rows = [
        row("gemm", 2.0, **ci(1.8, 2.5)),
        row("atax", 1.0, **ci(0.5, 1.1)),
        row("bicg", 4.0),  # no interval: 4 for both bounds
        *(row(k, 2.0, **ci(1.0, 4.0)) for k in LEARNING),
    ]
    (group,) = metrics.leaderboards(rows)[0].groups
    low, high = (1.8 * 0.5 * 4.0) ** (1 / 3), (2.5 * 1.1 * 4.0) ** (1 / 3)
    science = group.geomean_speedup["scientific_computing"]
    assert (science.value, science.low, science.high) == pytest.approx((2.0, low, high))
    learning = group.geomean_speedup["machine_learning"]
    assert (learning.value, learning.low, learning.high) == pytest.approx((2.0, 1.0, 4.0))
    # Two levels, as the geomean itself: the tracks' bounds, each track weighing once.
    overall = group.geomean_speedup["overall"]
    assert (overall.value, overall.low, overall.high) == pytest.approx(
        (2.0, math.sqrt(low * 1.0), math.sqrt(high * 4.0))
    )
    assert learning.shown_interval() == "2 [1, 4]"
    assert science.shown_interval() == f"2 [{low:.3g}, {high:.3g}]"


def test_a_task_carries_its_chosen_grades_interval_and_old_rows_none() -> None:
    rows = [
        row("gemm", 1.2, **ci(1.0, 3.0)),
        row("gemm", 1.5, **ci(1.4, 1.6)),  # the best grade: its interval is the task's
        row("atax", None, **ci(1.0, 2.0)),  # incorrect: no interval, whatever the row says
        row("bicg", 2.0, **ci(0.0, 2.5)),  # not a positive interval: read as none
        row("cg", 3.0, speedup_ci_low=None, speedup_ci_high=None),
    ]
    (group,) = metrics.leaderboards(rows)[0].groups
    assert {r.task[0]: r.speedup_ci for r in group.results} == {
        "gemm": (1.4, 1.6), "atax": None, "bicg": None, "cg": None,
    }  # fmt: skip
    assert {r.task[0]: r.bounds for r in group.results} == {
        "gemm": (1.4, 1.6), "atax": (0.0, 0.0), "bicg": (2.0, 2.0), "cg": (3.0, 3.0),
    }  # fmt: skip
    assert group.geomean_speedup["scientific_computing"].low == pytest.approx(
        (1.4 * 2.0 * 3.0) ** (1 / 3)
    )
    assert group.noisy == 0


def test_few_tasks_say_n_too_small_everywhere() -> None:
    (group,) = metrics.leaderboards([row("gemm", 2.0), row("atax", 3.0)])[0].groups
    assert group.correct_rate.shown() == "n too small (2 < 3)"
    assert all(e.value is None for e in group.fast_p.values())


def recorded(document: dict[str, Any]) -> str:
    return to_recorded(Requests.validate(document))


def test_conversion_overhead_is_a_ratio_of_sums_per_request_kind() -> None:
    cast = recorded({"operations": [{"action": "cast", "array": "A", "to": "fp32"}]})
    both = recorded({
        "startup": {"load": ["openblas"]},
        "operations": [{"action": "cast", "array": "A", "to": "fp32"},
                       {"action": "permute", "array": "B", "order": ["i1", "i0"]}],
    })  # fmt: skip
    rows = [
        row("gemm", 2.0, requests=cast, native_ns=1000, convert_in_ns=100, convert_out_ns=100),
        row("atax", 2.0, requests=cast, native_ns=3000, convert_in_ns=200),
        row("bicg", 2.0, requests=both, native_ns=1000, convert_in_ns=500, convert_out_ns=500),
        row("cg", 2.0),
        row("cholesky", 2.0),
        row("adam_update", 2.0),
        row("channel_flow", None, requests=cast, convert_in_ns=10**6),  # incorrect: not counted
    ]
    (group,) = metrics.leaderboards(rows)[0].groups
    shares = group.conversion_share
    assert shares["cast"].value == pytest.approx((200 + 200 + 1000) / (1000 + 3000 + 1000))
    assert (shares["permute"].value, shares["permute"].n) == (None, 1)
    assert (shares["(none)"].value, shares["(none)"].n) == (0.0, 3)
    assert group.operations_used == {"cast": 3, "load openblas": 1, "permute": 1}


def test_paired_tests_are_scipys_and_need_six_tasks() -> None:
    a_speedups = [2.0, 3.0, 1.5, 4.0, 1.2, 2.5, 0.9]
    b_speedups = [1.0, 1.5, 1.6, 2.0, 1.1, 1.0, 0.8]
    kernels = [*SCIENTIFIC, "adam_update"]
    rows = [row(k, s, agent="a") for k, s in zip(kernels, a_speedups, strict=True)]
    rows += [row(k, s, agent="b") for k, s in zip(kernels, b_speedups, strict=True)]
    rows += [row("attention", None, agent="a"), row("attention", 2.0, agent="b")]
    rows += [row("avgpool2d", 1.0, agent="a"), row("avgpool2d", None, agent="b")]
    rows += [row("cg", None, agent="c")]  # c shares one task with each: too few to test
    board = metrics.leaderboards(rows)[0]
    by_pair = {(t.a, t.b): t for t in board.paired}
    test = by_pair[("a / default", "b / default")]
    logs = [math.log(x) - math.log(y) for x, y in zip(a_speedups, b_speedups, strict=True)]
    assert test.wilcoxon_p.value == pytest.approx(stats.wilcoxon(logs).pvalue)
    assert test.median_speedup_ratio == pytest.approx(math.exp(sorted(logs)[3]))
    assert (test.paired_tasks, test.a_only_correct, test.b_only_correct) == (9, 1, 1)
    assert test.mcnemar_p.value == pytest.approx(stats.binomtest(1, 2, 0.5).pvalue)
    with_c = by_pair[("a / default", "c / default")]
    assert with_c.mcnemar_p.shown() == "n too small (1 < 6)"
    assert with_c.wilcoxon_p.shown() == "n too small (0 < 6)"


def test_equal_speedups_give_p_one_rather_than_an_error() -> None:
    rows = [row(k, 2.0, agent=agent) for k in SCIENTIFIC for agent in ("a", "b")]
    (test,) = metrics.leaderboards(rows)[0].paired
    assert (test.wilcoxon_p.value, test.mcnemar_p.value) == (1.0, 1.0)


def test_experiments_are_separate_leaderboards() -> None:
    rows = [
        row("gemm", 2.0, experiment="x"),
        row("gemm", 3.0, experiment="y"),
        row("gemm", 1.0, experiment=""),
    ]
    assert [board.experiment for board in metrics.leaderboards(rows)] == ["", "x", "y"]
    assert metrics.leaderboards([]) == []
