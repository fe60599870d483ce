"""POST /profile: a submission timed per thread count on the public inputs, in the same box as a
grade, and (tool perf) Linux perf's counters and hot symbols or (tool papi) PAPI's, where the
machine lets a box count events. Nothing is recorded in grades."""

from __future__ import annotations

import ctypes.util
import functools
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hb import languages
from hb.envelope import ProfileBody
from hb.execution import build, runner, sandbox
from hb.judge import graders

PARANOID = Path("/proc/sys/kernel/perf_event_paranoid")
PERF_EVENTS = (
    "task-clock", "context-switches", "cpu-migrations", "page-faults", "cycles", "instructions",
    "cache-references", "cache-misses", "branches", "branch-misses",
)  # fmt: skip
STAT_FILE = "perf-stat.csv"
RECORD_FILE = "perf.data"
HOT_SYMBOLS = 15
# What perf measures: the box runner's whole process, not the kernel's calls alone.
PERF_SCOPE = (
    "one run at the largest thread count, the box runner's process from its start to its end: "
    "the kernel's warm-up and timed calls, the interpreter's start and the waits between calls"
)

# Tool papi's events by default: PAPI's presets for cycles, instructions, the data misses of L1
# and L2 and the misses of L3, mispredicted branches and floating-point operations, and the
# kernel's software clock and page faults (which count on a VM without a virtual PMU too).
PAPI_EVENTS = (
    "PAPI_TOT_CYC", "PAPI_TOT_INS", "PAPI_L1_DCM", "PAPI_L2_DCM", "PAPI_L3_TCM", "PAPI_BR_MSP",
    "PAPI_FP_OPS", "perf::TASK-CLOCK", "perf::PAGE-FAULTS",
)  # fmt: skip
PAPI_HEADER_FILE = "papi-header.json"
PAPI_CALLS_FILE = "papi-calls.jsonl"
PAPI_SCOPE = (
    "each timed kernel call (the warm-ups left out), from just before it to just after it in the "
    "box runner, one run per thread count; the values are the median per call"
)
PAPI_UNKNOWN = "PAPI does not know this event on this judge"
PAPI_NOTE = (
    "reasons are PAPI's words: 'Event does not exist' is an event the machine does not count "
    "(every hardware event of a VM without a virtual PMU); 'cannot be counted due to counter "
    "resource limitations' is one the counters the events before it took leave no room for (ask "
    "for fewer events)"
)


def thread_counts(configured: int) -> list[int]:
    """The thread counts a profile times: powers of two up to the configured count (the cores the
    judge may use where sandbox.threads is 0), and that count itself."""
    top = configured if configured > 0 else len(os.sched_getaffinity(0))
    counts = [1]
    while counts[-1] * 2 <= top:
        counts.append(counts[-1] * 2)
    if counts[-1] != top:
        counts.append(top)
    return counts


def perf_event_paranoid() -> int | None:
    """The kernel's perf_event_paranoid, or None where it cannot be read."""
    try:
        return int(PARANOID.read_text().strip())
    except (OSError, ValueError):
        return None


@functools.cache
def papi_library() -> str | None:
    """libpapi's name for the dynamic loader (libpapi.so.7.0), or None where it is not installed."""
    return ctypes.util.find_library("papi")


def counters_refusal(tool: str) -> str | None:
    """Why a box on this machine cannot count events with `tool`, or None."""
    if tool == "papi" and papi_library() is None:
        return "papi: the PAPI library (libpapi) is not installed on this judge"
    if tool == "perf" and shutil.which("perf") is None:
        return "perf: Linux perf is not installed on this judge (Debian's linux-perf)"
    paranoid = perf_event_paranoid()
    if paranoid is None:
        return f"{tool}: {PARANOID} cannot be read, so this kernel offers no performance events"
    if paranoid > 2:
        return (
            f"{tool}: perf_event_paranoid is {paranoid}: the kernel lets no unprivileged process "
            "count events (2 or less lets a process count its own)"
        )
    return None


def papi_lookup(names: tuple[str, ...]) -> dict[str, Any]:
    """PAPI's answer on this machine for `names`, from a process of the judge's own (not a box):
    {"version", "unknown": [names PAPI does not know]}, or {"error"} where PAPI cannot start."""
    library = papi_library()
    if library is None:
        return {"error": "the PAPI library (libpapi) is not installed on this judge"}
    try:
        return _papi_lookup(library, names)
    except (OSError, subprocess.TimeoutExpired, ValueError) as error:
        return {"error": f"PAPI's event look-up failed ({error})"}


