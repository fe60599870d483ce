"""The trusted side of a timed run (`python -m hb.execution.supervisor JOBDIR`, started by the judge
outside any box): it converts each rep's inputs, stages them in the box runner's memory (or, for
a distributed run, in an arena it shares with the box), times the kernel call from outside the
box, freezes the box before it reads the outputs, converts them back and writes what it saw into
JOBDIR, which the box cannot reach.

Per rep: [box frozen] convert in (timed) and write the inputs into the box runner's memory, zero
the workspace, tell the box the arguments if they changed; then t0, thaw, "go" ... "done", t1,
freeze; then read the outputs back and convert them out (timed). Reps go in batches (MAX_BATCH
within BATCH_BYTES): every rep of a batch is read from its file and converted in first, then each
is staged, called and read back in turn, so that two timed calls of a batch are apart only by the
first's read-back and the second's staging, as a direct caller's calls are apart by its copies;
the outputs are then converted out and written. The box runs only between a thaw and the next
freeze, and t0 is read before the thaw, so nothing it does outside that window is off the clock.
From t0 to t1 the exchange runs in C (hb.execution.exchange) where it could be built. The
credited time of a rep is t1 - t0 less the calibrated round trip (the fastest of the empty
exchanges through the same thaw, pipes and freeze, each after a staging's worth of bytes (_Stir):
CALIBRATION_PINGS before the first rep, PINGS_PER_REP per rep after each batch), and never less
than RESOLUTION_NS. While it stages, times and reads back, the supervisor runs on the CPU of the
box runner's own thread (_Beside).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import select
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hb.execution import exchange, sandbox
from hb.execution.sandbox import BoxCommand, Freezer

# The layout table and each rank's arena header start with this magic ("HBMPIDRV" as
# little-endian bytes); the generated MPI driver refuses a table written for another driver.
LAYOUT_MAGIC = int.from_bytes(b"HBMPIDRV", "little")

CALIBRATION_PINGS = 25
PINGS_PER_REP = 5
# The finest time the judge credits: a call faster than the round trip's jitter is timed as this.
RESOLUTION_NS = 1000
ALIGN = 4096
# A batch of reps is read ahead and timed one after the other, within this much memory (shared by
# a paired run's two boxes): a grade of the default eight reps and one warm-up is one batch, so
# every timed rep follows another and the first call after a batch's reading (colder than the
# rest) is the warm-up's.
MAX_BATCH = 16
BATCH_BYTES = 256 << 20
# The piece the outputs' file is zero-filled in.
_PIECE = 256 << 10
JOB_FILE = "job.json"
RESULT_FILE = "result.json"
OUTPUTS_FILE = "outputs.bin"
# The box's part of a job (its command, run directory, freezer, wall-clock limit and whether its
# runner is killed at the end), written before the rest when the box is started ahead of its
# grade (hb.execution.box_pool).
START_FILE = "start.json"


def _readable(fd: int, timeout_s: float) -> bool:
    """Whether `fd` has something to read within `timeout_s` (poll: no limit on fd numbers)."""
    waiting = select.poll()
    waiting.register(fd, select.POLLIN | select.POLLHUP)
    return bool(waiting.poll(timeout_s * 1e3))


class RunFailure(Exception):
    """The box failed the rep: it crashed, stopped answering, or broke the protocol."""


# The prefix of a failure of a paired run's baseline box (the judge's, never the submission's).
BASELINE_SIDE = "baseline: "
# A box that answered before it was asked (a thread of it that answered twice).
UNASKED = "protocol: an answer came before the call (the box answered twice or unasked)"


def _aligned(offset: int) -> int:
    return (offset + ALIGN - 1) // ALIGN * ALIGN


@dataclass
class _Channel:
    """The pipes to the box: one "go" pipe per process that calls the kernel (one, or one per
    rank), one "done" pipe they all answer on, read here a byte at a time."""

    go: list[int]
    done: int
    process: Any
    deadline: float

    def ask(self, message: bytes, answer: bytes) -> None:
        self.unasked()
        self.command(message, answer)

    def command(self, message: bytes, answer: bytes) -> None:
        """`message` to every caller and its answer from each, once unasked() has been checked."""
        for fd in self.go:
            os.write(fd, message)
        self.expect(answer, len(self.go))

    def unasked(self) -> None:
        """Fail on anything the box sent before it was asked."""
        if _readable(self.done, 0):
            got = os.read(self.done, 1)
            raise RunFailure("ended" if got == b"" else UNASKED)

    def byte(self) -> bytes:
        """The next byte the box sent (b"" at the end of its input), within the deadline; what
        follows it stays on the pipe, where unasked() and the timed exchange find it."""
        self.expect_any()
        return os.read(self.done, 1)

    def line(self) -> bytes:
        """The rest of an answer's line (after its first byte), within the deadline."""
        parts: list[bytes] = []
        while len(parts) < 256:
            byte = self.byte()
            if byte in (b"", b"\n"):
                return b"".join(parts)
            parts.append(byte)
        raise RunFailure("protocol: an answer's line is too long")

    def expect_any(self) -> None:
        remaining = self.deadline - time.monotonic()
        if remaining <= 0 or not _readable(self.done, remaining):
            raise RunFailure("timeout")

    def expect(self, answer: bytes, count: int = 1) -> None:
        for _ in range(count):
            got = self.byte()
            if got != answer:
                raise RunFailure("ended" if got == b"" else f"protocol: {got!r}")


class _iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("length", ctypes.c_size_t)]


_libc = ctypes.CDLL(None, use_errno=True)
for _name in ("process_vm_writev", "process_vm_readv"):
    getattr(_libc, _name).restype = ctypes.c_ssize_t
    getattr(_libc, _name).argtypes = [ctypes.c_int, ctypes.POINTER(_iovec), ctypes.c_ulong,
                                      ctypes.POINTER(_iovec), ctypes.c_ulong, ctypes.c_ulong]  # fmt: skip


