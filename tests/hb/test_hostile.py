"""Hostile submissions, one per attack class, each graded through the judge on one node and (where
the class applies to ranks) on MPI ranks: every grade is a clean failure or an honest measurement,
the judge answers /health afterwards, no process of the box survives, and nothing outside the run
directory changed.

An escape attempt is written as `static int attack(void)`, returning 1 when the escape worked; the
kernel then spoils its own output, so a correct grade means every attempt was refused."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from hb import results_db
from hb.distributed.driver import mpicc_path
from hb.execution import box_pool, boxcall, sandbox, supervisor
from hb.service import create_app
from tests.hb.conftest import make_config

ROOT_ONLY = pytest.mark.skipif(
    sandbox.bwrap_path() is None or os.geteuid() != 0,
    reason="the box's namespaces, uid and cgroups need root and bubblewrap (make setup installs it)",
)
pytestmark = ROOT_ONLY

CHECKOUT = Path(__file__).resolve().parents[2]
LIMITS = {"timeout_s": 8, "cpu_s": 20, "memory_mb": 1024, "nproc": 96, "fsize_mb": 128,
          "disk_mb": 256, "scratch_mb": 64, "threads": 1, "uid_base": 62000, "uid_count": 16}  # fmt: skip
# This module's boxes take uids of their own, so a judge running beside the tests is not counted.
UID_RANGE = range(62000, 62000 + 16)

PRELUDE = """#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>
"""

SINGLE = """{prelude}
{attack}
void scaled_add_fp64(const double *restrict x, double *restrict y, int64_t N, double alpha,
                     void *workspace, int64_t workspace_bytes) {{
    (void)workspace; (void)workspace_bytes;
    int escaped = attack();
    for (int64_t i = 0; i < N; ++i) y[i] += alpha * x[i];
    if (escaped) y[0] = NAN;
}}
"""

MPI = """{prelude}
#include <mpi.h>
{attack}
void scaled_add_mpi_fp64(const double *restrict x, double *restrict y, int64_t N, double alpha,
                         MPI_Comm comm, void *workspace, int64_t workspace_bytes) {{
    (void)comm; (void)workspace; (void)workspace_bytes;
    int escaped = attack();
    for (int64_t i = 0; i < N; ++i) y[i] += alpha * x[i];
    if (escaped && N > 0) y[0] = NAN;
}}
"""

DISTRIBUTE = {
    "startup": {"grid": ["P"]},
    "operations": [
        {"action": "distribute", "array": name, "grid_dim": 0, "dim": 0, "scheme": "block"}
        for name in ("x", "y")
    ],
}
MODES = [
    "single",
    pytest.param(
        "mpi",
        marks=pytest.mark.skipif(
            not Path(mpicc_path()).exists(), reason="MPICH's mpicc is not beside the interpreter"
        ),
    ),
]


@pytest.fixture(scope="module")
def judge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, Path]]:
    data_dir = tmp_path_factory.mktemp("hostile-judge")
    config = make_config(
        data_dir,
        sandbox=LIMITS,
        grading={"reps": 2, "warmup": 1},
        requests={"allow": ["load", "distribute"]},
        mpi={"ranks": 2},
    )
    with TestClient(create_app(config)) as client:
        yield client, data_dir


def _state(root: Path) -> dict[str, str]:
    """Every file under root the judge keeps (not its database, not its boxes' directory), with
    a digest of its content."""
    seen = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if relative.parts[0] in {"sandbox"} or relative.name.startswith("hb.sqlite3"):
            continue
        if path.is_file() and not path.is_symlink():
            seen[str(relative)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return seen


def _box_processes() -> list[int]:
    """Processes on the host owned by one of this module's box uids, and its box cgroups that
    still exist (-1 each); not those of the box started for the next grade (hb.execution.box_pool), in
    which nothing has run."""
    waiting = box_pool.idle_boxes()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid in UID_RANGE and not any(
                    name in (entry / "cgroup").read_text() for name in waiting
                ):
                    found.append(int(entry.name))
            except OSError:
                continue
    names = tuple(f"{sandbox.BOX_PREFIX}{uid}-" for uid in UID_RANGE)
    for hierarchy in sandbox.cgroup_hierarchies():
        if hierarchy.base.is_dir():
            found += [
                -1
                for d in hierarchy.base.iterdir()
                if d.name.startswith(names) and d.name not in waiting
            ]
    return found


def grade(
    judge: tuple[TestClient, Path], mode: str, attack: str, route: str = "score",
    source: str | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Grade the attack (or a whole `source`) on one node or on ranks and check the judge around
    it: /health, no box process left, nothing it kept changed (files it adds, such as a new
    build, are its own)."""
    client, data_dir = judge
    before = _state(data_dir)
    template = SINGLE if mode == "single" else MPI
    body: dict[str, Any] = {
        "kernel": "scaled_add",
        "source": source or template.format(prelude=PRELUDE, attack=attack),
    }
    if mode == "mpi":
        body["requests"] = DISTRIBUTE
    if route == "score":
        body["preset"] = "S"
    answer = client.post(f"/{route}", json=body)
    assert answer.status_code == 200, answer.text
    assert client.get("/health").status_code == 200
    # The grade's box is discarded, and the next one started, in the background: once neither is
    # under way, nothing of the grade's box may be left.
    assert box_pool.settle(60), "a box was still being discarded or started after a minute"
    deadline = time.monotonic() + 10
    while _box_processes() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _box_processes() == []
    after = _state(data_dir)
    assert {k: v for k, v in after.items() if k in before} == before
    return answer.json()


# -- escapes from the box -----------------------------------------------------------------------


def _any_opens(paths: list[Path | str], flags: str) -> str:
    tests = " || ".join(f'open("{p}", {flags}) >= 0' for p in paths)
    return f"static int attack(void) {{ return {tests}; }}"


@pytest.mark.parametrize("mode", MODES)
def test_secrets_of_the_host_and_the_judge_cannot_be_read(judge, mode: str) -> None:
    _, data_dir = judge
    paths = ["/etc/shadow", "/etc/passwd", CHECKOUT / "config.yaml", CHECKOUT / "pyproject.toml",
             data_dir / "hb.sqlite3", data_dir / "hidden_seed", "/proc/1/environ", "/root/.bashrc"]  # fmt: skip
    assert grade(judge, mode, _any_opens(paths, "O_RDONLY"))["correct"] is True


@pytest.mark.parametrize("mode", MODES)
def test_nothing_outside_the_run_directory_can_be_written(judge, mode: str, tmp_path: Path) -> None:
    _, data_dir = judge
    marker = f"hb-escape-{time.time_ns()}"
    targets = [data_dir / marker, data_dir / "build-cache" / marker, data_dir / "conversion-cache" / marker,
               CHECKOUT / marker, Path("/run/lock") / marker, Path("/var/tmp") / marker,
               tmp_path / marker]  # fmt: skip
    attack = _any_opens([*targets, data_dir / "hb.sqlite3"], "O_WRONLY | O_CREAT")
    # The box's own /tmp and /dev/shm are writable scratch: what lands there vanishes with it.
    scratch = f'open("/dev/shm/{marker}", O_WRONLY | O_CREAT, 0600); open("/tmp/{marker}", O_WRONLY | O_CREAT, 0600);'
    attack = attack.replace("{ return", "{ " + scratch + " return")
    assert grade(judge, mode, attack)["correct"] is True
    assert not any(t.exists() for t in [*targets, Path("/dev/shm") / marker, Path("/tmp") / marker])


@pytest.mark.parametrize("mode", MODES)
def test_the_hosts_processes_are_invisible_and_unreachable(judge, mode: str) -> None:
    attack = """static int attack(void) {
        int seen = 0; DIR *d = opendir("/proc"); struct dirent *e;
        if (!d) return 0;
        while ((e = readdir(d))) if (e->d_name[0] >= '0' && e->d_name[0] <= '9') ++seen;
        closedir(d);
        return seen > 24;   /* the box's own: its init, the launcher and the ranks */
    }"""
    assert grade(judge, mode, attack)["correct"] is True


@pytest.mark.parametrize("mode", MODES)
def test_what_a_kernel_never_needs_is_refused(judge, mode: str) -> None:
    attack = """static int attack(void) {
        /* the judge's own header comes first, so _GNU_SOURCE is too late: raw system calls */
        if (syscall(SYS_unshare, 0x10000000) == 0 || syscall(SYS_unshare, 0x00020000) == 0) return 1;
        if (mount("none", "/tmp", "tmpfs", 0, NULL) == 0) return 1;
        if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) == 0) return 1;
        if (setuid(0) == 0 || getuid() == 0 || geteuid() == 0) return 1;
        if (sethostname("x", 1) == 0) return 1;
        return 0;
    }"""
    body = grade(judge, mode, attack)
    assert body["correct"] is True, body["reason"]


@pytest.mark.parametrize("mode", MODES)
def test_no_network_reaches_the_judge(judge, mode: str) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.2)
    port = listener.getsockname()[1]
    connections: list[object] = []
    done = threading.Event()

    def accept() -> None:
        while not done.is_set() and not connections:
            try:
                connections.append(listener.accept())
            except TimeoutError:
                continue

    watcher = threading.Thread(target=accept)
    watcher.start()
    attack = f"""static int attack(void) {{
        int s = socket(AF_INET, SOCK_STREAM, 0); struct sockaddr_in a = {{0}};
        a.sin_family = AF_INET; a.sin_port = htons({port}); a.sin_addr.s_addr = htonl(0x7f000001);
        int ok = s >= 0 && connect(s, (struct sockaddr *)&a, sizeof a) == 0;
        if (s >= 0) close(s);
        return ok;
    }}"""
    try:
        assert grade(judge, mode, attack)["correct"] is True
    finally:
        done.set()
        watcher.join()
        listener.close()
    assert connections == []


