"""The judge as a service: JudgeHandler (check a request, build, run, grade, record) and the
FastAPI application over it (/health, /tasks, /task/{kernel}, /score, /submit, /requests/check,
/grades, and the results page with its routes from hb.web)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator
from typing import Any, get_args

from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from hb import (
    abi,
    calls,
    interfaces,
    kernels,
    languages,
    prompts,
    results_db,
    sparse,
    web,
)
from hb.body_guard import BodyGuard
from hb.config import Config, hidden_seed, judge_id, machine_name, prepare_data_dir
from hb.distributed.grade import (
    lower_plan,
    requested_casts,
)
from hb.distributed.policy import default_grid, default_requests
from hb.distributed.signature import describe_plan, entry_signature, mpi_prototype, mpi_refusal
from hb.envelope import (
    Caller,
    ProfileBody,
    RequestFault,
    RequestsCheckBody,
    Submission,
    SyntaxCheckBody,
)
from hb.execution import box_pool, build, sandbox, supervisor_pool
from hb.judge import graders, refusals
from hb.judge.grading import (
    Problem,
    RepProblem,
    resolve_problem,
)
from hb.judge.outcome import (
    GradeOutcome,
    is_hidden_route,
)
from hb.judge.refusals import relayout_check
from hb.kernels import Manifest
from hb.precision import C_NAMES, precision_of
from hb.requests_api import (
    GRID_ACTIONS,
    RequestAllowances,
    RequestError,
    Requests,
    RequestsCheck,
)

# The operations that lay arrays out over a processor grid (they need startup.grid).
DISTRIBUTED_ACTIONS = GRID_ACTIONS


class DistributedRequestsCheck(RequestsCheck):
    """/requests/check's answer on a distributed request: relayout's RequestsCheck (arrays, the
    plan at mpi.ranks) with the MPI entry point as its signature, and `distribution`: which size
    symbols arrive local or global and each rank's coordinates, size values and tile extents at
    the grading preset (describe_plan)."""

    distribution: dict[str, Any] | None = None


class UnknownKernel(KeyError):
    """A kernel the catalog lacks: a 404."""


def with_task_grid(
    requests: Requests, manifest: Manifest, allowances: RequestAllowances
) -> Requests:
    """Under requests.grid: task the judge sets the kernel's default grid: the request as granted."""
    if allowances.grid != "task" or requests.startup.grid:
        return requests
    grid = default_grid(manifest)
    if not grid:
        return requests
    document = json.loads(requests.to_json() or "{}")
    document.setdefault("startup", {})["grid"] = grid
    return Requests.validate(document)


def refused_requests(
    engine: Any, submission: Submission, granted: Requests, refusal: str, route: str, datatype: str,
    caller: Caller | None = None, judge: dict[str, str] | None = None,
) -> int:  # fmt: skip
    """Record a refused call (its request validated; a malformed one records nothing): a grade row
    on route `<route>.refused`, incorrect, with the refusal as its detail, who asked and which
    judge (judge_id, machine) refused it."""
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
            **(caller or Caller()).record(),
            **(judge or {}),
        },
        granted,
    )


