"""The kinds of grade behind one interface: a dense single-node grade, a sparse one (its arrays
converted to the requested format per rep) and a distributed one on MPI ranks. The judge picks
the grader for a call (`grader_for`) and each turns a checked call into a GradeOutcome."""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from hb import abi, calls, kernels, languages, results_db, sparse
from hb.distributed.engine import DistributedGrade
from hb.distributed.grade import distributed_refusal, grade_submission, requested_device_arrays
from hb.distributed.launch import launcher_settings
from hb.distributed.policy import default_requests
from hb.envelope import Submission
from hb.execution import build, runner
from hb.judge import paired, refusals
from hb.judge.grading import (
    Problem,
    RepProblem,
    compare_reps,
    mannwhitney_speedup,
    rep_seed,
    speedup,
)
from hb.judge.outcome import (
    HIDDEN_CONVERSION_FAILED,
    HIDDEN_RUN_FAILED,
    BuildInfo,
    Dispersion,
    GradeOutcome,
    TimingInfo,
    calls_answer,
    hidden_mismatch,
    is_hidden_route,
)
from hb.judge.paired import Pairs
from hb.judge.refusals import relayout_check
from hb.kernels import Manifest
from hb.requests_api import RequestError, Requests, RequestsCheck
from relayout.distribution import Distribution

if TYPE_CHECKING:
    from hb.service import JudgeHandler


@dataclass(frozen=True)
class Job:
    """One grade to make: the submission (its preset set), the kernel and its problem, the
    request as granted, the seed of its inputs, the outcome so far (kernel, route, request,
    digest), the call as checking left it (None for a regrade of a recorded call) and whether the
    baseline is timed again."""

    submission: Submission
    manifest: Manifest
    problem: Problem
    granted: Requests
    seed: int
    outcome: GradeOutcome
    checked: refusals.Call | None = None
    refresh_baseline: bool = False


def dispersion(times: list[int]) -> dict[str, float]:
    """The spread of the timed reps: median, and the interquartile range relative to it."""
    if not times:
        return {"median_ns": 0.0, "iqr_over_median": 0.0}
    q1, median, q3 = (float(v) for v in np.percentile(times, [25, 50, 75]))
    return {"median_ns": median, "iqr_over_median": (q3 - q1) / median if median else 0.0}


def _at(values: list[Any], index: int, default: Any = 0) -> Any:
    """values[index], or `default` where the list does not reach it."""
    return values[index] if index < len(values) else default


def _summed(*values: int | None) -> int | None:
    """The sum of what both boxes measured, None where either measured nothing."""
    return None if any(v is None for v in values) else sum(v for v in values if v is not None)


def _numpy_name(precision: str) -> str:
    from hb.precision import NUMPY_DTYPES

    return NUMPY_DTYPES[precision].name