class _BoxMemory:
    """The region of the box runner's own memory that holds a call's arguments, written and read
    from outside with process_vm_writev/readv while the box is frozen. The runner's id is the one
    it gives in the box, matched to a process of the box's own cgroup (or of the process tree the
    judge started), so that nothing outside the box is ever written."""

    def __init__(self, pid: int, base: int, size: int) -> None:
        self.pid, self.base, self.size = pid, base, size

    def _transfer(self, name: str, offset: int, buffer: int, length: int) -> None:
        if offset < 0 or offset + length > self.size:
            raise RunFailure("protocol: a transfer outside the arguments' region")
        done = 0
        while done < length:
            local = _iovec(buffer + done, length - done)
            remote = _iovec(self.base + offset + done, length - done)
            moved = getattr(_libc, name)(
                self.pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0
            )
            if moved <= 0:
                raise RunFailure(
                    f"staging: {os.strerror(ctypes.get_errno()) if moved else 'nothing moved'}"
                )
            done += moved

    def write(self, offset: int, array: np.ndarray) -> None:
        array = np.ascontiguousarray(array)
        self._transfer("process_vm_writev", offset, array.ctypes.data, array.nbytes)

    def read(self, offset: int, like: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """The array shaped as `like` at `offset`, into `out` when it fits (made once, refilled)."""
        if out is None or out.shape != like.shape or out.dtype != like.dtype:
            out = np.empty(like.shape, dtype=like.dtype)
        self._transfer("process_vm_readv", offset, out.ctypes.data, out.nbytes)
        return out


def _last_level_cache_bytes() -> int:
    """The largest cache of the CPUs (what a copy of more than this leaves no warmer), from sysfs;
    32 MiB where the machine does not say."""
    sizes = []
    for entry in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*/size"):
        with contextlib.suppress(OSError, ValueError):
            text = entry.read_text().strip()
            scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
            sizes.append(int(text.rstrip("KMG")) * scale)
    return max(sizes, default=32 << 20)


class _Stir:
    """What comes before a timed call, for the pings that calibrate it: the same bytes staged
    the same way (process_vm_writev, here into the supervisor's own buffer), at most the largest
    cache's worth. A timed call's thaw, wake-up and pipes run on caches its staging has just
    flushed, and cost more than an exchange made on warm ones (docs/hb.md, "Timing"): a round
    trip calibrated warm would credit the difference to the kernel."""

    def __init__(self, staged_bytes: int) -> None:
        size = max(1, min(staged_bytes, _last_level_cache_bytes()))
        self.source = np.ones(size, dtype=np.uint8)
        self.target = np.zeros(size, dtype=np.uint8)
        self.memory = _BoxMemory(os.getpid(), self.target.ctypes.data, size)

    def stage(self) -> None:
        self.memory.write(0, self.source)


class _Beside:
    """The supervisor's own thread on the CPU the box's runner is on, while it stages, times and
    reads back (not while it converts: relayout's threads, made then, would inherit the one CPU).
    The inputs it stages then sit in the caches of the CPU whose thread calls the kernel, as a
    direct caller's own copies do; and on "done" the supervisor wakes where the runner has just
    blocked, never behind a kernel's thread spinning out its loop on another CPU."""

    def __init__(self) -> None:
        self.home = os.sched_getaffinity(0)
        self.cpu: int | None = None

    def follow(self, pid: int) -> None:
        """The lowest CPU `pid` may run on (an OpenMP runtime binds its first thread there)."""
        with contextlib.suppress(OSError):
            allowed = os.sched_getaffinity(pid) & self.home
            self.cpu = min(allowed) if allowed else None

    def near(self) -> None:
        if self.cpu is not None:
            with contextlib.suppress(OSError):
                os.sched_setaffinity(0, {self.cpu})

    def away(self) -> None:
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, self.home)


def _box_pids(control: tuple[str, int] | None, root: int) -> list[int]:
    """The host ids of the box's processes: its cgroup's members, or the judge-started tree."""
    if control is not None:
        with contextlib.suppress(OSError):
            text = (Path(control[0]) / "cgroup.procs").read_text()
            return [int(pid) for pid in text.split()]
    found, pending = [], [root]
    while pending:
        pid = pending.pop()
        found.append(pid)
        with contextlib.suppress(OSError):
            for task in Path(f"/proc/{pid}/task").iterdir():
                pending += [int(child) for child in (task / "children").read_text().split()]
    return found


def _host_pid(box_pid: int, control: tuple[str, int] | None, root: int) -> int:
    """The host id of the box process whose own id in the box is `box_pid`."""
    for pid in _box_pids(control, root):
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("NSpid:") and int(line.split()[-1]) == box_pid:
                    return pid
    raise RunFailure("protocol: the runner named a process that is not in its box")


