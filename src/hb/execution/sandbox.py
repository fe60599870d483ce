"""The box every untrusted step runs in (a submission's build, a driver's build, a timed run, every
MPI rank): bubblewrap for the namespaces and the minimal root, a seccomp filter, one cgroup per box
for memory, processes, CPU, freezing and killing, a host uid unique among live boxes, and a
size-capped tmpfs as the run directory.

bubblewrap (Debian's `bwrap`) is the tool: it builds the mount, PID (with a fresh /proc), IPC, UTS
and network namespaces, sets no_new_privs, loads the filter and kills the box with its parent. As
root it runs privileged and the command starts through `setpriv` as the box's own uid with every
capability dropped. The cgroups are written here through the kernel's cgroupfs (v1 controllers or
v2, whichever the machine mounts). Where a piece is missing (no root, no bwrap, no cgroups) the box
runs with what there is, and `SandboxResult.protections` says what that was; `Limits.require`
turns a missing protection into a refusal.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import os
import re
import resource
import select
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from hb import languages

# The run directory as the command sees it inside the box.
SANDBOX_WORKDIR = "/box"
BOX_PREFIX = "hb-box-"
# Where the judges of one machine take their uid locks (a flock per uid, held while a box lives).
UID_LOCK_DIR = Path("/run/hb/uids")

# Every protection a box can have, in the order a grade lists them.
PROTECTIONS = (
    "rlimits",            # CPU, address space, file size, no core files
    "wall-clock timeout",
    "private directory",
    "bwrap",              # the box is built by bubblewrap
    "minimal root",       # toolchain, interpreter and project packages read-only; nothing else
    "pid namespace",      # with its own /proc
    "ipc namespace",
    "uts namespace",
    "network namespace",  # loopback only
    "mount namespace",
    "no_new_privs",
    "seccomp",
    "unique uid",         # a host uid no other live box holds, no capabilities
    "disk quota",         # the run directory is a size-capped tmpfs
    "cgroup memory",      # all processes of the box together
    "cgroup pids",
    "cgroup cpu",
    "cgroup kill",        # every process of the box dies with the grade, or with the judge
    "cgroup freeze",      # the judge can stop the box while it reads outputs
)  # fmt: skip

# System calls a kernel never needs: EPERM for these, whatever their arguments. process_vm_readv
# and process_vm_writev stay: MPICH copies between ranks with them, and a box's unique uid and PID
# namespace leave it no process to reach but its own.
DENIED_SYSCALLS = (
    "ptrace", "mount", "umount2", "pivot_root", "chroot",
    "move_mount", "open_tree", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
    "kexec_load", "kexec_file_load", "bpf", "keyctl", "add_key", "request_key", "unshare", "setns",
    "init_module", "finit_module", "delete_module", "reboot", "swapon", "swapoff",
    "perf_event_open", "userfaultfd", "open_by_handle_at", "name_to_handle_at", "acct", "quotactl",
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "iopl", "ioperm", "syslog",
    "vhangup", "lookup_dcookie", "sethostname", "setdomainname", "io_uring_setup",
    "io_uring_enter", "io_uring_register", "fanotify_init", "personality",
)  # fmt: skip
# clone() flags that would make a new namespace; refused like unshare().
_NAMESPACE_FLAGS = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000,
                    0x40000000)  # fmt: skip


class SandboxUnavailable(RuntimeError):
    """A protection the setup requires (`sandbox.require`) that this machine cannot give."""


# Core numbers a cpuset list may name (the kernel's largest NR_CPUS is 8192).
MAX_CPUS = 8192


def cpu_list(text: str, where: str = "cpus") -> frozenset[int]:
    """The cores of a cpuset list ("0-3,8"), or a ValueError that says what is wrong and where."""
    cores: set[int] = set()
    for part in text.split(","):
        low, dash, high = part.strip().partition("-")
        numbers = [low, high] if dash else [low]
        if not all(n.isascii() and n.isdigit() and len(n) <= 5 for n in numbers):
            raise ValueError(
                f"{where}: {part.strip()!r} is not a core or a range of cores ('0-3,8')"
            )
        first, last = int(low), int(high) if dash else int(low)
        if last < first or last >= MAX_CPUS:
            raise ValueError(f"{where}: {part.strip()!r} is not a range of cores below {MAX_CPUS}")
        cores.update(range(first, last + 1))
    return frozenset(cores)


@dataclass(frozen=True)
class Limits:
    """What one box may use; memory and sizes in bytes."""

    timeout_s: float = 60.0
    cpu_s: int = 120
    memory_bytes: int = 8 << 30
    nproc: int = 256
    fsize_bytes: int = 1 << 30
    # The run directory's tmpfs and the box's /tmp and /dev/shm (each capped; charged to memory).
    disk_bytes: int = 2 << 30
    scratch_bytes: int = 256 << 20
    # Host uids [uid_base, uid_base + uid_count) are lent one per live box, across judges.
    uid_base: int = 61000
    uid_count: int = 64
    gid: int = 65534
    # The CPUs the box may run on ("0-1"); None keeps the judge's.
    cpus: str | None = None
    # Protections the setup demands: a box without one of them is refused.
    require: tuple[str, ...] = ()
    # False for a cuda grade's box: the CUDA driver reserves address space far beyond the memory
    # it uses, so RLIMIT_AS is left unset there and the cgroup's memory limit holds the box.
    address_space_limit: bool = True


@dataclass
class SandboxResult:
    """How a sandboxed command ended, and which protections it ran under."""

    returncode: int
    timed_out: bool
    wall_s: float
    stdout: str
    stderr: str
    protections: list[str] = field(default_factory=list)
    oom_killed: bool = False

    @property
    def signal_name(self) -> str | None:
        code = self.returncode
        if code > 128 and "bwrap" in self.protections:
            code = -(code - 128)  # the box's init reports a signalled child as 128 + signal
        if code < 0:
            try:
                return signal.Signals(-code).name
            except ValueError:
                return f"signal {-code}"
        return None

    def failure(self, what: str, detail: bool = True) -> str | None:
        """A one-line reason when the command did not finish cleanly, else None; `detail` adds
        the tail of its stderr."""
        if self.timed_out:
            return f"{what} exceeded the wall-clock limit and was killed"
        if self.oom_killed:
            return f"{what} exceeded the box's memory limit and was killed"
        name = self.signal_name
        tail = self.stderr.strip().splitlines()[-3:] if detail else []
        suffix = f": {' | '.join(tail)}" if tail else ""
        if name is not None:
            hint = {
                "SIGSEGV": " (segmentation fault)",
                "SIGXCPU": " (CPU time limit)",
                "SIGKILL": " (killed: memory or time limit)",
                "SIGABRT": " (aborted)",
                "SIGBUS": " (bus error)",
                "SIGFPE": " (arithmetic exception)",
                "SIGXFSZ": " (file size limit)",
                "SIGSYS": " (a refused system call)",
            }.get(name, "")
            return f"{what} ended by {name}{hint}{suffix}"
        if self.returncode != 0:
            return f"{what} exited with status {self.returncode}{suffix}"
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


# -- what this machine offers ----------------------------------------------------------------------


def _is_root() -> bool:
    return os.geteuid() == 0


@functools.cache
def bwrap_path() -> str | None:
    """bubblewrap, when it is installed and can build a box here (privileged as root, through a
    user namespace otherwise)."""
    path = shutil.which("bwrap")
    if path is None:
        return None
    probe = subprocess.run(
        [path, "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
         "--ro-bind", "/", "/", "--proc", "/proc", "--", "/bin/true"],
        capture_output=True, timeout=20, check=False,
    )  # fmt: skip
    return path if probe.returncode == 0 else None


def namespaces_available() -> bool:
    """Whether boxes get their own namespaces on this machine."""
    return bwrap_path() is not None


# The one system call a profile box (POST /profile with a counting tool) may make besides a grade's:
# perf_event_open, for perf and PAPI. The kernel's perf_event_paranoid still bounds what it counts
# (at 2, only the box's own processes in user space); every other protection stays.
PROFILE_SYSCALLS = frozenset({"perf_event_open"})


@functools.cache
def seccomp_program(allowed: frozenset[str] = frozenset()) -> bytes | None:
    """The box's seccomp filter as a BPF program (libseccomp through pyseccomp), or None;
    `allowed` lifts the named calls of PROFILE_SYSCALLS from the denied list (a profile box)."""
    stray = allowed - PROFILE_SYSCALLS
    if stray:
        raise ValueError(
            f"seccomp_program: only {sorted(PROFILE_SYSCALLS)} may be allowed, not {sorted(stray)}"
        )
    try:
        import pyseccomp as seccomp
    except (ImportError, OSError):
        return None
    try:
        rules = seccomp.SyscallFilter(seccomp.ALLOW)
        for name in DENIED_SYSCALLS:
            if name in allowed:
                continue
            with contextlib.suppress(Exception):  # a call this architecture does not have
                rules.add_rule(seccomp.ERRNO(errno.EPERM), name)
        for flag in _NAMESPACE_FLAGS:
            rules.add_rule(
                seccomp.ERRNO(errno.EPERM), "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag)
            )
        # clone3 passes its flags in memory a filter cannot read: ENOSYS sends glibc to clone().
        rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
        # A file, not a pipe: a program past the pipe's buffer would block the export.
        with tempfile.TemporaryFile() as sink:
            rules.export_bpf(sink)
            sink.seek(0)
            return sink.read()
    except Exception:
        return None


@dataclass(frozen=True)
class _Hierarchy:
    """One cgroup hierarchy the judge may write: its directory for boxes and what it controls."""

    base: Path  # <mount>/<the judge's own cgroup>/hb
    controllers: frozenset[str]
    version: int


def _own_cgroups() -> dict[str, str]:
    own: dict[str, str] = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, names, path = line.split(":", 2)
        for name in names.split(",") if names else [""]:
            own[name] = path
    return own


@functools.cache
def cgroup_hierarchies() -> tuple[_Hierarchy, ...]:
    """The hierarchies where this judge can make a box's cgroup (root only)."""
    if not _is_root():
        return ()
    try:
        own = _own_cgroups()
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return ()
    found: list[_Hierarchy] = []
    for line in mounts:
        fields = line.split()
        separator = fields.index("-")
        fstype, options = fields[separator + 1], fields[separator + 3].split(",")
        mount_point = Path(fields[4])
        if fstype == "cgroup2":
            base = mount_point / own.get("", "/").lstrip("/") / "hb"
            controllers = {"kill", "freeze"}
            with contextlib.suppress(OSError):
                offered = (base.parent / "cgroup.controllers").read_text().split()
                controllers |= {c for c in ("memory", "pids", "cpu", "cpuset") if c in offered}
            found.append(_Hierarchy(base, frozenset(controllers), 2))
        elif fstype == "cgroup":
            wanted = {"memory", "pids", "cpu", "cpuset", "freezer"} & set(options)
            if not wanted:
                continue
            name = next(iter(wanted)) if len(wanted) == 1 else sorted(wanted)[0]
            relative = own.get(name, "/").lstrip("/")
            found.append(_Hierarchy(mount_point / relative / "hb", frozenset(wanted), 1))
    usable = []
    for hierarchy in found:
        try:
            hierarchy.base.mkdir(parents=True, exist_ok=True)
            if hierarchy.version == 1 and "cpuset" in hierarchy.controllers:
                for name in ("cpuset.cpus", "cpuset.mems"):
                    target = hierarchy.base / name
                    if not target.read_text().strip():
                        target.write_text((hierarchy.base.parent / name).read_text())
            if hierarchy.version == 2:
                wanted = hierarchy.controllers - {"kill", "freeze"}
                if wanted:
                    with contextlib.suppress(OSError):
                        (hierarchy.base.parent / "cgroup.subtree_control").write_text(
                            " ".join(f"+{c}" for c in sorted(wanted))
                        )
                    with contextlib.suppress(OSError):
                        (hierarchy.base / "cgroup.subtree_control").write_text(
                            " ".join(f"+{c}" for c in sorted(wanted))
                        )
                    enabled = set((hierarchy.base / "cgroup.subtree_control").read_text().split())
                    hierarchy = _Hierarchy(
                        hierarchy.base,
                        frozenset({"kill", "freeze"} | (wanted & enabled)),
                        2,
                    )
                if not (hierarchy.base / "cgroup.kill").exists():
                    hierarchy = _Hierarchy(
                        hierarchy.base, hierarchy.controllers - {"kill"}, hierarchy.version
                    )
            usable.append(hierarchy)
        except OSError:
            continue
    return tuple(usable)


