"""The timed run, judge side: a box holding only the submission's library and the box runner, a
supervisor process (hb.execution.supervisor) outside it that stages each rep's inputs, times each call and
reads the outputs, and a private job directory between the judge and the supervisor that the box
never sees.

Each rep has inputs of its own (the caller passes one RepInput per warm-up and timed rep, drawn
from seeds of their own), so a kernel that remembers an earlier answer returns a wrong one; every
rep's outputs come back so the caller checks each against the reference for its own inputs.
Results cross from the supervisor as JSON and one file of every rep's outputs (supervisor.Outputs).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hb.execution import box_pool, boxcall, sandbox, supervisor

LIBRARY_FILE = "libsubmission.so"
SLOT_LOCK_DIR = Path("/run/hb/slots")


@dataclass
class RepInput:
    """One rep's arrays as the kernel's pointers take them (before the request's conversions),
    the arguments after the pointers, and conversion time the judge already spent on them."""

    arrays: dict[str, np.ndarray]
    trailing: list[dict[str, Any]]
    convert_in_ns: int = 0


@dataclass(frozen=True)
class Baseline:
    """What a paired run times beside the submission, in a box of its own: the catalog
    solution's library and symbol, its pointers (the kernel's own order) and one rep per
    submission rep, on the same inputs in their canonical layout."""

    library: Path
    symbol: str
    pointers: Sequence[str]
    reps: Sequence[RepInput]
    # Which box opens the run's first pair (even: the baseline's); a grade's rounds alternate it.
    order: int = 0


@dataclass(frozen=True)
class BoxProbe:
    """A profiler around the box runner (POST /profile): `prefix` goes before the runner's argv in
    the box, `allow` names the system calls the box may make besides a grade's
    (sandbox.PROFILE_SYSCALLS), `after` are commands run in the same box once the run has ended
    (a report of what the profiler wrote), `keep` the files read back from the box."""

    prefix: tuple[str, ...] = ()
    allow: frozenset[str] = frozenset()
    after: tuple[tuple[str, ...], ...] = ()
    keep: tuple[str, ...] = ()


@dataclass
class RunResult:
    """A timed run: every rep's outputs and times as the supervisor saw them, or why there are
    none. The credited rep is the fastest timed one (after the warm-ups)."""

    ok: bool
    reason: str | None = None
    rep_kernel_ns: list[int] = field(default_factory=list)
    rep_convert_in_ns: list[int] = field(default_factory=list)
    rep_convert_out_ns: list[int] = field(default_factory=list)
    rep_outputs: list[dict[str, np.ndarray]] = field(default_factory=list)
    warmup: int = 0
    round_trip_ns: int = 0
    protections: list[str] = field(default_factory=list)
    wall_s: float = 0.0
    log: str = ""
    # A probe's files (BoxProbe.keep) and its after-commands' output ("after-<i>").
    probed: dict[str, str] = field(default_factory=dict)
    # Per rep: when its timed call began (CLOCK_MONOTONIC), the nanoseconds the box's threads
    # waited for a CPU during it, and the host's steal time over it.
    rep_started_ns: list[int] = field(default_factory=list)
    rep_wait_ns: list[int] = field(default_factory=list)
    rep_steal_ns: list[int] = field(default_factory=list)
    # The box cgroup's CPU pressure over each call (cgroup v2 only; None elsewhere).
    rep_pressure_ns: list[int | None] = field(default_factory=list)
    # A paired run's baseline, timed rep by rep beside the submission (its warm-ups first too).
    baseline: RunResult | None = None

    @property
    def timed(self) -> list[int]:
        """The kernel times of the timed reps (warm-ups left out)."""
        return self.rep_kernel_ns[self.warmup :]

    @property
    def credited(self) -> int:
        """The index (among all reps) of the credited rep: the fastest timed one."""
        timed = self.timed
        return self.warmup + min(range(len(timed)), key=timed.__getitem__)

    @property
    def kernel_ns(self) -> int:
        return self.rep_kernel_ns[self.credited] if self.ok else 0

    @property
    def convert_in_ns(self) -> int:
        return self.rep_convert_in_ns[self.credited] if self.ok else 0

    @property
    def convert_out_ns(self) -> int:
        return self.rep_convert_out_ns[self.credited] if self.ok else 0

    @property
    def outputs(self) -> dict[str, np.ndarray]:
        """The credited rep's outputs."""
        return self.rep_outputs[self.credited] if self.ok else {}


