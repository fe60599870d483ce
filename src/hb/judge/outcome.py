"""The outcome of one grade, as one model: the HTTP answer of /score and /submit (their declared
response_model), the results database's row (`record()`), and the CLI's table row all come from
GradeOutcome; a grade on the hidden inputs is the same model cut down by `hidden()`."""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from hb.calls import CallReport, Finding, PpmCall

# What a grade on the hidden inputs (every route but score: /submit and the regrades) may say:
# the grade and which check failed, never what the hidden run printed, returned or measured
# besides the credited timing of a correct grade.
HIDDEN_RUN_FAILED = "hidden inputs: the run failed (crashed, timed out or exceeded a limit)"
HIDDEN_CONVERSION_FAILED = "hidden inputs: the sparse conversion failed"
HIDDEN_GRADE_FAILED = "hidden inputs: the grade failed"
HIDDEN_NO_OUTPUT_MATCHED = "hidden inputs: an output is outside the tolerance"
# Every reason a hidden grade may give, bar the public failures below.
HIDDEN_REASON = re.compile(
    r"hidden inputs: (?:the run failed \(crashed, timed out or exceeded a limit\)"
    r"|the sparse conversion failed|the grade failed|an output is outside the tolerance"
    r"|output [A-Za-z_][A-Za-z0-9_]* (?:outside the tolerance|was not returned"
    r"|has the wrong shape))"
)
# Failures before any hidden input exists: a build sees only the source and the request (neither
# build takes the seed), so its reason and the compiler's log are kept.
PUBLIC_FAILURES = (
    "harness: ",  # the judge's own fault (its baseline), which says nothing of the inputs
    "build failed",
    "the MPI build failed",
    "the request's conversion kernels did not build",
    "refused by grading.refuse_findings",
)
HIDDEN_DISTRIBUTED_KEYS = ("ranks", "grid", "symbols")


def is_hidden_route(route: str) -> bool:
    """Whether a route grades on the hidden inputs (every route but score)."""
    return route != "score"


def is_public_failure(reason: str) -> bool:
    return reason.startswith(PUBLIC_FAILURES)


def hidden_mismatch(reason: str | None, outputs: list[str]) -> str:
    """A hidden grade's reason for outputs that miss: the output compare_outputs named first and
    which check it failed, without its values, counts or positions (nor the rep that missed)."""
    parts = (reason or "").split(": ")
    named = next((index for index, part in enumerate(parts) if part in outputs), None)
    if named is None:
        return HIDDEN_NO_OUTPUT_MATCHED
    name, rest = parts[named], ": ".join(parts[named + 1 :])
    if rest.startswith("no output returned"):
        return f"hidden inputs: output {name} was not returned"
    if rest.startswith("shape "):
        return f"hidden inputs: output {name} has the wrong shape"
    return f"hidden inputs: output {name} outside the tolerance"


def calls_answer(report: CallReport | None) -> dict[str, Any]:
    """The GradeOutcome fields of a call report (none when it was not read)."""
    return {} if report is None else {"ppm_calls": report.calls, "findings": report.findings}


class BuildInfo(BaseModel):
    """How the submission's build went: from the cache or not, and how long it took."""

    cached: bool
    build_ns: int


class Dispersion(BaseModel):
    median_ns: float
    iqr_over_median: float


class TimingInfo(BaseModel):
    """The timed reps of a single-node grade as the supervisor measured them. A paired grade's
    (mode "paired") reps_ns and baseline_reps_ns are its pairs in the order timed (over every
    round), `ratios` their speedups, `retimed` the pairs left out of the estimate because their
    boxes waited for a CPU (wait_ns, steal_ns over each pair), `pairs` how many it rests on,
    `estimate` and `coverage` the estimate and its interval's exact coverage, `started_ns`
    when each pair's baseline call and submission call began (CLOCK_MONOTONIC), and
    `pressure_ns` the boxes' cgroup CPU pressure over each pair (null on cgroup v1)."""

    mode: str
    reps_ns: list[int]
    baseline_reps_ns: list[int] = Field(default_factory=list)
    warmup: int
    credited_rep: int
    round_trip_ns: int
    dispersion: Dispersion
    ratios: list[float] = Field(default_factory=list)
    pairs: int = 0
    estimate: float | None = None
    coverage: float | None = None
    retimed: list[int] = Field(default_factory=list)
    wait_ns: list[int] = Field(default_factory=list)
    steal_ns: list[int] = Field(default_factory=list)
    started_ns: list[list[int]] = Field(default_factory=list)
    # The two boxes' cgroup CPU pressure ("some") over each pair, where their cgroups are v2's.
    pressure_ns: list[int | None] = Field(default_factory=list)