@functools.cache
def machine_protections() -> tuple[str, ...]:
    """The protections a box gets on this machine."""
    have = ["rlimits", "wall-clock timeout", "private directory"]
    if bwrap_path() is not None:
        have += ["bwrap", "minimal root", "pid namespace", "ipc namespace", "uts namespace",
                 "network namespace", "mount namespace", "no_new_privs"]  # fmt: skip
        if seccomp_program() is not None:
            have.append("seccomp")
        if _is_root():
            have.append("unique uid")
    if _is_root() and shutil.which("mount"):
        have.append("disk quota")
    controllers = set().union(*(h.controllers for h in cgroup_hierarchies()))
    for name, needs in (("cgroup memory", "memory"), ("cgroup pids", "pids"),
                        ("cgroup cpu", "cpu"), ("cgroup kill", "kill")):  # fmt: skip
        if needs in controllers or (needs == "kill" and "freezer" in controllers):
            have.append(name)
    if "freeze" in controllers or "freezer" in controllers:
        have.append("cgroup freeze")
    return tuple(p for p in PROTECTIONS if p in have)


def missing_protections(limits: Limits) -> list[str]:
    """The required protections this machine cannot give."""
    unknown = [p for p in limits.require if p not in PROTECTIONS]
    if unknown:
        raise SandboxUnavailable(
            f"sandbox.require: unknown protection(s) {unknown}; known: {list(PROTECTIONS)}"
        )
    have = machine_protections()
    return [p for p in limits.require if p not in have]