class Grader:
    """What every kind of grade shares: the judge's configuration, database, limits and caches,
    the reading of a submission's calls, and the credit a grade's times earn."""

    kind: ClassVar[str]

    def __init__(self, judge: JudgeHandler) -> None:
        self.judge = judge

    @property
    def config(self) -> Any:
        return self.judge.config

    @property
    def engine(self) -> Any:
        return self.judge.engine

    @property
    def limits(self) -> Any:
        return self.judge.limits

    @property
    def build_limits(self) -> Any:
        return self.judge.build_limits

    def grade(self, job: Job) -> GradeOutcome:
        raise NotImplementedError

    def with_calls(self, outcome: GradeOutcome, report: calls.CallReport | None) -> GradeOutcome:
        """The outcome with its submission's calls and findings; failed where the setup's
        grading.refuse_findings refuses one of them (findings otherwise only inform)."""
        if report is None:
            return outcome
        outcome = outcome.model_copy(update=calls_answer(report))
        refusal = report.refusal(self.config.grading.refuse_findings)
        return outcome if refusal is None else outcome.failed(refusal)

    def credited(
        self, outcome: GradeOutcome, correct: bool, ratio: float, **fields: Any
    ) -> GradeOutcome:
        """The outcome with its verdict and `fields`: a suspect speedup (past
        grading.speedup_suspect_above) is recorded and not credited until it is verified again;
        a relative error that is not finite is recorded as none."""
        suspect = ratio > self.config.grading.speedup_suspect_above
        error = fields.pop("max_rel_error", None)
        return outcome.model_copy(
            update={
                "correct": correct,
                "speedup": 0.0 if suspect else ratio,
                "measured_speedup": ratio,
                "suspect": suspect,
                "max_rel_error": error if error is not None and np.isfinite(error) else None,
                **fields,
            }
        )

    def gate_closed(self, pairs: Pairs) -> bool:
        """Whether a paired grade past its first rounds stops: max_pairs reached, or the noise
        gate asks for no more (enough undisturbed pairs, an interval within max_relative_ci)."""
        grading = self.config.grading
        return len(pairs) >= grading.max_pairs or not pairs.wanted(
            grading.reps, grading.max_relative_ci, grading.max_wait
        )

    def credit_pairs(self, outcome: GradeOutcome, correct: bool, verdict: str | None,
                     pairs: Pairs, warmup: int = 0, round_trip_ns: int = 0,
                     **fields: Any) -> GradeOutcome:  # fmt: skip
        """A paired grade's credit: the estimate over its undisturbed pairs (all of them where
        fewer than two are), its interval, and whether it is noisy (then credited its lower
        bound); `fields` are the outcome's other measurements."""
        grading = self.config.grading
        estimate = pairs.estimate(grading.max_wait)
        credit, noisy = paired.credited(estimate, grading.max_relative_ci)
        used = pairs.used(grading.max_wait)
        if not correct:
            credit, noisy = 0.0, False
        outcome = self.credited(
            outcome, correct, credit, reason=verdict,
            native_ns=int(np.median([pairs.submission_ns[i] for i in used])),
            baseline_ns=int(np.median([pairs.baseline_ns[i] for i in used])),
            speedup_ci=[estimate.low, estimate.high] if correct else None,
            noisy=noisy,
            timing=TimingInfo(
                mode="paired", reps_ns=pairs.submission_ns, baseline_reps_ns=pairs.baseline_ns,
                warmup=warmup, credited_rep=-1, round_trip_ns=round_trip_ns,
                dispersion=Dispersion(**dispersion(pairs.submission_ns)),
                ratios=pairs.ratios, pairs=len(used), estimate=estimate.speedup,
                coverage=estimate.coverage, retimed=sorted(set(range(len(pairs))) - set(used)),
                wait_ns=pairs.wait_ns, steal_ns=pairs.steal_ns,
                started_ns=[list(span) for span in pairs.started_ns],
                pressure_ns=pairs.pressure_ns,
            ),
            **fields,
        )  # fmt: skip
        if correct:
            # The measured speedup is the estimate, whatever the credit (a noisy grade's lower
            # bound, a suspect grade's 0).
            outcome = outcome.model_copy(update={"measured_speedup": estimate.speedup})
        return outcome


