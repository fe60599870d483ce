"""Started supervisors kept for the next timed run: each is `python -m hb.execution.supervisor --serve`, a
trusted process outside any box that takes one job directory at a time over a Unix socket (with
the box command's descriptors passed along it) and answers when the job's result is written, so
that a grade pays for neither an interpreter's start nor numpy's import. A supervisor may also
start a job's box ahead of the job (hb.execution.box_pool), and then serves that job next.

A supervisor holds nothing of a grade between jobs: every box is new, every job directory is the
judge's own, and a supervisor that fails, overruns or has served MAX_JOBS jobs is ended and
replaced.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# A supervisor retires after this many jobs (the conversion libraries it loaded stay mapped).
MAX_JOBS = 200
# Supervisors kept idle at most; more run at once when grades overlap.
MAX_IDLE = 4


class Supervisor:
    """One started supervisor and the socket the judge speaks to it on."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.socket = ours
        self.jobs = 0
        argv = [sys.executable, "-m", "hb.execution.supervisor", "--serve", str(theirs.fileno()),
                str(os.getpid())]  # fmt: skip
        self.process = subprocess.Popen(
            argv,
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

    def _ask(self, request: dict[str, Any], pass_fds: Sequence[int], timeout: float) -> bytes:
        """Send one request with its descriptors and wait for the answer's line; b"" when the
        supervisor ended without one."""
        message = json.dumps({**request, "fds": list(pass_fds)}).encode()
        socket.send_fds(self.socket, [message], list(pass_fds))
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise subprocess.TimeoutExpired(
                    ["hb.execution.supervisor", json.dumps(request)], timeout
                )
            # poll, not select: the judge may hold descriptors past select's FD_SETSIZE.
            waiting = select.poll()
            waiting.register(self.socket, select.POLLIN)
            if waiting.poll(remaining * 1e3):
                return self.socket.recv(64)

    def start_box(
        self, jobdirs: Sequence[Path], pass_fds: Sequence[int], timeout: float
    ) -> list[int] | None:
        """Start the boxes of each JOBDIR's start file ahead of their job
        (hb.execution.supervisor.start_box): the host id of each box's first process once its
        runner answers, None when one did not start (the job then starts them again and reports
        why)."""
        request = {"start": [str(jobdir) for jobdir in jobdirs]}
        answer = self._ask(request, pass_fds, timeout).split()
        if (
            answer[:1] == [b"ready"]
            and len(answer) == len(jobdirs) + 1
            and all(pid.isdigit() for pid in answer[1:])
        ):
            return [int(pid) for pid in answer[1:]]
        if not answer:
            raise OSError("the supervisor ended")
        return None

    def supervise(
        self, jobdir: Path, pass_fds: Sequence[int], timeout: float
    ) -> subprocess.CompletedProcess[bytes]:
        """Run the job in `jobdir`, as `python -m hb.execution.supervisor JOBDIR` would: returncode 0 once
        the result is written, else the supervisor's stderr (the supervisor is then ended);
        TimeoutExpired (the supervisor and its box ended) past `timeout` seconds."""
        self.jobs += 1
        try:
            answered = self._ask({"jobdir": str(jobdir)}, pass_fds, timeout) == b"done\n"
        except (subprocess.TimeoutExpired, OSError):
            self.end()
            raise
        if not answered:
            stderr = self.end()
            return subprocess.CompletedProcess([], 1, b"", stderr or b"the supervisor ended")
        return subprocess.CompletedProcess([], 0, b"", b"")


_idle: list[Supervisor] = []
_lock = threading.Lock()


def take() -> Supervisor:
    """An idle supervisor, or one started now."""
    with _lock:
        while _idle:
            found = _idle.pop()
            if found.alive():
                return found
            found.end()
    return Supervisor()


def give_back(supervisor: Supervisor) -> None:
    """Keep a supervisor that has served a job for the next one, or end it."""
    with _lock:
        if supervisor.alive() and supervisor.jobs < MAX_JOBS and len(_idle) < MAX_IDLE:
            _idle.append(supervisor)
            return
    supervisor.end()


def prestart() -> None:
    """Start one supervisor ahead of the first timed run (in the background)."""
    threading.Thread(target=lambda: give_back(take()), daemon=True).start()


def supervise(
    jobdir: Path, pass_fds: Sequence[int], timeout: float
) -> subprocess.CompletedProcess[bytes]:
    """Run the job in `jobdir` on a started supervisor (Supervisor.supervise)."""
    supervisor = take()
    ended = supervisor.supervise(jobdir, pass_fds, timeout)
    if ended.returncode == 0:
        give_back(supervisor)
    return ended


def shutdown() -> None:
    """End every idle supervisor (the judge's exit)."""
    with _lock:
        idle = list(_idle)
        _idle.clear()
    for supervisor in idle:
        supervisor.end()
