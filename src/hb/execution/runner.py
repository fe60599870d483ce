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


@contextlib.contextmanager
def timing_slot(cpus: str | None) -> Iterator[None]:
    """One timed run at a time on a set of cores, across every judge of the machine (a flock per
    slot; builds and grading of other calls go on meanwhile). Without root, a lock per user."""
    directory = (
        SLOT_LOCK_DIR
        if os.geteuid() == 0
        else Path(tempfile.gettempdir()) / f"hb-slots-{os.geteuid()}"
    )
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    name = (cpus or "all").replace(",", "_")
    fd = os.open(directory / name, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
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
) -> RunResult:
    """Run `symbol` of `library` once per entry of `reps` (the first `warmup` untimed) in a box,
    timed by a supervisor. `conversion` is the request's conversion program description (requests
    JSON, relayout's array specs and sizes) when the request converts anything. A `python`
    delivery's `library` is its source, called by hb.execution.pybox instead of hb.execution.boxrunner (a `cuda`
    delivery's run is hb.execution.cudarunner's: device arrays, a box given the device nodes)."""
    python = delivery == "python"
    begun = time.monotonic()
    workdir_root.mkdir(parents=True, exist_ok=True, mode=0o700)
    setup = box_setup(workdir_root, limits, threads, delivery, probe)
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
            box.write(
                "box.json",
                json.dumps({
                    "symbol": symbol,
                    "pointers": len(pointers),
                    "trailing_kinds": [entry["kind"] for entry in reps[0].trailing],
                }),
            )  # fmt: skip
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
                "reps": [
                    {
                        "inputs": f"inputs_{i}.npz",
                        "trailing": rep.trailing,
                        "convert_in_ns": rep.convert_in_ns,
                    }
                    for i, rep in enumerate(reps)
                ],
            }
            (private / supervisor.JOB_FILE).write_text(json.dumps(job))
            with timing_slot(limits.cpus):
                ended = started.supervise(timeout=limits.timeout_s + 60)
            oom = box.oom_killed()
            protections = started.command.protections
            probed = _probed(box, probe, limits) if probe else {}
            result = _result(private, ended, warmup, protections, oom, time.monotonic() - begun)
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
    probe: BoxProbe | None = None,
) -> box_pool.BoxSetup:  # fmt: skip
    """The box a timed run needs before its grade is known: the runner of its delivery (behind a
    probe's prefix) with the judge's environment, under `limits` and `threads`."""
    env = {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1", "PYTHONSAFEPATH": "1",
           "OMP_PROC_BIND": "close", "OMP_PLACES": "cores"}  # fmt: skip
    if threads > 0:
        env["OMP_NUM_THREADS"] = str(threads)
    runner = "hb.execution.pybox" if delivery == "python" else "hb.execution.boxrunner"
    prefix = probe.prefix if probe else ()
    return box_pool.BoxSetup(
        root=workdir_root.resolve(), limits=limits, threads=threads,
        argv=(*prefix, sys.executable, "-I", "-m", runner), env=tuple(env.items()),
        allow_syscalls=probe.allow if probe else frozenset(), ends_gracefully=probe is not None,
    )  # fmt: skip


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
    reps = report["reps"]
    outputs = []
    for index in range(len(reps)):
        outputs.append(supervisor.read_outputs(private, report["outputs"], index))
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
    )


def _failure_reason(report: dict[str, Any], oom: bool, log: str) -> str:
    failure = str(report.get("failure", ""))
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