@functools.lru_cache(maxsize=256)
def _papi_lookup(library: str, names: tuple[str, ...]) -> dict[str, Any]:
    # A failure raises, so that only answers are kept.
    argv = [
        sys.executable,
        "-I",
        "-m",
        "hb.execution.papibox",
        "--library",
        library,
        "--names",
        *names,
    ]
    ended = subprocess.run(argv, capture_output=True, timeout=60, check=False)
    found = json.loads(ended.stdout)
    if not isinstance(found, dict):
        raise ValueError("hb.execution.papibox answered no JSON object")
    return found


def papi_probe(events: Sequence[str]) -> runner.BoxProbe:
    """The box runner under hb.execution.papibox, counting `events` around each kernel call."""
    return runner.BoxProbe(
        prefix=(
            sys.executable, "-I", "-m", "hb.execution.papibox", "--library", papi_library() or "libpapi.so",
            "--events", ",".join(events), "--header", PAPI_HEADER_FILE, "--out", PAPI_CALLS_FILE,
            "--",
        ),
        allow=sandbox.PROFILE_SYSCALLS,
        keep=(PAPI_HEADER_FILE, PAPI_CALLS_FILE),
    )  # fmt: skip


def parse_papi_calls(text: str, count: int) -> list[list[int]] | str:
    """The box's lines of counts (one per call, `count` values each), or why they do not parse:
    the box wrote them, so nothing in them is trusted beyond its shape."""
    calls: list[list[int]] = []
    for number, line in enumerate(text.splitlines(), 1):
        try:
            values = json.loads(line)
        except ValueError:
            return f"line {number} of the box's counts is not JSON"
        if isinstance(values, str):
            return f"call {number}: {values[:300]}"
        if (
            not isinstance(values, list)
            or len(values) != count
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in values)
        ):
            return f"line {number} of the box's counts is not {count} integers"
        calls.append(values)
    return calls


def papi_counters(
    timed: Callable[[int, runner.BoxProbe], runner.RunResult],
    counts: Sequence[int],
    requested: Sequence[str],
    unknown: Sequence[str],
    version: str,
) -> dict[str, Any]:
    """Tool papi's counters: one run per thread count under hb.execution.papibox, each timed call counted;
    the events PAPI does not know (`unknown`, of the default set) or could not open, by name."""
    reasons = dict.fromkeys(unknown, PAPI_UNKNOWN)
    probe = papi_probe([name for name in requested if name not in reasons])
    table: list[dict[str, Any]] = []
    no_inherit: str | None = None
    for threads in counts:
        run = timed(threads, probe)
        row: dict[str, Any] = {"threads": threads}
        table.append(row)
        if not run.ok:
            row.update(ok=False, reason=run.reason)
            continue
        try:
            header = json.loads(run.probed.get(PAPI_HEADER_FILE, ""))
            opened = [str(name) for name in header.get("opened", [])]
            refused = {str(k): str(v) for k, v in header.get("refused", {}).items()}
        except (ValueError, AttributeError, TypeError):
            row.update(ok=False, reason="the box wrote no readable PAPI header")
            continue
        if "error" in header:
            row.update(ok=False, reason=f"PAPI did not start in the box: {header['error']}")
            continue
        if not set(opened) <= set(requested):
            row.update(ok=False, reason="the box's PAPI header names events not asked for")
            continue
        reasons.update({name: why for name, why in refused.items() if name in requested})
        for name in requested:
            if name not in opened and name not in reasons:
                reasons[name] = "the box's PAPI header does not name it"
        if header.get("no_inherit"):
            no_inherit = str(header["no_inherit"])
        calls = parse_papi_calls(run.probed.get(PAPI_CALLS_FILE, ""), len(opened))
        reps = run.warmup + len(run.timed)
        if isinstance(calls, str) or len(calls) != reps or not run.timed:
            got = calls if isinstance(calls, str) else f"the box's counts have {len(calls)} lines"
            row.update(ok=False, reason=f"{got}, for {reps} calls")
            continue
        kept = calls[run.warmup :]
        medians: list[float] = (
            np.median(np.asarray(kept, dtype=np.float64), axis=0).tolist() if opened else []
        )
        row.update(
            ok=True, calls=len(kept),
            values={name: int(median) for name, median in zip(opened, medians, strict=True)},
        )  # fmt: skip
    counted = [row for row in table if row.get("values")]
    counters: dict[str, Any] = {
        "papi": version, "scope": PAPI_SCOPE, "perf_event_paranoid": perf_event_paranoid(),
        "available": bool(counted), "events": list(requested),
        "threads_counted": "all of the kernel's threads (inherited counters)" if no_inherit is None
        else "the calling thread only: PAPI could not make the threads the kernel starts inherit "
        f"the counters here (PAPI: {no_inherit})",
        "table": table,
        "unavailable": [name for name in requested if name in reasons], "reasons": reasons,
    }  # fmt: skip
    if reasons:
        counters["note"] = PAPI_NOTE
    if not counted:
        failed = next((row["reason"] for row in table if "reason" in row), None)
        counters["reason"] = (
            f"papi counted none of the events: {failed}"
            if failed
            else "papi could open none of the events here (a VM without a virtual PMU offers "
            "no hardware events)"
        )
    return counters