class _Arena:
    """A sealed-against-shrinking memfd the box maps; grown (never shrunk) as reps need."""

    def __init__(self) -> None:
        self.fd = os.memfd_create("hb-arena", os.MFD_ALLOW_SEALING)
        import fcntl

        fcntl.fcntl(self.fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK)
        self.size = 0
        self.view = np.empty(0, dtype=np.uint8)
        self._map: Any = None

    def ensure(self, size: int) -> None:
        import mmap

        size = max(_aligned(size), ALIGN)
        if size <= self.size:
            return
        os.ftruncate(self.fd, size)
        if self._map is not None:
            del self.view
            self._map.close()
        self._map = mmap.mmap(self.fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        self.view = np.frombuffer(self._map, dtype=np.uint8)
        self.size = size

    def region(self, offset: int, like: np.ndarray) -> np.ndarray:
        return self.view[offset : offset + like.nbytes].view(like.dtype).reshape(like.shape)


def _conversion_program(job: dict[str, Any]) -> Any:
    conversion = job.get("conversion")
    if not conversion:
        return None
    from hb import requests_api

    return requests_api.compile_conversions(
        conversion["requests"], conversion["arrays"], cache_dir=Path(job["conversion_dir"])
    )


class _Session:
    """One supervised run: the box's process, the pipes to it, its freezer, the round trips."""

    def __init__(self, jobdir: Path, job: dict[str, Any], arenas: list[_Arena], callers: int,
                 extra_arguments: list[str]) -> None:  # fmt: skip
        self.control = tuple(job["freeze"]) if job.get("freeze") else None
        self.freezer = Freezer(self.control) if self.control else None
        self.trips: list[int] = []
        self.arenas = arenas
        pipes = [os.pipe() for _ in range(callers)]
        done_read, done_write = os.pipe()
        inherited = [a.fd for a in arenas] + [r for r, _ in pipes] + [done_write]
        for fd in inherited:
            os.set_inheritable(fd, True)
        if callers == 1 and not arenas:
            arguments = [str(pipes[0][0]), str(done_write)]
        else:
            arguments = [",".join(str(a.fd) for a in arenas), ",".join(str(r) for r, _ in pipes),
                         str(done_write)]  # fmt: skip
        command = (
            BoxCommand.from_json(job["box"])
            .remap(_received)
            .with_argv([*extra_arguments, *arguments], inherited)
        )
        with open(jobdir / "box.stdout", "wb") as out, open(jobdir / "box.stderr", "wb") as err:
            self.process = command.popen(Path(job["box_dir"]), out.fileno(), err.fileno())
        for fd in [r for r, _ in pipes] + [done_write]:
            os.close(fd)
        deadline = time.monotonic() + float(job["timeout_s"])
        self.channel = _Channel([w for _, w in pipes], done_read, self.process, deadline)
        self.kill_at_end = bool(job.get("kill_at_end"))
        self.beside = _Beside()
        # Where the freezer is cgroup v2's (or there is none), the exchange is timed in C.
        freezer = self.freezer.descriptors() if self.freezer else None
        self.exchange = (
            exchange.Exchange(freezer, self.channel.go, done_read)
            if (freezer is not None or self.freezer is None) and exchange.available()
            else None
        )

    def bind(self, timeout_s: float) -> None:
        """The wall-clock limit of the grade a box started ahead now serves, from now."""
        self.channel.deadline = time.monotonic() + timeout_s

    def stop(self, frozen: bool) -> bool:
        return self.freezer.set(frozen) if self.freezer else True

    def calibrate(self, count: int, stirred: _Stir | None = None) -> None:
        """Empty exchanges through the same thaw, pipes and freeze as a timed call, each after
        what comes before a timed call: as many bytes staged as a rep stages (`stirred`)."""
        for _ in range(count):
            if stirred is not None:
                stirred.stage()
            self.trips.append(self._exchange(b"p"))

    def timed_call(self) -> int:
        """The nanoseconds from before the thaw to the last "done"; the box frozen after."""
        return self._exchange(b"g")

    def _exchange(self, command: bytes) -> int:
        """Thaw, `command` to every caller, every "d", freeze: the nanoseconds from before the
        thaw to the last answer, timed in C where it could be built, the freeze asked for at
        once after. The box is left frozen."""
        if self.exchange is None:
            self.channel.unasked()
            start = time.perf_counter_ns()
            self.stop(False)
            self.channel.command(command, b"d")
            elapsed = time.perf_counter_ns() - start
            if not self.stop(True):
                raise RunFailure("freeze")
            return elapsed
        remaining = self.channel.deadline - time.monotonic()
        if remaining <= 0:
            raise RunFailure("timeout")
        elapsed, got = self.exchange(command, int(remaining * 1e9))
        if elapsed >= 0:
            return elapsed
        raise RunFailure({
            exchange.THAW: "freeze", exchange.FREEZE: "freeze", exchange.WRITE: "ended",
            exchange.TIMEOUT: "timeout", exchange.ENDED: "ended", exchange.UNASKED: UNASKED,
        }.get(elapsed, f"protocol: {got!r}"))  # fmt: skip

    def credit(self, report: dict[str, Any], round_trip: int | None = None) -> None:
        """Each rep's kernel time: what was seen less the fastest round trip of the whole run
        (pings before the first rep and after each batch, each after a staging's worth of bytes),
        or less `round_trip` where a paired run's boxes share theirs."""
        if round_trip is None:
            round_trip = min(self.trips)
        report["round_trip_ns"] = round_trip
        for rep in report["reps"]:
            rep["kernel_ns"] = max(rep["seen_ns"] - round_trip, RESOLUTION_NS)
        report["ok"] = True

    def discard(self) -> None:
        """End a box that serves no grade (its runner waits for a job that will not come)."""
        with contextlib.suppress(OSError):
            self.process.kill()
        self.finish({}, False)

    def finish(self, report: dict[str, Any], ended: bool) -> None:
        self.beside.away()
        failure = report.get("failure")
        if failure is not None and failure not in ("ended", "timeout"):
            # A run that failed while its runner still lives (a staging refused, a broken
            # protocol, a box that would not freeze): nothing of it is wanted, so the runner is
            # ended now rather than waited for, and the grade names the failure, not the kill.
            with contextlib.suppress(OSError):
                self.process.kill()
            report["stopped"] = True
        elif ended and self.kill_at_end:
            # A box discarded after its job: its runner is ended, not asked to end (a probe's,
            # which writes its files as the runner exits, is asked).
            self.process.kill()
        elif ended:
            self.stop(False)
            for fd in self.channel.go:
                os.write(fd, b"q")
        if self.freezer is not None:
            self.freezer.set(False)
            self.freezer.close()
        try:
            remaining = self.channel.deadline - time.monotonic()
            self.process.wait(timeout=max(0.1, min(5.0, remaining)))
        except Exception:
            self.process.kill()
            self.process.wait()
        report["returncode"] = self.process.returncode


def _open_session(jobdir: Path, job: dict[str, Any], arenas: list[_Arena],
                  callers: int) -> _Session:  # fmt: skip
    """The session of `jobdir`'s box: the one started ahead for it, or one started now."""
    session = _started.pop(jobdir, None)
    if session is not None and (arenas or callers != 1 or session.process.poll() is not None):
        # A box started ahead is a single runner's, without arenas; one whose runner ended
        # while it waited (nothing of a grade had reached it) is started again.
        session.discard()
        session = None
    if session is not None:
        session.bind(float(job["timeout_s"]))
        return session
    return _Session(jobdir, job, arenas, callers, [])


def _run(jobdir: Path, job: dict[str, Any], arenas: list[_Arena], callers: int,
         body: Any) -> dict[str, Any]:  # fmt: skip
    """Run `body` on the job's session (and, for a paired job, the baseline's session after it),
    credit each session's reps with its own round trip, and end every box."""
    report: dict[str, Any] = {"ok": False, "reps": [], "round_trip_ns": 0}
    ended = False
    sessions: list[_Session] = []
    reports = [report]
    try:
        sessions.append(_open_session(jobdir, job, arenas, callers))
        paired = job.get("baseline")
        if paired:
            baseline_dir = Path(paired["jobdir"])
            start = json.loads((baseline_dir / START_FILE).read_text())
            sessions.append(_open_session(baseline_dir, {**start, **paired}, [], 1))
            report["baseline"] = {"ok": False, "reps": [], "round_trip_ns": 0}
            reports.append(report["baseline"])
        body(*sessions, report)
        # A paired run's two boxes go through the same thaw, pipes and freeze: both are credited
        # less the fastest round trip of either, so that the noise of one box's fastest ping is
        # not a difference between them (and a submission, which can only slow its own later
        # pings, cannot lower it).
        shared = min(min(s.trips) for s in sessions) if len(sessions) > 1 else None
        for session, part in zip(sessions, reports, strict=False):
            session.credit(part, shared)
        ended = True
    except RunFailure as failure:
        report["failure"] = str(failure)
    except (OSError, ValueError, KeyError, MemoryError, TypeError) as error:
        report["failure"] = f"supervisor: {describe(error)}"
    finally:
        # The submission's session ends last: its runner's exit status is the report's.
        for session in reversed(sessions):
            session.finish(report, ended)
    return report


class _Waits:
    """What kept a box from running while it was timed: the nanoseconds its threads spent
    runnable but waiting for a CPU (each thread's run_delay in /proc/PID/task/TID/schedstat,
    summed over the box's processes, so on cgroup v1 and v2 alike), the host's steal time (from
    /proc/stat, in the kernel's ticks) and, where the box's cgroup is v2's, its own CPU pressure
    (the "some" total of its cpu.pressure: the time at least one of its tasks waited). All are
    read with the box frozen, when none grows on the box's account."""

    TICK_NS = 1_000_000_000 // (os.sysconf("SC_CLK_TCK") or 100)

    def __init__(self, session: _Session) -> None:
        self.session = session

    def box_ns(self) -> int:
        total = 0
        for pid in _box_pids(self.session.control, self.session.process.pid):
            with contextlib.suppress(OSError):
                for task in Path(f"/proc/{pid}/task").iterdir():
                    with contextlib.suppress(OSError, ValueError, IndexError):
                        total += int((task / "schedstat").read_text().split()[1])
        return total

    @classmethod
    def steal_ns(cls) -> int:
        with contextlib.suppress(OSError, ValueError, IndexError), open("/proc/stat") as stat:
            return int(stat.readline().split()[8]) * cls.TICK_NS
        return 0

    def pressure_ns(self) -> int | None:
        """The box cgroup's cpu.pressure "some" total in ns; None without one (cgroup v1)."""
        control = self.session.control
        if control is None or int(control[1]) != 2:
            return None
        return cgroup_pressure_ns(Path(control[0]) / "cpu.pressure")

    def snapshot(self) -> tuple[int, int, int | None]:
        """The box's waits, the host's steal and the box's pressure now; taken before a rep's
        staging (the box frozen), so that nothing is read between the staging and the call."""
        return self.box_ns(), self.steal_ns(), self.pressure_ns()

    def around(
        self, call: Any, before: tuple[int, int, int | None]
    ) -> tuple[int, int, int, int, int | None]:
        """`call()`'s time and its start (CLOCK_MONOTONIC), with the box's waits, the host's
        steal and the box cgroup's CPU pressure (None without one) since `before`."""
        begun = time.monotonic_ns()
        seen = int(call())
        waited, stolen, pressed = before
        after = self.pressure_ns()
        pressure = None if pressed is None or after is None else after - pressed
        return seen, begun, self.box_ns() - waited, self.steal_ns() - stolen, pressure


def cgroup_pressure_ns(path: Path) -> int | None:
    """The "some" line's total of a cgroup v2 pressure file (microseconds there) in ns; None
    where the file is missing or says no such line."""
    with contextlib.suppress(OSError, ValueError):
        for line in path.read_text().splitlines():
            fields = dict(f.split("=", 1) for f in line.split()[1:] if "=" in f)
            if line.startswith("some ") and "total" in fields:
                return int(fields["total"]) * 1000
    return None


class _Side:
    """One box of a single-node run and what it is given: its pointers (in the kernel's order),
    its reps' input files and trailing arguments, its conversions, the region of its runner's
    memory the arguments are staged in, the buffers its outputs are read back into, and the
    file its outputs are written to."""

    def __init__(self, session: _Session, jobdir: Path, job: dict[str, Any], output_names: list[str],
                 describe_arrays: bool, batch: int, label: str = "") -> None:  # fmt: skip
        self.session, self.jobdir, self.job, self.label = session, jobdir, job, label
        self.pointers: list[str] = job["pointers"]
        self.output_names = output_names
        self.reps: list[dict[str, Any]] = job["reps"]
        self.program = _conversion_program(job)
        self.sizes = (job.get("conversion") or {}).get("sizes", {})
        self.describe_arrays = describe_arrays
        self.zeros = np.zeros(max(int(job["workspace_bytes"]), 1), dtype=np.uint8)
        self.workspace_bytes = int(job["workspace_bytes"])
        self.hosts: dict[int, int] = {}
        self.placed: dict[bytes, _BoxMemory] = {}
        self.waits = _Waits(session)
        self.stirred: _Stir | None = None
        # Per place in a batch: the inputs read from their file, the kernel-side buffers (made,
        # and faulted in, by the first batch and refilled by the others; the times are relayout's
        # own of the conversion, not of its checks) and the buffers the box's memory is read back
        # into.
        self.held: list[dict[str, np.ndarray]] = [{} for _ in range(batch)]
        self.kept: list[dict[str, Any]] = [{} for _ in range(batch)]
        self.read_back: list[dict[str, np.ndarray]] = [{} for _ in range(batch)]
        self.ready: list[tuple[Any, ...]] = []
        self.seen: list[tuple[int, int, int, int, int | None]] = []
        self.written = Outputs(jobdir, len(self.reps))

    def start(self) -> None:
        """The runner's loop in C answers every ping and call from here on (boxcall); the box is
        left frozen."""
        with self.labelled():
            if self.job.get("native_loop"):
                self.session.stop(False)
                self.session.channel.ask(b"c", b"d")
            self.session.stop(True)

    def read(self, group: range) -> None:
        """Every rep of the batch read (and converted) first, so that between two of its timed
        calls there is only the first's read-back and the second's staging."""
        self.ready = []
        for place_in_batch, index in enumerate(group):
            staged = load_into(self.jobdir / self.reps[index]["inputs"], self.held[place_in_batch])
            if index == 0:
                self.written.prepare({name: staged[name] for name in self.output_names})
            convert_in_ns = 0
            buffers = staged
            if self.program is not None:
                buffers = self.kept[place_in_batch] = self.program.convert_in(
                    staged, self.sizes, buffers=self.kept[place_in_batch]
                )
                convert_in_ns = self.program.timings.convert_in_ns
            arrays = [buffers[name] if name in buffers else staged[name] for name in self.pointers]
            self.ready.append((staged, buffers, arrays, convert_in_ns))
        self.seen = []

    def calibrate(self, count: int) -> None:
        """The first pings reach the runner before it loads its library (at the first "a"), so
        the fastest round trip is one the library could not slow down; each follows a staging of
        as many bytes as the first rep's."""
        if self.stirred is None:
            self.stirred = _Stir(sum(a.nbytes for a in self.ready[0][2]) + self.zeros.nbytes)
            for pid in _box_pids(self.session.control, self.session.process.pid)[:1]:
                self.session.beside.follow(pid)
            self.session.beside.near()
        with self.labelled():
            self.session.calibrate(count, self.stirred)

    def _place(self, size: int, offsets: list[int], trailing: list[dict[str, Any]],
               workspace_offset: int, arrays: list[np.ndarray]) -> _BoxMemory:  # fmt: skip
        session, channel = self.session, self.session.channel
        message = _arguments(size, offsets, trailing, workspace_offset, self.workspace_bytes,
                             arrays if self.describe_arrays else None)  # fmt: skip
        if message in self.placed:
            # The runner holds the arguments of the rep before, which are this rep's too: the
            # box stays frozen, and the calls stay as close together as they can.
            return self.placed[message]
        self.placed.clear()
        # The box is thawed only to take the layout: no input is in its memory yet.
        session.stop(False)
        channel.ask(message, b"r")
        try:
            box_pid, base = (int(field) for field in channel.line().split())
        except ValueError:
            raise RunFailure("protocol: the runner's answer has no address") from None
        if not session.stop(True):
            raise RunFailure("freeze")
        if box_pid not in self.hosts:  # found once, not on every rep
            self.hosts[box_pid] = _host_pid(box_pid, session.control, session.process.pid)
        session.beside.follow(self.hosts[box_pid])
        session.beside.near()
        self.placed[message] = _BoxMemory(self.hosts[box_pid], base, size)
        return self.placed[message]

    def call(self, place_in_batch: int, index: int) -> None:
        """Stage rep `index`'s arguments [frozen], time its call, and read back [frozen] before
        anything of the box runs again: the outputs, or every converted pointer when
        conversions write the outputs back from them. A failure names the side (its label)."""
        with self.labelled():
            self._call(place_in_batch, index)

    @contextlib.contextmanager
    def labelled(self) -> Iterator[None]:
        """A failure of this side's box, named with its label."""
        try:
            yield
        except RunFailure as failure:
            raise RunFailure(f"{self.label}{failure}") from None

    def _call(self, place_in_batch: int, index: int) -> None:
        _, buffers, arrays, _ = self.ready[place_in_batch]
        offsets, cursor = [], 0
        for array in arrays:
            offsets.append(cursor)
            cursor = _aligned(cursor + max(array.nbytes, 1))
        workspace_offset = cursor
        memory = self._place(cursor + self.zeros.nbytes, offsets, self.reps[index]["trailing"],
                             workspace_offset, arrays)  # fmt: skip
        self.session.beside.near()
        before = self.waits.snapshot()
        for offset, array in zip(offsets, arrays, strict=True):
            memory.write(offset, array)
        memory.write(workspace_offset, self.zeros)
        self.seen.append(self.waits.around(self.session.timed_call, before))
        wanted = set(self.output_names) | (set(buffers) if self.program is not None else set())
        mine = self.read_back[place_in_batch]
        mine.update({
            name: memory.read(offset, array, mine.get(name))
            for name, offset, array in zip(self.pointers, offsets, arrays, strict=True)
            if name in wanted
        })  # fmt: skip

    def write(self, group: range, report: dict[str, Any]) -> None:
        """The batch's outputs converted out and written, and each rep's figures reported."""
        for place_in_batch, index in enumerate(group):
            staged, _, _, convert_in_ns = self.ready[place_in_batch]
            snapshot = self.read_back[place_in_batch]
            convert_out_ns = 0
            if self.program is not None:
                outputs = {n: staged[n] for n in self.output_names}
                self.program.convert_out(snapshot, outputs, self.sizes)
                convert_out_ns = self.program.timings.convert_out_ns
            else:
                outputs = {n: snapshot[n] for n in self.output_names}
            self.written.write(index, outputs)
            seen_ns, begun_ns, waited_ns, stolen_ns, pressure_ns = self.seen[place_in_batch]
            report["reps"].append({
                "seen_ns": seen_ns,
                "started_ns": begun_ns,
                "wait_ns": waited_ns,
                "steal_ns": stolen_ns,
                "pressure_ns": pressure_ns,
                "convert_in_ns": convert_in_ns + int(self.reps[index].get("convert_in_ns", 0)),
                "convert_out_ns": convert_out_ns,
            })  # fmt: skip
        report["outputs"] = self.written.layout()


def supervise(jobdir: Path) -> dict[str, Any]:
    """A single-node run: the box runner calling the kernel on arguments in its own memory. A
    paired job ("baseline": the baseline box's job directory, pointers and reps) times the
    baseline's box and the submission's alternately, rep by rep on the same inputs (baseline rep
    i and submission rep i back to back, in an order that alternates with i), each box frozen
    while the other runs."""
    job = json.loads((jobdir / JOB_FILE).read_text())
    if (jobdir / START_FILE).is_file():
        job = {**json.loads((jobdir / START_FILE).read_text()), **job}
    if job.get("mode") == "ranks":
        return supervise_ranks(jobdir, job)
    output_names: list[str] = job["outputs"]
    reps = job["reps"]
    paired = job.get("baseline")
    if paired and len(paired["reps"]) != len(reps):
        raise ValueError("a paired job gives both boxes the same number of reps")
    # A python delivery's runner is told each array's dtype and shape (hb.execution.pybox).
    describe_arrays = job.get("delivery") == "python"

    def body(session: _Session, *rest: Any) -> None:
        report: dict[str, Any] = rest[-1]
        if not reps:
            session.stop(True)
            session.calibrate(CALIBRATION_PINGS)
            return
        batch = _batch(jobdir / reps[0]["inputs"], 2 if paired else 1)
        # Which box opens each pair: the baseline's when (rep + batch + `order`) is even. It
        # alternates from pair to pair and from batch to batch (the first call of a batch follows
        # the reading of its inputs and is the colder one), and the judge gives each round of a
        # grade its own `order`, so that no box is the first of a batch in every round.
        order = int(job.get("order", 0))
        sides = [_Side(session, jobdir, job, output_names, describe_arrays, batch)]
        reports = [report]
        if paired:
            baseline_session: _Session = rest[0]
            baseline_job = {**paired, "outputs": output_names}
            sides.insert(0, _Side(baseline_session, Path(paired["jobdir"]), baseline_job,
                                  output_names, False, batch, BASELINE_SIDE))  # fmt: skip
            reports.insert(0, report["baseline"])
        for side in sides:
            side.start()
        for number, first in enumerate(range(0, len(reps), batch)):
            group = range(first, min(first + batch, len(reps)))
            for side in sides:
                side.read(group)
                if side.stirred is None:
                    side.calibrate(CALIBRATION_PINGS)
            for place_in_batch, index in enumerate(group):
                # A pair's two calls are apart only by one read-back and one staging; the box
                # that opens it alternates (above), so that an advantage of going first or
                # second cancels over the pairs.
                opens = (index + number + order) % 2 == 0
                for side in sides if opens else reversed(sides):
                    side.call(place_in_batch, index)
            for side in sides:
                side.session.beside.near()
                side.calibrate(PINGS_PER_REP * len(group))
            session.beside.away()
            for side, part in zip(sides, reports, strict=True):
                side.write(group, part)

    return _run(jobdir, job, [], 1, body)


def supervise_ranks(jobdir: Path, job: dict[str, Any]) -> dict[str, Any]:
    """A distributed run on host tiles: one arena per rank, each rank's tiles scattered into it
    here by the ranks' index maps (a cast array's tile cast with relayout's kernels, timed per
    rank, the slowest rank's time credited), "g" to every rank and the time until the last "d",
    then the box frozen while the tiles are read back, widened and gathered by their primary
    holders. The driver in the box never touches a file the judge reads. A job with "generate"
    (the generated-input kernels of hb.kernels) stages no inputs: each rank's tiles are generated here at
    their global indices from the rep's seed, with the box frozen as for a staged rep."""
    from hb.kernels.inputs import generated_tile
    from relayout.convert.casts import cast_in, widen_out
    from relayout.distribution import pack, unpack

    ranks = int(job["ranks"])
    dtype = np.dtype({"fp64": np.float64, "fp32": np.float32}[job["precision"]])
    arrays: list[dict[str, Any]] = job["arrays"]
    workspace: list[int] = [int(w) for w in job["workspace"]]
    with np.load(jobdir / "index.npz", allow_pickle=False) as archive:
        indices = {name: archive[name] for name in archive.files}
    element = []
    for array in arrays:
        cast = array.get("cast")
        element.append(np.dtype(_narrow_dtype(cast)) if cast else dtype)
    # Each rank's arena: a header page (magic, array count, offsets, workspace offset and size),
    # then its tiles at the kernel's element types and its workspace, each page aligned.
    layouts = []
    arenas = []
    for rank in range(ranks):
        offsets, cursor = [], ALIGN
        for array, kind in zip(arrays, element, strict=True):
            offsets.append(cursor)
            cursor = _aligned(cursor + max(int(array["counts"][rank]) * kind.itemsize, 1))
        arena = _Arena()
        arena.ensure(cursor + max(workspace[rank], 1))
        header = np.array(
            [LAYOUT_MAGIC, len(arrays), *offsets, cursor, workspace[rank]], dtype="<i8"
        )
        arena.view[: header.nbytes] = header.view(np.uint8)
        layouts.append((offsets, cursor))
        arenas.append(arena)

    def tile(arena: _Arena, offset: int, count: int, kind: np.dtype) -> np.ndarray:
        return arena.view[offset : offset + count * kind.itemsize].view(kind)

    def body(session: _Session, report: dict[str, Any]) -> None:
        session.channel.expect(b"r", ranks)  # every rank is through MPI_Init and mapped
        session.stop(True)
        # The first pings before the ranks load the submission ("l"), so that nothing it does can
        # slow the fastest round trip (and so lower its own time); each after as many bytes
        # staged as a rep stages into the arenas.
        stirred = _Stir(sum(arena.size for arena in arenas))
        session.calibrate(CALIBRATION_PINGS, stirred)
        session.stop(False)
        session.channel.ask(b"l", b"d")
        session.stop(True)
        generation = job.get("generate")
        sources = generation["seeds"] if generation else job["reps"]
        held: dict[str, np.ndarray] = {}
        gathered = {
            array["name"]: np.zeros(int(np.prod(array["shape"])), dtype=dtype)
            for array in arrays
            if array["output"]
        }
        written = Outputs(jobdir, len(sources))
        written.prepare({
            array["name"]: gathered[array["name"]].reshape(array["shape"])
            for array in arrays
            if array["output"]
        })  # fmt: skip
        for index, source in enumerate(sources):
            inputs: dict[str, np.ndarray] = {}
            if generation is None:
                inputs = load_into(jobdir / source, held)
            cast_in_ns = [0] * ranks
            for rank, (arena, (offsets, workspace_offset)) in enumerate(
                zip(arenas, layouts, strict=True)
            ):
                for a, array in enumerate(arrays):
                    count = int(array["counts"][rank])
                    if generation is not None:
                        at = (
                            np.arange(count, dtype=np.int64)
                            if array["broadcast"]
                            else indices[f"{array['name']}.{rank}"]
                        )
                        packed = generated_tile(generation["arrays"][a], int(source), at, dtype)
                    elif array["broadcast"]:
                        packed = inputs[array["name"]].reshape(-1)
                    else:
                        packed = pack(
                            inputs[array["name"]].reshape(-1), indices[f"{array['name']}.{rank}"]
                        )
                    target = tile(arena, offsets[a], count, element[a])
                    if array.get("cast"):
                        start = time.perf_counter_ns()
                        cast_in(np.ascontiguousarray(packed), array["cast"], out=target)
                        cast_in_ns[rank] += time.perf_counter_ns() - start
                    else:
                        target[...] = packed
                arena.view[workspace_offset : workspace_offset + max(workspace[rank], 1)] = 0
            seen = session.timed_call()
            widen_ns = [0] * ranks
            for whole in gathered.values():
                whole.fill(0)
            for rank, (arena, (offsets, _)) in enumerate(zip(arenas, layouts, strict=True)):
                for a, array in enumerate(arrays):
                    if not array["output"] or not array["primary"][rank]:
                        continue
                    count = int(array["counts"][rank])
                    got = tile(arena, offsets[a], count, element[a]).copy()
                    if array.get("cast"):
                        wide = np.empty(count, dtype=dtype)
                        start = time.perf_counter_ns()
                        widen_out(got, wide)
                        widen_ns[rank] += time.perf_counter_ns() - start
                        got = wide
                    whole = gathered[array["name"]]
                    if array["broadcast"]:
                        whole[...] = got
                    else:
                        unpack(whole, got, indices[f"{array['name']}.{rank}"])
            outputs = {
                array["name"]: gathered[array["name"]].reshape(array["shape"])
                for array in arrays
                if array["output"]
            }
            written.write(index, outputs)
            report["outputs"] = written.layout()
            session.calibrate(PINGS_PER_REP, stirred)
            report["reps"].append(
                {"seen_ns": seen, "convert_in_ns": max(cast_in_ns), "convert_out_ns": max(widen_ns)}
            )

    return _run(jobdir, job, arenas, ranks, body)


def _npz_members(handle: Any, path: Path) -> list[tuple[str, tuple[int, ...], bool, np.dtype, int]]:
    """Each array of an uncompressed .npz (as np.savez writes it): its name, shape, order, dtype
    and where its data starts in the file."""
    import struct
    import zipfile

    members = []
    try:
        archive = zipfile.ZipFile(handle)
    except (zipfile.BadZipFile, OSError) as error:
        raise ValueError(f"{path.name}: not an archive of arrays ({error})") from None
    with archive:
        for info in archive.infolist():
            name = info.filename.removesuffix(".npy")
            if info.compress_type != zipfile.ZIP_STORED:
                raise ValueError(f"{path.name}: {name} is compressed")
            if info.header_offset < 0:
                raise ValueError(f"{path.name}: {name} starts outside the file")
            handle.seek(info.header_offset)
            local = handle.read(30)
            if len(local) != 30 or local[:4] != b"PK\x03\x04":
                raise ValueError(f"{path.name}: {name} has no local header")
            name_length, extra_length = struct.unpack("<HH", local[26:30])
            handle.seek(info.header_offset + 30 + name_length + extra_length)
            version = np.lib.format.read_magic(handle)
            header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                      else np.lib.format.read_array_header_2_0)  # fmt: skip
            shape, fortran, dtype = header(handle)
            if dtype.hasobject:
                raise ValueError(f"{path.name}: {name} holds Python objects")
            members.append((name, shape, fortran, dtype, handle.tell()))
    return members


