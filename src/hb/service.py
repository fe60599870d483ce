"""The judge as a service: JudgeHandler (check a request, build, run, grade, record) and the
FastAPI application over it (/health, /tasks, /task/{kernel}, /score, /submit, /requests/check)."""

from __future__ import annotations

import functools
import hashlib
import json
import shutil
import tempfile
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np
from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from hb import (
    abi,
    build,
    kernels,
    languages,
    mpi_descriptor,
    mpi_driver,
    prompts,
    results_db,
    runner,
    sandbox,
    sparse,
)
from hb.config import Config
from hb.envelope import RequestsCheckBody, Submission
from hb.grading import Problem, compare_outputs, resolve_problem, speedup
from hb.kernels import Manifest
from hb.precision import precision_of
from hb.requests_api import (
    RequestAllowances,
    RequestError,
    Requests,
    RequestsCheck,
    cast_refusal,
)

SHUFFLE_PRESET = "S"
# The operations that lay arrays out over a processor grid (they need startup.grid).
DISTRIBUTED_ACTIONS = ("distribute", "replicate", "place")


class DistributedRequestsCheck(RequestsCheck):
    """/requests/check's answer on a distributed request: relayout's RequestsCheck (arrays, the
    plan at mpi.ranks) with the MPI entry point as its signature, and `distribution`: which size
    symbols arrive local or global and each rank's coordinates, size values and tile extents at
    the grading preset (mpi_driver.describe_plan)."""

    distribution: dict[str, Any] | None = None


class RequestFault(Exception):
    """A request the judge refuses before building: a 400 whose detail names the entry."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class UnknownKernel(KeyError):
    """A kernel the catalog lacks: a 404."""


# ---------------------------------------------------------------------------------------------
# The spec's named refusal steps, as functions of their inputs.


def with_task_grid(
    requests: Requests, manifest: Manifest, allowances: RequestAllowances
) -> Requests:
    """Under requests.grid: task the judge sets the kernel's default grid: the request as granted."""
    if allowances.grid != "task" or requests.startup.grid:
        return requests
    grid = mpi_descriptor.default_grid(manifest)
    if not grid:
        return requests
    document = json.loads(requests.to_json() or "{}")
    document.setdefault("startup", {})["grid"] = grid
    return Requests.validate(document)


def shuffle_refusal(requests: Requests, manifest: Manifest, precision: str) -> str | None:
    """A shuffle whose f and f_inv are not inverse bijections at preset S's sizes (relayout checks
    them exhaustively once every extent is a constant, up to BIJECTION_CHECK_LIMIT cells)."""
    if not any(op.action == "shuffle" for op in requests.operations):
        return None
    sizes = manifest.preset_sizes(SHUFFLE_PRESET)
    try:
        answer = relayout_check(requests, manifest, precision, sizes)
    except RequestError as error:
        return str(error)
    return (
        None
        if answer.accepted
        else f"{answer.refusal} (checked at preset {SHUFFLE_PRESET}: {sizes})"
    )


def requests_refusal(
    requests: Requests,
    manifest: Manifest,
    language: str,
    allowances: RequestAllowances,
    config: Config,
    problem_precision: str,
    submitted: Requests | None = None,
) -> str | None:
    """Why the judge refuses this request (as granted) before any build, in the spec's order: the
    setup's allowances (judged on the request as submitted, since a grid the judge injected under
    requests.grid: task is no fault of the submitter), the fp64-only cast refusal, the startup.load
    catalog, distribution, and the kernel's own checks (relayout's, then the shuffle bijection)."""
    refusal = allowances.refusal(
        submitted if submitted is not None else requests,
        distributed=bool(requests.startup.grid),
    )
    if refusal is None:
        refusal = cast_refusal(
            requests,
            manifest.name,
            manifest.fp64_only,
            config.grading.precision_override_kernels,
            # The override is written for the precision, however the datatype is spelled
            # (float32 and fp32 alike).
            precision_of(config.grading.datatype),
        )
    if refusal is None:
        refusal = sandbox.catalog_refusal(language, list(requests.startup.load))
    if requests.startup.grid or config.mpi.grade_distributed:
        # The grid's checks replace the single-node ones: relayout lowers the request at
        # mpi.ranks (Requests.plan) inside distributed_request_refusal.
        if refusal is None:
            refusal = distributed_request_refusal(
                requests, manifest, language, config, problem_precision
            )
        return refusal
    if refusal is None and sparse.has_sparse(manifest):
        refusal = sparse.sparse_refusal(requests, manifest)
    if refusal is None and requests.operations:
        refusal = _relayout_refusal(requests, manifest, problem_precision)
    if refusal is None:
        refusal = shuffle_refusal(requests, manifest, problem_precision)
    return refusal