def perf_stat_probe() -> runner.BoxProbe:
    perf = shutil.which("perf") or "perf"
    return runner.BoxProbe(
        prefix=(perf, "stat", "-x", ",", "-o", STAT_FILE, "-e", ",".join(PERF_EVENTS), "--"),
        allow=sandbox.PROFILE_SYSCALLS,
        keep=(STAT_FILE,),
    )


def perf_record_probe() -> runner.BoxProbe:
    perf = shutil.which("perf") or "perf"
    return runner.BoxProbe(
        prefix=(perf, "record", "-q", "-F", "999", "-o", RECORD_FILE, "--"),
        allow=sandbox.PROFILE_SYSCALLS,
        after=(
            (
                perf,
                "report",
                "-i",
                RECORD_FILE,
                "--stdio",
                "-q",
                "--sort",
                "dso,symbol",
                "--percent-limit",
                "0.5",
            ),
        ),
    )


def parse_perf_stat(text: str) -> tuple[dict[str, float], list[str]]:
    """perf stat's CSV (-x ,): each counted event's value, and the events it could not count."""
    counted: dict[str, float] = {}
    missing: list[str] = []
    for line in text.splitlines():
        fields = line.split(",")
        if line.startswith("#") or len(fields) < 3:
            continue
        # perf names a user-space-only count `cycles:u`.
        value, event = fields[0].strip(), fields[2].strip().split(":")[0]
        if event not in PERF_EVENTS:
            continue
        try:
            counted[event] = float(value)
        except ValueError:
            missing.append(event)
    missing += [event for event in PERF_EVENTS if event not in counted and event not in missing]
    return counted, missing


def parse_perf_report(text: str) -> list[dict[str, Any]]:
    """perf report's --stdio lines (`45.00%  libsubmission.so  [.] symbol`) as rows."""
    rows = []
    for line in text.splitlines():
        parts = line.split(None, 3)
        if len(parts) < 4 or not parts[0].endswith("%"):
            continue
        try:
            share = float(parts[0].rstrip("%"))
        except ValueError:
            continue
        # The symbol column, without the columns perf pads after it.
        symbol = re.split(r"\s{2,}", parts[3].strip())[0]
        rows.append({"percent": share, "object": parts[1], "symbol": symbol})
        if len(rows) == HOT_SYMBOLS:
            break
    return rows