@pytest.mark.parametrize("mode", MODES)
def test_a_daemon_left_behind_dies_with_the_box(judge, mode: str) -> None:
    attack = """static int attack(void) {
        static int started = 0;
        if (!started) {
            started = 1;
            if (fork() == 0) { setsid(); if (fork() == 0) { for (;;) sleep(1); } _exit(0); }
        }
        return 0;
    }"""
    # grade() checks that no process of a box uid is alive afterwards. On ranks the daemon keeps
    # hydra waiting for its output to close: the grade ends at the wall-clock limit instead.
    body = grade(judge, mode, attack)
    assert body["correct"] is True or (mode == "mpi" and "wall-clock" in body["reason"])


@pytest.mark.parametrize("mode", MODES)
def test_a_sysv_segment_does_not_outlive_its_grade(judge, mode: str) -> None:
    attack = """static int attack(void) {
        /* pids restart in every box's namespace: a segment keyed by this rank's pid that exists
           before this rank made it was left by an earlier grade */
        static int created = 0;
        key_t key = 0x48420000 + getpid();
        if (created) return 0;
        if (shmget(key, 0, 0) >= 0) return 1;       /* left by an earlier grade */
        created = shmget(key, 4096, IPC_CREAT | 0666) >= 0;
        return 0;
    }"""
    for _ in range(2):
        body = grade(judge, mode, attack)
        assert body["correct"] is True, body["reason"]
    keys = [int(line.split()[0]) for line in Path("/proc/sysvipc/shm").read_text().splitlines()[1:]]
    assert not [k for k in keys if k >> 16 == 0x4842]