def slot_cores(cpus: str | None) -> list[str]:
    """The physical cores a set of CPUs covers (`cpus` as sandbox.cpus writes it; None: this
    process's own), each named machine-wide as "<package>-<core>" from sysfs, so that two
    strings for the same cores ("0-1" and "0,1", or a list and the default) name the same slots;
    "cpu<N>" where sysfs does not say."""
    chosen = sandbox.cpu_list(cpus) if cpus else frozenset(os.sched_getaffinity(0))
    cores = set()
    for cpu in chosen:
        topology = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology")
        try:
            package = (topology / "physical_package_id").read_text().strip()
            core = (topology / "core_id").read_text().strip()
            cores.add(f"{package}-{core}")
        except OSError:
            cores.add(f"cpu{cpu}")
    return sorted(cores)


@contextlib.contextmanager
def timing_slot(cpus: str | None) -> Iterator[None]:
    """One timed run at a time on each physical core, across every judge of the machine, whatever
    its configuration string: a flock per core the run's CPUs cover, taken in one order (so two
    overlapping sets never deadlock) and held together (builds and grading of other calls go on
    meanwhile). Without root, the locks are per user."""
    directory = (
        SLOT_LOCK_DIR
        if os.geteuid() == 0
        else Path(tempfile.gettempdir()) / f"hb-slots-{os.geteuid()}"
    )
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    held: list[int] = []
    try:
        for core in slot_cores(cpus):
            fd = os.open(directory / f"core-{core}", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            held.append(fd)
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        for fd in reversed(held):
            os.close(fd)


def run_kernel(
    library: Path,
    symbol: str,
    pointers: Sequence[str],
    reps: Sequence[RepInput],
    workspace_bytes: int,
    output_names: Sequence[str],
    warmup: int,
    workdir_root: Path,
    limits: sandbox.Limits,
    threads: int = 0,
    conversion: dict[str, Any] | None = None,
    conversion_files: Path | None = None,
    delivery: str = "library",
    probe: BoxProbe | None = None,
    baseline: Baseline | None = None,
) -> RunResult:
    """Run `symbol` of `library` once per entry of `reps` (the first `warmup` untimed) in a box,
    timed by a supervisor; with a `baseline`, in a second box of the same setup, the baseline and
    the submission are timed alternately, rep by rep on the same inputs (a probe's run is never
    paired). `conversion` is the request's conversion program description (requests
    JSON, relayout's array specs and sizes) when the request converts anything. A `python`
    delivery's `library` is its source, called by hb.execution.pybox instead of hb.execution.boxrunner (a `cuda`
    delivery's run is hb.execution.cudarunner's: device arrays, a box given the device nodes)."""
    python = delivery == "python"
    begun = time.monotonic()
    workdir_root.mkdir(parents=True, exist_ok=True, mode=0o700)
    if probe is not None:
        baseline = None
    setup = box_setup(workdir_root, limits, threads, delivery, probe, paired=baseline is not None)
    try:
        # A box started ahead for this setup (a profile's probe gets one of its own, started now).
        with box_pool.started(setup, timing_slot, pooled=probe is None) as started:
            box, private = started.box, started.private
            if python:
                from hb.execution.pybox import SOURCE

                box.write(SOURCE, library.read_bytes(), mode=0o444)
            else:
                box.write(LIBRARY_FILE, library.read_bytes(), mode=0o555)
            # The runner's loop in C, for every ping and call of the grade; a probe's runner is
            # wrapped around its kernel in Python (hb.execution.papibox) and keeps its own loop.
            loop = boxcall.library() if not python and probe is None else None
            if loop is not None:
                box.write(boxcall.FILE, loop, mode=0o555)
            _stage_box(box, symbol, len(pointers), reps)
            for index, rep in enumerate(reps):
                np.savez(private / f"inputs_{index}.npz", **rep.arrays)  # type: ignore[arg-type]
            job = {
                "pointers": list(pointers),
                "outputs": list(output_names),
                "workspace_bytes": workspace_bytes,
                "timeout_s": limits.timeout_s,
                "conversion": conversion,
                "conversion_dir": str(conversion_files) if conversion_files else None,
                "delivery": delivery,
                "native_loop": loop is not None,
                "reps": _rep_entries(reps),
            }
            if baseline is not None and started.baseline is not None:
                # The baseline is a library in every delivery: it gets the runner's loop in C
                # (a python submission's runner has none).
                job["baseline"] = _stage_baseline(started.baseline, baseline, reps, private,
                                                  workspace_bytes,
                                                  boxcall.library() if python else loop)  # fmt: skip
                job["order"] = baseline.order
            (private / supervisor.JOB_FILE).write_text(json.dumps(job))
            with timing_slot(limits.cpus):
                ended = started.supervise(timeout=limits.timeout_s + 60)
            oom = box.oom_killed()
            protections = started.command.protections
            probed = _probed(box, probe, limits) if probe else {}
            result = _result(private, ended, warmup, protections, oom, time.monotonic() - begun)
            if result.ok and baseline is not None and started.baseline is not None:
                result.baseline = _baseline_result(started.baseline[2], private, warmup)
                if result.baseline is None:
                    result = RunResult(False, reason=BASELINE_FAILED, protections=protections)
        result.probed = probed
        return result
    except subprocess.TimeoutExpired:
        return RunResult(False, reason="the run exceeded the wall-clock limit and was killed")
    except sandbox.SandboxUnavailable as error:
        return RunResult(False, reason=str(error))
    except OSError as error:  # the box or its supervisor could not be reached
        return RunResult(False, reason=f"the run could not be staged: {supervisor.describe(error)}")


def box_setup(
    workdir_root: Path, limits: sandbox.Limits, threads: int = 0, delivery: str = "library",
    probe: BoxProbe | None = None, paired: bool = False,
) -> box_pool.BoxSetup:  # fmt: skip
    """The box a timed run needs before its grade is known: the runner of its delivery (behind a
    probe's prefix) with the judge's environment, under `limits` and `threads`; a `paired` run's
    second box runs the library runner for the baseline."""
    env = {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1", "PYTHONSAFEPATH": "1",
           "OMP_PROC_BIND": "close", "OMP_PLACES": "cores"}  # fmt: skip
    if threads > 0:
        env["OMP_NUM_THREADS"] = str(threads)
    runner = "hb.execution.pybox" if delivery == "python" else "hb.execution.boxrunner"
    prefix = probe.prefix if probe else ()
    library_runner = (sys.executable, "-I", "-m", "hb.execution.boxrunner")
    return box_pool.BoxSetup(
        root=workdir_root.resolve(), limits=limits, threads=threads,
        argv=(*prefix, sys.executable, "-I", "-m", runner), env=tuple(env.items()),
        allow_syscalls=probe.allow if probe else frozenset(), ends_gracefully=probe is not None,
        baseline_argv=library_runner if paired else None,
    )  # fmt: skip


# A paired run whose baseline failed: the judge's fault, never the submission's.
BASELINE_FAILED = "harness: the baseline's run failed beside the submission"


def _stage_box(box: sandbox.Box, symbol: str, pointers: int, reps: Sequence[RepInput]) -> None:
    """The runner's description of its calls (symbol, pointer count, trailing kinds)."""
    box.write(
        "box.json",
        json.dumps({
            "symbol": symbol,
            "pointers": pointers,
            "trailing_kinds": [entry["kind"] for entry in reps[0].trailing],
        }),
    )  # fmt: skip


def _rep_entries(reps: Sequence[RepInput]) -> list[dict[str, Any]]:
    return [
        {"inputs": f"inputs_{i}.npz", "trailing": rep.trailing, "convert_in_ns": rep.convert_in_ns}
        for i, rep in enumerate(reps)
    ]


def _stage_baseline(
    started: tuple[sandbox.Box, sandbox.BoxCommand, Path], baseline: Baseline,
    reps: Sequence[RepInput], private: Path, workspace_bytes: int, loop: bytes | None,
) -> dict[str, Any]:  # fmt: skip
    """The baseline's box given its library, the same loop as the submission's runner (`loop`,
    None where the runner keeps its loop in Python) and its description, its job directory each
    rep's inputs (the submission's own file where the arrays are the same), and the paired job's
    part that describes it."""
    box, _, baseline_private = started
    box.write(LIBRARY_FILE, baseline.library.read_bytes(), mode=0o555)
    if loop is not None:
        box.write(boxcall.FILE, loop, mode=0o555)
    _stage_box(box, baseline.symbol, len(baseline.pointers), baseline.reps)
    for index, (rep, mine) in enumerate(zip(baseline.reps, reps, strict=True)):
        target = baseline_private / f"inputs_{index}.npz"
        if rep.arrays is mine.arrays:
            with contextlib.suppress(OSError):
                os.link(private / f"inputs_{index}.npz", target)
                continue
        np.savez(target, **rep.arrays)  # type: ignore[arg-type]
    return {
        "jobdir": str(baseline_private),
        "pointers": list(baseline.pointers),
        "workspace_bytes": workspace_bytes,
        "native_loop": loop is not None,
        "reps": _rep_entries(baseline.reps),
    }


def _baseline_result(baseline_private: Path, private: Path, warmup: int) -> RunResult | None:
    """The baseline's half of a paired run (its reps' times and outputs), None where the
    supervisor reported none."""
    report = json.loads((private / supervisor.RESULT_FILE).read_text()).get("baseline") or {}
    if not report.get("ok"):
        return None
    return _timed(report, baseline_private, warmup, [], 0.0, "")


def _probed(box: sandbox.Box, probe: BoxProbe, limits: sandbox.Limits) -> dict[str, str]:
    """What a probe left: its after-commands' output, run in the same box (the box's files are
    the submission's to write, so whatever they say only informs, never grades), and its files."""
    found: dict[str, str] = {}
    for index, argv in enumerate(probe.after):
        ended = box.run(list(argv))
        found[f"after-{index}"] = ended.stdout if ended.returncode == 0 else ended.stderr
    for name in probe.keep:
        with contextlib.suppress(OSError):
            data = sandbox.read_box_file(box.workdir / name, limits.fsize_bytes)
            found[name] = data[-65536:].decode("utf-8", "replace")
    return found


def _result(
    private: Path, ended: subprocess.CompletedProcess[bytes], warmup: int, protections: list[str],
    oom: bool, wall_s: float,
) -> RunResult:  # fmt: skip
    log = _tail(private / "box.stderr")
    result_path = private / supervisor.RESULT_FILE
    if ended.returncode != 0 or not result_path.is_file():
        detail = ended.stderr.decode("utf-8", "replace").strip().splitlines()[-1:]
        return RunResult(False, reason=f"the judge's supervisor failed: {' '.join(detail)}",
                         protections=protections, log=log)  # fmt: skip
    report = json.loads(result_path.read_text())
    if not report.get("ok"):
        reason = _failure_reason(report, oom, log)
        return RunResult(False, reason=reason, protections=protections, wall_s=wall_s, log=log)
    return _timed(report, private, warmup, protections, wall_s, log)


def _timed(report: dict[str, Any], private: Path, warmup: int, protections: list[str],
           wall_s: float, log: str) -> RunResult:  # fmt: skip
    """A supervisor's report of one box's reps (the submission's, or a paired baseline's) as a
    result, its outputs read from that box's job directory."""
    reps = report["reps"]
    outputs = [supervisor.read_outputs(private, report["outputs"], i) for i in range(len(reps))]
    return RunResult(
        True,
        rep_kernel_ns=[int(r["kernel_ns"]) for r in reps],
        rep_convert_in_ns=[int(r["convert_in_ns"]) for r in reps],
        rep_convert_out_ns=[int(r["convert_out_ns"]) for r in reps],
        rep_outputs=outputs,
        warmup=warmup,
        round_trip_ns=int(report.get("round_trip_ns", 0)),
        protections=protections,
        wall_s=wall_s,
        log=log,
        rep_started_ns=[int(r.get("started_ns", 0)) for r in reps],
        rep_wait_ns=[int(r.get("wait_ns", 0)) for r in reps],
        rep_steal_ns=[int(r.get("steal_ns", 0)) for r in reps],
        rep_pressure_ns=[
            None if r.get("pressure_ns") is None else int(r["pressure_ns"]) for r in reps
        ],
    )


def _failure_reason(report: dict[str, Any], oom: bool, log: str) -> str:
    failure = str(report.get("failure", ""))
    if failure.startswith(supervisor.BASELINE_SIDE):
        cause = failure.removeprefix(supervisor.BASELINE_SIDE)
        return f"{BASELINE_FAILED} ({supervised_failure(cause, 'it')})"
    code = report.get("returncode")
    if oom:
        return "the run exceeded the box's memory limit and was killed"
    if failure == "timeout":
        return "the run exceeded the wall-clock limit and was killed"
    result = sandbox.SandboxResult(int(code or 0), False, 0.0, "", log, ["bwrap"])
    # A runner the supervisor stopped after a failure ended by its kill, which says nothing.
    ended = None if report.get("stopped") else result.failure("the run")
    if code == 3:
        return (
            log.strip().splitlines()[-1].removeprefix("hb box: ")
            if log.strip()
            else "the library could not be loaded"
        )
    return ended or supervised_failure(failure, "the run")


def supervised_failure(failure: str, run: str) -> str:
    """The supervisor's word for why `run` ("the run", "the MPI run") failed, in a sentence."""
    if failure == "ended":
        return f"{run} ended during the kernel call (did the kernel call exit()?)"
    if failure == "freeze":
        return "the box could not be frozen to read its outputs"
    if failure.startswith("staging: "):
        return (
            f"the kernel's arguments could not be written into the box or read back "
            f"({failure.removeprefix('staging: ')}): did the kernel unmap or protect them?"
        )
    if failure.startswith("supervisor: "):
        return f"{run} could not be staged: {failure.removeprefix('supervisor: ')}"
    return f"{run} failed: {failure or 'no result'}"


def _tail(path: Path, limit: int = 4000) -> str:
    try:
        data = path.read_bytes()
    except OSError:
        return ""
    return data[-limit:].decode("utf-8", "replace")
