"""Started supervisors kept for the next timed run: each is `python -m hb.supervisor --serve`, a
trusted process outside any box that takes one job directory at a time over a Unix socket (with
the box command's descriptors passed along it) and answers when the job's result is written, so
that a grade pays for neither an interpreter's start nor numpy's import.

A supervisor holds nothing of a grade between jobs: every box is new, every job directory is the
judge's own, and a supervisor that fails, overruns or has served MAX_JOBS jobs is ended and
replaced.
"""

from __future__ import annotations

import contextlib
import json
import select
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

# A supervisor retires after this many jobs (the conversion libraries it loaded stay mapped).
MAX_JOBS = 200
# Supervisors kept idle at most; more run at once when grades overlap.
MAX_IDLE = 4


class _Supervisor:
    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.socket = ours
        self.jobs = 0
        self.process = subprocess.Popen(
            [sys.executable, "-m", "hb.supervisor", "--serve", str(theirs.fileno())],
            pass_fds=(theirs.fileno(),),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        theirs.close()

    def alive(self) -> bool:
        return self.process.poll() is None

    def end(self) -> bytes:
        """End the supervisor (its boxes die with it); what it said on stderr."""
        with contextlib.suppress(OSError):
            self.socket.close()
        if self.alive():
            self.process.kill()
        try:
            _, stderr = self.process.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            return b""
        return stderr or b""

    def run(self, jobdir: Path, pass_fds: Sequence[int], timeout: float) -> bool:
        """Send one job and wait for its answer; False when the supervisor ended without one."""
        message = json.dumps({"jobdir": str(jobdir), "fds": list(pass_fds)}).encode()
        socket.send_fds(self.socket, [message], list(pass_fds))
        self.jobs += 1
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise subprocess.TimeoutExpired(["hb.supervisor", str(jobdir)], timeout)
            # poll, not select: the judge may hold descriptors past select's FD_SETSIZE.
            waiting = select.poll()
            waiting.register(self.socket, select.POLLIN)
            if waiting.poll(remaining * 1e3):
                return self.socket.recv(16) == b"done\n"


_idle: list[_Supervisor] = []
_lock = threading.Lock()


def _take() -> _Supervisor:
    with _lock:
        while _idle:
            found = _idle.pop()
            if found.alive():
                return found
            found.end()
    return _Supervisor()


def _give_back(supervisor: _Supervisor) -> None:
    with _lock:
        if supervisor.alive() and supervisor.jobs < MAX_JOBS and len(_idle) < MAX_IDLE:
            _idle.append(supervisor)
            return
    supervisor.end()


def prestart() -> None:
    """Start one supervisor ahead of the first timed run (in the background)."""
    threading.Thread(target=lambda: _give_back(_take()), daemon=True).start()


def supervise(
    jobdir: Path, pass_fds: Sequence[int], timeout: float
) -> subprocess.CompletedProcess[bytes]:
    """Run the job in `jobdir` on a started supervisor, as `python -m hb.supervisor JOBDIR` would:
    returncode 0 once the result is written, else the supervisor's stderr; TimeoutExpired (the
    supervisor and its box ended) past `timeout` seconds."""
    supervisor = _take()
    try:
        answered = supervisor.run(jobdir, pass_fds, timeout)
    except (subprocess.TimeoutExpired, OSError):
        supervisor.end()
        raise
    if not answered:
        stderr = supervisor.end()
        return subprocess.CompletedProcess([], 1, b"", stderr or b"the supervisor ended")
    _give_back(supervisor)
    return subprocess.CompletedProcess([], 0, b"", b"")


def shutdown() -> None:
    """End every idle supervisor (the judge's exit)."""
    with _lock:
        idle = list(_idle)
        _idle.clear()
    for supervisor in idle:
        supervisor.end()