@pytest.mark.parametrize("mode", MODES)
def test_signals_reach_only_the_box(judge, mode: str) -> None:
    # kill(-1) reaches every process of the box but the caller: on one node the kernel runs on,
    # on ranks the launcher dies; either way the judge is untouched (grade checks /health).
    attack = "static int attack(void) { kill(-1, SIGKILL); return 0; }"
    body = grade(judge, mode, attack)
    assert body["correct"] is (mode == "single"), body["reason"]


def test_a_build_cannot_read_the_hosts_files(judge) -> None:
    attack = '#include "/etc/shadow"\nstatic int attack(void) { return 0; }'
    for mode in ("single", "mpi") if Path(mpicc_path()).exists() else ("single",):
        body = grade(judge, mode, attack)
        assert body["correct"] is False
        text = str(body)
        assert "root:" not in text and "No such file" in text


# -- limits of the box as a whole ---------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_memory_is_bounded_for_all_processes_together(judge, mode: str) -> None:
    attack = """static int attack(void) {
        /* five children of 400 MB each against a 1 GB box */
        for (int c = 0; c < 5; ++c) if (fork() == 0) {
            size_t bytes = (size_t)400 << 20; char *p = malloc(bytes);
            if (p) for (size_t i = 0; i < bytes; i += 4096) p[i] = 1;
            sleep(3); _exit(0);
        }
        int survivors = 0, status;
        while (wait(&status) > 0) if (WIFEXITED(status)) ++survivors;
        return survivors == 5;
    }"""
    body = grade(judge, mode, attack)
    # Either the children were killed and the kernel saw it (correct), or the box went over its
    # limit and the run was ended; never all five children alive (a spoiled output).
    if body["correct"] is False:
        assert "outside rtol" not in body["reason"], body["reason"]
        assert any(w in body["reason"] for w in ("memory", "SIGKILL", "killed", "status")), body[
            "reason"
        ]


@pytest.mark.parametrize("mode", MODES)
def test_disk_is_bounded_for_the_run_directory_as_a_whole(judge, mode: str) -> None:
    attack = """static int attack(void) {
        /* sixteen files of 60 MB against a 256 MB run directory */
        static char block[1 << 20];
        int written = 0;
        for (int f = 0; f < 16; ++f) {
            char name[48]; snprintf(name, sizeof name, "fill%d-%d", (int)getpid(), f);
            FILE *h = fopen(name, "w");
            if (!h) break;
            int ok = 1;
            for (int m = 0; m < 60 && ok; ++m) ok = fwrite(block, 1, sizeof block, h) == sizeof block;
            if (fclose(h) != 0) ok = 0;
            if (!ok) break;
            ++written;
        }
        for (int f = 0; f < 16; ++f) { char name[48]; snprintf(name, sizeof name, "fill%d-%d", (int)getpid(), f); unlink(name); }
        return written == 16;
    }"""
    body = grade(judge, mode, attack)
    assert body["correct"] is True, body["reason"]


def test_boxes_get_different_uids_across_judges(tmp_path: Path) -> None:
    limits = sandbox.Limits(timeout_s=10, uid_base=UID_RANGE.start, uid_count=len(UID_RANGE))
    # A second judge on the machine: another process holding a box while this one opens one.
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time; from pathlib import Path; from hb.execution import sandbox\n"
         f"limits = sandbox.Limits(uid_base={UID_RANGE.start}, uid_count={len(UID_RANGE)})\n"
         f"with sandbox.Box(Path({str(tmp_path / 'other')!r}), limits) as box:\n"
         "    print(box.uid, flush=True); time.sleep(30)"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None
        other_uid = int(holder.stdout.readline())
        with (
            sandbox.Box(tmp_path / "mine", limits) as first,
            sandbox.Box(tmp_path / "mine", limits) as second,
        ):
            uids = {other_uid, first.uid, second.uid}
            assert len(uids) == 3 and uids <= set(UID_RANGE)
    finally:
        holder.kill()
        holder.wait()
        sandbox.reap_stale_boxes(tmp_path / "other")


