"""Paired timing: the interval's coverage on pairs drawn from known distributions, the noise gate,
the re-timing of a disturbed pair, the pairing itself (each submission rep beside a baseline rep
on the same inputs, in boxes of their own), the baseline's flags, slots that stand for physical
cores, and hostile kernels that try to slow the baseline or make their own grade noisy."""

from __future__ import annotations

import itertools
import json
import math
import random
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient

from hb import kernels
from hb.execution import build, runner
from hb.judge import paired
from hb.judge.graders import DenseGrader
from hb.judge.paired import Pairs
from hb.service import JudgeHandler, create_app
from tests.hb.conftest import make_config

SCALED_ADD = kernels.solution_source("scaled_add")


# -- the statistics ---------------------------------------------------------------------------


def test_the_signed_rank_table_is_exact() -> None:
    # Tabulated values of the Wilcoxon signed-rank statistic: P(T <= 3) for 8 pairs is 5/256.
    assert paired.lower_tail(8, 3) == 5 / 256
    assert paired.lower_tail(6, 0) == 1 / 64
    assert paired.interval_rank(8) == (4, 1 - 2 * 5 / 256)
    # Five pairs cannot reach 95%: the whole range, and its coverage says so.
    assert paired.interval_rank(5) == (1, 1 - 2 / 32)


@pytest.mark.parametrize(
    "draw",
    [
        lambda rng: rng.gauss(0.0, 0.1),
        lambda rng: (1 if rng.random() < 0.5 else -1) * rng.expovariate(10.0),  # Laplace
        lambda rng: rng.gauss(0.0, 0.05) / max(abs(rng.gauss(0.0, 1.0)), 0.05) * 0.1,  # Cauchy-like
    ],
    ids=["normal", "laplace", "heavy-tailed"],
)
@pytest.mark.parametrize("n", [8, 12, 24])
def test_the_interval_covers_the_true_speedup_at_its_level(draw, n: int) -> None:
    """Log ratios symmetric about log(1.3): the interval holds 1.3 in at least its stated share
    of 2000 trials (less three standard errors), and the estimate is unbiased on the log scale."""
    rng = random.Random(n)
    truth, trials, covered, logs = 1.3, 2000, 0, []
    for _ in range(trials):
        ratios = [truth * math.exp(draw(rng)) for _ in range(n)]
        estimate = paired.hodges_lehmann(ratios)
        covered += estimate.low <= truth <= estimate.high
        logs.append(math.log(estimate.speedup))
    level = paired.interval_rank(n)[1]
    assert covered / trials >= level - 3 * math.sqrt(level * (1 - level) / trials)
    assert abs(float(np.median(logs)) - math.log(truth)) < 0.01


def test_a_wide_interval_is_credited_its_lower_bound() -> None:
    calm = paired.hodges_lehmann([1.0, 1.01, 0.99, 1.02, 0.98, 1.0, 1.01, 0.99])
    assert paired.credited(calm, 0.1) == (calm.speedup, False)
    wild = paired.hodges_lehmann([0.5, 2.0, 1.0, 3.0, 0.4, 1.5, 0.8, 2.5])
    credit, noisy = paired.credited(wild, 0.1)
    assert noisy and credit == wild.low < wild.speedup


def test_a_burst_of_waiting_inside_one_pair_retimes_it_and_steady_waiting_does_not() -> None:
    pairs = Pairs()
    for index in range(8):
        # Every pair waits 20 us for a CPU; pair 3 waits 400 us, a burst within its 200 us.
        pairs.add(100_000, 100_000, 400_000 if index == 3 else 20_000, 0)
    assert pairs.disturbed(0.05) == [3]
    assert pairs.used(0.05) == [0, 1, 2, 4, 5, 6, 7]
    assert not pairs.wanted(7, 0.1, 0.05)  # seven calm pairs of ratio 1: a narrow interval
    assert pairs.wanted(8, 0.1, 0.05)  # the re-timed pair leaves fewer calm pairs than asked