def distributed_request_refusal(
    requests: Requests, manifest: Manifest, language: str, config: Config, precision: str
) -> str | None:
    """Why a distributed grade (startup.grid, or any request under mpi.grade_distributed) cannot
    go ahead: a C delivery, a grid, then mpi_driver.distributed_refusal (the kernel's arrays, the
    grid spanning mpi.ranks, the lowering, the plan's allowlists, place and residency (device
    tiles need a CUDA device) and the casts). A kernel with a sparse array is refused first, with the grid or without it:
    distributing a sparse format is not implemented yet (spec §3.2)."""
    mpi = config.mpi
    if sparse.has_sparse(manifest):
        refusal = None if mpi.grade_distributed else sparse.sparse_refusal(requests, manifest)
        if refusal is None:
            # Under mpi.grade_distributed every grade is distributed (a grid the judge injected
            # is no fault of the submitter), so no request of this kernel can be graded.
            names = ", ".join(sparse.sparse_arrays(manifest))
            refusal = (
                f"startup.grid: this setup grades distributed (mpi.grade_distributed), and "
                f"{manifest.name} has the sparse array(s) {names}: distributing a sparse format "
                "is not implemented yet, so this setup cannot grade it"
            )
        return refusal
    if not requests.startup.grid:
        return (
            "startup.grid: this setup grades distributed (mpi.grade_distributed), so the request "
            "needs startup.grid and a distribute or replicate operation for every array"
        )
    if language != "c":
        return (
            f"language: a distributed grade builds the submission with MPICH's mpicc, so it takes "
            f"C only (got {language!r})"
        )
    return mpi_driver.distributed_refusal(
        requests,
        manifest,
        precision,
        ranks=mpi.ranks,
        replicatable_allowlist=mpi.replicatable_allowlist,
        layout_flexible_allowlist=mpi.layout_flexible_allowlist,
        residency=mpi.residency,
    )


def _relayout_refusal(requests: Requests, manifest: Manifest, precision: str) -> str | None:
    try:
        answer = relayout_check(requests, manifest, precision)
    except RequestError as error:
        return str(error)
    return None if answer.accepted else str(answer.refusal)


def relayout_check(
    requests: Requests, manifest: Manifest, precision: str, sizes: dict[str, int] | None = None
) -> RequestsCheck:
    """relayout's answer for the request over the kernel's arrays, with the kernel's C signature
    (none for a kernel with a sparse array: relayout writes no sparse pointers, hb.sparse does)."""
    from relayout.check import check_requests

    answer: RequestsCheck = check_requests(
        requests,
        abi.relayout_arrays(manifest, precision),
        sizes,
        kernel=None if sparse.has_sparse(manifest) else abi.symbol(manifest, precision),
        scalars=abi.abi_scalars(manifest, precision),
    )
    return answer


def refused_requests(
    engine: Any, submission: Submission, granted: Requests, refusal: str, route: str, datatype: str
) -> int:
    """Record a refused call (its request validated; a malformed one records nothing): a grade row
    on route `<route>.refused`, incorrect, with the refusal as its detail."""
    return results_db.add_grade(
        engine,
        {
            "kernel": submission.kernel,
            "preset": submission.preset or "",
            "datatype": datatype,
            "language": submission.language,
            "route": f"{route}.refused",
            "correct": False,
            "source_sha256": hashlib.sha256(submission.source.encode()).hexdigest(),
            "detail": refusal,
        },
        granted,
    )


# ---------------------------------------------------------------------------------------------