class JudgeHandler:
    """One judge: its configuration, allowances, database and caches."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.allowances = RequestAllowances.from_config(config)
        prepare_data_dir(config)
        # Resolved once, at start: the configured integer, or the data directory's own seed.
        self.hidden_seed = hidden_seed(config)
        self.engine = results_db.connect(config.database_url)
        # Recorded with every grade: judges of a campaign share one database.
        self.identity = {"judge_id": judge_id(config), "machine": machine_name()}
        unknown = sorted(set(config.service.tasks or ()) - set(kernels.kernel_names()))
        if unknown:
            raise ValueError(f"service.tasks: {unknown} are not kernels of the catalog")
        box = config.sandbox
        self.limits = box.limits()
        self.build_limits = box.limits(build=True)
        # Boxes an earlier judge left behind (killed with it or not) end here.
        sandbox.reap_stale_boxes(config.data_dir)
        # A supervisor started now times the first grade without an interpreter's start.
        supervisor_pool.prestart()
        self._grade_slots = threading.Semaphore(config.service.workers)
        self.baseline_lock = threading.Lock()
        # Each rep's inputs and reference outputs, per (kernel, preset, precision, seed).
        self.references: OrderedDict[tuple, list[RepProblem]] = OrderedDict()
        self.references_lock = threading.Lock()
        self.graders: dict[str, graders.Grader] = {
            kind.kind: kind(self)
            for kind in (graders.DenseGrader, graders.SparseGrader, graders.DistributedGrader)
        }

    # -- catalog ---------------------------------------------------------------------------------

    def serves(self, kernel: str) -> bool:
        """Whether this judge grades `kernel` (service.tasks, or the whole catalog)."""
        served = self.config.service.tasks
        return served is None or kernel in served

    def manifest(self, kernel: str) -> Manifest:
        try:
            manifest = kernels.load_manifest(kernel)
        except KeyError as error:
            raise UnknownKernel(str(error.args[0])) from None
        if not self.serves(kernel):
            raise UnknownKernel(
                f"task {kernel!r} is not served by judge {self.identity['judge_id']}: it serves "
                f"{self.config.service.tasks} (service.tasks)"
            )
        return manifest

    def problem(self, manifest: Manifest) -> Problem:
        datatype = precision_of(self.config.grading.datatype)
        resolved = resolve_problem(
            manifest.name,
            manifest.precisions,
            datatype,
            self.config.grading.precision_override_kernels,
            manifest.tolerance_bands(),
        )
        if isinstance(resolved, str):
            raise RequestFault(f"datatype: {resolved}")
        return resolved

    def task(self, kernel: str, language: str = "c") -> dict[str, Any]:
        """GET /task/{kernel}: arrays, presets, the default request's signature in `language`
        (C unless asked) and the offer."""
        manifest = self.manifest(kernel)
        unbuilt = languages.refusal(language)
        if unbuilt is not None:
            raise RequestFault(f"language: {unbuilt}")
        precision, override = prompts.task_precision(manifest, self.config)
        context = prompts.build_context(
            manifest,
            self.allowances,
            precision,
            distributed=self.config.mpi.grade_distributed,
            language=language,
            precision_override=override,
        )
        c_signature = self._task_signature(manifest, precision)
        on_ranks = c_signature != abi.default_signature(manifest, precision)
        signature = self._signature_in(language, manifest, precision, c_signature, on_ranks)
        prompt = prompts.task_prompt(
            manifest, self.config, self.allowances, precision, signature, override,
            language=language, on_ranks=on_ranks,
        )  # fmt: skip
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
            "tolerance": self._task_tolerance(manifest),
            # Under mpi.grade_distributed every grade runs on ranks: the entry point is the MPI one.
            "signature": signature,
            "request_actions": context.request_actions.model_dump(mode="json"),
            "requests_section": context.requests_section,
            # The whole task prompt, and each of its sections by name (prompts.SECTIONS).
            "prompt": prompt.text,
            "prompt_sections": prompt.sections,
            "language": language,
            "libraries": languages.offered_libraries(language),
            **self._task_distribution(manifest, precision),
        }

    def _signature_in(
        self, language: str, manifest: Manifest, precision: str, signature: str, on_ranks: bool
    ) -> str:
        """The task's entry point (`signature`, in C) as a submission in `language` writes it."""
        if language == "c":
            return signature
        if on_ranks:
            return interfaces.render(language, interfaces.mpi_entry(manifest, precision), signature)
        default = Requests()
        if sparse.has_sparse(manifest):
            arrays = sparse.kernel_abi(manifest, default, precision).arrays
        else:
            checked = relayout_check(default, manifest, precision)
            arrays = checked.model_dump(mode="json", exclude_none=True)["arrays"]
        answer = {"accepted": True, "arrays": arrays, "signature": signature}
        localized = interfaces.localized(language, answer, manifest, precision, default)
        return str(localized["signature"])

    def _task_signature(self, manifest: Manifest, precision: str) -> str:
        distributed = self.config.mpi.grade_distributed and manifest.distribution
        if distributed and mpi_refusal(manifest) is None:
            return mpi_prototype(manifest, precision) + ";"
        return abi.default_signature(manifest, precision)

    def _task_distribution(self, manifest: Manifest, precision: str) -> dict[str, Any]:
        """The task's distributed side where the setup allows distribute: the MPI entry point,
        the kernel's default distribution as short-form operations, who sets the grid, and that
        distribution described at mpi.ranks (size symbols local or global, each rank's tiles)."""
        if "distribute" not in self.allowances.allow or not manifest.distribution:
            return {}
        refusal = mpi_refusal(manifest)
        if refusal is not None:
            return {"mpi": {"refusal": refusal}}
        ranks = self.config.mpi.ranks
        default = default_requests(manifest, ranks)
        described: dict[str, Any] = {
            "ranks": ranks,
            "rank_counts": list(self.config.mpi.rank_counts),
            "grid": default_grid(manifest),
            "grid_set_by": self.allowances.grid,
            "signature": mpi_prototype(manifest, precision) + ";",
            "default_requests": default.to_dict(),
            # usis's one-sentence descriptions of the MPI calls the reference solution makes.
            "reference_calls": [
                {"key": c.key, "name": c.name, "desc": c.desc}
                for c in calls.reference_mpi_calls(manifest.name)
            ],
        }
        sizes = manifest.preset_sizes(self.config.grading.preset)
        try:
            plan = lower_plan(default, manifest, precision, ranks, sizes)
        except (RequestError, ValueError) as error:
            described["default_distribution_refusal"] = str(error)
        else:
            described["default_distribution"] = describe_plan(manifest, plan, sizes)
        return {"mpi": described}

    def _task_tolerance(self, manifest: Manifest) -> dict[str, Any]:
        """The band the configured datatype grades this kernel in, and the manifest's reason
        where its own tolerance widens TOLERANCE_MATRIX's; {} where the datatype cannot run it."""
        try:
            resolved = self.problem(manifest)
        except RequestFault:
            return {}
        band = {"rtol": resolved.band.rtol, "atol": resolved.band.atol}
        if manifest.tolerance is not None and resolved.precision in manifest.tolerance.bands:
            band["reason"] = manifest.tolerance.reason
        return band

    def tasks(self, track: str | None = None) -> list[dict[str, Any]]:
        """GET /tasks: every kernel with its track, dwarf and tags, or those of one track."""
        tracks = list(get_args(kernels.Track))
        if track is not None and track not in tracks:
            raise RequestFault(f"track: {track!r} is not one of {tracks}")
        listed = []
        for name in filter(self.serves, kernels.kernel_names()):
            manifest = kernels.load_manifest(name)
            if track is None or manifest.track == track:
                listed.append({
                    "kernel": name, "summary": manifest.summary, "track": manifest.track,
                    "dwarf": manifest.dwarf, "tags": manifest.tags,
                })  # fmt: skip
        return listed

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
        self,
        submitted: Requests,
        granted: Requests,
        manifest: Manifest,
        language: str,
        sizes: dict[str, int] | None = None,
        label: str = "",
    ) -> str | None:
        """Why the judge refuses the call before any build: the first of hb.judge.refusals.REFUSALS,
        checked at the graded `sizes` (default: the configured preset's)."""
        return refusals.first_refusal(
            self.checked(submitted, granted, manifest, language, sizes, label)
        )

    def checked(
        self,
        submitted: Requests,
        granted: Requests,
        manifest: Manifest,
        language: str,
        sizes: dict[str, int] | None = None,
        label: str = "",
    ) -> refusals.Call:
        """The call as the refusals read it, at the graded `sizes` (default: the configured
        preset's); what checking lowers (relayout's answers, the plan) it keeps for the grade."""
        if sizes is None:
            sizes = manifest.preset_sizes(self.config.grading.preset)
            label = f"preset {self.config.grading.preset}"
        return refusals.Call(
            submitted=submitted, granted=granted, manifest=manifest, language=language,
            allowances=self.allowances, config=self.config,
            precision=self.problem(manifest).precision, sizes=sizes, label=label,
        )  # fmt: skip

    def graded_sizes(
        self, manifest: Manifest, preset: str | None = None, sizes: dict[str, int] | None = None
    ) -> tuple[dict[str, int], str]:
        """The sizes a call is graded (or checked) at, and how to name them: explicit `sizes`
        (every size symbol of the kernel, positive integers), a preset, or the configured one."""
        if sizes is not None:
            symbols = list(manifest.preset_sizes(next(iter(manifest.presets))))
            unknown = sorted(set(sizes) - set(symbols))
            missing = [name for name in symbols if name not in sizes]
            if unknown or missing:
                raise RequestFault(
                    f"sizes: {manifest.name}'s size symbols are {symbols}"
                    + (f"; unknown {unknown}" if unknown else "")
                    + (f"; missing {missing}" if missing else "")
                )
            for name, value in sizes.items():
                if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value < 2**40:
                    raise RequestFault(
                        f"sizes.{name}: expected an integer in [1, 2^40), got {value!r}"
                    )
            return dict(sizes), "the given sizes"
        chosen = preset or self.config.grading.preset
        if chosen not in manifest.presets:
            raise RequestFault(f"preset: {chosen!r} is not one of {list(manifest.presets)}")
        return manifest.preset_sizes(chosen), f"preset {chosen}"

    def check(self, body: RequestsCheckBody) -> dict[str, Any]:
        """POST /requests/check: the answer a submission would get, building nothing; a refusal
        (the datatype's too) is accepted: false, only a malformed request a 400."""
        manifest = self.manifest(body.kernel)
        granted = self.granted_requests(body.requests, manifest)
        if body.preset is not None and body.sizes is not None:
            raise RequestFault(
                "preset, sizes: give one of them (or neither: the configured preset)"
            )
        sizes, label = self.graded_sizes(manifest, body.preset, body.sizes)
        try:
            refusal = self.refusal(body.requests, granted, manifest, body.language, sizes, label)
            precision = self.problem(manifest).precision
        except RequestFault as fault:
            return {"accepted": False, "refusal": fault.detail}
        if refusal is not None:
            return {"accepted": False, "refusal": refusal}
        if granted.startup.grid:
            return interfaces.localized(
                body.language, self._distributed_check(granted, manifest, precision), manifest,
                precision, granted,
            )  # fmt: skip
        document: dict[str, Any]
        if sparse.has_sparse(manifest):
            document = sparse.check_answer(
                manifest,
                granted,
                precision,
                self.sparse_grader.dense_arrays(granted, manifest, precision),
            )
        else:
            answer = relayout_check(granted, manifest, precision)
            document = answer.model_dump(mode="json", exclude_none=True)
        return interfaces.localized(body.language, document, manifest, precision, granted)

    def _distributed_check(
        self, granted: Requests, manifest: Manifest, precision: str
    ) -> dict[str, Any]:
        from relayout.check import check_requests

        ranks = self.config.mpi.ranks
        answer = check_requests(
            granted, abi.relayout_arrays(manifest, precision), None, ranks, c_names=C_NAMES
        )
        if not answer.accepted:
            return answer.model_dump(mode="json", exclude_none=True)
        sizes = manifest.preset_sizes(self.config.grading.preset)
        try:
            plan = lower_plan(granted, manifest, precision, ranks, sizes)
        except (RequestError, ValueError) as error:
            preset = self.config.grading.preset
            return {"accepted": False, "refusal": f"{error} (lowered at preset {preset}: {sizes})"}
        casts = requested_casts(granted)
        checked = DistributedRequestsCheck(
            **answer.model_dump(exclude={"signature"}),
            signature=entry_signature(manifest, precision, casts, plan),
            distribution={
                "preset": self.config.grading.preset,
                **describe_plan(manifest, plan, sizes),
            },
        )
        document: dict[str, Any] = checked.model_dump(mode="json", exclude_none=True)
        return document

    def syntax_check(self, body: SyntaxCheckBody) -> dict[str, Any]:
        """POST /syntax-check: the compiler's diagnostics for the source, in the box."""
        self.manifest(body.kernel)
        unbuilt = languages.refusal(body.language)
        if unbuilt is not None:
            raise RequestFault(f"language: {unbuilt}")
        checked = build.syntax_check(
            body.source, body.language, list(body.requests.startup.load),
            self.config.build_cache_dir.parent / "boxes", self.build_limits,
        )  # fmt: skip
        return {"ok": checked.ok, "diagnostics": checked.diagnostics, "command": checked.command}

    # -- grading ---------------------------------------------------------------------------------

    def grade(
        self, submission: Submission, route: str, caller: Caller | None = None
    ) -> GradeOutcome:
        """Build, run and grade one submission and record it with its `caller`; RequestFault
        before any build. A grade on the hidden inputs is answered and recorded as hidden_answer
        leaves it, and /submit takes no preset: it always grades at grading.preset."""
        if route == "submit" and submission.preset is not None:
            raise RequestFault(
                f"preset: /submit grades at the configured preset (grading.preset: "
                f"{self.config.grading.preset}) and takes none in its body; leave preset out, "
                "and use /score to try other presets"
            )
        manifest = self.manifest(submission.kernel)
        preset = submission.preset or self.config.grading.preset
        if preset not in manifest.presets:
            raise RequestFault(f"preset: {preset!r} is not one of {list(manifest.presets)}")
        submission = submission.model_copy(update={"preset": preset})
        problem = self.problem(manifest)
        granted = self.granted_requests(submission.requests, manifest)
        sizes, label = self.graded_sizes(manifest, preset)
        call = self.checked(
            submission.requests, granted, manifest, submission.language, sizes, label
        )
        refusal = refusals.first_refusal(call)
        if refusal is not None:
            refused_requests(
                self.engine, submission, granted, refusal, route, problem.precision, caller,
                self.identity,
            )  # fmt: skip
            raise RequestFault(refusal)
        with self._grade_slots:
            outcome = self._grade_unrecorded(
                submission, manifest, problem, granted, route, checked=call
            )
        return self._recorded(outcome, manifest, granted, caller=caller)

    def _recorded(
        self, outcome: GradeOutcome, manifest: Manifest, granted: Requests | None = None,
        of_grade_id: int | None = None, caller: Caller | None = None,
    ) -> GradeOutcome:  # fmt: skip
        """The outcome as recorded (with who asked) and answered: cut down on a hidden route (its
        row keeps the reps' times, which GET /grades does not show), with its grade id."""
        answer = outcome
        if is_hidden_route(outcome.route):
            answer = outcome.hidden(kernels.output_names(manifest))
        row = {**answer.record(outcome.timing), **(caller or Caller()).record(), **self.identity}
        grade_id = results_db.add_grade(self.engine, row, granted, of_grade_id=of_grade_id)
        return answer.model_copy(update={"grade_id": grade_id, "of_grade_id": of_grade_id})

    def verify(self, grade_id: int, source: str) -> GradeOutcome:
        """Verify a suspect grade: regrade its source (which must hash to the recorded digest)
        under its recorded request, kernel, language and preset, on the hidden inputs, with the
        baseline timed again. The regrade is recorded (route `verify`, of the grade); when it is
        correct and its own measured speedup is at least half the recorded one, the suspect grade
        is credited its measured speedup. Returns the regrade's answer and `verified`."""
        row = results_db.get_grade(self.engine, grade_id)
        if row is None:
            raise RequestFault(f"grade {grade_id}: no such grade")
        if not row["suspect"]:
            raise RequestFault(f"grade {grade_id}: not suspect; nothing to verify")
        if hashlib.sha256(source.encode()).hexdigest() != row["source_sha256"]:
            raise RequestFault(
                f"grade {grade_id}: the source given does not hash to the graded one "
                f"({row['source_sha256'][:12]}...)"
            )
        requests = results_db.requests_of_row(row)
        unbuilt = languages.refusal(row["language"])
        if unbuilt is not None:
            raise RequestFault(f"grade {grade_id}: language: {unbuilt}")
        submission = Submission(
            kernel=row["kernel"], language=row["language"], source=source,
            requests=json.loads(requests.to_json() or "{}") or None,
        )  # fmt: skip
        manifest = self.manifest(submission.kernel)
        problem = self.problem(manifest)
        granted = self.granted_requests(submission.requests, manifest)
        with self._grade_slots:
            outcome = self._grade_unrecorded(
                submission.model_copy(update={"preset": row["preset"]}), manifest, problem,
                granted, "verify", refresh_baseline=True,
            )  # fmt: skip
        answer = self._recorded(outcome, manifest, of_grade_id=grade_id)
        verified = answer.correct and answer.measured_speedup >= 0.5 * float(
            row["measured_speedup"]
        )
        if verified:
            results_db.credit_verified(self.engine, grade_id)
        return answer.model_copy(update={"verified": verified})

    def _seed(self, route: str) -> int:
        """The public seed for /score; every other route grades on the hidden inputs, whose seed
        was resolved at start (config.hidden_seed)."""
        return self.hidden_seed if is_hidden_route(route) else self.config.grading.public_seed

    @property
    def sparse_grader(self) -> graders.SparseGrader:
        grader = self.graders["sparse"]
        assert isinstance(grader, graders.SparseGrader)
        return grader

    def _grade_unrecorded(
        self,
        submission: Submission,
        manifest: Manifest,
        problem: Problem,
        granted: Requests,
        route: str,
        refresh_baseline: bool = False,
        checked: refusals.Call | None = None,
    ) -> GradeOutcome:
        """Grade one submission by the grader of its kind, recording nothing. `checked` is the
        call as checking left it (its relayout answer and plan are not lowered again); a regrade
        of a recorded call (verify) has none."""
        preset = submission.preset or self.config.grading.preset
        outcome = GradeOutcome(
            kernel=manifest.name, preset=preset, datatype=problem.precision,
            language=submission.language, route=route,
            requests=json.loads(granted.to_json() or "{}"),
            precision_override=problem.precision_override,
            source_sha256=hashlib.sha256(submission.source.encode()).hexdigest(),
        )  # fmt: skip
        job = graders.Job(
            submission=submission, manifest=manifest, problem=problem, granted=granted,
            seed=self._seed(route), outcome=outcome, checked=checked,
            refresh_baseline=refresh_baseline,
        )  # fmt: skip
        return graders.grader_for(self.graders, manifest, granted).grade(job)