def test_a_v2_cgroups_cpu_pressure_is_read_in_nanoseconds(tmp_path: Path) -> None:
    from hb.execution.supervisor import cgroup_pressure_ns

    pressure = tmp_path / "cpu.pressure"
    pressure.write_text(
        "some avg10=0.00 avg60=0.00 avg300=0.00 total=1234\n"
        "full avg10=0.00 avg60=0.00 avg300=0.00 total=99\n"
    )
    assert cgroup_pressure_ns(pressure) == 1_234_000
    assert cgroup_pressure_ns(tmp_path / "missing") is None


# -- the pairing, in real boxes ----------------------------------------------------------------


@pytest.fixture(scope="module")
def handler(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JudgeHandler]:
    yield JudgeHandler(
        make_config(tmp_path_factory.mktemp("paired"), grading={"reps": 6, "warmup": 1})
    )


def test_each_submission_rep_has_a_baseline_rep_beside_it_on_the_same_inputs(
    handler: JudgeHandler,
) -> None:
    """A paired run of scaled_add's solution beside itself: both boxes answer every rep, the
    two calls of a pair are back to back (the next pair starts after both), the order
    alternates, and each rep's outputs are bit for bit the baseline's (the same inputs)."""
    grader = DenseGrader(handler)
    manifest = kernels.load_manifest("scaled_add")
    sizes, scalars = manifest.preset_sizes("S"), manifest.preset_scalars("S")
    problems = grader.problems(manifest, "S", "fp64", 11, sizes, scalars)
    library = grader.baseline_library(manifest)
    assert library is not None
    beside = grader.beside(library, manifest, "fp64", sizes, scalars, problems)
    reps, pointers = grader.rep_inputs(manifest, None, "fp64", sizes, scalars, problems,  # type: ignore[arg-type]
                                       kernels.pointer_names(manifest))  # fmt: skip
    run = grader.run(library, manifest, "fp64", sizes, reps, pointers, baseline=beside)
    assert run.ok, run.reason
    base = run.baseline
    assert base is not None and len(base.rep_kernel_ns) == len(run.rep_kernel_ns) == 7
    for index in range(7):
        for name, got in run.rep_outputs[index].items():
            assert np.array_equal(got, base.rep_outputs[index][name]), (index, name)
        first, second = sorted([base.rep_started_ns[index], run.rep_started_ns[index]])
        if index + 1 < 7:
            following = min(base.rep_started_ns[index + 1], run.rep_started_ns[index + 1])
            assert first < second < following
        baseline_first = base.rep_started_ns[index] < run.rep_started_ns[index]
        assert baseline_first == (index % 2 == 0)