class DenseGrader(Grader):
    """A single-node grade: the submission built, run in a box rep by rep with the request's
    conversions around each call, compared with the reference, and its baseline timed alike."""

    kind = "dense"

    def grade(self, job: Job) -> GradeOutcome:
        """Build the submission, run it in a box on every rep's inputs, compare each rep with the
        reference and time the baseline on the same inputs."""
        submission, manifest, problem, granted = (
            job.submission,
            job.manifest,
            job.problem,
            job.granted,
        )
        outcome, preset, seed, checked = job.outcome, job.outcome.preset, job.seed, job.checked
        refresh_baseline, route = job.refresh_baseline, job.outcome.route
        precision = problem.precision
        # On the hidden inputs a failure after the build names only the check that failed
        # (GradeOutcome.hidden enforces it on the whole answer and record).
        hidden = is_hidden_route(route)
        libraries = list(granted.startup.load)
        built = build.build(
            submission.source,
            submission.language,
            libraries,
            self.config.build_cache_dir,
            self.build_limits,
        )
        outcome.build = BuildInfo(cached=built.cached, build_ns=built.build_ns)
        if not built.ok or built.library is None:
            return outcome.failed(built.reason or "build failed", built.log)
        if submission.language != "python":  # a python delivery has no object to read
            outcome = self.with_calls(outcome, calls.library_calls(
                built.library, calls.offered_models(), self.config.sandbox_dir,
                self.build_limits))  # fmt: skip
        if outcome.reason is not None:
            return outcome
        sizes = manifest.preset_sizes(preset)
        scalars = manifest.preset_scalars(preset)
        delivery = languages.language(submission.language).delivery
        mode = self.config.grading.timing
        grading = self.config.grading
        # The baseline is timed beside the submission, in one supervised run, in every host
        # delivery; a cuda delivery's run is its own runner's (hb.execution.cudarunner), so its
        # rounds alternate with runs of the baseline in a box of its own (`apart`).
        paired = mode == "paired"
        apart = paired and delivery == "cuda"
        # A paired grade's first `reps` pairs are spread over grading.box_pairs pairs of boxes,
        # so that what one box pair's placement does to one side shows in the interval.
        per_box_pair = -(-grading.reps // grading.box_pairs) if paired else grading.reps
        count = min(per_box_pair, grading.reps)
        problems = self.problems(manifest, preset, precision, seed, sizes, scalars, 0,
                                 grading.warmup + count)  # fmt: skip
        try:
            answer = checked.relayout_answer() if checked is not None else None
            conversion, pointers, conversion_files = self.conversion(
                granted, manifest, precision, sizes, answer
            )
        except Exception as error:  # relayout's build or lowering: the grade fails, the judge stays
            from hb.execution.supervisor import describe

            return outcome.failed(
                f"the request's conversion kernels did not build: {describe(error)}"
            )
        try:
            reps, pointers = self.rep_inputs(
                manifest, granted, precision, sizes, scalars, problems, pointers
            )
        except ValueError as error:
            failure = (
                HIDDEN_CONVERSION_FAILED if hidden else f"the sparse conversion failed: {error}"
            )
            return outcome.failed(failure)
        baseline = self.baseline_library(manifest) if paired else None
        if paired and baseline is None:
            return outcome.failed("harness: the catalog's baseline did not build")
        rounds: list[tuple[runner.RunResult, list[RepProblem]]] = []
        first, total = 0, 0
        while True:
            # The first rounds' pairs, then rounds of the noise gate of `reps` pairs each, within
            # max_pairs; every round on inputs no earlier rep of the grade saw.
            if total < grading.reps:
                count = min(per_box_pair, grading.reps - total)
            else:
                count = min(grading.reps, grading.max_pairs - total)
            if rounds:
                problems = self.problems(manifest, preset, precision, seed, sizes, scalars, first,
                                         grading.warmup + count)  # fmt: skip
                try:
                    reps, pointers = self.rep_inputs(manifest, granted, precision, sizes, scalars,
                                                     problems, pointers)  # fmt: skip
                except ValueError as error:
                    return outcome.failed(HIDDEN_CONVERSION_FAILED if hidden
                                          else f"the sparse conversion failed: {error}")  # fmt: skip
            beside = self.beside(baseline, manifest, precision, sizes, scalars, problems,
                                 order=len(rounds)) if paired else None  # fmt: skip
            if apart and beside is not None:
                run = self.run_apart(beside, len(rounds), built.library, manifest, precision,
                                     sizes, reps, pointers, conversion, conversion_files,
                                     delivery)  # fmt: skip
            else:
                run = self.run(built.library, manifest, precision, sizes, reps, pointers,
                               conversion, conversion_files, delivery, baseline=beside)  # fmt: skip
            outcome.protections = run.protections
            if not run.ok:
                failed = run.reason or "the run failed"
                if hidden and not failed.startswith("harness: "):
                    failed = HIDDEN_RUN_FAILED
                return outcome.failed(failed)
            comparison = compare_reps(run, problems, problem.band)
            if comparison.correct and run.baseline is not None:
                checked_baseline = compare_reps(run.baseline, problems, problem.band)
                if not checked_baseline.correct:
                    return outcome.failed(
                        "harness: the catalog's baseline missed the reference on the grade's "
                        "inputs" + ("" if hidden else f" ({checked_baseline.reason})")
                    )
            rounds.append((run, problems))
            first += grading.warmup + count
            total += count
            if not comparison.correct or not paired:
                break
            if total >= grading.reps and self.gate_closed(self.pairs_of(rounds)):
                break
        verdict = comparison.reason
        if hidden and verdict is not None:
            verdict = hidden_mismatch(verdict, list(problems[0].expected))
        if paired:
            return self.credit_pairs(
                outcome, comparison.correct, verdict, self.pairs_of(rounds),
                warmup=run.warmup, round_trip_ns=run.round_trip_ns,
                convert_in_ns=run.convert_in_ns, convert_out_ns=run.convert_out_ns,
                max_rel_error=comparison.max_relative_error, run_wall_s=run.wall_s,
            )  # fmt: skip
        native_ns, baseline_reps = run.kernel_ns, []
        if mode == "mannwhitney":
            # The baseline's reps are timed in this grade, under the same conditions.
            baseline_run = self.baseline_run(manifest, precision, sizes, scalars, problems)
            baseline_reps = baseline_run.timed if baseline_run is not None else []
            baseline_ns = int(np.median(baseline_reps)) if baseline_reps else 0
            native_ns = int(np.median(run.timed))
            ratio = (
                mannwhitney_speedup(run.timed, baseline_reps, self.config.grading.mannwhitney_p)
                if comparison.correct
                else 0.0
            )
        else:
            baseline_ns = self.baseline(
                manifest, preset, precision, seed, sizes, scalars, problems,
                refresh=route == "submit" or refresh_baseline,
            )  # fmt: skip
            ratio = speedup(baseline_ns, run.kernel_ns) if comparison.correct else 0.0
        return self.credited(
            outcome, comparison.correct, ratio, reason=verdict, native_ns=native_ns,
            baseline_ns=baseline_ns, convert_in_ns=run.convert_in_ns,
            convert_out_ns=run.convert_out_ns, max_rel_error=comparison.max_relative_error,
            run_wall_s=run.wall_s,
            timing=TimingInfo(
                mode=mode, reps_ns=run.timed,
                baseline_reps_ns=baseline_reps, warmup=run.warmup,
                credited_rep=run.credited - run.warmup, round_trip_ns=run.round_trip_ns,
                dispersion=Dispersion(**dispersion(run.timed)),
            ),
        )  # fmt: skip

    def run_apart(self, beside: runner.Baseline, number: int, library: Path,
                  manifest: Manifest, precision: str, sizes: dict[str, int],
                  reps: list[runner.RepInput], pointers: list[str],
                  conversion: dict[str, Any] | None, conversion_files: Path | None,
                  delivery: str) -> runner.RunResult:  # fmt: skip
        """One round of a paired grade whose submission's runner cannot hold the baseline's box
        beside it (a cuda delivery): the submission's run and a run of the baseline in a box of
        its own on the same rep inputs, one after the other, the submission first in even rounds
        and the baseline first in odd ones; rep i of one is paired with rep i of the other. The
        submission's result, carrying the baseline's (None there where it failed)."""

        def mine() -> runner.RunResult:
            return self.run(library, manifest, precision, sizes, reps, pointers, conversion,
                            conversion_files, delivery)  # fmt: skip

        def theirs() -> runner.RunResult:
            return self.run(beside.library, manifest, precision, sizes, list(beside.reps),
                            list(beside.pointers))  # fmt: skip

        if number % 2 == 0:
            run, base = mine(), theirs()
        else:
            base, run = theirs(), mine()
        if run.ok and not base.ok:
            return runner.RunResult(False, reason=runner.BASELINE_FAILED,
                                    protections=run.protections)  # fmt: skip
        run.baseline = base if base.ok else None
        return run

    def pairs_of(self, rounds: list[tuple[runner.RunResult, list[RepProblem]]]) -> Pairs:
        """Every timed pair of a paired grade's rounds (warm-ups left out), in the order timed;
        what a side did not measure (a cuda runner's waits) counts as nothing."""
        pairs = Pairs()
        for run, _ in rounds:
            assert run.baseline is not None
            base = run.baseline
            for index in range(run.warmup, len(run.rep_kernel_ns)):
                pairs.add(
                    base.rep_kernel_ns[index], run.rep_kernel_ns[index],
                    _at(base.rep_wait_ns, index) + _at(run.rep_wait_ns, index),
                    _at(base.rep_steal_ns, index) + _at(run.rep_steal_ns, index),
                    _at(base.rep_started_ns, index), _at(run.rep_started_ns, index),
                    _summed(_at(base.rep_pressure_ns, index, None),
                            _at(run.rep_pressure_ns, index, None)),
                )  # fmt: skip
        return pairs

    def baseline_library(self, manifest: Manifest) -> Path | None:
        """The kernel's catalog solution built as a C submission is built (the same flags),
        cached; None where it does not build."""
        built = build.build(
            kernels.solution_source(manifest.name), "c", [], self.config.build_cache_dir,
            self.build_limits,
        )  # fmt: skip
        return built.library if built.ok else None

    def beside(self, library: Path | None, manifest: Manifest, precision: str,
               sizes: dict[str, int], scalars: dict[str, float],
               problems: list[RepProblem], order: int = 0) -> runner.Baseline | None:  # fmt: skip
        """The baseline a paired run times beside the submission: the catalog solution on every
        rep's canonical inputs, in the kernel's own pointer order; `order` (the round's number)
        decides which box opens the run's first pair."""
        if library is None:
            return None
        trailing = abi.trailing_arguments(manifest, sizes, scalars, precision)
        return runner.Baseline(
            library, abi.symbol(manifest, precision), kernels.pointer_names(manifest),
            [runner.RepInput(p.inputs, trailing) for p in problems], order,
        )  # fmt: skip

    def problems(
        self,
        manifest: Manifest,
        preset: str,
        precision: str,
        seed: int,
        sizes: dict[str, int],
        scalars: dict[str, float],
        first: int = 0,
        count: int | None = None,
    ) -> list[RepProblem]:
        """The inputs and reference outputs of `count` reps (default: the warm-ups and reps of
        one round) from rep `first` on, each drawn from a seed of its own (rep_seed), cached per
        (kernel, preset, precision, seed, first, count). A paired grade's later rounds start
        where the one before ended, so no rep of a grade sees inputs an earlier one saw."""
        if count is None:
            count = self.config.grading.warmup + self.config.grading.reps
        key = (manifest.name, preset, precision, seed, first, count)
        cache, lock = self.judge.references, self.judge.references_lock
        with lock:
            if key in cache:
                cache.move_to_end(key)
                return cache[key]
        dtype = np.dtype(_numpy_name(precision))
        problems = []
        for index in range(first, first + count):
            inputs = kernels.make_inputs(manifest, sizes, rep_seed(seed, index), dtype)
            expected = kernels.reference_outputs(manifest, inputs, sizes, scalars)
            problems.append(RepProblem(inputs, expected))
        with lock:
            cache[key] = problems
            while len(cache) > 4:
                cache.popitem(last=False)
        return problems

    def conversion(
        self, granted: Requests, manifest: Manifest, precision: str, sizes: dict[str, int],
        answer: RequestsCheck | None = None,
    ) -> tuple[dict[str, Any] | None, list[str], Path | None]:  # fmt: skip
        """The request's conversion program (its library built here and not loaded, so that the
        supervisor that converts finds it cached) and the kernel's pointer order (from `answer`,
        relayout's check of the request, where checking made it). A format operation converts
        nothing here (hb.sparse does, once per grade)."""
        if not sparse.has_dense_operations(granted):
            return None, kernels.pointer_names(manifest), None
        from hb.requests_api import build_conversions

        arrays = abi.relayout_arrays(manifest, precision)
        if answer is None:
            answer = relayout_check(granted, manifest, precision)
        pointers = list(answer.arrays or {})
        key = hashlib.sha256(
            (granted.to_json() + json.dumps(arrays, sort_keys=True)).encode()
        ).hexdigest()
        cache_dir = self.config.data_dir / "conversion-cache" / key[:2] / key
        build_conversions(granted.to_json(), arrays, cache_dir)
        return (
            {"requests": granted.to_json(), "arrays": arrays, "sizes": sizes},
            pointers,
            cache_dir,
        )

    def run(
        self,
        library: Path,
        manifest: Manifest,
        precision: str,
        sizes: dict[str, int],
        reps: list[runner.RepInput],
        pointers: list[str],
        conversion: dict[str, Any] | None = None,
        conversion_files: Path | None = None,
        delivery: str = "library",
        threads: int | None = None,
        probe: runner.BoxProbe | None = None,
        baseline: runner.Baseline | None = None,
    ) -> runner.RunResult:
        """One timed run in a box: a warm-up and timed reps, each on inputs of its own; `threads`
        (default sandbox.threads) and a profiler's `probe` for POST /profile. A cuda delivery
        runs under hb.execution.cudarunner (device arrays, a box given the device nodes)."""
        if delivery == "cuda":
            from hb.execution import cudarunner

            if probe is not None:
                return runner.RunResult(
                    False, reason="a cuda run is not profiled: perf sees the host only"
                )
            return cudarunner.run_kernel(
                library, abi.symbol(manifest, precision), pointers, reps,
                manifest.workspace_size(sizes), kernels.output_names(manifest),
                self.config.grading.warmup, self.config.sandbox_dir, self.limits,
                self.config.sandbox.threads if threads is None else threads, conversion,
            )  # fmt: skip
        return runner.run_kernel(
            library=library,
            symbol=abi.symbol(manifest, precision),
            pointers=pointers,
            reps=reps,
            workspace_bytes=manifest.workspace_size(sizes),
            output_names=kernels.output_names(manifest),
            warmup=self.config.grading.warmup,
            workdir_root=self.config.sandbox_dir,
            limits=self.limits,
            threads=self.config.sandbox.threads if threads is None else threads,
            conversion=conversion,
            conversion_files=conversion_files,
            delivery=delivery,
            probe=probe,
            baseline=baseline,
        )

    def rep_inputs(
        self,
        manifest: Manifest,
        granted: Requests,
        precision: str,
        sizes: dict[str, int],
        scalars: dict[str, float],
        problems: list[RepProblem],
        pointers: list[str],
    ) -> tuple[list[runner.RepInput], list[str]]:
        """Each rep's arrays as the kernel takes them (the reference keeps the canonical inputs),
        and the kernel's pointer order."""
        trailing = abi.trailing_arguments(manifest, sizes, scalars, precision)
        return [runner.RepInput(p.inputs, trailing) for p in problems], pointers

    def baseline(
        self,
        manifest: Manifest,
        preset: str,
        precision: str,
        seed: int,
        sizes: dict[str, int],
        scalars: dict[str, float],
        problems: list[RepProblem],
        *,
        refresh: bool = False,
    ) -> int:
        """The kernel's reference C solution built at -O2 and timed like a submission: on the
        first grade of (kernel, preset, precision, seed), and again whenever `refresh` asks (every
        /submit), keeping the fastest time in the results database; the first measurement is the
        fastest of two timed runs. One timing taken while the machine was busy would otherwise
        inflate every later speedup. 0 if it cannot run."""
        with self.judge.baseline_lock:
            known = results_db.get_baseline(self.engine, manifest.name, preset, precision, seed)
            if known is not None and not refresh:
                return known
            timed: list[int] = []
            # Two runs on the first measurement: a lone scheduling outlier would be stored.
            for _ in range(2 if known is None else 1):
                run = self.baseline_run(manifest, precision, sizes, scalars, problems)
                if run is not None:
                    timed.append(run.kernel_ns)
            if not timed:
                return known or 0
            fastest = min(timed) if known is None else min(known, *timed)
            if fastest != known:
                results_db.set_baseline(
                    self.engine, manifest.name, preset, precision, seed, fastest
                )
            return fastest

    def baseline_run(
        self,
        manifest: Manifest,
        precision: str,
        sizes: dict[str, int],
        scalars: dict[str, float],
        problems: list[RepProblem],
    ) -> runner.RunResult | None:
        """One timed run of the kernel's reference C solution (built as a C submission is, cached)
        on the grade's own rep inputs, in a box like any submission; None where it does not build or
        run."""
        library = self.baseline_library(manifest)
        if library is None:
            return None
        trailing = abi.trailing_arguments(manifest, sizes, scalars, precision)
        reps = [runner.RepInput(p.inputs, trailing) for p in problems]
        run = self.run(library, manifest, precision, sizes, reps, kernels.pointer_names(manifest))
        return run if run.ok else None


class SparseGrader(DenseGrader):
    """A single-node grade of a kernel with a sparse array: each rep's sparse arrays converted to
    the requested format (timed into convert_in_ns), its dense arrays as a dense grade's."""

    kind = "sparse"

    def rep_inputs(
        self,
        manifest: Manifest,
        granted: Requests,
        precision: str,
        sizes: dict[str, int],
        scalars: dict[str, float],
        problems: list[RepProblem],
        pointers: list[str],
    ) -> tuple[list[runner.RepInput], list[str]]:
        """Each rep's arrays with its sparse ones in the requested format, converted per rep and
        timed (the first rep loads the format's library untimed first), and the pointer order
        hb.sparse expands; ValueError where a sparse conversion fails."""
        dense = self.dense_arrays(granted, manifest, precision)
        reps = []
        for index, rep in enumerate(problems):
            prepared = sparse.prepare_sparse_run(
                manifest, granted, precision, sizes, scalars, rep.inputs, dense, warm=index == 0
            )
            pointers = prepared.pointers
            reps.append(runner.RepInput(prepared.inputs, prepared.trailing_arguments,
                                        prepared.convert_in_ns))  # fmt: skip
        return reps, pointers

    def dense_arrays(
        self, granted: Requests, manifest: Manifest, precision: str
    ) -> dict[str, Any] | None:
        """relayout's pointers for a sparse kernel's dense arrays when the request casts or lays
        them out (hb.sparse expands the sparse ones); None keeps the manifest's."""
        if not sparse.has_dense_operations(granted):
            return None
        return dict(relayout_check(granted, manifest, precision).arrays or {})


class DistributedGrader(Grader):
    """A grade on MPI ranks: the generated driver built with the submission, run at mpi.ranks
    under the configured launcher, the gathered outputs compared over the whole domain, and the
    kernel's solution_mpi.c under its default distribution as the baseline."""

    kind = "distributed"

    def grade(self, job: Job) -> GradeOutcome:
        """A distributed grade, recorded like a single-node one: native_ns is the credited repeat
        (the fastest, each timed by the supervisor across ranks), the conversions its casts;
        the plan is the request as checking lowered it at mpi.ranks and the graded sizes."""
        submission, manifest, problem, granted = (
            job.submission,
            job.manifest,
            job.problem,
            job.granted,
        )
        outcome, seed = job.outcome, job.seed
        plan = job.checked.distribution() if job.checked is not None else None
        # The calls of a C submission on host tiles are read (mpicc -c); a device one is CUDA C++
        # that nvcc builds.
        if submission.language == "c" and not requested_device_arrays(
            granted, manifest, self.config.mpi.residency
        ):
            outcome = self.with_calls(outcome, calls.distributed_calls(
                submission.source, self.config.sandbox_dir, self.build_limits))  # fmt: skip
            if outcome.reason is not None:
                return outcome
        try:
            grade = self.mpi_grade(
                manifest, granted, submission.source, problem, outcome.preset, seed,
                submission.language, plan,
            )  # fmt: skip
        except (RequestError, ValueError, OSError) as error:
            return outcome.failed(f"the distributed grade could not run: {error}")
        outcome.distributed = grade.to_json()
        if grade.failure is not None:
            return outcome.failed(grade.failure)
        if self.config.grading.timing == "paired" and grade.correct:
            paired_outcome = self.paired(job, outcome, grade, plan)
            if paired_outcome is not None:
                return paired_outcome
        native_ns = round((grade.credited_s or 0.0) * 1e9)
        baseline_ns = self.baseline(manifest, problem, outcome.preset, seed)
        ratio = speedup(baseline_ns, native_ns) if grade.correct else 0.0
        return self.credited(
            outcome, grade.correct, ratio, reason="; ".join(grade.mismatches) or None,
            native_ns=native_ns, baseline_ns=baseline_ns,
            convert_in_ns=round(grade.convert_in_s * 1e9),
            convert_out_ns=round(grade.convert_out_s * 1e9),
            max_rel_error=grade.max_relative_error,
        )  # fmt: skip

    def paired(self, job: Job, outcome: GradeOutcome, first: DistributedGrade,
               plan: Distribution | None) -> GradeOutcome | None:  # fmt: skip
        """A paired distributed grade: the kernel's solution_mpi.c under its default
        distribution and the submission run alternately as whole MPI runs of the same ranks,
        launcher and inputs (the submission's run already made opens the first round, the
        baseline's opens the next), rep i of one beside rep i of the other; at least
        grading.box_pairs rounds, then the noise gate's, each round after the first on inputs of
        a seed of its own. None where the kernel has no MPI baseline at these ranks (the grade is
        then credited as before, against none)."""
        manifest, problem, grading = job.manifest, job.problem, self.config.grading
        found = self.mpi_baseline(manifest, problem)
        if found is None:
            return None
        default, solution = found
        pairs, preset = Pairs(), outcome.preset
        for number in range(max(1, grading.max_pairs // max(grading.reps, 1))):
            seed = job.seed if number == 0 else rep_seed(job.seed, 1 << 20 | number)
            runs: dict[str, DistributedGrade] = {}
            order = ("submission", "baseline") if number % 2 == 0 else ("baseline", "submission")
            for side in order:
                if side == "submission" and number == 0:
                    runs[side] = first
                elif side == "submission":
                    runs[side] = self.mpi_grade(
                        manifest, job.granted, job.submission.source, problem, preset, seed,
                        job.submission.language, plan,
                    )  # fmt: skip
                else:
                    runs[side] = self.mpi_grade(manifest, default, solution, problem, preset,
                                                seed)  # fmt: skip
            mine, theirs = runs["submission"], runs["baseline"]
            if mine.failure is not None or not mine.correct:
                failed = outcome.model_copy(update={"distributed": mine.to_json()})
                return failed.failed(mine.failure or "; ".join(mine.mismatches))
            if theirs.failure is not None or not theirs.correct:
                return outcome.failed(
                    "harness: the kernel's MPI baseline failed beside the submission"
                )
            for b, s in zip(theirs.rep_seconds, mine.rep_seconds, strict=False):
                pairs.add(round(b * 1e9), round(s * 1e9), 0, 0)
            if number + 1 >= grading.box_pairs and self.gate_closed(pairs):
                break
        return self.credit_pairs(
            outcome, True, None, pairs,
            convert_in_ns=round(first.convert_in_s * 1e9),
            convert_out_ns=round(first.convert_out_s * 1e9),
            max_rel_error=first.max_relative_error,
        )  # fmt: skip

    def mpi_grade(
        self, manifest: Manifest, requests: Requests, source: str, problem: Problem,
        preset: str, seed: int, language: str = "c", plan: Distribution | None = None,
    ) -> DistributedGrade:  # fmt: skip
        """One distributed grade at mpi.ranks under the configured launcher, in a private run
        directory that is removed afterwards; builds are cached under the build cache."""
        template, hostfile, _ = launcher_settings(self.config.mpi)
        self.config.sandbox_dir.mkdir(parents=True, exist_ok=True)
        directory = Path(tempfile.mkdtemp(prefix="mpi-", dir=self.config.sandbox_dir))
        try:
            return grade_submission(
                manifest, requests, source, problem.precision, ranks=self.config.mpi.ranks,
                directory=directory, preset=preset, seed=seed, reps=self.config.grading.reps,
                warmup=self.config.grading.warmup, launcher=template, hostfile=hostfile,
                timeout_s=self.config.sandbox.timeout_s, band=problem.band,
                limits=self.limits,
                build_directory=self.config.build_cache_dir / "mpi",
                residency=self.config.mpi.residency, language=language, plan=plan,
            )  # fmt: skip
        finally:
            shutil.rmtree(directory, ignore_errors=True)

    def mpi_baseline(self, manifest: Manifest, problem: Problem) -> tuple[Requests, str] | None:
        """The kernel's MPI baseline at mpi.ranks: its default distribution and solution_mpi.c's
        source; None without an MPI solution or where the default grid does not span the ranks."""
        ranks = self.config.mpi.ranks
        solution = kernels.CATALOG_DIR / manifest.name / "solution_mpi.c"
        if not solution.is_file():
            return None
        default = default_requests(manifest, ranks)
        if distributed_refusal(default, manifest, problem.precision, ranks=ranks):
            return None
        return default, solution.read_text()

    def baseline(self, manifest: Manifest, problem: Problem, preset: str, seed: int) -> int:
        """The kernel's solution_mpi.c graded under its default distribution at mpi.ranks, once
        per (kernel, preset, precision, seed, ranks) and kept in the baselines table under the
        datatype `<precision>@mpi<ranks>`; 0 where it cannot run (no MPI solution, a default grid
        that does not span mpi.ranks, a failed run)."""
        key = f"{problem.precision}@mpi{self.config.mpi.ranks}"
        with self.judge.baseline_lock:
            known = results_db.get_baseline(self.engine, manifest.name, preset, key, seed)
            if known is not None:
                return known
            found = self.mpi_baseline(manifest, problem)
            if found is None:
                return 0
            default, solution = found
            grade = self.mpi_grade(manifest, default, solution, problem, preset, seed)
            if not grade.correct or grade.credited_s is None:
                return 0
            baseline_ns = round(grade.credited_s * 1e9)
            results_db.set_baseline(self.engine, manifest.name, preset, key, seed, baseline_ns)
            return baseline_ns


def grader_for(graders: dict[str, Grader], manifest: Manifest, granted: Requests) -> Grader:
    """The grader of a call: distributed with startup.grid, sparse for a kernel with a sparse
    array, dense otherwise."""
    if granted.startup.grid:
        return graders["distributed"]
    return graders["sparse" if sparse.has_sparse(manifest) else "dense"]