def _box_judge(root: Path, after_start: str = "") -> subprocess.Popen[str]:
    """A judge in a process of its own that opens a box under `root`, starts three sleeps in it
    (one in a session of its own) and prints the box's name; then runs `after_start`, then
    sleeps."""
    script = (
        "import sys, time; from pathlib import Path; from hb.execution import sandbox\n"
        f"limits = sandbox.Limits(uid_base={UID_RANGE.start}, uid_count={len(UID_RANGE)})\n"
        f"box = sandbox.Box(Path({str(root)!r}), limits).__enter__()\n"
        "process, _ = box.popen(['/bin/sh', '-c', 'sleep 600 & setsid sleep 600 & sleep 600'])\n"
        f"print(box.name, flush=True)\n{after_start}\ntime.sleep(600)\n"
    )
    return subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)


def _wait_for_no_box_process(seconds: float = 10) -> list[int]:
    deadline = time.monotonic() + seconds
    while [p for p in _box_processes() if p > 0] and time.monotonic() < deadline:
        time.sleep(0.05)
    return [p for p in _box_processes() if p > 0]


def test_a_killed_judge_leaves_no_box_running(tmp_path: Path) -> None:
    judge_process = _box_judge(tmp_path)
    assert judge_process.stdout is not None
    name = judge_process.stdout.readline().strip()
    deadline = time.monotonic() + 10
    # The shell and its three sleeps (the box's init keeps bwrap's uid).
    while len([p for p in _box_processes() if p > 0]) < 4 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len([p for p in _box_processes() if p > 0]) == 4, "the box never started"
    judge_process.send_signal(signal.SIGKILL)
    judge_process.wait()
    assert _wait_for_no_box_process() == []
    # The next judge to start removes what the dead one left: its cgroups and its run directory.
    assert (tmp_path / name).exists()
    assert sandbox.reap_stale_boxes(tmp_path) >= 1
    assert not (tmp_path / name).exists()
    for hierarchy in sandbox.cgroup_hierarchies():
        assert not (hierarchy.base / name).exists()


def test_a_judge_killed_while_its_box_starts_leaves_nothing_running(tmp_path: Path) -> None:
    # Killed as bwrap builds the box, before its processes have armed their parent-death
    # signals: a signal armed after the parent has gone never comes, and the box must not start.
    for attempt in range(12):
        root = tmp_path / str(attempt)
        judge_process = _box_judge(root)
        assert judge_process.stdout is not None
        name = judge_process.stdout.readline().strip()
        time.sleep(0.001 * (attempt % 3))
        judge_process.send_signal(signal.SIGKILL)
        judge_process.wait()
        # Every process of the box, bwrap's included: one that lives on starts the box later.
        deadline = time.monotonic() + 10
        while _cgroup_processes(name) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _cgroup_processes(name) == [], f"attempt {attempt}"
        assert [p for p in _box_processes() if p > 0] == [], f"attempt {attempt}"
        sandbox.reap_stale_boxes(root)


def _cgroup_processes(name: str) -> list[int]:
    """The processes still running in the cgroups of box `name`."""
    found: set[int] = set()
    for hierarchy in sandbox.cgroup_hierarchies():
        with contextlib.suppress(OSError):
            found |= {int(p) for p in (hierarchy.base / name / "cgroup.procs").read_text().split()}
    return sorted(p for p in found if _running(p))