def test_a_runner_that_cannot_hold_the_baseline_alternates_whole_runs_with_it(
    handler: JudgeHandler, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cuda delivery's rounds: the submission's run and the baseline's run in a box of its own,
    the submission first in even rounds and the baseline first in odd ones; a baseline that fails
    is the harness's failure. (The runs are stand-ins here; tests/hb/test_cuda_delivery.py grades
    on a device.)"""
    grader = DenseGrader(handler)
    order: list[str] = []
    baseline_fails = False

    def fake_run(library: Path, *args: object, **kwargs: object) -> runner.RunResult:
        side = "baseline" if library == Path("base.so") else "submission"
        order.append(side)
        ok = not (side == "baseline" and baseline_fails)
        times = [5, 100, 110] if side == "baseline" else [5, 50, 55]
        return runner.RunResult(ok, rep_kernel_ns=times, warmup=1)

    monkeypatch.setattr(grader, "run", fake_run)
    beside = runner.Baseline(Path("base.so"), "k", ["x"], [])
    for number, first in ((0, "submission"), (1, "baseline")):
        order.clear()
        run = grader.run_apart(beside, number, Path("mine.so"), None, "fp64", {}, [], [],  # type: ignore[arg-type]
                               None, None, "cuda")  # fmt: skip
        assert order[0] == first and sorted(order) == ["baseline", "submission"]
        assert run.ok and run.baseline is not None
        pairs = grader.pairs_of([(run, [])])
        assert pairs.ratios == [2.0, 2.0]
    baseline_fails = True
    failed = grader.run_apart(beside, 0, Path("mine.so"), None, "fp64", {}, [], [],  # type: ignore[arg-type]
                              None, None, "cuda")  # fmt: skip
    assert not failed.ok and failed.reason == runner.BASELINE_FAILED


def test_the_baseline_is_built_as_a_c_submission_is(handler: JudgeHandler) -> None:
    manifest = kernels.load_manifest("gemm")
    solution = kernels.solution_source("gemm")
    submitted = build.build(solution, "c", [], handler.config.build_cache_dir, handler.build_limits)
    assert DenseGrader(handler).baseline_library(manifest) == submitted.library
    assert build.build_flags("c", [])[:4] == ["-O3", "-fopenmp", "-march=native", "-std=gnu17"]


def test_a_paired_grade_answers_its_interval_and_records_it(tmp_path: Path) -> None:
    config = make_config(tmp_path, grading={"reps": 6, "warmup": 1})
    with TestClient(create_app(config)) as client:
        body = client.post(
            "/score", json={"kernel": "scaled_add", "language": "c", "source": SCALED_ADD}
        ).json()
        assert body["correct"], body["reason"]
        timing = body["timing"]
        assert timing["mode"] == "paired" and len(timing["ratios"]) == 6
        assert len(timing["reps_ns"]) == len(timing["baseline_reps_ns"]) == 6
        low, high = body["speedup_ci"]
        assert low <= body["measured_speedup"] <= high
        assert body["speedup"] == (low if body["noisy"] else body["measured_speedup"])
        row = client.get(f"/grades/{body['grade_id']}").json()
        assert row["speedup_ci"] == [low, high] and row["noisy"] == body["noisy"]


# -- hostile kernels ---------------------------------------------------------------------------

# scaled_add's solution with helpers that work only while their own kernel is not running: a
# spinning thread, a forked child and an interval timer whose handler spins. Unfrozen while the
# baseline runs beside it, they would slow the baseline on this machine's cores and inflate the
# submission's ratio; frozen, they never run then.
SLOWS_THE_BASELINE = textwrap.dedent(
    """
        #include <pthread.h>
        #include <signal.h>
        #include <sys/mman.h>
        #include <sys/time.h>
        #include <unistd.h>
        static volatile int *in_call;
        static void spin_while_idle(void) {
            for (;;) { while (!*in_call) { } usleep(50); }
        }
        static void *spinner(void *arg) { (void)arg; spin_while_idle(); return 0; }
        static void on_alarm(int s) { (void)s; for (volatile long i = 0; !*in_call && i < 200000; ++i) { } }
        static void start(void) {
            in_call = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
            *in_call = 1;
            pthread_t t; pthread_create(&t, 0, spinner, 0);
            if (fork() == 0) spin_while_idle();
            signal(SIGALRM, on_alarm);
            struct itimerval every = {{0, 1000}, {0, 1000}};
            setitimer(ITIMER_REAL, &every, 0);
        }
        """
) + SCALED_ADD.replace("{", "{ static int once; if (!once) { once = 1; start(); } *in_call = 1;", 1)


def _with_exit_flag(source: str) -> str:
    """The kernel clears the flag as it returns (its last statement before the closing brace)."""
    head, _, tail = source.rpartition("}")
    return head + "*in_call = 0; }" + tail


@pytest.mark.skipif(len(__import__("os").sched_getaffinity(0)) < 2, reason="needs two cores")
def test_helpers_left_running_cannot_slow_the_baseline(tmp_path: Path) -> None:
    config = make_config(tmp_path, grading={"reps": 8, "warmup": 1, "preset": "M"},
                         sandbox={"threads": 1})  # fmt: skip
    source = _with_exit_flag(SLOWS_THE_BASELINE)
    with TestClient(create_app(config)) as client:
        body = client.post(
            "/score", json={"kernel": "scaled_add", "language": "c", "source": source,
                            "preset": "M"},
        ).json()  # fmt: skip
    assert body["correct"], body["reason"]
    assert body["measured_speedup"] < 1.4, body["timing"]["ratios"]
    assert body["speedup"] < 1.4


SLEEPS_AT_RANDOM = SCALED_ADD.replace(
    "{",
    "{ static unsigned seed = 12345; seed = seed * 1103515245u + 12345u; "
    "usleep((seed >> 16) % 3000);",
    1,
)


def test_a_kernel_that_sleeps_at_random_is_noisy_and_never_credited_above_its_lower_bound(
    tmp_path: Path,
) -> None:
    config = make_config(tmp_path, grading={"reps": 6, "warmup": 1, "max_pairs": 12})
    source = "#include <unistd.h>\n" + SLEEPS_AT_RANDOM
    with TestClient(create_app(config)) as client:
        body = client.post(
            "/score", json={"kernel": "scaled_add", "language": "c", "source": source}
        ).json()
    assert body["correct"], body["reason"]
    assert body["noisy"] is True
    assert len(body["timing"]["ratios"]) == 12  # the gate timed a second round
    low, high = body["speedup_ci"]
    assert body["speedup"] == low <= body["measured_speedup"] <= high


# -- slots that stand for cores ----------------------------------------------------------------

HOLD_SLOTS = """
import json, sys, time
from hb.execution.runner import timing_slot
spans = []
for _ in range(8):
    with timing_slot(sys.argv[1] or None):
        begun = time.monotonic_ns()
        time.sleep(0.02)
        spans.append((begun, time.monotonic_ns()))