def profile(handler: Any, body: ProfileBody) -> dict[str, Any]:
    """The profile of `body` on `handler`'s judge (a service.JudgeHandler): RequestFault (a 400)
    for what /score refuses, for zip and unzip, and for a processor grid."""
    from hb.envelope import RequestFault
    from hb.judge.grading import compare_reps

    manifest = handler.manifest(body.kernel)
    preset = body.preset or handler.config.grading.preset
    if preset not in manifest.presets:
        raise RequestFault(f"preset: {preset!r} is not one of {list(manifest.presets)}")
    problem = handler.problem(manifest)
    granted = handler.granted_requests(body.requests, manifest)
    if granted.startup.grid:
        raise RequestFault(
            "requests.startup.grid: /profile times one node; a distributed request is graded by "
            "/score"
        )
    for index, operation in enumerate(granted.operations):
        if operation.action in ("zip", "unzip"):
            raise RequestFault(
                f"operations[{index}] ({operation.action}): /profile takes no zip or unzip"
            )
    looked: dict[str, Any] = {}
    if body.events is not None and body.tool != "papi":
        raise RequestFault(f"events: tool {body.tool} takes no events (tool papi does)")
    requested = tuple(body.events) if body.events is not None else PAPI_EVENTS
    if body.tool == "papi" and counters_refusal("papi") is None:
        looked = papi_lookup(requested)
        unknown = looked.get("unknown") or []
        if body.events is not None and unknown:
            raise RequestFault(
                f"events: {unknown} unknown to PAPI {looked.get('version', '')} on this judge "
                "(papi_avail and papi_native_avail list the events it knows)"
            )
    sizes, label = handler.graded_sizes(manifest, preset)
    refusal = handler.refusal(body.requests, granted, manifest, body.language, sizes, label)
    if refusal is not None:
        raise RequestFault(refusal)
    built = build.build(
        body.source, body.language, list(granted.startup.load),
        handler.config.build_cache_dir, handler.build_limits,
    )  # fmt: skip
    answer: dict[str, Any] = {"kernel": manifest.name, "preset": preset, "tool": body.tool}
    if not built.ok or built.library is None:
        return {**answer, "built": False, "reason": built.reason, "log": built.log[-4000:]}
    precision = problem.precision
    scalars = manifest.preset_scalars(preset)
    seed = handler.config.grading.public_seed
    # The grid is refused above: the grader is a single-node one, dense or sparse.
    grader = graders.grader_for(handler.graders, manifest, granted)
    assert isinstance(grader, graders.DenseGrader)
    problems = grader.problems(manifest, preset, precision, seed, sizes, scalars)
    try:
        conversion, pointers, conversion_files = grader.conversion(
            granted, manifest, precision, sizes
        )
    except Exception as error:  # relayout's build or lowering: the profile fails, the judge stays
        from hb.execution.supervisor import describe

        reason = f"the request's conversion kernels did not build: {describe(error)}"
        return {**answer, "built": True, "reason": reason}
    try:
        reps, pointers = grader.rep_inputs(
            manifest, granted, precision, sizes, scalars, problems, pointers
        )
    except ValueError as error:
        return {**answer, "built": True, "reason": f"the sparse conversion failed: {error}"}

    delivery = languages.language(body.language).delivery

    def timed(threads: int, probe: runner.BoxProbe | None = None) -> runner.RunResult:
        return grader.run(
            built.library, manifest, precision, sizes, reps, pointers, conversion,
            conversion_files, delivery, threads=threads, probe=probe,
        )  # fmt: skip

    table = []
    counts = thread_counts(handler.config.sandbox.threads)
    for threads in counts:
        run = timed(threads)
        row: dict[str, Any] = {"threads": threads}
        if not run.ok:
            row.update(ok=False, reason=run.reason)
        else:
            compared = compare_reps(run, problems, problem.band)
            row.update(
                ok=True, correct=compared.correct, min_ns=min(run.timed),
                median_ns=int(np.median(run.timed)), reps_ns=run.timed,
                convert_in_ns=run.convert_in_ns, convert_out_ns=run.convert_out_ns,
            )  # fmt: skip
            if compared.reason is not None:
                row["reason"] = compared.reason
        table.append(row)
    answer.update(built=True, timing=table)
    if body.tool == "none":
        return answer
    refused = counters_refusal(body.tool)
    if refused is None and "error" in looked:
        refused = f"papi: {looked['error']}"
    if refused is not None:
        answer["counters"] = {"available": False, "reason": refused}
        return answer
    if body.tool == "papi":
        answer["counters"] = papi_counters(
            timed, counts, requested, looked.get("unknown") or [], str(looked.get("version", ""))
        )
        return answer
    top = counts[-1]
    stat = timed(top, perf_stat_probe())
    counted, missing = parse_perf_stat(stat.probed.get(STAT_FILE, ""))
    # At perf_event_paranoid 2 a box counts its user space only (perf's `:u` events).
    counters: dict[str, Any] = {
        "threads": top, "scope": PERF_SCOPE, "perf_event_paranoid": perf_event_paranoid(),
        "available": bool(counted), "values": counted, "unavailable": missing,
    }  # fmt: skip
    if not counted:
        counters["reason"] = (
            "perf counted nothing in the box: the machine (a VM, or a kernel without the PMU "
            "events) refuses them" + (f"; the run: {stat.reason}" if not stat.ok else "")
        )
    elif missing:
        counters["note"] = (
            "events marked unavailable are not supported here (typically the hardware events "
            "of a VM without a virtual PMU)"
        )
    record = timed(top, perf_record_probe())
    counters["hot_symbols"] = parse_perf_report(record.probed.get("after-0", ""))
    answer["counters"] = counters
    return answer