# -- uids ------------------------------------------------------------------------------------------


_uid_guard = threading.Condition()


@contextlib.contextmanager
def _borrowed_uid(limits: Limits) -> Iterator[int]:
    """A uid of the pool no live box on this machine holds (a flock per uid, so several judges
    share the pool); waits while every one is taken."""
    UID_LOCK_DIR.mkdir(parents=True, exist_ok=True, mode=0o700)
    handle: int | None = None
    uid = -1
    with _uid_guard:
        while handle is None:
            for candidate in range(limits.uid_base, limits.uid_base + limits.uid_count):
                fd = os.open(
                    UID_LOCK_DIR / str(candidate), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600
                )
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    os.close(fd)
                    continue
                handle, uid = fd, candidate
                break
            else:
                _uid_guard.wait(0.05)
    try:
        yield uid
    finally:
        os.close(handle)
        with _uid_guard:
            _uid_guard.notify()


def _uid_is_free(uid: int) -> bool:
    try:
        fd = os.open(UID_LOCK_DIR / str(uid), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


# -- cgroups ---------------------------------------------------------------------------------------


def _write(path: Path, value: str) -> bool:
    try:
        path.write_text(value)
        return True
    except OSError:
        return False


def _cgroup_pids(directory: Path) -> list[int]:
    try:
        return [int(p) for p in (directory / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def _kill_cgroup(directory: Path, version: int) -> None:
    """End every process of one box cgroup and remove it."""
    if not directory.is_dir():
        return
    deadline = time.monotonic() + 10
    if version == 2 and (directory / "cgroup.kill").exists():
        _write(directory / "cgroup.kill", "1")
    frozen = version == 1 and _write(directory / "freezer.state", "FROZEN")
    while time.monotonic() < deadline:
        pids = _cgroup_pids(directory)
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        if frozen:
            _write(directory / "freezer.state", "THAWED")
            frozen = False
        time.sleep(0.01)
    for _ in range(200):
        try:
            directory.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.01)


class _BoxCgroups:
    """The cgroups of one box, one per hierarchy, with its limits written."""

    def __init__(self, name: str, limits: Limits, threads: int) -> None:
        self.directories: list[tuple[Path, _Hierarchy]] = []
        self.controllers: set[str] = set()
        for hierarchy in cgroup_hierarchies():
            directory = hierarchy.base / name
            try:
                directory.mkdir()
            except OSError:
                continue
            self.directories.append((directory, hierarchy))
            self._configure(directory, hierarchy, limits, threads)

    def _configure(
        self, directory: Path, hierarchy: _Hierarchy, limits: Limits, threads: int
    ) -> None:
        given = hierarchy.controllers
        v1 = hierarchy.version == 1
        if "cpuset" in given:
            if v1:
                # A v1 cpuset takes no task until both are set: the judge's own where none is asked.
                cpus = limits.cpus or (hierarchy.base / "cpuset.cpus").read_text().strip()
                _write(directory / "cpuset.mems", (hierarchy.base / "cpuset.mems").read_text())
                _write(directory / "cpuset.cpus", cpus)
            elif limits.cpus:
                _write(directory / "cpuset.cpus", limits.cpus)
        if "memory" in given:
            memory = str(limits.memory_bytes)
            if v1:
                ok = _write(directory / "memory.limit_in_bytes", memory)
                _write(directory / "memory.memsw.limit_in_bytes", memory)
            else:
                ok = _write(directory / "memory.max", memory) and _write(
                    directory / "memory.swap.max", "0"
                )
            if ok:
                self.controllers.add("memory")
        if "pids" in given and _write(directory / "pids.max", str(limits.nproc)):
            self.controllers.add("pids")
        if "cpu" in given:
            period = 100_000
            quota = period * max(1, threads or os.cpu_count() or 1)
            if v1:
                ok = _write(directory / "cpu.cfs_period_us", str(period)) and _write(
                    directory / "cpu.cfs_quota_us", str(quota)
                )
            else:
                ok = _write(directory / "cpu.max", f"{quota} {period}")
            if ok:
                self.controllers.add("cpu")
        if "freezer" in given or "freeze" in given:
            self.controllers.add("freeze")
        if "kill" in given or "freezer" in given:
            self.controllers.add("kill")

    def enter(self) -> None:
        """Move the calling process into every cgroup of the box (runs between fork and exec)."""
        pid = str(os.getpid())
        for directory, _ in self.directories:
            with open(directory / "cgroup.procs", "w") as procs:
                procs.write(pid)

    def _freezer(self) -> tuple[Path, int] | None:
        for directory, hierarchy in self.directories:
            if hierarchy.version == 2 and "freeze" in hierarchy.controllers:
                return directory, 2
        for directory, hierarchy in self.directories:
            if "freezer" in hierarchy.controllers:
                return directory, 1
        return None

    def freeze_control(self) -> tuple[str, int] | None:
        """The file that freezes the box and the cgroup version, for a supervisor process."""
        found = self._freezer()
        if found is None:
            return None
        directory, version = found
        return str(directory), version

    def oom_killed(self) -> bool:
        for directory, hierarchy in self.directories:
            if "memory" not in hierarchy.controllers:
                continue
            try:
                name = "memory.oom_control" if hierarchy.version == 1 else "memory.events"
                if re.search(r"oom_kill [1-9]", (directory / name).read_text()):
                    return True
            except OSError:
                continue
        return False

    def kill(self) -> None:
        for directory, hierarchy in self.directories:
            if hierarchy.version == 2:
                _kill_cgroup(directory, 2)
        for directory, hierarchy in self.directories:
            if hierarchy.version == 1:
                _kill_cgroup(directory, 1)


class Freezer:
    """A box's freezer held open for the many freezes and thaws of a timed run: the control file
    written in place, and completion read from the same open file, without a path lookup: checked
    at once and then at least every millisecond until the state settles (cgroup v2 announces a
    change of cgroup.events to poll(), but at most once per 10 ms). On the 2-core development VM
    at a load of about 1.7 this took a supervised preset-S run of scaled_add from a median of 83 ms
    to 16 ms (15 runs each, alternated), the calibrated round trip unchanged."""

    def __init__(self, control: tuple[str, int]) -> None:
        directory, self.version = Path(control[0]), control[1]
        name, state = ("cgroup.freeze", "cgroup.events") if self.version == 2 else (
            "freezer.state", "freezer.state")  # fmt: skip
        self._control = os.open(directory / name, os.O_WRONLY | os.O_CLOEXEC)
        self._state = os.open(directory / state, os.O_RDONLY | os.O_CLOEXEC)
        self._poll = select.poll()
        self._poll.register(self._state, select.POLLPRI | select.POLLERR)

    def _settled(self, frozen: bool) -> bool:
        text = os.pread(self._state, 4096, 0).decode()
        if self.version == 2:
            return f"frozen {int(frozen)}" in text
        return text.strip() == ("FROZEN" if frozen else "THAWED")

    def set(self, frozen: bool, timeout_s: float = 5.0) -> bool:
        """Freeze (or thaw) the box; True once the kernel says it is done."""
        try:
            if self.version == 2:
                os.pwrite(self._control, b"1" if frozen else b"0", 0)
                if not frozen:
                    return True
            else:
                os.pwrite(self._control, b"FROZEN" if frozen else b"THAWED", 0)
            deadline = time.monotonic() + timeout_s
            spins = 0
            while not self._settled(frozen):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                spins += 1
                if spins <= 200:
                    # Every task of the box must run to its freezing point: between checks the
                    # core goes to whatever waits for it.
                    os.sched_yield()
                else:
                    # Then a check every millisecond at least: cgroup v2 announces a change of
                    # cgroup.events to poll() at most once per 10 ms.
                    self._poll.poll(min(remaining, 0.001) * 1e3)
            return True
        except OSError:
            return False

    def descriptors(self) -> tuple[int, int] | None:
        """cgroup v2's cgroup.freeze and cgroup.events, which an exchange timed in C writes and
        reads itself (hb.execution.exchange); None for v1, whose freezer.state this class
        drives."""
        return (self._control, self._state) if self.version == 2 else None

    def close(self) -> None:
        for fd in (self._control, self._state):
            with contextlib.suppress(OSError):
                os.close(fd)


# -- the box ---------------------------------------------------------------------------------------


def _project_paths() -> list[str]:
    """What the box must read of the judge's own installation: the interpreter's prefixes and the
    directories of the packages the runner imports (hb, relayout and their dependencies live in
    the environment's site-packages; an editable install adds the package directories)."""
    import hb
    import relayout

    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix}
    for package in (hb, relayout):
        paths.add(str(Path(package.__file__).resolve().parent))
    kept: list[str] = []
    for path in sorted(str(Path(p).resolve()) for p in paths if p and Path(p).exists()):
        if not any(Path(path).is_relative_to(k) for k in kept):
            kept.append(path)
    return kept


_ETC_FILES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "nsswitch.conf",
              "host.conf", "localtime", "gai.conf", "mpich")  # fmt: skip