print(json.dumps(spans))
"""


def test_two_judges_whose_core_strings_differ_never_time_at_once() -> None:
    """ "0-1" and the default (every core of the process), and "1" and "0,1": each pair of
    strings covers a common core, so no two of their slots' spans overlap."""
    cpus = sorted(__import__("os").sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip("needs two cores")
    both = f"{cpus[0]}-{cpus[1]}" if cpus[1] == cpus[0] + 1 else f"{cpus[0]},{cpus[1]}"
    for strings in ((both, ""), (str(cpus[1]), f"{cpus[0]},{cpus[1]}")):
        processes = [
            subprocess.Popen([sys.executable, "-c", HOLD_SLOTS, s], stdout=subprocess.PIPE)
            for s in strings
        ]
        spans = [span for p in processes for span in json.loads(p.communicate(timeout=60)[0])]
        spans.sort()
        for (_, end), (start, _) in itertools.pairwise(spans):
            assert end <= start, "two timed spans overlapped"
    assert runner.slot_cores(both) == runner.slot_cores(None)[: len(runner.slot_cores(both))]


def test_concurrent_grades_of_two_judges_on_overlapping_cores_do_not_overlap(
    tmp_path: Path,
) -> None:
    import threading

    cpus = sorted(__import__("os").sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip("needs two cores")
    spans: list[tuple[int, int]] = []

    def judge(name: str, string: str | None) -> None:
        config = make_config(tmp_path / name, grading={"reps": 4, "warmup": 1},
                             sandbox={"cpus": string})  # fmt: skip
        with TestClient(create_app(config)) as client:
            for _ in range(3):
                body = client.post(
                    "/score", json={"kernel": "gemm", "language": "c",
                                    "source": kernels.solution_source("gemm")},
                ).json()  # fmt: skip
                assert body["correct"], body["reason"]
                timing = body["timing"]
                starts = [s for pair in timing["started_ns"] for s in pair]
                longest = max(timing["reps_ns"] + timing["baseline_reps_ns"])
                spans.append((min(starts), max(starts) + longest))

    threads = [
        threading.Thread(target=judge, args=("a", f"{cpus[0]},{cpus[1]}")),
        threading.Thread(target=judge, args=("b", None)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert len(spans) == 6
    spans.sort()
    for (_, end), (start, _) in itertools.pairwise(spans):
        assert end <= start, "two judges timed at once on the same cores"
