"""The timed run of a cuda delivery: the in-box runner (`python -m hb.execution.cudarunner GO DONE`, started in
a box given the NVIDIA device nodes) that holds a rep's arrays on the device and calls the
submission's host entry point with device pointers, and its trusted side (`python -m hb.execution.cudarunner
--supervise JOBDIR`, outside any box) that stages the inputs, times the call and reads the outputs.

The protocol is hb.execution.boxrunner's with three more commands. "p" is answered "d" at once (the
calibration); "a<json>\\n" sets the next rep's host region (its size, each staged array's offset,
dtype and shape, the trailing values, and at `workspace_offset` a slot for three CUDA-event times:
the workspace itself is device memory) and is answered "r<pid> <address>\\n"; "i" copies the staged
arrays to the device and runs the request's conversions in (relayout's cupy kernels), zeroes the
device workspace; "g" calls the entry point and synchronizes the device; "o" runs the conversions
out and copies every output back into the host region, and writes the times slot. Each of "i",
"g" and "o" is answered "d"; "q" or end of file ends the runner.

Per rep on the trusted side: [box frozen] the problem arrays written into the box's host region;
"i" (thawed, frozen after); t0, thaw, "g" ... "d", t1, freeze; "o"; [frozen] the outputs read from
the region. The credited time is t1 - t0 less the calibrated round trip, as on the host; the
conversions' times are the runner's CUDA events, each bounded by the judge's own bracket of its
phase (docs/languages.md says what a device grade does and does not protect).
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from hb.execution.boxrunner import JOB, LIBRARY, _line

if TYPE_CHECKING:
    from hb.execution.runner import RepInput, RunResult
    from hb.execution.sandbox import Limits

# The times slot: convert_in, kernel and convert_out nanoseconds by the runner's CUDA events.
TIMES = 3
# cupy keeps the conversion kernels NVRTC compiles in memory (the box's disk is small).
ENV = {"CUPY_CACHE_IN_MEMORY": "1"}
_PASSED_ENV = ("CUDA_PATH", "CUDA_HOME", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES")
_TYPES = {"int64": ctypes.c_int64, "double": ctypes.c_double, "float": ctypes.c_float}


# -- the judge's side -----------------------------------------------------------------------------


def box_options() -> dict[str, Any]:
    """sandbox.Box's options for a cuda grade: the device nodes, and read-only what the box's
    CUDA needs outside /usr and the judge's environment (languages.cuda_read_only)."""
    from hb import languages

    return {"devices": languages.device_nodes(), "read_only": languages.cuda_read_only()}