_HOSTS = "127.0.0.1 localhost hb-box\n::1 localhost ip6-localhost\n"


# The box's pid 1, where a C compiler builds it (bwrap --as-pid-1 starts it in place of its own
# reaper). A box lives no longer than the judge by a chain of parent-death signals: the judge's
# thread that started bwrap, bwrap, the box's pid 1; when pid 1 ends, the kernel ends every process
# of its PID namespace. A signal armed after the parent has ended never comes, and bwrap arms its
# reaper's late, while it builds the box: a judge killed then left the box running. This init runs
# with its signal already armed (bwrap arms it just before the exec) and checks that the thread
# which started the box is still alive (the pidfd of argv[1] polls readable once it has ended)
# before it starts the command (argv[2...], setpriv first: the init keeps bwrap's uid, so the
# box's uid may not signal it, and its parent's signal reaches it) as its child. It reaps every
# orphan of the box, holds no capability once the command is started, ends when the command ends
# and reports a signalled command as 128 + signal, as bwrap's reaper does.
_INIT_SOURCE = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "hb-init: usage: hb-init PIDFD COMMAND...\n");
        return 126;
    }
    int starter = atoi(argv[1]);
    struct pollfd watch = {.fd = starter, .events = POLLIN};
    if (poll(&watch, 1, 0) != 0 || (watch.revents & POLLNVAL)) {
        fprintf(stderr, "hb-init: the process that started this box has ended\n");
        return 125;
    }
    close(starter);
    pid_t command = fork();
    if (command < 0) {
        perror("hb-init: fork");
        return 126;
    }
    if (command == 0) {
        execvp(argv[2], argv + 2);
        fprintf(stderr, "hb-init: execvp %s: %s\n", argv[2], strerror(errno));
        _exit(127);
    }
    /* The command's setpriv needed root's capabilities; the init needs none. */
    struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct none[2] = {{0, 0, 0}, {0, 0, 0}};
    if (syscall(SYS_capset, &header, none) != 0) {
        perror("hb-init: capset");
        kill(command, SIGKILL);
        return 126;
    }
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    for (;;) {
        int status;
        pid_t ended = wait(&status);
        if (ended == command)
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (ended < 0 && errno != EINTR)
            return 126;
    }
}
"""
# Where the init lies in the box (read-only, in the box's own root).
SANDBOX_INIT = "/.hb-init"


def _init_program() -> bytes | None:
    from hb.execution import native

    return native.compiled(_INIT_SOURCE, executable=True)


# pidfd_open's flag for a pidfd of one thread (Linux 6.9); O_EXCL's value.
_PIDFD_THREAD = os.O_EXCL


def _starter_pidfd() -> int:
    """A pidfd of this thread (of this process where the kernel has no thread pidfds): the
    parent-death signal of a process it starts comes when this thread ends, so this is what a
    box's init must see alive."""
    try:
        return os.pidfd_open(threading.get_native_id(), _PIDFD_THREAD)
    except OSError:
        return os.pidfd_open(os.getpid())