class GradeOutcome(BaseModel):
    """One grade. The answer of /score shows every field; a hidden grade's (`hidden()`) keeps the
    grade and which check failed, and nothing its run printed, returned or measured besides the
    credited timing of a correct grade."""

    model_config = ConfigDict(extra="forbid")

    grade_id: int | None = None
    kernel: str
    preset: str
    datatype: str
    language: str = "c"
    route: str
    correct: bool = False
    reason: str | None = None
    log: str | None = None
    requests: dict[str, Any] = Field(default_factory=dict)
    build: BuildInfo | None = None
    protections: list[str] = Field(default_factory=list)
    native_ns: int = 0
    baseline_ns: int = 0
    speedup: float = 0.0
    measured_speedup: float = 0.0
    # A paired grade's 95% interval of the speedup ([low, high]) and whether it stayed wider than
    # grading.max_relative_ci (then `speedup` is its lower bound).
    speedup_ci: list[float] | None = None
    noisy: bool = False
    suspect: bool = False
    convert_in_ns: int = 0
    convert_out_ns: int = 0
    max_rel_error: float | None = None
    precision_override: str | None = None
    run_wall_s: float | None = None
    timing: TimingInfo | None = None
    distributed: dict[str, Any] | None = None
    # The submission's parallel-programming calls and usis's findings about them (hb.calls):
    # read from its built object alone, so a hidden grade shows them too.
    ppm_calls: list[PpmCall] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)
    # A regrade's parent, and whether it verified a suspect grade (hb verify).
    of_grade_id: int | None = None
    verified: bool | None = None
    # The submitted source's digest: recorded, never answered.
    source_sha256: str = Field("", exclude=True)

    def failed(self, reason: str, log: str = "") -> GradeOutcome:
        """The grade as a failure with `reason` (and a build's log)."""
        return self.model_copy(update={"correct": False, "reason": reason, "log": log or None})

    def record(self, timing: TimingInfo | None = None) -> dict[str, Any]:
        """The results database's row of this grade (results_db.GRADE_FIELDS); `timing` gives
        the reps' times where the answer has none (a hidden grade keeps them in its row, which
        GET /grades does not show)."""
        timing = timing or self.timing
        detail = self.reason or ""
        if self.log:
            detail = f"{detail}\n{self.log}"
        return {
            "kernel": self.kernel,
            "preset": self.preset,
            "datatype": self.datatype,
            "language": self.language,
            "route": self.route,
            "correct": self.correct,
            "native_ns": self.native_ns,
            "baseline_ns": self.baseline_ns,
            "speedup": self.speedup,
            "convert_in_ns": self.convert_in_ns,
            "convert_out_ns": self.convert_out_ns,
            "max_rel_error": self.max_rel_error,
            "precision_override": self.precision_override,
            "source_sha256": self.source_sha256,
            "detail": detail,
            "suspect": self.suspect,
            "measured_speedup": self.measured_speedup,
            "protections": ",".join(self.protections),
            "rep_ns": ",".join(str(t) for t in timing.reps_ns) if timing and self.correct else "",
            "baseline_rep_ns": ",".join(str(t) for t in timing.baseline_reps_ns)
            if timing and self.correct
            else "",
            "speedup_ci_low": self.speedup_ci[0] if self.speedup_ci else None,
            "speedup_ci_high": self.speedup_ci[1] if self.speedup_ci else None,
            "noisy": self.noisy,
            "pairs": timing.pairs if timing and self.correct else 0,
            "ppm_calls": CallReport(calls=self.ppm_calls, findings=self.findings).to_record()
            if self.ppm_calls or self.findings
            else "",
        }

    def hidden(self, outputs: list[str]) -> GradeOutcome:
        """The grade as a hidden route may answer and record it: a reason that is None, a public
        (build) failure or one of HIDDEN_REASON's phrases; no log but a build's; no wall time,
        per-rep times or max_rel_error; on an incorrect grade none of the run's measurements;
        the distributed summary with its ranks, grid and size symbols only."""
        reason = self.reason
        distributed = self.distributed or None
        if reason is not None and not (
            HIDDEN_REASON.fullmatch(reason) or is_public_failure(reason)
        ):
            if distributed and distributed.get("failure"):
                reason = HIDDEN_RUN_FAILED
            elif distributed and distributed.get("mismatches"):
                reason = hidden_mismatch(distributed["mismatches"][0], outputs)
            else:
                reason = HIDDEN_GRADE_FAILED
        update: dict[str, Any] = {
            "reason": reason,
            "max_rel_error": None,
            "run_wall_s": None,
            "timing": None,
            "log": self.log if reason is not None and is_public_failure(reason) else None,
        }
        if not self.correct:
            update.update(native_ns=0, speedup=0.0, convert_in_ns=0, convert_out_ns=0,
                          measured_speedup=0.0, speedup_ci=None, noisy=False)  # fmt: skip
        if distributed:
            update["distributed"] = {key: distributed.get(key) for key in HIDDEN_DISTRIBUTED_KEYS}
        return self.model_copy(update=update)

    @classmethod
    def from_record(cls, row: dict[str, Any]) -> GradeOutcome:
        """A recorded grade (a results-database row) as an outcome: what the table shows of it."""
        detail = str(row.get("detail") or "")
        return cls(
            grade_id=row.get("id"), kernel=row["kernel"], preset=row["preset"],
            datatype=row["datatype"], language=row.get("language") or "c", route=row["route"],
            correct=bool(row["correct"]), reason=detail.split("\n", 1)[0] or None,
            requests=json.loads(row["requests"]) if row.get("requests") else {},
            native_ns=int(row.get("native_ns") or 0), baseline_ns=int(row.get("baseline_ns") or 0),
            speedup=float(row.get("speedup") or 0.0),
            measured_speedup=float(row.get("measured_speedup") or 0.0),
            speedup_ci=[float(row["speedup_ci_low"]), float(row["speedup_ci_high"])]
            if row.get("speedup_ci_low") is not None and row.get("speedup_ci_high") is not None
            else None,
            noisy=bool(row.get("noisy")),
            suspect=bool(row.get("suspect")), convert_in_ns=int(row.get("convert_in_ns") or 0),
            convert_out_ns=int(row.get("convert_out_ns") or 0),
            max_rel_error=row.get("max_rel_error"), precision_override=row.get("precision_override"),
            protections=[p for p in str(row.get("protections") or "").split(",") if p],
            of_grade_id=row.get("of_grade_id"),
            **calls_answer(CallReport.from_record(row.get("ppm_calls"))),
        )  # fmt: skip

    def table_row(self) -> list[str]:
        """The CLI's row of this grade (TABLE_HEADER's columns)."""
        requests = json.dumps(self.requests, sort_keys=True) if self.requests else "-"
        return [
            str(self.grade_id or "-"), self.kernel, self.preset, self.route, str(self.correct),
            str(self.native_ns), f"{self.speedup:.3g}" + (" (suspect)" if self.suspect else ""),
            requests,
        ]  # fmt: skip

    def summary_rows(self) -> list[list[str]]:
        """The CLI's field-by-field view of this grade (hb submit)."""
        rows = [["field", "value"]]
        for key in (
            "grade_id", "kernel", "preset", "datatype", "route", "correct", "reason", "native_ns",
            "baseline_ns", "speedup", "suspect", "convert_in_ns", "convert_out_ns", "max_rel_error",
        ):  # fmt: skip
            value = getattr(self, key)
            rows.append([key, f"{value:.4g}" if isinstance(value, float) else str(value)])
        if self.distributed:
            grid = "x".join(str(extent) for extent in self.distributed.get("grid") or []) or "-"
            rows.append(["ranks", f"{self.distributed.get('ranks')} (grid {grid})"])
            symbols = self.distributed.get("symbols") or {}
            rows.append(["size symbols", ", ".join(f"{s}: {a}" for s, a in symbols.items()) or "-"])
        if self.ppm_calls:
            rows.append(["parallel calls", ", ".join(call.name for call in self.ppm_calls)])
        rows += [["finding", f"{f.kind}: {f.message}"] for f in self.findings]
        return rows


TABLE_HEADER = ["id", "kernel", "preset", "route", "correct", "native_ns", "speedup", "requests"]


def public_row(row: dict[str, Any]) -> dict[str, Any]:
    """A recorded grade as GET /grades shows it: a hidden grade's row cut as `hidden()` cuts its
    answer (so a row recorded before those rules carries no more than a new one), and without its
    reps' times."""
    route = str(row.get("route", ""))
    if not is_hidden_route(route) or route.endswith(".refused"):
        return row
    shown = {**row, "max_rel_error": None}
    for reps in ("rep_ns", "baseline_rep_ns"):
        if reps in shown:
            shown[reps] = ""
    detail = str(shown.get("detail") or "")
    if detail and not (HIDDEN_REASON.fullmatch(detail) or is_public_failure(detail)):
        shown["detail"] = HIDDEN_GRADE_FAILED
    if not shown.get("correct"):
        shown.update(native_ns=0, speedup=0.0, convert_in_ns=0, convert_out_ns=0)
        for interval in ("speedup_ci_low", "speedup_ci_high"):
            if interval in shown:
                shown[interval] = None
        if "measured_speedup" in shown:
            shown["measured_speedup"] = 0.0
    return shown