def box_env(threads: int) -> dict[str, str]:
    """The in-box runner's environment: the box runners' Python settings, cupy's in-memory
    cache, the judge's own CUDA settings, and the threads a host entry point's OpenMP takes."""
    env = {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1", "PYTHONSAFEPATH": "1", **ENV}
    env.update({name: os.environ[name] for name in _PASSED_ENV if name in os.environ})
    if threads > 0:
        env["OMP_NUM_THREADS"] = str(threads)
    return env


def run_kernel(
    library: Path,
    symbol: str,
    pointers: Sequence[str],
    reps: Sequence[RepInput],
    workspace_bytes: int,
    output_names: Sequence[str],
    warmup: int,
    workdir_root: Path,
    limits: Limits,
    threads: int = 0,
    conversion: dict[str, Any] | None = None,
) -> RunResult:
    """hb.execution.runner.run_kernel for a cuda delivery: `symbol` of `library` called once per entry of
    `reps` by the in-box runner on device arrays (the request's `conversion` run on the device),
    in a box of its own that is given the device nodes, timed by this module's trusted side. A
    box of this kind is never started ahead: its supervisor is its own process."""
    from hb.execution import runner, sandbox, supervisor

    started = time.monotonic()
    workdir_root.mkdir(parents=True, exist_ok=True, mode=0o700)
    private = Path(tempfile.mkdtemp(prefix="job-", dir=workdir_root))
    staged = list(reps[0].arrays)
    # No RLIMIT_AS: the CUDA driver reserves address space far beyond what it uses (the cgroup's
    # memory limit holds the box).
    box_limits = replace(limits, address_space_limit=False)
    try:
        with sandbox.Box(workdir_root, box_limits, threads=threads, **box_options()) as box:
            box.write(runner.LIBRARY_FILE, library.read_bytes(), mode=0o555)
            box.write(
                JOB,
                json.dumps({
                    "symbol": symbol,
                    "pointer_names": list(pointers),
                    "trailing_kinds": [entry["kind"] for entry in reps[0].trailing],
                    "staged": staged,
                    "output_names": list(output_names),
                    "conversion": conversion,
                }),
            )  # fmt: skip
            for index, rep in enumerate(reps):
                np.savez(private / f"inputs_{index}.npz", **rep.arrays)  # type: ignore[arg-type]
            command = box.command(
                [sys.executable, "-I", "-m", "hb.execution.cudarunner"], box_env(threads)
            )
            job = {
                "box": command.to_json(),
                "box_dir": str(box.workdir),
                "freeze": box.freeze_control(),
                "staged": staged,
                "outputs": list(output_names),
                "workspace_bytes": workspace_bytes,
                "timeout_s": limits.timeout_s,
                "reps": [
                    {"inputs": f"inputs_{i}.npz", "trailing": rep.trailing,
                     "convert_in_ns": rep.convert_in_ns}
                    for i, rep in enumerate(reps)
                ],
            }  # fmt: skip
            (private / supervisor.JOB_FILE).write_text(json.dumps(job))
            with runner.timing_slot(limits.cpus):
                ended = supervise_job(private, command.pass_fds, timeout=limits.timeout_s + 60)
            oom = box.oom_killed()
        wall_s = time.monotonic() - started
        return runner._result(private, ended, warmup, command.protections, oom, wall_s)
    except subprocess.TimeoutExpired:
        return runner.RunResult(
            False, reason="the run exceeded the wall-clock limit and was killed"
        )
    except sandbox.SandboxUnavailable as error:
        return runner.RunResult(False, reason=str(error))
    finally:
        shutil.rmtree(private, ignore_errors=True)


def supervise_job(
    jobdir: Path, pass_fds: Sequence[int], timeout: float
) -> subprocess.CompletedProcess[bytes]:
    """Run the job in `jobdir` on a trusted side of its own (`python -m hb.execution.cudarunner
    --supervise JOBDIR`, outside any box): returncode 0 once the result is written, else its
    stderr; TimeoutExpired past `timeout` seconds (the box dies with it)."""
    argv = [sys.executable, "-m", "hb.execution.cudarunner", "--supervise", str(jobdir),
            str(os.getpid())]  # fmt: skip
    return subprocess.run(
        argv,
        pass_fds=tuple(pass_fds),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        timeout=timeout,
        check=False,
    )


def _bounded(reported: int, bracket: int) -> int:
    """A time the box reported, kept within what the judge saw of the same phase."""
    return min(max(int(reported), 0), int(bracket))


def supervise(jobdir: Path) -> dict[str, Any]:
    """A cuda delivery's run (the trusted side): see the module's docstring."""
    from hb.execution import supervisor as sv

    job = json.loads((jobdir / sv.JOB_FILE).read_text())
    names: list[str] = job["staged"]
    output_names: list[str] = job["outputs"]
    workspace_bytes = int(job["workspace_bytes"])
    times_like = np.zeros(TIMES, dtype=np.int64)

    def phase(session: Any, command: bytes) -> int:
        """One untimed phase in the thawed box: the judge's nanoseconds of it, frozen after."""
        start = time.perf_counter_ns()
        session.stop(False)
        session.channel.ask(command, b"d")
        seen = time.perf_counter_ns() - start
        if not session.stop(True):
            raise sv.RunFailure("freeze")
        return seen

    def body(session: Any, report: dict[str, Any]) -> None:
        channel = session.channel
        hosts: dict[int, int] = {}
        # The first pings reach the runner before it loads cupy and the submission.
        session.stop(True)
        session.calibrate(sv.CALIBRATION_PINGS)
        held: dict[str, np.ndarray] = {}
        written = sv.Outputs(jobdir, len(job["reps"]))
        for index, rep in enumerate(job["reps"]):
            loaded = sv.load_into(jobdir / rep["inputs"], held)
            staged = [loaded[name] for name in names]
            if index == 0:
                written.prepare({name: loaded[name] for name in output_names})
            offsets, cursor = [], 0
            for array in staged:
                offsets.append(cursor)
                cursor = sv._aligned(cursor + max(array.nbytes, 1))
            times_offset = cursor
            size = cursor + times_like.nbytes
            session.stop(False)
            channel.ask(sv._arguments(size, offsets, rep["trailing"], times_offset,
                                      workspace_bytes, staged), b"r")  # fmt: skip
            try:
                box_pid, base = (int(field) for field in channel.line().split())
            except ValueError:
                raise sv.RunFailure("protocol: the runner's answer has no address") from None
            if not session.stop(True):
                raise sv.RunFailure("freeze")
            if box_pid not in hosts:
                hosts[box_pid] = sv._host_pid(box_pid, session.control, session.process.pid)
            memory = sv._BoxMemory(hosts[box_pid], base, size)
            # [frozen] the problem arrays at the problem precision, and an empty times slot.
            for offset, array in zip(offsets, staged, strict=True):
                memory.write(offset, array)
            memory.write(times_offset, times_like)
            in_seen = phase(session, b"i")
            seen = session.timed_call()
            out_seen = phase(session, b"o")
            outputs = {
                name: memory.read(offsets[names.index(name)], staged[names.index(name)])
                for name in output_names
            }
            times = memory.read(times_offset, times_like)
            written.write(index, outputs)
            report["outputs"] = written.layout()
            session.calibrate(sv.PINGS_PER_REP)
            report["reps"].append({
                "seen_ns": seen,
                "convert_in_ns": _bounded(times[0], in_seen) + int(rep.get("convert_in_ns", 0)),
                "convert_out_ns": _bounded(times[2], out_seen),
                # The runner's own event time of the call: it informs, the judge's bracket counts.
                "device_kernel_ns": _bounded(times[1], seen),
            })  # fmt: skip

    return sv._run(jobdir, job, [], 1, body)


def run_job(jobdir: Path) -> None:
    """Supervise the cuda job in `jobdir` and write its result there."""
    from hb.execution import supervisor as sv

    try:
        report = supervise(jobdir)
    except Exception as error:  # reported as the run's failure, never as a traceback
        report = {"ok": False, "reps": [], "failure": f"supervisor: {sv.describe(error)}"}
    (jobdir / sv.RESULT_FILE).write_text(json.dumps(report))


# -- the box's side -------------------------------------------------------------------------------


class _Device:
    """The in-box state of a cuda run: cupy, the request's device conversion program, the
    submission's entry point, the host region the judge stages into and this rep's device
    arrays."""

    def __init__(self, job: dict[str, Any]) -> None:
        import cupy

        self.cupy = cupy
        count = cupy.cuda.runtime.getDeviceCount()
        if count < 1:
            raise RuntimeError("the box sees no CUDA device")
        self.symbol: str = job["symbol"]
        self.pointers: list[str] = job["pointer_names"]
        self.names: list[str] = job["staged"]
        self.outputs: list[str] = job["output_names"]
        conversion = job.get("conversion")
        self.program: Any = None
        self.sizes: dict[str, int] = {}
        if conversion:
            from relayout import parse_arrays
            from relayout.convert.program import compile_program
            from relayout.models import Requests

            self.program = compile_program(
                Requests.validate(conversion["requests"]),
                parse_arrays(dict(conversion["arrays"])),
                target="device",
            )
            self.sizes = {name: int(value) for name, value in conversion["sizes"].items()}
        try:
            self.kernel = getattr(ctypes.CDLL(os.path.abspath(LIBRARY)), self.symbol)
        except (OSError, AttributeError) as error:
            raise RuntimeError(f"the library does not define {self.symbol} ({error})") from None
        self.kernel.argtypes = (
            [ctypes.c_void_p] * len(self.pointers)
            + [_TYPES[kind] for kind in job["trailing_kinds"]]
            + [ctypes.c_void_p, ctypes.c_int64]
        )
        self.kernel.restype = None
        self.region: Any = None
        self.host: dict[str, np.ndarray] = {}
        self.trailing: list[Any] = []
        self.times_offset = 0
        self.workspace_bytes = 0
        self.workspace: Any = None
        self.device: dict[str, Any] = {}
        self.kept: dict[str, Any] = {}
        self.times = [0] * TIMES
        self.events = (cupy.cuda.Event(), cupy.cuda.Event())

    def layout(self, message: dict[str, Any]) -> int:
        """The host region for the next rep (kept while its size holds); its address."""
        from hb.execution.pybox import _Region, _views

        size = int(message["size"])
        if self.region is None or self.region.bytes.nbytes != size:
            self.host = {}
            if self.region is not None:
                self.region.close()
            self.region = _Region(size)
        self.host = dict(zip(self.names, _views(self.region.bytes, message), strict=True))
        self.trailing = list(message["trailing"])
        self.times_offset = int(message["workspace_offset"])
        self.workspace_bytes = int(message["workspace_bytes"])
        return int(self.region.address)

    def _timed(self, index: int, work: Any) -> None:
        start, end = self.events
        start.record()
        work()
        end.record()
        end.synchronize()
        elapsed_ms = self.cupy.cuda.get_elapsed_time(start, end)
        self.times[index] = int(elapsed_ms * 1e6)

    def copy_in(self) -> None:
        """The staged arrays to the device, converted where the request converts them."""
        from relayout.convert.device import storage_dtype

        cp = self.cupy

        def work() -> None:
            buffers: dict[str, Any] = {}
            if self.program is not None:
                buffers = self.kept = self.program.convert_in(
                    self.host, self.sizes, buffers=self.kept
                )
            self.device = {}
            for name in self.pointers:
                if name in buffers:
                    self.device[name] = buffers[name]
                else:
                    host = self.host[name]
                    self.device[name] = cp.asarray(host.view(storage_dtype(host.dtype)))
            wanted = max(self.workspace_bytes, 1)
            if self.workspace is None or self.workspace.nbytes != wanted:
                self.workspace = cp.zeros(wanted, dtype=cp.uint8)
            else:
                self.workspace.fill(0)

        self._timed(0, work)

    def call(self) -> None:
        """The entry point on device pointers, then the device synchronized."""

        def work() -> None:
            self.kernel(
                *(int(self.device[name].data.ptr) for name in self.pointers),
                *self.trailing,
                int(self.workspace.data.ptr),
                self.workspace_bytes,
            )

        self._timed(1, work)
        self.cupy.cuda.runtime.deviceSynchronize()

    def copy_out(self) -> None:
        """The outputs back into the host region at the problem precision, and the times."""

        def work() -> None:
            converted: set[str] = set()
            if self.program is not None:
                converted = {s for p in self.program.pointers for s in p.sources}
                outputs = {name: self.host[name] for name in self.outputs if name in converted}
                self.program.convert_out(self.kept, outputs, self.sizes)
            for name in self.outputs:
                if name not in converted:
                    host = self.host[name]
                    device = self.device[name]
                    host.view(device.dtype)[...] = device.get()

        self._timed(2, work)
        slot = self.region.bytes[self.times_offset : self.times_offset + 8 * TIMES]
        slot.view(np.int64)[...] = self.times


def _fail(message: str) -> int:
    sys.stderr.write(f"hb box: {message}\n")
    sys.stderr.flush()
    return 3


def main(argv: list[str]) -> int:
    go, done = (int(a) for a in argv[1:3])
    device: _Device | None = None
    phases = {b"i": "copy_in", b"g": "call", b"o": "copy_out"}
    while True:
        command = os.read(go, 1)
        if command == b"p":
            os.write(done, b"d")
        elif command == b"a":
            message = json.loads(_line(go))
            if device is None:
                # cupy, the conversions and the library only after the supervisor's first pings:
                # nothing they do can slow the round trip it calibrates.
                try:
                    with open(JOB) as handle:
                        device = _Device(json.load(handle))
                except Exception as error:  # cupy's, the driver's or the library's own failure
                    return _fail(f"the device runner could not start: {error}")
            address = device.layout(message)
            os.write(done, f"r{os.getpid()} {address}\n".encode())
        elif command in phases and device is not None:
            try:
                getattr(device, phases[command])()
            except Exception as error:  # a device fault or a failed conversion is the reason
                what = f"{device.symbol} on the device" if command == b"g" else "the device run"
                return _fail(f"{what} failed: {error}")
            os.write(done, b"d")
        else:
            return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--supervise"]:
        from hb.execution import sandbox

        sandbox.end_with(int(sys.argv[3]))
        run_job(Path(sys.argv[2]))
        sys.exit(0)
    sys.exit(main(sys.argv))