def _memfd(name: str, data: bytes) -> int:
    fd = os.memfd_create(name, os.MFD_CLOEXEC)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


# bwrap's options whose value is a descriptor (BoxCommand.remap renumbers them).
_BWRAP_FD_OPTIONS = frozenset({
    "--seccomp", "--add-seccomp-fd", "--ro-bind-data", "--bind-data", "--file", "--block-fd",
    "--sync-fd", "--info-fd", "--json-status-fd", "--userns-block-fd",
})  # fmt: skip


@dataclass
class BoxCommand:
    """An argv ready to start in a box, as data (a supervisor process starts it): what to exec,
    its environment, the fds it inherits, the cgroups it enters and its rlimits."""

    argv: list[str]
    env: dict[str, str]
    pass_fds: tuple[int, ...]
    cgroup_procs: list[str]
    limits: Limits
    protections: list[str]
    # The place in argv of the box's init's pidfd argument, filled in where the command starts
    # (a pidfd of the thread that starts it); None without the init.
    starter: int | None = None

    def preexec(self, parent: int) -> None:
        """Between fork and exec: into the box's cgroups, its rlimits, and death with the parent
        (`parent`, which must still be this process's: a signal armed after it ended never
        comes)."""
        pid = str(os.getpid())
        for procs in self.cgroup_procs:
            with open(procs, "w") as handle:
                handle.write(pid)
        _apply_rlimits(self.limits)
        _parent_death_signal()
        if os.getppid() != parent:
            os._exit(125)

    def with_argv(self, extra: Sequence[str], pass_fds: Sequence[int] = ()) -> BoxCommand:
        """The same box command with `extra` appended to its argv and more fds passed."""
        return BoxCommand(
            [*self.argv, *extra], dict(self.env), (*self.pass_fds, *pass_fds),
            list(self.cgroup_procs), self.limits, list(self.protections), self.starter,
        )  # fmt: skip

    def remap(self, numbers: Mapping[int, int]) -> BoxCommand:
        """The same command in a process that holds its descriptors under other numbers (a
        supervisor they were sent to): bwrap's descriptor arguments and pass_fds renumbered."""
        argv = list(self.argv)
        for index in range(len(argv) - 1):
            if argv[index] in _BWRAP_FD_OPTIONS and argv[index + 1].isdigit():
                argv[index + 1] = str(numbers.get(int(argv[index + 1]), int(argv[index + 1])))
        return BoxCommand(
            argv, dict(self.env), tuple(numbers.get(fd, fd) for fd in self.pass_fds),
            list(self.cgroup_procs), self.limits, list(self.protections), self.starter,
        )  # fmt: skip

    def to_json(self) -> dict[str, Any]:
        return {
            "argv": self.argv, "env": self.env, "pass_fds": list(self.pass_fds),
            "cgroup_procs": self.cgroup_procs, "limits": asdict(self.limits),
            "protections": self.protections, "starter": self.starter,
        }  # fmt: skip

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> BoxCommand:
        limits = dict(data["limits"])
        limits["require"] = tuple(limits.get("require", ()))
        return cls(
            list(data["argv"]), dict(data["env"]), tuple(data["pass_fds"]),
            list(data["cgroup_procs"]), Limits(**limits), list(data["protections"]),
            data.get("starter"),
        )  # fmt: skip

    def popen(
        self, cwd: Path, stdout: int | None = None, stderr: int | None = None
    ) -> subprocess.Popen[bytes]:
        """Start the command from this thread, which the box then lives no longer than."""
        parent = os.getpid()
        argv, pass_fds, watched = list(self.argv), self.pass_fds, None
        if self.starter is not None:
            watched = _starter_pidfd()
            argv[self.starter] = str(watched)
            pass_fds = (*pass_fds, watched)
        try:
            return subprocess.Popen(
                argv,
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=stdout,
                stderr=stderr,
                env=self.env,
                start_new_session=True,
                pass_fds=pass_fds,
                preexec_fn=functools.partial(self.preexec, parent),
            )
        finally:
            if watched is not None:
                os.close(watched)