# ---------------------------------------------------------------------------------------------
# The FastAPI application.


SEND_AN_OBJECT = "send one JSON object with Content-Type: application/json"


def _body_fault(error: RequestValidationError) -> str | None:
    """The detail for a body that is not a JSON object at all (not JSON, empty, or an array,
    string or number), said in words; None when the body is an object that does not validate."""
    for item in error.errors():
        location = tuple(item.get("loc", ()))
        if item.get("type") == "json_invalid":
            why = (item.get("ctx") or {}).get("error") or "it does not parse"
            where = location[1] if len(location) > 1 else None
            at = f" at character {where}" if isinstance(where, int) else ""
            return f"body: the request body is not valid JSON ({why}{at}); {SEND_AN_OBJECT}"
        if location != ("body",):
            continue
        if item.get("type") == "missing":
            return f"body: the request body is empty; {SEND_AN_OBJECT}"
        if item.get("type") in ("model_attributes_type", "dict_type", "model_type"):
            given = item.get("input")
            if isinstance(given, bytes | bytearray):
                return (
                    "body: the request body was not sent as JSON (its Content-Type is not "
                    f"application/json); {SEND_AN_OBJECT}"
                )
            kind = {list: "an array", str: "a string", bool: "a boolean", int: "a number",
                    float: "a number", type(None): "null"}.get(type(given), "a value")  # fmt: skip
            return f"body: the request body is {kind} in JSON, not an object; {SEND_AN_OBJECT}"
    return None


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