def test_a_killed_judge_takes_its_supervisors_with_it(tmp_path: Path) -> None:
    # A supervisor busy with a job does not read the socket whose end would tell it the judge is
    # gone; here the judge's end of it is also held open by another process.
    judge_process = _box_judge(
        tmp_path,
        "import subprocess; from hb.execution import supervisor_pool\n"
        "held = supervisor_pool.Supervisor()\n"
        "keeper = subprocess.Popen(['sleep', '600'], pass_fds=(held.socket.fileno(),))\n"
        "print(held.process.pid, keeper.pid, flush=True)",
    )
    assert judge_process.stdout is not None
    judge_process.stdout.readline()
    supervisor_pid, keeper_pid = map(int, judge_process.stdout.readline().split())
    try:
        judge_process.send_signal(signal.SIGKILL)
        judge_process.wait()
        deadline = time.monotonic() + 10
        while _running(supervisor_pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _running(supervisor_pid)
        assert _wait_for_no_box_process() == []
    finally:
        os.kill(keeper_pid, signal.SIGKILL)
        sandbox.reap_stale_boxes(tmp_path)


def _running(pid: int) -> bool:
    """Whether process `pid` exists and has not ended (an ended child of the host's init may
    wait as a zombie to be reaped)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "State:\tZ" not in status and "State:\tX" not in status


# -- a grade the submission cannot write --------------------------------------------------------

SLOW_CALL_MS = 30


@pytest.mark.parametrize("mode", MODES)
def test_a_forged_result_does_not_change_the_time(judge, mode: str) -> None:
    # The kernel is slow; its destructor and constructor forge every file a runner or a driver
    # could have read (a result, timings, outputs), in the run directory and in /box.
    attack = f"""
    __attribute__((constructor)) static void forge_early(void) {{
        const char *names[] = {{"result.json", "outputs.npz", "timings.json", "box.json",
                               "out_y.bin", "/box/timings.json", "/box/out_y.bin"}};
        for (int i = 0; i < 7; ++i) {{ FILE *f = fopen(names[i], "w"); if (f) {{ fputs("{{\\"kernel_ns\\": 1, \\"rep_seconds\\": [1e-9]}}", f); fclose(f); }} }}
    }}
    __attribute__((destructor)) static void forge_late(void) {{ forge_early(); }}
    static int attack(void) {{ struct timespec t = {{0, {SLOW_CALL_MS} * 1000000L}}; nanosleep(&t, NULL); return 0; }}
    """
    body = grade(judge, mode, attack)
    assert body["correct"] is True, body["reason"]
    assert body["native_ns"] >= SLOW_CALL_MS * 1_000_000
    if mode == "single":
        assert min(body["timing"]["reps_ns"]) >= SLOW_CALL_MS * 1_000_000
    else:
        assert min(body["distributed"]["rep_seconds"]) >= SLOW_CALL_MS / 1000


def test_a_library_that_slows_the_pings_does_not_lower_its_time(
    judge, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The library reaches into the runner that loads it and delays every ping it answers, so
    # that a round trip calibrated after the load would be subtracted from a slow call. The
    # runner keeps its Python loop here, as where its loop in C cannot be built (that loop is
    # rewritten by the next test).
    monkeypatch.setattr(boxcall, "library", lambda: None)
    attack = f"""
    extern int PyGILState_Ensure(void); extern void PyGILState_Release(int);
    extern int PyRun_SimpleString(const char *);
    __attribute__((constructor)) static void slow_pings(void) {{
        int state = PyGILState_Ensure();
        PyRun_SimpleString(
            "import os, time\\n"
            "_read = os.read\\n"
            "def read(fd, n):\\n"
            "    got = _read(fd, n)\\n"
            "    if got == b'p': time.sleep(0.05)\\n"
            "    return got\\n"
            "os.read = read\\n");
        PyGILState_Release(state);
    }}
    static int attack(void) {{ struct timespec t = {{0, {SLOW_CALL_MS} * 1000000L}}; nanosleep(&t, NULL); return 0; }}
    """
    body = grade(judge, "single", attack)
    assert body["correct"] is True, body["reason"]
    # The patched loop did answer the pings after the load, each 50 ms late...
    calls = len(body["timing"]["reps_ns"]) + body["timing"]["warmup"]
    assert body["run_wall_s"] >= 0.8 * calls * supervisor.PINGS_PER_REP * 0.05
    # ...and the round trip subtracted is still one of the pings from before it.
    assert body["timing"]["round_trip_ns"] < 10_000_000
    assert body["native_ns"] >= SLOW_CALL_MS * 1_000_000


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the attack patches x86-64 machine code")
def test_a_library_that_rewrites_the_runners_loop_in_c_does_not_lower_its_time(judge) -> None:
    # The library finds the runner's loop in C (hb.execution.boxcall) in its own process and
    # overwrites its entry with a jump to a loop of its own, which answers every later ping
    # slowly (and hands each call back to the runner to make).
    attack = f"""
    #include <dlfcn.h>
    #include <sys/mman.h>
    static int slow_serve(int go, int done, int clock) {{
        (void)clock;
        for (;;) {{
            char command;
            if (read(go, &command, 1) != 1) return -1;
            if (command != 'p') return (unsigned char)command;
            struct timespec t = {{0, 50000000L}}; nanosleep(&t, NULL);
            if (write(done, "d", 1) != 1) return -1;
        }}
    }}
    __attribute__((constructor)) static void rewrite_loop(void) {{
        void *loop = dlopen("./libhbcall.so", RTLD_NOW | RTLD_NOLOAD);
        unsigned char *entry = loop ? (unsigned char *)dlsym(loop, "hb_serve") : NULL;
        if (!entry) return;
        long page = sysconf(_SC_PAGESIZE);
        unsigned char *start = (unsigned char *)((uintptr_t)entry & ~(uintptr_t)(page - 1));
        if (mprotect(start, 2 * page, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) return;
        uintptr_t target = (uintptr_t)slow_serve;
        entry[0] = 0x48; entry[1] = 0xB8;  /* movabs rax, target; jmp rax */
        memcpy(entry + 2, &target, sizeof target);
        entry[10] = 0xFF; entry[11] = 0xE0;
    }}
    static int attack(void) {{ struct timespec t = {{0, {SLOW_CALL_MS} * 1000000L}}; nanosleep(&t, NULL); return 0; }}
    """
    body = grade(judge, "single", attack)
    assert body["correct"] is True, body["reason"]
    # The rewritten loop did answer the pings after the load, each 50 ms late...
    calls = len(body["timing"]["reps_ns"]) + body["timing"]["warmup"]
    assert body["run_wall_s"] >= 0.8 * calls * supervisor.PINGS_PER_REP * 0.05
    # ...and the round trip subtracted is still one of the pings from before it.
    assert body["timing"]["round_trip_ns"] < 10_000_000
    assert body["native_ns"] >= SLOW_CALL_MS * 1_000_000


@pytest.mark.skipif(
    not Path(mpicc_path()).exists(), reason="MPICH's mpicc is not beside the interpreter"
)
def test_a_rank_that_slows_the_pings_does_not_lower_its_time(judge) -> None:
    # The submission defines read(), which would take the driver's own reads of its commands
    # if it were linked into the driver, and delays every ping it sees.
    attack = f"""
    ssize_t read(int fd, void *buffer, size_t count) {{
        ssize_t got = syscall(SYS_read, fd, buffer, count);
        if (got == 1 && ((char *)buffer)[0] == 'p') {{
            struct timespec t = {{0, 50000000L}}; nanosleep(&t, NULL);
        }}
        return got;
    }}
    static int attack(void) {{ struct timespec t = {{0, {SLOW_CALL_MS} * 1000000L}}; nanosleep(&t, NULL); return 0; }}
    """
    body = grade(judge, "mpi", attack)
    assert body["correct"] is True, body["reason"]
    assert min(body["distributed"]["rep_seconds"]) >= SLOW_CALL_MS / 1000


def test_a_runner_that_names_another_process_writes_nothing_outside_its_box(judge) -> None:
    # The library makes the runner name process 1 as its own: taken as a host id, the judge
    # would write the inputs into the machine's init. Named in the box, it is the box's own first
    # process, so whatever the writes do they stay in the box.
    attack = """
    extern int PyGILState_Ensure(void); extern void PyGILState_Release(int);
    extern int PyRun_SimpleString(const char *);
    __attribute__((constructor)) static void other_pid(void) {
        int state = PyGILState_Ensure();
        PyRun_SimpleString("import os\\nos.getpid = lambda: 1\\n");
        PyGILState_Release(state);
    }
    static int attack(void) { return 0; }
    """
    host_init = Path("/proc/1/stat").read_text().split()[:3]
    body = grade(judge, "single", attack)
    # Writing into the box's first process ends the box (its namespace dies with it): a clean
    # failure, the machine's init as it was, the judge up and nothing of the box left (grade()).
    assert body["correct"] is False and body["reason"], body
    assert Path("/proc/1/stat").read_text().split()[:3] == host_init


def test_done_sent_early_leaves_unfinished_outputs(judge) -> None:
    # The kernel returns at once and finishes its work on a thread of its own afterwards.
    source = (
        PRELUDE
        + """
    struct job { const double *x; double *y; int64_t n; double alpha; };
    static struct job pending;
    static void *finish(void *arg) {
        (void)arg; struct timespec t = {0, 20000000L}; nanosleep(&t, NULL);
        for (int64_t i = 0; i < pending.n; ++i) pending.y[i] += pending.alpha * pending.x[i];
        return NULL;
    }
    void scaled_add_fp64(const double *restrict x, double *restrict y, int64_t N, double alpha,
                         void *workspace, int64_t workspace_bytes) {
        (void)workspace; (void)workspace_bytes;
        pending = (struct job){x, y, N, alpha};
        pthread_t thread; pthread_create(&thread, NULL, finish, NULL); pthread_detach(thread);
    }
    """
    )
    client, _ = judge
    body = client.post(
        "/score", json={"kernel": "scaled_add", "source": source, "preset": "S"}
    ).json()
    assert body["correct"] is False


def test_work_left_to_a_running_thread_after_the_answer_is_stopped_unfinished(judge) -> None:
    # A thread started with the library spins on a flag, running, never asleep; the kernel sets
    # the flag and answers at once, and the thread does the work, after a millisecond of its
    # own. The freeze the supervisor asks for on the answer stops it where it runs.
    source = (
        PRELUDE
        + """
    #include <stdatomic.h>
    static const double *job_x; static double *job_y; static int64_t job_n; static double job_a;
    static atomic_int pending;
    static int64_t now(void) {
        struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
        return t.tv_sec * 1000000000LL + t.tv_nsec;
    }
    static void *helper(void *arg) {
        (void)arg;
        for (;;) {
            while (!atomic_load_explicit(&pending, memory_order_acquire)) {}
            for (int64_t until = now() + 1000000; now() < until;) {}
            for (int64_t i = 0; i < job_n; ++i) job_y[i] += job_a * job_x[i];
            atomic_store_explicit(&pending, 0, memory_order_release);
        }
        return NULL;
    }
    __attribute__((constructor)) static void start(void) {
        pthread_t thread; pthread_create(&thread, NULL, helper, NULL); pthread_detach(thread);
    }
    void scaled_add_fp64(const double *restrict x, double *restrict y, int64_t N, double alpha,
                         void *workspace, int64_t workspace_bytes) {
        (void)workspace; (void)workspace_bytes;
        job_x = x; job_y = y; job_n = N; job_a = alpha;
        atomic_store_explicit(&pending, 1, memory_order_release);
    }
    """
    )
    client, _ = judge
    body = client.post(
        "/score", json={"kernel": "scaled_add", "source": source, "preset": "S"}
    ).json()
    assert body["correct"] is False


def test_a_forged_done_on_every_descriptor_fails_cleanly(judge) -> None:
    attack = """static int attack(void) {
        for (int fd = 3; fd < 64; ++fd) { (void)!write(fd, "dddd", 4); }
        struct timespec t = {0, 5000000L}; nanosleep(&t, NULL);
        return 0;
    }"""
    body = grade(judge, "single", attack)
    if body["correct"]:
        assert body["native_ns"] >= 5_000_000
    else:
        assert body["reason"]


@pytest.mark.parametrize("mode", MODES)
def test_a_kernel_that_answers_for_its_runner_fails_cleanly(judge, mode: str) -> None:
    # The kernel does its work (every rank, then a barrier) and answers "dd" itself, in one write,
    # on each write-only pipe its runner was handed on its command line (the done pipe, not the
    # launcher's); its runner answers again after it. The call ends on the first answer; the
    # others are on the done pipe before the freeze, and the next exchange, a ping or a call,
    # finds them waiting and fails. Without that refusal the next call ended at once on a spare
    # answer and was read back before it had run.
    answer = """
        char line[4096] = {0}; int fd = open("/proc/self/cmdline", O_RDONLY);
        ssize_t n = fd < 0 ? 0 : read(fd, line, sizeof line - 1);
        if (fd >= 0) close(fd);
        for (ssize_t at = 0; at < n; at += (ssize_t)strlen(line + at) + 1) {
            char *end; long named = strtol(line + at, &end, 10); struct stat st;
            if (*end || end == line + at || named < 3 || named > 1023) continue;
            if (fstat((int)named, &st) == 0 && S_ISFIFO(st.st_mode)
                && (fcntl((int)named, F_GETFL) & O_ACCMODE) == O_WRONLY)
                (void)!write((int)named, "dd", 2);
        }
    """
    work = "    for (int64_t i = 0; i < N; ++i) y[i] += alpha * x[i];\n"
    if mode == "single":
        source = (
            PRELUDE
            + "void scaled_add_fp64(const double *restrict x, double *restrict y, int64_t N, "
            "double alpha, void *workspace, int64_t workspace_bytes) {\n"
            "    (void)workspace; (void)workspace_bytes;\n" + work + answer + "}\n"
        )
    else:
        source = (
            PRELUDE + "#include <mpi.h>\nvoid scaled_add_mpi_fp64(const double *restrict x, "
            "double *restrict y, int64_t N, double alpha, MPI_Comm comm, void *workspace, "
            "int64_t workspace_bytes) {\n    (void)workspace; (void)workspace_bytes;\n"
            + work
            + "    MPI_Barrier(comm);\n"
            + answer
            + "}\n"
        )
    body = grade(judge, mode, "", source=source)
    assert body["correct"] is False
    assert "an answer came before the call" in body["reason"], body["reason"]


@pytest.mark.parametrize("mode", MODES)
def test_a_kernel_that_exits_is_named(judge, mode: str) -> None:
    # exit() ends the runner (every rank) with status 0, as if it had finished: the grade says
    # the kernel call never returned.
    body = grade(judge, mode, "static int attack(void) { exit(0); }")
    assert body["correct"] is False
    run = "the run" if mode == "single" else "the MPI run"
    assert body["reason"].startswith(f"{run} ended during the kernel call"), body["reason"]


def test_a_kernel_that_protects_its_arguments_is_named_and_ended_at_once(judge) -> None:
    # The kernel does its work, then makes its output's first page read-only: the next rep's
    # staging is refused. The grade names that (not the kill that ends the runner), and the
    # runner is ended at once rather than left to its limits.
    source = (
        PRELUDE
        + """
    #include <sys/mman.h>
    void scaled_add_fp64(const double *restrict x, double *restrict y, int64_t N, double alpha,
                         void *workspace, int64_t workspace_bytes) {
        (void)workspace; (void)workspace_bytes;
        for (int64_t i = 0; i < N; ++i) y[i] += alpha * x[i];
        mprotect((void *)((uintptr_t)y & ~(uintptr_t)4095), 4096, PROT_READ);
    }
    """
    )
    body = grade(judge, "single", "", source=source)
    assert body["correct"] is False
    assert "could not be written into the box or read back" in body["reason"], body["reason"]


@pytest.mark.parametrize("mode", MODES)
def test_a_rank_that_says_done_early_leaves_unfinished_tiles(judge, mode: str) -> None:
    # Every descriptor gets a forged "done" before the (slow) work starts.
    attack = """static int attack(void) {
        for (int fd = 3; fd < 64; ++fd) { (void)!write(fd, "dddddddd", 8); }
        struct timespec t = {0, 20000000L}; nanosleep(&t, NULL);
        return 0;
    }"""
    body = grade(judge, mode, attack)
    if body["correct"]:
        assert body["native_ns"] >= 20_000_000
    else:
        assert body["reason"]


def test_a_rank_that_remembers_its_first_answer_is_wrong(judge) -> None:
    if not Path(mpicc_path()).exists():
        pytest.skip("MPICH's mpicc is not beside the interpreter")
    attack = "static int attack(void) { return 0; }"
    source = MPI.format(prelude=PRELUDE, attack=attack).replace(
        "    int escaped = attack();\n    for (int64_t i = 0; i < N; ++i) y[i] += alpha * x[i];",
        "    int escaped = attack();\n    static double *saved = NULL;\n"
        "    if (saved) { memcpy(y, saved, (size_t)N * sizeof *y); return; }\n"
        "    for (int64_t i = 0; i < N; ++i) y[i] += alpha * x[i];\n"
        "    saved = malloc((size_t)N * sizeof *y + 8); memcpy(saved, y, (size_t)N * sizeof *y);",
    )
    assert "saved" in source
    client, _ = judge
    body = client.post(
        "/score",
        json={"kernel": "scaled_add", "source": source, "preset": "S", "requests": DISTRIBUTE},
    ).json()
    assert body["correct"] is False and "(on the inputs of rep 1)" in body["reason"]


def test_remembering_the_first_answer_is_a_wrong_answer(judge) -> None:
    source = (
        PRELUDE
        + """
    static double *saved = NULL;
    void scaled_add_fp64(const double *restrict x, double *restrict y, int64_t N, double alpha,
                         void *workspace, int64_t workspace_bytes) {
        (void)workspace; (void)workspace_bytes;
        if (saved) { memcpy(y, saved, (size_t)N * sizeof *y); return; }
        for (int64_t i = 0; i < N; ++i) y[i] += alpha * x[i];
        saved = malloc((size_t)N * sizeof *y); memcpy(saved, y, (size_t)N * sizeof *y);
    }
    """
    )
    client, _ = judge
    body = client.post(
        "/score", json={"kernel": "scaled_add", "source": source, "preset": "S"}
    ).json()
    assert body["correct"] is False and "(on the inputs of rep 1)" in body["reason"]


def test_a_suspect_speedup_is_recorded_and_not_credited(tmp_path: Path) -> None:
    config = make_config(
        tmp_path, sandbox=LIMITS, grading={"reps": 2, "warmup": 1, "speedup_suspect_above": 0.01}
    )
    source = (CHECKOUT / "src/hb/kernels/scaled_add/solution.c").read_text()
    with TestClient(create_app(config)) as client:
        body = client.post(
            "/score", json={"kernel": "scaled_add", "source": source, "preset": "S"}
        ).json()
        assert body["correct"] is True and body["suspect"] is True
        assert body["speedup"] == 0.0 and body["measured_speedup"] > 0.01
        engine = results_db.connect(config.database_url)
        row = results_db.get_grade(engine, body["grade_id"])
        assert row is not None and row["suspect"] is True and row["speedup"] == 0.0
    # Verification regrades the same source on the hidden inputs; a confirmed grade is credited.
    from hb import cli

    source_file = tmp_path / "solution.c"
    source_file.write_text(source.replace("alpha", "alpha") + "\n/* another */")
    config_file = tmp_path / "config.yaml"
    config_file.write_text(json.dumps(config.model_dump(mode="json")))
    assert (
        cli.main(
            [
                "verify",
                str(body["grade_id"]),
                "--source",
                str(source_file),
                "--config",
                str(config_file),
            ]
        )
        == 2
    )
    source_file.write_text(source)
    code = cli.main(
        [
            "verify",
            str(body["grade_id"]),
            "--source",
            str(source_file),
            "--config",
            str(config_file),
        ]
    )
    row = results_db.get_grade(engine, body["grade_id"])
    assert row is not None
    if code == 0:
        assert row["suspect"] is False and row["speedup"] == row["measured_speedup"] > 0
    else:  # the regrade did not confirm it (a busy machine): still suspect, still not credited
        assert code == 1 and row["suspect"] is True and row["speedup"] == 0.0
    regrades = [
        r
        for r in results_db.list_grades(engine, route="verify")
        if r["of_grade_id"] == body["grade_id"]
    ]
    assert len(regrades) == 1


def test_a_grade_lists_its_protections_and_a_setup_can_demand_them(tmp_path: Path) -> None:
    config = make_config(tmp_path, sandbox={**LIMITS, "require": list(sandbox.PROTECTIONS)})
    source = (CHECKOUT / "src/hb/kernels/scaled_add/solution.c").read_text()
    with TestClient(create_app(config)) as client:
        body = client.post(
            "/score", json={"kernel": "scaled_add", "source": source, "preset": "S"}
        ).json()
    missing = [p for p in sandbox.PROTECTIONS if p not in sandbox.machine_protections()]
    if missing:
        assert body["correct"] is False and all(p in body["reason"] for p in missing)
    else:
        assert body["correct"] is True and body["protections"] == list(sandbox.PROTECTIONS)