class Box:
    """One box: a uid, cgroups and a run directory, for one or more commands (a build, or a timed
    run's runner). Use as a context manager; leaving it kills every process of the box, unmounts
    its run directory and gives the uid back."""

    def __init__(
        self,
        root: Path,
        limits: Limits,
        *,
        threads: int = 0,
        read_only: Sequence[str | Path] = (),
        allow_syscalls: frozenset[str] = frozenset(),
        devices: Sequence[str] = (),
    ) -> None:
        missing = missing_protections(limits)
        if missing:
            raise SandboxUnavailable(
                f"this machine cannot give the box {missing}, which sandbox.require demands"
            )
        self.limits = limits
        self.threads = threads
        self.root = root.resolve()
        self.read_only = [str(Path(p).resolve()) for p in read_only]
        # A profile box's extra system calls (PROFILE_SYSCALLS); a grade's box has none.
        self.allow_syscalls = allow_syscalls
        # Device nodes bound into the box (a cuda grade's /dev/nvidia*); other boxes have none.
        self.devices = list(devices)
        self.name = ""
        self.workdir = Path()
        self.uid: int | None = None
        self._stack = contextlib.ExitStack()
        self._cgroups: _BoxCgroups | None = None
        self._mounted = False
        self._fds: list[int] = []

    # - lifetime

    def __enter__(self) -> Box:
        try:
            self._open()
        except BaseException:
            self._close()
            raise
        return self

    def __exit__(self, *_: object) -> None:
        self._close()

    def _open(self) -> None:
        root_protections = machine_protections()
        if "unique uid" in root_protections:
            self.uid = self._stack.enter_context(_borrowed_uid(self.limits))
        self.name = (
            f"{BOX_PREFIX}{self.uid if self.uid is not None else 'u'}-{uuid.uuid4().hex[:12]}"
        )
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.workdir = self.root / self.name
        self.workdir.mkdir(mode=0o700)
        if "disk quota" in root_protections:
            owner = f",uid={self.uid},gid={self.limits.gid}" if self.uid is not None else ""
            mounted = subprocess.run(
                ["mount", "-t", "tmpfs", "-o",
                 f"size={self.limits.disk_bytes},mode=0700,nosuid,nodev{owner}", "hb-box",
                 str(self.workdir)],
                capture_output=True, check=False, timeout=10,
            )  # fmt: skip
            self._mounted = mounted.returncode == 0
        elif self.uid is not None:
            os.chown(self.workdir, self.uid, self.limits.gid)
        self._cgroups = _BoxCgroups(self.name, self.limits, self.threads)

    def _close(self) -> None:
        if self._cgroups is not None:
            self._cgroups.kill()
        for fd in self._fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._fds.clear()
        if self._mounted:
            subprocess.run(["umount", "-l", str(self.workdir)], capture_output=True, check=False)
            self._mounted = False
        if self.workdir != Path() and self.workdir.exists():
            shutil.rmtree(self.workdir, ignore_errors=True)
        self._stack.close()

    @property
    def inside(self) -> str:
        """The run directory as the box's commands see it."""
        return SANDBOX_WORKDIR if bwrap_path() is not None else str(self.workdir)

    # - files

    def give(self, path: Path) -> None:
        """Hand a file the judge wrote into the run directory to the box's uid."""
        if self.uid is not None:
            os.chown(path, self.uid, self.limits.gid, follow_symlinks=False)

    def write(self, relative: str, data: bytes | str, mode: int = 0o644) -> Path:
        """Write a file into the run directory, owned by the box."""
        target = self.workdir / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        for parent in target.relative_to(self.workdir).parents:
            if str(parent) != ".":
                self.give(self.workdir / parent)
        if isinstance(data, str):
            data = data.encode()
        target.write_bytes(data)
        os.chmod(target, mode)
        self.give(target)
        return target

    def protections(self) -> list[str]:
        have = set(machine_protections())
        if not self._mounted:
            have.discard("disk quota")
        if self.uid is None:
            have.discard("unique uid")
        controllers = self._cgroups.controllers if self._cgroups else set()
        for name, needs in (("cgroup memory", "memory"), ("cgroup pids", "pids"),
                            ("cgroup cpu", "cpu"), ("cgroup kill", "kill"),
                            ("cgroup freeze", "freeze")):  # fmt: skip
            if needs not in controllers:
                have.discard(name)
        return [p for p in PROTECTIONS if p in have]

    def freeze_control(self) -> tuple[str, int] | None:
        return self._cgroups.freeze_control() if self._cgroups else None

    def oom_killed(self) -> bool:
        return self._cgroups.oom_killed() if self._cgroups else False

    def kill(self) -> None:
        """End every process of the box now (the box stays usable for another command)."""
        if self._cgroups is None:
            return
        for directory, hierarchy in self._cgroups.directories:
            if hierarchy.version == 2 and (directory / "cgroup.kill").exists():
                _write(directory / "cgroup.kill", "1")
            else:
                for pid in _cgroup_pids(directory):
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(pid, signal.SIGKILL)

    # - commands

    def command(
        self,
        argv: Sequence[str],
        env: Mapping[str, str] | None = None,
        pass_fds: Sequence[int] = (),
    ) -> BoxCommand:
        """The argv, environment and entry step that start `argv` in this box."""
        child_env = {"PATH": "/usr/bin:/bin", "HOME": SANDBOX_WORKDIR, "LANG": "C.UTF-8",
                     "TMPDIR": "/tmp"}  # fmt: skip
        child_env.update(env or {})
        protections = self.protections()
        fds = list(pass_fds)
        bwrap = bwrap_path()
        starter = None
        command: list[str] = []
        if bwrap is not None:
            init = _init_program()
            command = [bwrap, "--unshare-pid", "--unshare-ipc", "--unshare-net", "--unshare-uts",
                       "--unshare-cgroup-try", "--die-with-parent", "--new-session",
                       "--hostname", "hb-box", "--clearenv"]  # fmt: skip
            if init is not None:
                command.append("--as-pid-1")
            if not _is_root():
                command += ["--unshare-user", "--disable-userns"]
            command += ["--ro-bind", "/usr", "/usr"]
            for link in ("bin", "lib", "lib64", "sbin", "lib32", "libx32"):
                target = Path("/") / link
                if target.is_symlink():
                    command += ["--symlink", os.readlink(target), f"/{link}"]
                elif target.is_dir():
                    command += ["--ro-bind", str(target), f"/{link}"]
            command += ["--perms", "0755", "--dir", "/etc"]
            for name in _ETC_FILES:
                command += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
            hosts = _memfd("hosts", _HOSTS.encode())
            self._fds.append(hosts)
            fds.append(hosts)
            command += ["--ro-bind-data", str(hosts), "/etc/hosts"]
            if init is not None:
                init_fd = _memfd("init", init)
                self._fds.append(init_fd)
                fds.append(init_fd)
                command += ["--perms", "0555", "--ro-bind-data", str(init_fd), SANDBOX_INIT]
            # /proc, /dev and the scratch tmpfs first: a bind below /tmp (a checkout or venv
            # that lives there) must land on the box's own /tmp, not under it.
            scratch = str(self.limits.scratch_bytes)
            command += ["--proc", "/proc", "--dev", "/dev",
                        "--perms", "1777", "--size", scratch, "--tmpfs", "/tmp",
                        "--perms", "1777", "--size", scratch, "--tmpfs", "/dev/shm"]  # fmt: skip
            for node in self.devices:
                command += ["--dev-bind", node, node]
            made: set[str] = {"/", "/usr", "/etc", "/tmp", "/dev", "/proc"}
            project = _project_paths()
            extra = [
                path
                for path in self.read_only
                if not any(Path(path).is_relative_to(bound) for bound in project)
            ]
            for path in [*project, *extra]:
                for parent in reversed(Path(path).parents):
                    if str(parent) not in made:
                        made.add(str(parent))
                        command += ["--perms", "0755", "--dir", str(parent)]
                command += ["--ro-bind", path, path]
            # The CPU topology (read-only) for OpenMP's places and hwloc; nothing else of /sys.
            for directory in ("/sys", "/sys/devices", "/sys/devices/system", "/sys/class",
                              "/sys/class/net"):  # fmt: skip
                command += ["--perms", "0755", "--dir", directory]
            for topology in ("/sys/devices/system/cpu", "/sys/devices/system/node"):
                command += ["--ro-bind-try", topology, topology]
            if self.devices:
                # The PCI tree the CUDA driver reads its devices' topology from (read-only).
                command += ["--perms", "0755", "--dir", "/sys/bus"]
                buses = sorted(str(p) for p in Path("/sys/devices").glob("pci*"))
                for pci in ["/sys/bus/pci", *buses]:
                    command += ["--ro-bind-try", pci, pci]
            command += ["--bind", str(self.workdir), SANDBOX_WORKDIR, "--chdir", SANDBOX_WORKDIR]
            for key, value in child_env.items():
                command += ["--setenv", key, value]
            program = seccomp_program(self.allow_syscalls)
            if program is not None:
                filter_fd = _memfd("seccomp", program)
                self._fds.append(filter_fd)
                fds.append(filter_fd)
                command += ["--seccomp", str(filter_fd)]
            command.append("--")
            if init is not None:
                starter = len(command) + 1
                command += [SANDBOX_INIT, "-1"]
            if self.uid is not None:
                command += ["/usr/bin/setpriv", f"--reuid={self.uid}", f"--regid={self.limits.gid}",
                            "--clear-groups", "--inh-caps=-all", "--bounding-set=-all",
                            "--no-new-privs", "--pdeathsig", "SIGKILL", "--"]  # fmt: skip
        command += list(argv)
        procs = [
            str(d / "cgroup.procs") for d, _ in (self._cgroups.directories if self._cgroups else [])
        ]
        return BoxCommand(command, child_env, tuple(fds), procs, self.limits, protections, starter)

    def popen(
        self,
        argv: Sequence[str],
        env: Mapping[str, str] | None = None,
        pass_fds: Sequence[int] = (),
        stdout: int | None = None,
        stderr: int | None = None,
    ) -> tuple[subprocess.Popen[bytes], list[str]]:
        """Start `argv` in the box; returns the process and the protections it runs under."""
        prepared = self.command(argv, env, pass_fds)
        return prepared.popen(self.workdir, stdout, stderr), prepared.protections

    def run(
        self,
        argv: Sequence[str],
        env: Mapping[str, str] | None = None,
        timeout_s: float | None = None,
        output_names: tuple[str, str] = (".stdout", ".stderr"),
    ) -> SandboxResult:
        """Run `argv` in the box to its end (or the wall-clock limit); stdout and stderr go to
        files of the judge's (not the box's) and their tails come back."""
        timeout = self.limits.timeout_s if timeout_s is None else timeout_s
        started = time.monotonic()
        out_path = self.root / f"{self.name}{output_names[0]}"
        err_path = self.root / f"{self.name}{output_names[1]}"
        try:
            with open(out_path, "wb") as out, open(err_path, "wb") as err:
                process, protections = self.popen(
                    argv, env, stdout=out.fileno(), stderr=err.fileno()
                )
                timed_out = False
                try:
                    process.wait(timeout=timeout)
                except subprocess.TimeoutExpired:
                    timed_out = True
                finally:
                    self.kill()
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(process.pid, signal.SIGKILL)
                    process.wait()
            return SandboxResult(
                returncode=process.returncode,
                timed_out=timed_out,
                wall_s=time.monotonic() - started,
                stdout=_tail(out_path, 4000),
                stderr=_tail(err_path, 4000),
                protections=protections,
                oom_killed=self.oom_killed(),
            )
        finally:
            for path in (out_path, err_path):
                with contextlib.suppress(OSError):
                    path.unlink()