def caller_of(request: Request) -> Caller:
    """The caller a call's headers name (envelope.CALLER_HEADERS); a 400 naming a bad header."""
    try:
        return Caller.from_headers(request.headers)
    except ValueError as error:
        raise RequestFault(f"headers: {error}") from None


def create_app(config: Config) -> FastAPI:
    """The judge's HTTP service over one JudgeHandler."""
    handler = JudgeHandler(config)

    @contextlib.asynccontextmanager
    async def _lifespan(_: FastAPI) -> AsyncIterator[None]:
        # While it serves, the judge keeps a box started for its next grade; they end with it.
        box_pool.keep_warm(config.sandbox_dir)
        yield
        box_pool.shutdown(config.sandbox_dir)

    app = FastAPI(
        title="hb judge",
        summary="Builds, runs and grades parallel kernels; the requests API of requests_api.md.",
        version="0.1.0",
        lifespan=_lifespan,
    )
    app.state.handler = handler
    # Every body bounded and its strings checked before a route parses it (hb.body_guard).
    app.add_middleware(BodyGuard)

    @app.exception_handler(RequestValidationError)
    async def _malformed(_: Request, error: RequestValidationError) -> JSONResponse:
        detail = _body_fault(error) or _validation_detail(error)
        return JSONResponse(status_code=400, content={"detail": detail})

    @app.exception_handler(RequestFault)
    async def _fault(_: Request, error: RequestFault) -> JSONResponse:
        return JSONResponse(status_code=400, content={"detail": error.detail})

    @app.exception_handler(UnknownKernel)
    async def _unknown(_: Request, error: UnknownKernel) -> JSONResponse:
        return JSONResponse(status_code=404, content={"detail": str(error.args[0])})

    @app.get("/health")
    def health() -> dict[str, Any]:
        return {
            "status": "ok",
            "kernels": len(kernels.kernel_names()),
            "sandbox": list(sandbox.machine_protections()),
            **handler.identity,
        }

    @app.get("/tasks")
    def tasks(track: str | None = None) -> list[dict[str, Any]]:
        return handler.tasks(track)

    @app.get("/task/{kernel}")
    def task(kernel: str, language: str = "c") -> dict[str, Any]:
        return handler.task(kernel, language)

    @app.post("/score", response_model=GradeOutcome)
    def score(submission: Submission, request: Request) -> GradeOutcome:
        """Grade on the public inputs; recorded on route score with the caller its headers name."""
        return handler.grade(submission, "score", caller_of(request))

    @app.post("/submit", response_model=GradeOutcome)
    def submit(submission: Submission, request: Request) -> GradeOutcome:
        """The graded, leaderboard route: hidden inputs; recorded on route submit."""
        return handler.grade(submission, "submit", caller_of(request))

    @app.post("/requests/check")
    def requests_check(body: RequestsCheckBody) -> dict[str, Any]:
        """Builds, grades and records nothing: accepted with the pointers and the signature, or
        refused with the reason a submission would get."""
        return handler.check(body)

    @app.post("/profile")
    def profile(body: ProfileBody) -> dict[str, Any]:
        """Times the source per thread count on the public inputs and, with tool perf or papi,
        reads counters where the machine allows them; grades and records nothing."""
        from hb import profiling

        return profiling.profile(handler, body)

    @app.post("/syntax-check")
    def syntax_check(body: SyntaxCheckBody) -> dict[str, Any]:
        """Compiles the source in the box with the judge's flags and -fsyntax-only; builds,
        grades and records nothing."""
        return handler.syntax_check(body)

    @app.get("/grades")
    def grades(
        kernel: str | None = None, route: str | None = None, limit: int = 50,
        experiment: str | None = None, agent_id: str | None = None,
    ) -> list[dict[str, Any]]:  # fmt: skip
        rows = results_db.list_grades(
            handler.engine, kernel, route, min(max(limit, 1), 1000), experiment, agent_id
        )
        return [web.shown_row(row) for row in rows]

    # The results page at / and the read-only routes it reads (hb.web).
    web.mount(app, handler)

    @app.exception_handler(HTTPException)
    async def _http(_: Request, error: HTTPException) -> JSONResponse:
        return JSONResponse(status_code=error.status_code, content={"detail": error.detail})

    return app
