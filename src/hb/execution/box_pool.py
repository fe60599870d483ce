"""Timed-run boxes started ahead of their grade: a box whose runner is already up inside its
bubblewrap namespaces, seccomp filter, cgroups and uid, waiting on its pipe for a job, handed to
one grade and then discarded, while a fresh one starts in the background for the next grade.

A box is never reused: every grade gets a box no submission has run in, and the box it leaves is
killed, unmounted and removed, its uid given back. Before it is bound to a grade a box knows
nothing of one: its run directory is empty and its runner has read no file, loaded no library
and been told no layout. At binding the judge writes the grade's files into the run directory
(a tmpfs bound into the box when it started, so what the judge writes there later is seen
inside), its job into the job directory the box never sees, and the inputs still reach the
runner's memory from outside with process_vm_writev, as they always did. Everything a box is
given when it starts (its limits, threads, runner, environment, allowed system calls) is its
BoxSetup, decided by the judge's configuration and never by a submission; a run whose setup has
no started box (a profile's, the first of its kind, or any run of a judge that does not serve:
`hb submit`, a benchmark's handler) starts one then, as before.

Boxes start under the timing slot of their cores, so a box starting in the background never
overlaps another grade's timed run.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from hb.execution import sandbox, supervisor, supervisor_pool

# Started boxes kept idle per setup, and setups kept (the least recently used gives its boxes up).
IDLE_PER_SETUP = 1
MAX_SETUPS = 2

# The timing slot of a set of cores (hb.execution.runner.timing_slot).
Slot = Callable[[str | None], AbstractContextManager[None]]


@dataclass(frozen=True)
class BoxSetup:
    """Everything that decides a timed run's box before its grade is known: where its run
    directory lives, its limits and threads, the runner's argv and environment, and the system
    calls it may make besides a grade's. A started box serves only a run of an equal setup."""

    root: Path
    limits: sandbox.Limits
    threads: int
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    allow_syscalls: frozenset[str] = frozenset()
    # A paired run's second box, of the same setup, runs this argv for the baseline (the same as
    # `argv` but for a python delivery, whose baseline is the catalog's C solution).
    baseline_argv: tuple[str, ...] | None = None
    # A probe writes its files as the runner exits: its runner is asked to end, not killed.
    ends_gracefully: bool = False


