"""Runs untrusted code (a submission's build or timed run) in a child process with resource
limits, a wall-clock timeout that ends every process it started, a private working directory and,
where the machine allows it, no network, private /tmp and an unprivileged user."""

from __future__ import annotations

import contextlib
import functools
import os
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hb import languages

# The private directory as the child sees it when the namespaces apply.
SANDBOX_WORKDIR = "/tmp/hb-work"

# Inside fresh mount, network and PID namespaces (as root): the private directory is moved onto a
# new /tmp so that nothing else there is visible or writable, /var/tmp and /dev/shm are emptied,
# and the command runs as the unprivileged user. What the child itself must read under the old /tmp
# (the interpreter and the project, when the checkout lives there) is bound back read-only. The
# shell stays the namespace's init (PID 1, which the kernel shields from signals it does not
# handle, so a submission's abort() would turn into a fault) and reports a signalled child as
# 128 + signal. unshare's --kill-child ends the whole PID namespace when the judge kills unshare.
_NAMESPACE_SCRIPT = r"""
set -e
workdir="$1"; uid="$2"; gid="$3"; keep="$4"; shift 4
mount -t tmpfs -o size=1m,mode=0700 hb-stage /mnt
mkdir /mnt/work /mnt/old-tmp
mount --bind "$workdir" /mnt/work
mount --bind /tmp /mnt/old-tmp
mount -t tmpfs -o size=64m,mode=1777 hb-tmp /tmp
mkdir -p /tmp/hb-work
mount --move /mnt/work /tmp/hb-work
for path in $keep; do
  relative="${path#/tmp/}"
  mkdir -p "/tmp/$relative"
  mount --bind "/mnt/old-tmp/$relative" "/tmp/$relative"
  mount -o remount,bind,ro "/tmp/$relative"
done
umount -l /mnt/old-tmp
umount -l /mnt
for d in /var/tmp /dev/shm; do
  if [ -d "$d" ]; then mount -t tmpfs -o size=16m,mode=1777 hb-scratch "$d"; fi
done
cd /tmp/hb-work
setpriv --reuid="$uid" --regid="$gid" --clear-groups -- "$@"
"""


@functools.cache
def paths_kept_under_tmp() -> tuple[str, ...]:
    """The directories under /tmp that a sandboxed runner must still read once /tmp is private:
    the interpreter's prefixes and the import path (a checkout or venv that lives in /tmp)."""
    candidates = {sys.prefix, sys.base_prefix, sys.exec_prefix, *sys.path}
    under_tmp = sorted(
        str(Path(c).resolve())
        for c in candidates
        if c and Path(c).is_dir() and Path(c).resolve().is_relative_to("/tmp")
    )
    kept: list[str] = []
    for path in under_tmp:
        if path != "/tmp" and not any(Path(path).is_relative_to(k) for k in kept):
            kept.append(path)
    # Paths with white space cannot travel through the script's word list; they stay hidden.
    return tuple(p for p in kept if not any(c.isspace() for c in p))


@dataclass(frozen=True)
class Limits:
    """What one child may use; memory and file sizes in bytes."""

    timeout_s: float = 60.0
    cpu_s: int = 120
    memory_bytes: int = 8 << 30
    nproc: int = 256
    fsize_bytes: int = 1 << 30
    # Each running child gets its own uid from this range (no passwd entry needed), so that
    # RLIMIT_NPROC, which counts per user, bounds one submission and not all of them together.
    uid_base: int = 61000
    uid_count: int = 64
    gid: int = 65534


@dataclass
class SandboxResult:
    """How a sandboxed command ended, and which protections it ran under."""

    returncode: int
    timed_out: bool
    wall_s: float
    stdout: str
    stderr: str
    protections: list[str] = field(default_factory=list)

    @property
    def signal_name(self) -> str | None:
        if self.returncode < 0:
            try:
                return signal.Signals(-self.returncode).name
            except ValueError:
                return f"signal {-self.returncode}"
        # The namespace's shell reports a signalled child as 128 + signal.
        if self.returncode > 128 and "namespaces" in self.protections:
            try:
                return signal.Signals(self.returncode - 128).name
            except ValueError:
                return None
        return None

    def failure(self, what: str) -> str | None:
        """A one-line reason when the command did not finish cleanly, else None."""
        if self.timed_out:
            return f"{what} exceeded the wall-clock limit and was killed"
        name = self.signal_name
        tail = self.stderr.strip().splitlines()[-3:]
        detail = f": {' | '.join(tail)}" if tail else ""
        if name is not None:
            hint = {
                "SIGSEGV": " (segmentation fault)",
                "SIGXCPU": " (CPU time limit)",
                "SIGKILL": " (killed: memory or time limit)",
                "SIGABRT": " (aborted)",
                "SIGBUS": " (bus error)",
                "SIGFPE": " (arithmetic exception)",
                "SIGXFSZ": " (file size limit)",
            }.get(name, "")
            return f"{what} ended by {name}{hint}{detail}"
        if self.returncode != 0:
            return f"{what} exited with status {self.returncode}{detail}"
        return None


def catalog_refusal(language: str, libraries: Sequence[str]) -> str | None:
    """Why startup.load cannot be honoured for `language`, or None when every name is offered."""
    for index, name in enumerate(libraries):
        if not languages.library_offered(language, name):
            offered = languages.offered_libraries(language)
            return (
                f"startup.load[{index}]: {name!r} is not a library this judge offers for "
                f"{language!r} (offered: {offered or 'none'})"
            )
    return None