def _batch(first_inputs: Path, boxes: int = 1) -> int:
    """How many reps are read ahead and timed one after the other: as many as BATCH_BYTES holds
    (their inputs and what is read back, for each of `boxes` boxes), at most MAX_BATCH, at least
    one."""
    try:
        size = first_inputs.stat().st_size
    except OSError:
        return 1
    return max(1, min(MAX_BATCH, BATCH_BYTES // max(2 * size * boxes, 1)))


def load_into(path: Path, held: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """A rep's inputs (an uncompressed .npz the judge wrote) read straight from the file into
    arrays made once per grade and refilled per rep. Nothing is allocated between two timed calls:
    on the development VM fresh memory there (new arrays and their page faults, or new page cache)
    cost the next call of a memory-bound kernel 50-150 microseconds."""
    arrays = {}
    with open(path, "rb") as handle:
        for name, shape, fortran, dtype, offset in _npz_members(handle, path):
            array = held.get(name)
            if array is None or array.shape != shape or array.dtype != dtype:
                array = held[name] = np.empty(shape, dtype, order="F" if fortran else "C")
            flat = memoryview(array.reshape(-1, order="A").view(np.uint8))
            done = 0
            while done < len(flat):
                moved = os.preadv(handle.fileno(), [flat[done:]], offset + done)
                if moved <= 0:
                    raise ValueError(f"{path.name}: {name} is truncated")
                done += moved
            arrays[name] = array
    return arrays


class Outputs:
    """Every rep's outputs in one file (OUTPUTS_FILE in the job directory), laid out and filled
    with zeros before the first timed call, each rep's written in place after its call: new
    files or page cache made between two timed calls would slow the next one (see load_into).
    The layout goes into the run's report (`layout()`), and `read_outputs` reads it back."""

    def __init__(self, jobdir: Path, reps: int) -> None:
        self.path, self.reps = jobdir / OUTPUTS_FILE, reps
        self.arrays: list[dict[str, Any]] = []
        self.record = 0
        self.prepared = False

    def prepare(self, like: dict[str, np.ndarray]) -> None:
        """Lay the file out for outputs shaped as `like` and make its pages now."""
        self.prepared = True
        cursor = 0
        for name, array in like.items():
            self.arrays.append({"name": name, "dtype": array.dtype.str, "shape": list(array.shape),
                                "offset": cursor})  # fmt: skip
            cursor = _aligned(cursor + array.nbytes)
        self.record = cursor
        zeros = bytes(min(_PIECE, max(cursor * self.reps, 1)))
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        try:
            total, done = cursor * self.reps, 0
            while done < total:
                done += os.pwrite(fd, zeros[: min(len(zeros), total - done)], done)
        finally:
            os.close(fd)

    def write(self, index: int, outputs: dict[str, np.ndarray]) -> None:
        if not self.prepared:
            self.prepare(outputs)
        fd = os.open(self.path, os.O_WRONLY | os.O_CLOEXEC)
        try:
            for entry in self.arrays:
                array = np.ascontiguousarray(outputs[entry["name"]])
                if array.dtype.str != entry["dtype"] or list(array.shape) != entry["shape"]:
                    raise ValueError(f"rep {index}: {entry['name']} changed its shape or type")
                data = memoryview(array.reshape(-1).view(np.uint8))
                at, done = index * self.record + entry["offset"], 0
                while done < len(data):
                    done += os.pwrite(fd, data[done:], at + done)
        finally:
            os.close(fd)

    def layout(self) -> dict[str, Any]:
        return {"record": self.record, "arrays": self.arrays}


def read_outputs(jobdir: Path, layout: dict[str, Any], index: int) -> dict[str, np.ndarray]:
    """Rep `index`'s outputs from a run's OUTPUTS_FILE laid out as `layout` (Outputs.layout)."""
    found = {}
    with open(jobdir / OUTPUTS_FILE, "rb") as handle:
        for entry in layout["arrays"]:
            dtype = np.dtype(str(entry["dtype"]))
            if dtype.hasobject:
                raise ValueError(f"{entry['name']}: an output cannot hold Python objects")
            shape = tuple(int(extent) for extent in entry["shape"])
            handle.seek(index * int(layout["record"]) + int(entry["offset"]))
            array = np.fromfile(handle, dtype=dtype, count=int(np.prod(shape)))
            if array.size != int(np.prod(shape)):
                raise ValueError(f"{entry['name']}: the outputs of rep {index} are truncated")
            found[str(entry["name"])] = array.reshape(shape)
    return found


def _narrow_dtype(precision: str) -> Any:
    from relayout.dtypes import precision as relayout_precision

    return relayout_precision(precision).numpy_dtype


def _arguments(size: int, offsets: list[int], trailing: list[dict[str, Any]], workspace_offset: int,
               workspace_bytes: int, arrays: list[np.ndarray] | None = None) -> bytes:  # fmt: skip
    message: dict[str, Any] = {
        "size": size,
        "offsets": offsets,
        "trailing": [entry["value"] for entry in trailing],
        "workspace_offset": workspace_offset,
        "workspace_bytes": workspace_bytes,
    }
    if arrays is not None:
        from hb.execution.pybox import describe as describe_array

        message["arrays"] = [describe_array(array) for array in arrays]
    return b"a" + json.dumps(message).encode() + b"\n"


def describe(error: BaseException) -> str:
    """An error in words, without its class name: what went wrong, for a grade's reason."""
    if isinstance(error, MemoryError):
        return "the staged buffers do not fit in the judge's memory"
    if isinstance(error, OSError):
        return error.strerror or "an operating-system error"
    return str(error) or "an internal error of the judge"


# The descriptors the current job brought, by their numbers in the judge (serve()).
_received: dict[int, int] = {}
# The boxes started ahead of their job (start_box), by their job directories: one job's.
_started: dict[Path, _Session] = {}


def start_box(jobdirs: list[Path]) -> bytes:
    """Start the boxes of a job whose grade is not known yet (each JOBDIR/START_FILE: a box's
    command, run directory, freezer and limit; a paired run's second box is its baseline's) and
    wait until each runner answers a ping; the job itself comes later to the first directory.
    Answers "ready PID ..." (each box's first process on the host) or "failed", after which the
    job starts its boxes itself and reports what happened."""
    for session in _started.values():
        session.discard()
    _started.clear()
    pids = []
    for jobdir in jobdirs:
        try:
            session = _Session(jobdir, json.loads((jobdir / START_FILE).read_text()), [], 1, [])
        except (OSError, ValueError, KeyError, TypeError):
            return b"failed\n"
        try:
            session.channel.ask(b"p", b"d")
        except (RunFailure, OSError):
            session.discard()
            return b"failed\n"
        _started[jobdir] = session
        pids.append(str(session.process.pid))
    return f"ready {' '.join(pids)}\n".encode()


def run_job(jobdir: Path) -> None:
    """Supervise the job in `jobdir` and write its result there."""
    try:
        report = supervise(jobdir)
    except Exception as error:  # reported as the run's failure, never as a traceback
        report = {"ok": False, "reps": [], "failure": f"supervisor: {describe(error)}"}
    (jobdir / RESULT_FILE).write_text(json.dumps(report))


def serve(fd: int) -> int:
    """One job at a time from the judge (hb.execution.supervisor_pool): a job directory and the box
    command's descriptors on the socket `fd`, answered "done" once its result is written; or a
    box to start ahead of its job (start_box), answered "ready" or "failed"."""
    import socket

    channel = socket.socket(fileno=fd)
    exchange.available()  # built while the supervisor waits for its first job
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(channel, 65536, 64)
        except OSError:
            return 0
        if not message:
            return 0
        request = json.loads(message)
        _received.clear()
        _received.update(zip(request["fds"], fds, strict=False))
        try:
            if "start" in request:
                answer = start_box([Path(d) for d in request["start"]])
            else:
                run_job(Path(request["jobdir"]))
                answer = b"done\n"
        finally:
            for received in fds:
                with contextlib.suppress(OSError):
                    os.close(received)
            _received.clear()
        channel.sendall(answer)


def main(argv: list[str]) -> int:
    if argv[1:2] == ["--serve"]:
        sandbox.end_with(int(argv[3]))
        return serve(int(argv[2]))
    run_job(Path(argv[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