def _apply_rlimits(limits: Limits) -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_s, limits.cpu_s))
    if limits.address_space_limit:
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.fsize_bytes, limits.fsize_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if not _is_root():
        # As root the box's uid is its own and the pids cgroup bounds it; RLIMIT_NPROC would
        # count every process of the judge's uid.
        resource.setrlimit(resource.RLIMIT_NPROC, (limits.nproc, limits.nproc))


_libc = None


def _parent_death_signal() -> None:
    global _libc
    import ctypes

    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    _libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG


def run_sandboxed(
    argv: Sequence[str],
    workdir: Path,
    limits: Limits,
    env: Mapping[str, str] | None = None,
    files: Mapping[str, bytes | str] | None = None,
    keep: Sequence[str] = (),
    read_only: Sequence[str | Path] = (),
) -> tuple[SandboxResult, dict[str, bytes]]:
    """Run `argv` in a fresh box under `workdir` (the judge's directory of boxes), with `files`
    written into its run directory first and `read_only` bound read-only (a compiler outside
    /usr); returns how it ended and the files named in `keep` that it left there (read before
    the box is torn down)."""
    with Box(workdir, limits, read_only=read_only) as box:
        for name, data in (files or {}).items():
            box.write(name, data)
        result = box.run(argv, env)
        kept: dict[str, bytes] = {}
        for name in keep:
            with contextlib.suppress(OSError):
                kept[name] = read_box_file(box.workdir / name, limits.fsize_bytes)
        return result, kept