@functools.cache
def namespaces_available() -> bool:
    """Whether this machine lets the judge start the child in fresh namespaces as another user."""
    if os.geteuid() != 0 or not (shutil.which("unshare") and shutil.which("setpriv")):
        return False
    probe = subprocess.run(
        ["unshare", "--net", "--mount", "--pid", "--fork", "--kill-child", "--", "true"],
        capture_output=True,
        timeout=10,
        check=False,
    )
    return probe.returncode == 0


_uid_lock = threading.Condition()
_uids_in_use: set[int] = set()


@contextlib.contextmanager
def _borrowed_uid(limits: Limits) -> Iterator[int]:
    """A uid of the pool no other running child holds; waits while every one is taken."""
    with _uid_lock:
        while True:
            free = [
                u
                for u in range(limits.uid_base, limits.uid_base + limits.uid_count)
                if u not in _uids_in_use
            ]
            if free:
                uid = free[0]
                _uids_in_use.add(uid)
                break
            _uid_lock.wait()
    try:
        yield uid
    finally:
        with _uid_lock:
            _uids_in_use.discard(uid)
            _uid_lock.notify()


def _apply_limits(limits: Limits) -> None:
    # Runs in the child between fork and exec: only async-signal-safe work belongs here.
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_s, limits.cpu_s))
    resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.fsize_bytes, limits.fsize_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NPROC, (limits.nproc, limits.nproc))


def prepare_workdir(path: Path, uid: int | None, gid: int) -> None:
    """Make `path` the child's own: created, and owned by its uid when the child switches to one."""
    path.mkdir(parents=True, exist_ok=True)
    if uid is not None:
        for entry in [path, *path.rglob("*")]:
            os.chown(entry, uid, gid, follow_symlinks=False)


def run_sandboxed(
    argv: Sequence[str], workdir: Path, limits: Limits, env: Mapping[str, str] | None = None
) -> SandboxResult:
    """Run `argv` in `workdir` under `limits`; relative paths in argv resolve in the workdir.

    stdout and stderr go to files in the workdir (bounded by the file size limit) and their tails
    come back in the result.
    """
    workdir = workdir.resolve()
    if not namespaces_available():
        prepare_workdir(workdir, None, limits.gid)
        return _run(
            list(argv), workdir, limits, env, ["rlimits", "wall-clock timeout", "private directory"]
        )
    with _borrowed_uid(limits) as uid:
        prepare_workdir(workdir, uid, limits.gid)
        command = [
            "unshare", "--net", "--mount", "--pid", "--fork", "--kill-child", "--",
            "/bin/sh", "-c", _NAMESPACE_SCRIPT, "hb-sandbox", str(workdir), str(uid), str(limits.gid),
            " ".join(paths_kept_under_tmp()), *argv,
        ]  # fmt: skip
        protections = [
            "rlimits", "wall-clock timeout", "private directory", "namespaces", "no network",
            "private /tmp", f"uid {uid}",
        ]  # fmt: skip
        return _run(command, workdir, limits, env, protections)


def _run(
    command: list[str],
    workdir: Path,
    limits: Limits,
    env: Mapping[str, str] | None,
    protections: list[str],
) -> SandboxResult:
    child_env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": SANDBOX_WORKDIR,
        "LANG": "C.UTF-8",
    }
    child_env.update(env or {})
    ended = run_session(
        command, workdir, child_env, limits.timeout_s, lambda: _apply_limits(limits), _kill_group,
        ("stdout.txt", "stderr.txt"), tail_chars=4000,
    )  # fmt: skip
    return SandboxResult(
        returncode=ended.returncode,
        timed_out=ended.timed_out,
        wall_s=ended.wall_s,
        stdout=ended.stdout,
        stderr=ended.stderr,
        protections=protections,
    )


@dataclass(frozen=True)
class SessionEnd:
    """How a command run by run_session ended: the tails of its output files."""

    returncode: int
    timed_out: bool
    wall_s: float
    stdout: str
    stderr: str


def run_session(
    command: Sequence[str],
    workdir: Path,
    env: Mapping[str, str],
    timeout_s: float,
    preexec_fn: Callable[[], None],
    end_group: Callable[[int], None],
    output_names: tuple[str, str],
    tail_chars: int,
) -> SessionEnd:
    """Run `command` in `workdir` as the leader of a new session (so one signal to its process
    group reaches all it starts), stdout and stderr to the files `output_names` there, with a
    wall-clock limit; `end_group(pid)` runs on timeout and after every run, so nothing it started
    outlives it. Used by the sandbox and by the MPI launcher."""
    started = time.monotonic()
    out_path, err_path = workdir / output_names[0], workdir / output_names[1]
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        process = subprocess.Popen(
            list(command),
            cwd=workdir,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            env=dict(env),
            start_new_session=True,
            preexec_fn=preexec_fn,
        )
        timed_out = False
        try:
            process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            end_group(process.pid)
            process.wait()
    return SessionEnd(
        returncode=process.returncode,
        timed_out=timed_out,
        wall_s=time.monotonic() - started,
        stdout=_tail(out_path, tail_chars),
        stderr=_tail(err_path, tail_chars),
    )


def _kill_group(pid: int) -> None:
    # The child leads its own session; with namespaces, killing unshare also ends the PID
    # namespace, so a process that left the group (setsid) dies with it.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _tail(path: Path, limit: int) -> str:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - limit))
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""