class StartedBox:
    """A box with its runner started and waiting, the supervisor that started it, and the
    judge's job directory for the one grade it serves."""

    def __init__(self, setup: BoxSetup, slot: Slot) -> None:
        self.setup = setup
        self._stack = contextlib.ExitStack()
        self._served = False
        self.supervisor: supervisor_pool.Supervisor | None = None
        # The host id of the box's first process; None when it did not start, and the job then
        # starts it itself and reports why.
        self.pid: int | None = None
        try:
            self.supervisor = supervisor_pool.take()
            # Nothing of the box exists while it waits for the slot (no uid, cgroup or mount).
            with slot(setup.limits.cpus):
                self.box, self.command, self.private = self._box(setup.argv)
                self.baseline: tuple[sandbox.Box, sandbox.BoxCommand, Path] | None = None
                if setup.baseline_argv is not None:
                    self.baseline = self._box(setup.baseline_argv)
                try:
                    pids = self.supervisor.start_box(
                        [self.private, *([self.baseline[2]] if self.baseline else [])],
                        self.pass_fds, timeout=setup.limits.timeout_s + 60,
                    )  # fmt: skip
                    self.pid = pids[0] if pids else None
                except (subprocess.TimeoutExpired, OSError):
                    self.supervisor.end()
                    self.supervisor = supervisor_pool.take()
        except BaseException:
            self.discard()
            raise

    def _box(self, argv: tuple[str, ...]) -> tuple[sandbox.Box, sandbox.BoxCommand, Path]:
        """One box of the setup running `argv`, its command and the job directory its start file
        is written to."""
        setup = self.setup
        box = self._stack.enter_context(
            sandbox.Box(setup.root, setup.limits, threads=setup.threads,
                        allow_syscalls=setup.allow_syscalls)
        )  # fmt: skip
        command = box.command(list(argv), dict(setup.env))
        private = Path(tempfile.mkdtemp(prefix="job-", dir=box.root))
        self._stack.callback(shutil.rmtree, private, ignore_errors=True)
        start = {
            "box": command.to_json(),
            "box_dir": str(box.workdir),
            "freeze": box.freeze_control(),
            "timeout_s": setup.limits.timeout_s,
            "kill_at_end": not setup.ends_gracefully,
        }
        (private / supervisor.START_FILE).write_text(json.dumps(start))
        return box, command, private

    @property
    def pass_fds(self) -> tuple[int, ...]:
        """The descriptors every box command of this start needs passed to its supervisor."""
        fds = tuple(self.command.pass_fds)
        return fds + (tuple(self.baseline[1].pass_fds) if self.baseline else ())

    @property
    def name(self) -> str:
        """The box's name: its cgroups' and its run directory's."""
        return self.box.name

    @property
    def names(self) -> list[str]:
        """The names of every box of this start (a paired run's baseline box too)."""
        return [self.box.name, *([self.baseline[0].name] if self.baseline else [])]

    def supervise(self, timeout: float) -> subprocess.CompletedProcess[bytes]:
        """Run the job the judge wrote into `private` on this box (once), then end every process
        left in the box; the caller holds the timing slot. As Supervisor.supervise answers."""
        if self._served or self.supervisor is None:
            raise RuntimeError("a started box serves one grade")
        self._served = True
        try:
            ended = self.supervisor.supervise(self.private, self.pass_fds, timeout)
        except BaseException:
            self.supervisor = None  # ended by Supervisor.supervise
            self.kill()
            raise
        if ended.returncode != 0:
            self.supervisor = None
        # Nothing the submission left running outlives its grade's slot.
        self.kill()
        return ended

    def kill(self) -> None:
        """End every process of the start's boxes now."""
        self.box.kill()
        if self.baseline is not None:
            self.baseline[0].kill()

    def discard(self) -> None:
        """End the box and everything in it, remove its directories and give its uid back. Its
        supervisor goes back to its pool once it has served the job, and ends otherwise (an idle
        box's supervisor holds the box's started runner)."""
        held, self.supervisor = self.supervisor, None
        if held is not None:
            if self._served:
                supervisor_pool.give_back(held)
            else:
                held.end()
        self._stack.close()


_idle: OrderedDict[BoxSetup, list[StartedBox]] = OrderedDict()
_starting: Counter[BoxSetup] = Counter()
# Per run-directory root: bumped when its judge shuts down, so that no box is started after.
_generation: Counter[Path] = Counter()
# The roots whose runs are served by started boxes (keep_warm).
_warm: set[Path] = set()
_in_flight = 0
_state = threading.Condition()
_work: queue.SimpleQueue[tuple[Callable[..., None], tuple[object, ...]]] = queue.SimpleQueue()
_worker: threading.Thread | None = None


def keep_warm(root: Path) -> None:
    """Keep a box started for the next run of each setup whose boxes live under `root` (a
    serving judge's, from its start to shutdown(root)); other runs start their box when they
    need it."""
    with _state:
        _warm.add(root.resolve())


@contextlib.contextmanager
def started(setup: BoxSetup, slot: Slot, pooled: bool = True) -> Iterator[StartedBox]:
    """A started box for one run of `setup`: an idle one, the one starting in the background, or
    one started now. It is discarded afterwards (in the background); for a `pooled` run under a
    root kept warm a fresh one is then started for the next run of the same setup."""
    with _state:
        generation = _generation[setup.root]
        warm = pooled and setup.root in _warm
    box = _take(setup) if warm else None
    if box is None:
        box = StartedBox(setup, slot)
    try:
        yield box
    finally:
        _in_background(_retire, box, slot, generation if warm else None)