def read_box_file(path: Path, limit: int) -> bytes:
    """A file a box left, read without following a link it may have planted and bounded in size
    (one byte more than `limit` is read, so an oversized file shows as too long)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        chunks, remaining = [], limit + 1
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 24))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def end_with(parent: int) -> None:
    """End this process (a supervisor, which starts boxes) as soon as process `parent`, the
    judge that started it, has ended, whichever of the judge's threads started it; its boxes then
    end with it. A thread waits on a pidfd of the judge."""
    watched = os.pidfd_open(parent)
    if os.getppid() != parent:
        os._exit(1)

    def watch() -> None:
        waiting = select.poll()
        waiting.register(watched, select.POLLIN)
        while not waiting.poll():
            pass
        os._exit(1)

    threading.Thread(target=watch, name="hb-judge-watch", daemon=True).start()


def reap_stale_boxes(root: Path, depth: int = 4) -> int:
    """End the boxes an earlier judge left behind (their uid lock is free): their processes, their
    cgroups, and their run directories anywhere up to `depth` levels under `root` (the judge's
    data directory holds the boxes of builds, runs and MPI builds). Returns how many were found."""
    found = 0
    for hierarchy in cgroup_hierarchies():
        with contextlib.suppress(OSError):
            for directory in hierarchy.base.iterdir():
                if (
                    directory.is_dir()
                    and directory.name.startswith(BOX_PREFIX)
                    and _stale(directory.name)
                ):
                    _kill_cgroup(directory, hierarchy.version)
                    found += 1
    # A walk that never enters a box's run directory (what a box made there is not a box).
    level = [root] if root.is_dir() else []
    for _ in range(depth):
        below = []
        for parent in level:
            with contextlib.suppress(OSError):
                for entry in os.scandir(parent):
                    if not entry.is_dir(follow_symlinks=False):
                        continue
                    if not entry.name.startswith(BOX_PREFIX):
                        below.append(Path(entry.path))
                    elif _stale(entry.name):
                        subprocess.run(
                            ["umount", "-l", entry.path], capture_output=True, check=False
                        )
                        shutil.rmtree(entry.path, ignore_errors=True)
                        found += 1
        level = below
    return found


def _stale(name: str) -> bool:
    """Whether the box of this name has no live owner: its uid's lock is free. A box without a
    pooled uid (a judge without root) is never judged stale here."""
    uid = name[len(BOX_PREFIX) :].split("-", 1)[0]
    if not uid.isdigit() or len(uid) > 9:
        return False
    return _uid_is_free(int(uid))


def _tail(path: Path, limit: int) -> str:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - limit))
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""