class JudgeHandler:
    """One judge: its configuration, allowances, database and caches."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.allowances = RequestAllowances.from_config(config)
        config.data_dir.mkdir(parents=True, exist_ok=True)
        self.engine = results_db.connect(config.database_url)
        box = config.sandbox
        self.limits = sandbox.Limits(
            timeout_s=box.timeout_s,
            cpu_s=box.cpu_s,
            memory_bytes=box.memory_mb << 20,
            nproc=box.nproc,
            fsize_bytes=box.fsize_mb << 20,
            uid_base=box.uid_base,
            uid_count=box.uid_count,
        )
        self.build_limits = sandbox.Limits(
            timeout_s=box.build_timeout_s,
            cpu_s=max(box.cpu_s, 120),
            memory_bytes=max(box.memory_mb, 4096) << 20,
            nproc=box.nproc,
            fsize_bytes=box.fsize_mb << 20,
            uid_base=box.uid_base,
            uid_count=box.uid_count,
        )
        self._grade_slots = threading.Semaphore(config.service.workers)
        self._baseline_lock = threading.Lock()
        self._references: OrderedDict[tuple, dict[str, np.ndarray]] = OrderedDict()
        self._references_lock = threading.Lock()

    # -- catalog ---------------------------------------------------------------------------------

    def manifest(self, kernel: str) -> Manifest:
        try:
            return kernels.load_manifest(kernel)
        except KeyError as error:
            raise UnknownKernel(str(error.args[0])) from None

    def problem(self, manifest: Manifest) -> Problem:
        datatype = precision_of(self.config.grading.datatype)
        resolved = resolve_problem(
            manifest.name,
            manifest.precisions,
            datatype,
            self.config.grading.precision_override_kernels,
        )
        if isinstance(resolved, str):
            raise RequestFault(f"datatype: {resolved}")
        return resolved

    def _precision_override(self, manifest: Manifest) -> str | None:
        """The band a grading.precision_override_kernels entry grades this kernel in, or None."""
        resolved = resolve_problem(
            manifest.name,
            manifest.precisions,
            precision_of(self.config.grading.datatype),
            self.config.grading.precision_override_kernels,
        )
        return None if isinstance(resolved, str) else resolved.precision_override

    def task(self, kernel: str) -> dict[str, Any]:
        """GET /task/{kernel}: arrays, presets, the default request's C signature and the offer."""
        manifest = self.manifest(kernel)
        precision = precision_of(self.config.grading.datatype)
        if precision not in manifest.precisions:
            precision = manifest.precisions[0]
        context = prompts.build_context(
            manifest,
            self.allowances,
            precision,
            distributed=self.config.mpi.grade_distributed,
            precision_override=self._precision_override(manifest),
        )
        return {
            "kernel": manifest.name,
            "summary": manifest.summary,
            "precision": precision,
            "precisions": manifest.precisions,
            "sizes": manifest.sizes,
            "arrays": abi.relayout_arrays(manifest, precision),
            "scalars": {s.name: {"type": s.type, "value": s.value} for s in manifest.scalars},
            "presets": manifest.presets,
            "workspace_bytes": manifest.workspace_bytes,
            "signature": abi.default_signature(manifest, precision),
            "request_actions": context.request_actions.model_dump(mode="json"),
            "requests_section": context.requests_section,
            "libraries": languages.offered_libraries("c"),
            **self._task_distribution(manifest, precision),
        }

    def _task_distribution(self, manifest: Manifest, precision: str) -> dict[str, Any]:
        """The task's distributed side where the setup allows distribute: the MPI entry point,
        the kernel's default distribution as short-form operations, who sets the grid, and that
        distribution described at mpi.ranks (size symbols local or global, each rank's tiles)."""
        if "distribute" not in self.allowances.allow or not manifest.distribution:
            return {}
        kernel = mpi_driver.DistributedKernel.from_manifest(manifest)
        refusal = kernel.refusal()
        if refusal is not None:
            return {"mpi": {"refusal": refusal}}
        ranks = self.config.mpi.ranks
        default = mpi_descriptor.default_requests(manifest, ranks)
        described: dict[str, Any] = {
            "ranks": ranks,
            "rank_counts": list(self.config.mpi.rank_counts),
            "grid": mpi_descriptor.default_grid(manifest),
            "grid_set_by": self.allowances.grid,
            "signature": kernel.c_prototype(precision) + ";",
            "default_requests": mpi_descriptor.json_of(default),
        }
        sizes = manifest.preset_sizes(self.config.grading.preset)
        try:
            plan = mpi_driver.lower_plan(default, manifest, precision, ranks, sizes)
        except (RequestError, ValueError) as error:
            described["default_distribution_refusal"] = str(error)
        else:
            described["default_distribution"] = mpi_driver.describe_plan(kernel, plan, sizes)
        return {"mpi": described}

    def tasks(self) -> list[dict[str, Any]]:
        return [
            {"kernel": name, "summary": kernels.load_manifest(name).summary}
            for name in kernels.kernel_names()
        ]

    # -- requests --------------------------------------------------------------------------------

    def granted_requests(self, requests: Requests, manifest: Manifest) -> Requests:
        """The request as granted: under requests.grid: task with the task's grid on a distributed
        setup, or where distribute is allowed and the request distributes, replicates or places
        an array (graded and refused calls alike record it). Without the grid such a request
        could not be graded at all in task mode, since a submission may not name one."""
        distributes = "distribute" in self.allowances.allow and any(
            operation.action in DISTRIBUTED_ACTIONS for operation in requests.operations
        )
        if self.config.mpi.grade_distributed or distributes:
            return with_task_grid(requests, manifest, self.allowances)
        return requests

    def refusal(
        self, submitted: Requests, granted: Requests, manifest: Manifest, language: str
    ) -> str | None:
        try:
            languages.language(language)
        except ValueError as error:
            return f"language: {error}"
        return requests_refusal(
            granted,
            manifest,
            language,
            self.allowances,
            self.config,
            self.problem(manifest).precision,
            submitted=submitted,
        )

    def check(self, body: RequestsCheckBody) -> dict[str, Any]:
        """POST /requests/check: the answer a submission would get, building nothing; a refusal
        (the datatype's too) is accepted: false, only a malformed request a 400."""
        manifest = self.manifest(body.kernel)
        granted = self.granted_requests(body.requests, manifest)
        try:
            refusal = self.refusal(body.requests, granted, manifest, body.language)
            precision = self.problem(manifest).precision
        except RequestFault as fault:
            return {"accepted": False, "refusal": fault.detail}
        if refusal is not None:
            return {"accepted": False, "refusal": refusal}
        if granted.startup.grid:
            return self._distributed_check(granted, manifest, precision)
        if sparse.has_sparse(manifest):
            return sparse.check_answer(
                manifest, granted, precision, self._dense_arrays(granted, manifest, precision)
            )
        answer = relayout_check(granted, manifest, precision)
        document: dict[str, Any] = answer.model_dump(mode="json", exclude_none=True)
        return document

    def _distributed_check(
        self, granted: Requests, manifest: Manifest, precision: str
    ) -> dict[str, Any]:
        from relayout.check import check_requests

        ranks = self.config.mpi.ranks
        answer = check_requests(granted, abi.relayout_arrays(manifest, precision), None, ranks)
        if not answer.accepted:
            return answer.model_dump(mode="json", exclude_none=True)
        kernel = mpi_driver.DistributedKernel.from_manifest(manifest)
        sizes = manifest.preset_sizes(self.config.grading.preset)
        try:
            plan = mpi_driver.lower_plan(granted, manifest, precision, ranks, sizes)
        except (RequestError, ValueError) as error:
            preset = self.config.grading.preset
            return {"accepted": False, "refusal": f"{error} (lowered at preset {preset}: {sizes})"}
        casts = mpi_driver.requested_casts(granted)
        checked = DistributedRequestsCheck(
            **answer.model_dump(exclude={"signature"}),
            signature=mpi_driver.entry_signature(kernel, precision, casts, plan),
            distribution={
                "preset": self.config.grading.preset,
                **mpi_driver.describe_plan(kernel, plan, sizes),
            },
        )
        document: dict[str, Any] = checked.model_dump(mode="json", exclude_none=True)
        return document

    # -- grading ---------------------------------------------------------------------------------

    def grade(self, submission: Submission, route: str) -> dict[str, Any]:
        """Build, run and grade one submission and record it; RequestFault before any build."""
        manifest = self.manifest(submission.kernel)
        preset = submission.preset or self.config.grading.preset
        if preset not in manifest.presets:
            raise RequestFault(f"preset: {preset!r} is not one of {list(manifest.presets)}")
        submission = submission.model_copy(update={"preset": preset})
        problem = self.problem(manifest)
        granted = self.granted_requests(submission.requests, manifest)
        refusal = self.refusal(submission.requests, granted, manifest, submission.language)
        if refusal is not None:
            refused_requests(self.engine, submission, granted, refusal, route, problem.precision)
            raise RequestFault(refusal)
        with self._grade_slots:
            outcome = self._grade_unrecorded(submission, manifest, problem, granted, route)
        grade_id = results_db.add_grade(self.engine, outcome.pop("record"), granted)
        return {"grade_id": grade_id, **outcome}

    def _seed(self, route: str) -> int:
        return (
            self.config.grading.public_seed if route == "score" else self.config.grading.hidden_seed
        )

    def _grade_unrecorded(
        self,
        submission: Submission,
        manifest: Manifest,
        problem: Problem,
        granted: Requests,
        route: str,
    ) -> dict[str, Any]:
        preset = submission.preset or self.config.grading.preset
        precision = problem.precision
        seed = self._seed(route)
        libraries = list(granted.startup.load)
        record: dict[str, Any] = {
            "kernel": manifest.name,
            "preset": preset,
            "datatype": precision,
            "language": submission.language,
            "route": route,
            "correct": False,
            "precision_override": problem.precision_override,
            "source_sha256": hashlib.sha256(submission.source.encode()).hexdigest(),
        }
        response: dict[str, Any] = {
            "kernel": manifest.name,
            "preset": preset,
            "datatype": precision,
            "route": route,
            "correct": False,
            "reason": None,
            "requests": json.loads(granted.to_json() or "{}"),
        }
        if granted.startup.grid:
            return self._grade_distributed(
                submission, manifest, problem, granted, seed, record, response
            )
        built = build.build(
            submission.source,
            submission.language,
            libraries,
            self.config.build_cache_dir,
            self.build_limits,
        )
        response["build"] = {"cached": built.cached, "build_ns": built.build_ns}
        if not built.ok or built.library is None:
            return self._failed(record, response, built.reason or "build failed", built.log)
        sizes = manifest.preset_sizes(preset)
        scalars = manifest.preset_scalars(preset)
        inputs = kernels.make_inputs(manifest, sizes, seed, np.dtype(_numpy_name(precision)))
        try:
            conversion, pointers, conversion_files = self._conversion(
                granted, manifest, precision, sizes
            )
        except Exception as error:  # relayout's build or lowering: the grade fails, the judge stays
            reason = (
                f"the request's conversion kernels did not build: {type(error).__name__}: {error}"
            )
            return self._failed(record, response, reason)
        # A sparse array reaches the kernel in its requested format, converted once per grade
        # (timed into convert_in_ns); the reference and the baseline keep the canonical inputs.
        run_inputs, trailing, sparse_ns = inputs, None, 0
        if sparse.has_sparse(manifest):
            try:
                prepared = sparse.prepare_sparse_run(
                    manifest,
                    granted,
                    precision,
                    sizes,
                    scalars,
                    inputs,
                    self._dense_arrays(granted, manifest, precision),
                )
            except ValueError as error:
                return self._failed(record, response, f"the sparse conversion failed: {error}")
            run_inputs, pointers = prepared.inputs, prepared.pointers
            trailing, sparse_ns = prepared.trailing_arguments, prepared.convert_in_ns
        run = self._run(
            built.library,
            manifest,
            precision,
            sizes,
            scalars,
            run_inputs,
            pointers,
            conversion,
            conversion_files,
            trailing,
        )
        response["protections"] = run.protections
        if not run.ok:
            return self._failed(record, response, run.reason or "the run failed")
        expected = self._reference(manifest, preset, precision, seed, inputs, sizes, scalars)
        comparison = compare_outputs(run.outputs, expected, problem.band)
        baseline_ns = self._baseline(
            manifest, preset, precision, seed, sizes, scalars, inputs, refresh=route == "submit"
        )
        ratio = speedup(baseline_ns, run.kernel_ns) if comparison.correct else 0.0
        record.update(
            correct=comparison.correct,
            native_ns=run.kernel_ns,
            baseline_ns=baseline_ns,
            speedup=ratio,
            convert_in_ns=run.convert_in_ns + sparse_ns,
            convert_out_ns=run.convert_out_ns,
            max_rel_error=comparison.max_relative_error
            if np.isfinite(comparison.max_relative_error)
            else None,
            detail=comparison.reason or "",
        )
        response.update(
            correct=comparison.correct,
            reason=comparison.reason,
            native_ns=run.kernel_ns,
            baseline_ns=baseline_ns,
            speedup=ratio,
            convert_in_ns=run.convert_in_ns + sparse_ns,
            convert_out_ns=run.convert_out_ns,
            max_rel_error=record["max_rel_error"],
            precision_override=problem.precision_override,
            run_wall_s=run.wall_s,
        )
        return {**response, "record": record}

    def _mpi_grade(
        self, manifest: Manifest, requests: Requests, source: str, problem: Problem,
        preset: str, seed: int,
    ) -> mpi_driver.DistributedGrade:  # fmt: skip
        """One distributed grade at mpi.ranks under the configured launcher, in a private run
        directory that is removed afterwards; builds are cached under the build cache."""
        template, hostfile, _ = mpi_driver.launcher_settings(self.config.mpi)
        self.config.sandbox_dir.mkdir(parents=True, exist_ok=True)
        directory = Path(tempfile.mkdtemp(prefix="mpi-", dir=self.config.sandbox_dir))
        try:
            return mpi_driver.grade_submission(
                manifest, requests, source, problem.precision, ranks=self.config.mpi.ranks,
                directory=directory, preset=preset, seed=seed, reps=self.config.grading.reps,
                warmup=self.config.grading.warmup, launcher=template, hostfile=hostfile,
                timeout_s=self.config.sandbox.timeout_s, band=problem.band,
                limits=mpi_driver.rank_limits(self.config.sandbox),
                build_directory=self.config.build_cache_dir / "mpi",
                residency=self.config.mpi.residency,
            )  # fmt: skip
        finally:
            shutil.rmtree(directory, ignore_errors=True)

    def _grade_distributed(
        self,
        submission: Submission,
        manifest: Manifest,
        problem: Problem,
        granted: Requests,
        seed: int,
        record: dict[str, Any],
        response: dict[str, Any],
    ) -> dict[str, Any]:
        """A distributed grade, recorded like a single-node one: native_ns is the credited repeat
        (fastest, each timed as the MAX over ranks), the conversions its cast brackets."""
        preset = str(record["preset"])
        try:
            grade = self._mpi_grade(manifest, granted, submission.source, problem, preset, seed)
        except (RequestError, ValueError, OSError) as error:
            return self._failed(record, response, f"the distributed grade could not run: {error}")
        response["distributed"] = grade.to_json()
        if grade.failure is not None:
            return self._failed(record, response, grade.failure)
        native_ns = round((grade.credited_s or 0.0) * 1e9)
        baseline_ns = self._distributed_baseline(manifest, problem, preset, seed)
        ratio = speedup(baseline_ns, native_ns) if grade.correct else 0.0
        reason = "; ".join(grade.mismatches) or None
        max_rel_error = (
            grade.max_relative_error
            if grade.max_relative_error is not None and np.isfinite(grade.max_relative_error)
            else None
        )
        timings = {
            "native_ns": native_ns,
            "baseline_ns": baseline_ns,
            "speedup": ratio,
            "convert_in_ns": round(grade.convert_in_s * 1e9),
            "convert_out_ns": round(grade.convert_out_s * 1e9),
            "max_rel_error": max_rel_error,
        }
        record.update(correct=grade.correct, detail=reason or "", **timings)
        response.update(
            correct=grade.correct,
            reason=reason,
            precision_override=problem.precision_override,
            **timings,
        )
        return {**response, "record": record}

    def _distributed_baseline(
        self, manifest: Manifest, problem: Problem, preset: str, seed: int
    ) -> int:
        """The kernel's solution_mpi.c graded under its default distribution at mpi.ranks, once
        per (kernel, preset, precision, seed, ranks) and kept in the baselines table under the
        datatype `<precision>@mpi<ranks>`; 0 where it cannot run (no MPI solution, a default grid
        that does not span mpi.ranks, a failed run)."""
        ranks = self.config.mpi.ranks
        key = f"{problem.precision}@mpi{ranks}"
        solution = kernels.CATALOG_DIR / manifest.name / "solution_mpi.c"
        with self._baseline_lock:
            known = results_db.get_baseline(self.engine, manifest.name, preset, key, seed)
            if known is not None:
                return known
            if not solution.is_file():
                return 0
            default = mpi_descriptor.default_requests(manifest, ranks)
            if mpi_driver.distributed_refusal(default, manifest, problem.precision, ranks=ranks):
                return 0
            grade = self._mpi_grade(manifest, default, solution.read_text(), problem, preset, seed)
            if not grade.correct or grade.credited_s is None:
                return 0
            baseline_ns = round(grade.credited_s * 1e9)
            results_db.set_baseline(self.engine, manifest.name, preset, key, seed, baseline_ns)
            return baseline_ns

    def _failed(
        self, record: dict[str, Any], response: dict[str, Any], reason: str, log: str = ""
    ) -> dict[str, Any]:
        record["detail"] = reason if not log else f"{reason}\n{log}"
        response["reason"] = reason
        if log:
            response["log"] = log
        return {**response, "record": record}

    def _dense_arrays(
        self, granted: Requests, manifest: Manifest, precision: str
    ) -> dict[str, Any] | None:
        """relayout's pointers for a sparse kernel's dense arrays when the request casts or lays
        them out (hb.sparse expands the sparse ones); None keeps the manifest's."""
        if not sparse.has_dense_operations(granted):
            return None
        return dict(relayout_check(granted, manifest, precision).arrays or {})

    def _conversion(
        self, granted: Requests, manifest: Manifest, precision: str, sizes: dict[str, int]
    ) -> tuple[dict[str, Any] | None, list[str], Path | None]:
        """The request's conversion program (built here, so the sandboxed run finds it cached),
        and the kernel's pointer order. A format operation converts nothing here (hb.sparse does,
        once per grade)."""
        if not sparse.has_dense_operations(granted):
            return None, kernels.pointer_names(manifest), None
        from hb.requests_api import compile_conversions

        arrays = abi.relayout_arrays(manifest, precision)
        answer = relayout_check(granted, manifest, precision)
        pointers = list(answer.arrays or {})
        key = hashlib.sha256(
            (granted.to_json() + json.dumps(arrays, sort_keys=True)).encode()
        ).hexdigest()
        cache_dir = self.config.data_dir / "conversion-cache" / key[:2] / key
        compile_conversions(granted.to_json(), arrays, cache_dir)
        return (
            {"requests": granted.to_json(), "arrays": arrays, "sizes": sizes},
            pointers,
            cache_dir,
        )

    def _run(
        self,
        library: Path,
        manifest: Manifest,
        precision: str,
        sizes: dict[str, int],
        scalars: dict[str, float],
        inputs: dict[str, np.ndarray],
        pointers: list[str],
        conversion: dict[str, Any] | None = None,
        conversion_files: Path | None = None,
        trailing: list[dict[str, Any]] | None = None,
    ) -> runner.RunResult:
        """One sandboxed run; `trailing` replaces the arguments after the pointers (a sparse
        format's size arguments sit between the size symbols and the scalars)."""
        if trailing is None:
            trailing = abi.trailing_arguments(manifest, sizes, scalars, precision)
        return runner.run_kernel(
            library=library,
            symbol=abi.symbol(manifest, precision),
            pointers=pointers,
            trailing_arguments=trailing,
            workspace_bytes=manifest.workspace_size(sizes),
            inputs=inputs,
            output_names=kernels.output_names(manifest),
            reps=self.config.grading.reps,
            warmup=self.config.grading.warmup,
            workdir_root=self.config.sandbox_dir,
            limits=self.limits,
            threads=self.config.sandbox.threads,
            conversion=conversion,
            conversion_files=conversion_files,
        )

    def _reference(
        self,
        manifest: Manifest,
        preset: str,
        precision: str,
        seed: int,
        inputs: dict[str, np.ndarray],
        sizes: dict[str, int],
        scalars: dict[str, float],
    ) -> dict[str, np.ndarray]:
        key = (manifest.name, preset, precision, seed)
        with self._references_lock:
            if key in self._references:
                self._references.move_to_end(key)
                return self._references[key]
        expected = kernels.reference_outputs(manifest, inputs, sizes, scalars)
        with self._references_lock:
            self._references[key] = expected
            while len(self._references) > 16:
                self._references.popitem(last=False)
        return expected

    def _baseline(
        self,
        manifest: Manifest,
        preset: str,
        precision: str,
        seed: int,
        sizes: dict[str, int],
        scalars: dict[str, float],
        inputs: dict[str, np.ndarray],
        *,
        refresh: bool = False,
    ) -> int:
        """The kernel's reference C solution built at -O2 and timed like a submission: on the
        first grade of (kernel, preset, precision, seed), and again whenever `refresh` asks (every
        /submit), keeping the fastest time in the results database; the first measurement is the
        fastest of two timed runs. One timing taken while the machine was busy would otherwise
        inflate every later speedup. 0 if it cannot run."""
        with self._baseline_lock:
            known = results_db.get_baseline(self.engine, manifest.name, preset, precision, seed)
            if known is not None and not refresh:
                return known
            built = build.build(
                kernels.solution_source(manifest.name), "c", [], self.config.build_cache_dir,
                self.build_limits, baseline=True,
            )  # fmt: skip
            if not built.ok or built.library is None:
                return known or 0
            timed: list[int] = []
            # Two runs on the first measurement: a lone scheduling outlier would be stored.
            for _ in range(2 if known is None else 1):
                run = self._run(
                    built.library,
                    manifest,
                    precision,
                    sizes,
                    scalars,
                    inputs,
                    kernels.pointer_names(manifest),
                )
                if run.ok:
                    timed.append(run.kernel_ns)
            if not timed:
                return known or 0
            fastest = min(timed) if known is None else min(known, *timed)
            if fastest != known:
                results_db.set_baseline(
                    self.engine, manifest.name, preset, precision, seed, fastest
                )
            return fastest