def _take(setup: BoxSetup) -> StartedBox | None:
    dead: list[StartedBox] = []
    try:
        with _state:
            while True:
                idle = _idle.get(setup)
                while idle:
                    box = idle.pop()
                    if box.supervisor is not None and box.supervisor.alive():
                        _idle.move_to_end(setup)
                        return box
                    dead.append(box)
                if not _starting[setup]:
                    return None
                _state.wait()
    finally:
        for box in dead:
            box.discard()


def _in_background(work: Callable[..., None], *arguments: object) -> None:
    """Queue `work` for the pool's one worker thread (started once: a thread's start costs a grade
    milliseconds on a busy machine)."""
    global _in_flight, _worker
    with _state:
        _in_flight += 1
        if _worker is None or not _worker.is_alive():
            _worker = threading.Thread(target=_serve, name="hb-box-pool", daemon=True)
            _worker.start()
    _work.put((work, arguments))


def _serve() -> None:
    global _in_flight
    while True:
        work, arguments = _work.get()
        try:
            work(*arguments)
        except Exception as error:  # the pool keeps serving; the box is reaped at the next start
            sys.stderr.write(f"hb: a started box could not be discarded: {error}\n")
        finally:
            with _state:
                _in_flight -= 1
                _state.notify_all()


def _retire(box: StartedBox, slot: Slot, generation: int | None) -> None:
    """Discard a box that served its grade, then start the next of its setup (unless the
    judge shut down since the box was taken)."""
    box.discard()
    if generation is not None:
        _refill(box.setup, slot, generation)


def _refill(setup: BoxSetup, slot: Slot, generation: int) -> None:
    with _state:
        wanted = len(_idle.get(setup, [])) + _starting[setup] < IDLE_PER_SETUP
        if not wanted or _generation[setup.root] != generation:
            return
        _starting[setup] += 1
    fresh: StartedBox | None = None
    dropped: list[StartedBox] = []
    try:
        fresh = StartedBox(setup, slot)
    except Exception:  # the next run starts its box itself, and reports what fails there
        fresh = None
    finally:
        with _state:
            _starting[setup] -= 1
            if (
                fresh is not None
                and fresh.pid is not None
                and _generation[setup.root] == generation
            ):
                _idle.setdefault(setup, []).append(fresh)
                _idle.move_to_end(setup)
                fresh = None
                while len(_idle) > MAX_SETUPS:
                    _, boxes = _idle.popitem(last=False)
                    dropped += boxes
            _state.notify_all()
    for unused in [*dropped, *([fresh] if fresh is not None else [])]:
        unused.discard()


def idle(setup: BoxSetup) -> list[str]:
    """The names of the started boxes waiting for a run of `setup`."""
    with _state:
        return [box.name for box in _idle.get(setup, [])]


def idle_boxes() -> list[str]:
    """The names of every started box waiting for a run (both boxes of a paired start)."""
    with _state:
        return [name for boxes in _idle.values() for box in boxes for name in box.names]


def settle(timeout_s: float = 30.0) -> bool:
    """Wait until no box is being discarded or started in the background; False past
    `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    with _state:
        while _in_flight:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            _state.wait(remaining)
    return True


def shutdown(root: Path | None = None, timeout_s: float = 30.0) -> None:
    """End the started boxes of the judge whose boxes live under `root` (every judge's when
    None), let the boxes being discarded or started finish, and keep none warm there after."""
    with _state:
        roots = {setup.root for setup in [*_idle, *_starting]} | set(_generation) | _warm
        chosen = {root.resolve()} if root is not None else roots
        for each in chosen:
            _generation[each] += 1
            _warm.discard(each)
        victims = []
        for setup in [s for s in _idle if s.root in chosen]:
            victims += _idle.pop(setup)
    for box in victims:
        box.discard()
    settle(timeout_s)


atexit.register(shutdown)
