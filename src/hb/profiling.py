"""POST /profile: a submission timed per thread count on the public inputs, in the same box as a
grade, and (tool perf) Linux perf's counters and hot symbols or (tool papi) PAPI's, where the
machine lets a box count events. Nothing is recorded in grades."""

from __future__ import annotations

import ctypes.util
import os
import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np

from hb import build, languages, runner, sandbox
from hb.envelope import ProfileBody

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


def counters_refusal(tool: str) -> str | None:
    """Why a box on this machine cannot count events with `tool`, or None."""
    if tool == "papi" and ctypes.util.find_library("papi") is None:
        return "papi: the PAPI library (libpapi) is not installed on this judge"
    if tool == "papi":
        return "papi: this judge does not read PAPI counters; use tool perf"
    if shutil.which("perf") is None:
        return "perf: Linux perf is not installed on this judge (Debian's linux-perf)"
    paranoid = perf_event_paranoid()
    if paranoid is None:
        return f"perf: {PARANOID} cannot be read, so this kernel offers no performance events"
    if paranoid > 2:
        return (
            f"perf: perf_event_paranoid is {paranoid}: the kernel lets no unprivileged process "
            "count events (2 or less lets a process count its own)"
        )
    return None


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
    from hb.grading import compare_reps

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
    problems = handler._problems(manifest, preset, precision, seed, sizes, scalars)
    try:
        conversion, pointers, conversion_files = handler._conversion(
            granted, manifest, precision, sizes
        )
    except Exception as error:  # relayout's build or lowering: the profile fails, the judge stays
        from hb.supervisor import describe

        reason = f"the request's conversion kernels did not build: {describe(error)}"
        return {**answer, "built": True, "reason": reason}
    try:
        reps, pointers = handler._rep_inputs(
            manifest, granted, precision, sizes, scalars, problems, pointers
        )
    except ValueError as error:
        return {**answer, "built": True, "reason": f"the sparse conversion failed: {error}"}

    delivery = languages.language(body.language).delivery

    def timed(threads: int, probe: runner.BoxProbe | None = None) -> runner.RunResult:
        return handler._run(
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
    if refused is not None:
        answer["counters"] = {"available": False, "reason": refused}
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