def _numpy_name(precision: str) -> str:
    from hb.precision import NUMPY_DTYPES

    return NUMPY_DTYPES[precision].name


# ---------------------------------------------------------------------------------------------
# The FastAPI application.


def _validation_detail(error: RequestValidationError) -> str:
    """One line for a malformed body: the request's own message where relayout wrote one."""
    for item in error.errors():
        context = item.get("ctx") or {}
        cause = context.get("error")
        if isinstance(cause, RequestError):
            return str(cause)
    parts = []
    for item in error.errors():
        location = ".".join(str(p) for p in item.get("loc", ()) if p != "body")
        message = str(item.get("msg", "invalid")).removeprefix("Value error, ")
        if item.get("type") == "extra_forbidden":
            message = "is not a field of this envelope (accepted: kernel, language, source, requests, preset)"
        parts.append(f"{location}: {message}" if location else message)
    return "; ".join(parts) or "malformed request body"


def create_app(config: Config) -> FastAPI:
    """The judge's HTTP service over one JudgeHandler."""
    handler = JudgeHandler(config)
    app = FastAPI(
        title="hb judge",
        summary="Builds, runs and grades parallel kernels; the requests API of requests_api.md.",
        version="0.1.0",
    )
    app.state.handler = handler

    @app.exception_handler(RequestValidationError)
    async def _malformed(_: Request, error: RequestValidationError) -> JSONResponse:
        return JSONResponse(status_code=400, content={"detail": _validation_detail(error)})

    @app.exception_handler(RequestFault)
    async def _fault(_: Request, error: RequestFault) -> JSONResponse:
        return JSONResponse(status_code=400, content={"detail": error.detail})

    @app.exception_handler(UnknownKernel)
    async def _unknown(_: Request, error: UnknownKernel) -> JSONResponse:
        return JSONResponse(status_code=404, content={"detail": str(error.args[0])})

    @app.get("/health")
    def health() -> dict[str, Any]:
        return {"status": "ok", "kernels": len(kernels.kernel_names()), "sandbox": _protections()}

    @app.get("/tasks")
    def tasks() -> list[dict[str, Any]]:
        return handler.tasks()

    @app.get("/task/{kernel}")
    def task(kernel: str) -> dict[str, Any]:
        return handler.task(kernel)

    @app.post("/score")
    def score(submission: Submission) -> dict[str, Any]:
        """Grade on the public inputs; recorded on route score."""
        return handler.grade(submission, "score")

    @app.post("/submit")
    def submit(submission: Submission) -> dict[str, Any]:
        """The graded, leaderboard route: hidden inputs; recorded on route submit."""
        return handler.grade(submission, "submit")

    @app.post("/requests/check")
    def requests_check(body: RequestsCheckBody) -> dict[str, Any]:
        """Builds, grades and records nothing: accepted with the pointers and the signature, or
        refused with the reason a submission would get."""
        return handler.check(body)

    @app.get("/grades")
    def grades(
        kernel: str | None = None, route: str | None = None, limit: int = 50
    ) -> list[dict[str, Any]]:
        rows = results_db.list_grades(handler.engine, kernel, route, min(max(limit, 1), 1000))
        return [{**row, "created_at": row["created_at"].isoformat()} for row in rows]

    @app.exception_handler(HTTPException)
    async def _http(_: Request, error: HTTPException) -> JSONResponse:
        return JSONResponse(status_code=error.status_code, content={"detail": error.detail})

    return app


@functools.cache
def _protections() -> list[str]:
    protections = ["rlimits", "wall-clock timeout", "private directory"]
    if sandbox.namespaces_available():
        protections += ["namespaces", "no network", "private /tmp", "unprivileged user"]
    return protections
