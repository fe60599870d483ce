"""Boxes started ahead of their grade (hb.execution.box_pool): a started box serves one grade correctly and
is discarded, the next grade gets another (its own processes, cgroups and run directory), what a
hostile grade leaves in its box never reaches the next, the pool refills, a probe's run and a
judge that does not serve keep no box, and a judge that shuts down leaves no box behind. And the
supervisor that times a started box's grade waits on its runner's CPU while it times, and on all
of its own again after."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from hb.execution import box_pool, runner, sandbox
from hb.service import create_app
from tests.hb.conftest import make_config
from tests.hb.test_hostile import PRELUDE, SINGLE

pytestmark = pytest.mark.skipif(
    sandbox.bwrap_path() is None or os.geteuid() != 0,
    reason="a started box's namespaces, uid and cgroups need root and bubblewrap",
)

UID_RANGE = range(62200, 62200 + 8)
# The judge that shuts down lends uids of its own: the module's judge keeps a box of UID_RANGE.
OTHER_UIDS = range(62208, 62208 + 8)
LIMITS = {"timeout_s": 8, "cpu_s": 20, "memory_mb": 1024, "nproc": 64, "disk_mb": 64,
          "scratch_mb": 32, "threads": 1, "uid_base": UID_RANGE.start,
          "uid_count": len(UID_RANGE)}  # fmt: skip


def kernel(attack: str) -> str:
    """scaled_add with `attack()` called first; its output is spoiled when the attack returns 1."""
    return SINGLE.format(prelude=PRELUDE, attack=attack)


HONEST = kernel("static int attack(void) { return 0; }")
# What a hostile grade leaves: a daemon named "hb-planted" and a file of that name in every
# directory it may write; and the search for them, which spoils the output when it finds one.
PLANT_AND_FIND = """
#include <sys/prctl.h>
static void plant(void) {
    static int planted = 0;
    if (planted++) return;
    const char *files[] = {"/box/hb-planted", "/tmp/hb-planted", "/dev/shm/hb-planted"};
    for (int i = 0; i < 3; ++i) { FILE *f = fopen(files[i], "w"); if (f) { fputs("x", f); fclose(f); } }
    if (fork() == 0) {
        setsid();
        if (fork() == 0) { prctl(PR_SET_NAME, "hb-planted"); for (;;) sleep(1); }
        _exit(0);
    }
    sleep(1);  /* the daemon has named itself */
}
static int find(void) {
    const char *files[] = {"/box/hb-planted", "/tmp/hb-planted", "/dev/shm/hb-planted"};
    for (int i = 0; i < 3; ++i) if (access(files[i], F_OK) == 0) return 1;
    DIR *proc = opendir("/proc");
    struct dirent *entry;
    int found = 0;
    while (proc && (entry = readdir(proc))) {
        char path[300], name[64] = {0};
        snprintf(path, sizeof path, "/proc/%s/comm", entry->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        if (fgets(name, sizeof name, f) && strncmp(name, "hb-planted", 10) == 0) found = 1;
        fclose(f);
    }
    if (proc) closedir(proc);
    return found;
}
"""
PLANT = kernel(PLANT_AND_FIND + "static int attack(void) { plant(); return 0; }")
FIND = kernel(PLANT_AND_FIND + "static int attack(void) { return find(); }")
# Both in one grade's box: the search sees what was left, so the grade is wrong.
PLANT_THEN_FIND = kernel(PLANT_AND_FIND + "static int attack(void) { plant(); return find(); }")


@pytest.fixture(scope="module")
def judge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, Any]]:
    config = make_config(
        tmp_path_factory.mktemp("box-pool-judge"), sandbox=LIMITS,
        grading={"reps": 2, "warmup": 1},
    )  # fmt: skip
    with TestClient(create_app(config)) as client:
        handler = client.app.state.handler  # type: ignore[attr-defined]
        setup = runner.box_setup(
            config.sandbox_dir, handler.limits, config.sandbox.threads, paired=True
        )
        yield client, setup


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int | None]]:
    """The name and first process of each started box that serves a run, in order."""
    seen: list[tuple[str, int | None]] = []
    supervise = box_pool.StartedBox.supervise

    def recorded(self: box_pool.StartedBox, timeout: float) -> Any:
        seen.append((self.name, self.pid))
        return supervise(self, timeout)

    monkeypatch.setattr(box_pool.StartedBox, "supervise", recorded)
    return seen


def score(client: TestClient, source: str) -> dict[str, Any]:
    answer = client.post("/score", json={"kernel": "scaled_add", "source": source, "preset": "S"})
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    assert box_pool.settle(), "the pool did not settle"
    return body


def _cgroups_of(name: str) -> list[Path]:
    return [h.base / name for h in sandbox.cgroup_hierarchies() if (h.base / name).exists()]


def _processes_named(comm: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "comm").read_text().strip() == comm:
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def test_a_started_box_serves_a_grade_and_another_takes_its_place(judge, served) -> None:
    client, setup = judge
    score(client, HONEST)  # the build, the baseline, and a box started for the next grade
    waiting = box_pool.idle(setup)
    assert len(waiting) == 1
    # Before its grade the box holds nothing of one: an empty run directory.
    assert os.listdir(setup.root / waiting[0]) == []
    served.clear()
    body = score(client, HONEST)
    assert body["correct"] is True, body["reason"]
    assert [name for name, _ in served] == waiting
    # Discarded after its grade: no cgroup, no run directory; a fresh box waits in its place.
    assert _cgroups_of(waiting[0]) == []
    assert not (setup.root / waiting[0]).exists()
    refilled = box_pool.idle(setup)
    assert len(refilled) == 1 and refilled != waiting
    assert _cgroups_of(refilled[0]), "the fresh box has its cgroups"


def test_two_grades_in_a_row_never_share_a_box(judge, served) -> None:
    client, _ = judge
    score(client, HONEST)
    served.clear()
    for _ in range(2):
        assert score(client, HONEST)["correct"] is True
    (first, first_pid), (second, second_pid) = served
    assert first != second
    assert first_pid is not None and second_pid is not None and first_pid != second_pid
    assert not Path(f"/proc/{first_pid}").exists()


def test_what_a_hostile_grade_leaves_in_its_box_never_reaches_the_next(judge, served) -> None:
    client, _ = judge
    score(client, HONEST)
    served.clear()
    planted = score(client, PLANT)
    assert planted["correct"] is True, planted["reason"]
    # The daemon died with its box, before the next grade began.
    assert _processes_named("hb-planted") == []
    found = score(client, FIND)
    assert found["correct"] is True, "the next grade saw what the hostile one left"
    assert served[0][0] != served[1][0]
    # In one box the search does see it: the grade above could have failed.
    assert score(client, PLANT_THEN_FIND)["correct"] is False
    assert _processes_named("hb-planted") == []


def _allowed_cpus(pid: int) -> str:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Cpus_allowed_list:"):
            return line.split()[1]
    raise AssertionError(f"no Cpus_allowed_list for process {pid}")


# Each call sleeps long enough for the judge's side to be seen while it waits.
SLOW = kernel("static int attack(void) { usleep(150000); return 0; }")


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="one CPU: pinned and free are one")
def test_the_supervisor_times_on_its_runners_cpu_and_is_free_again_after(
    judge, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A kernel's thread that spins out its loop on another CPU never stands between the "done"
    and the supervisor's clock: the supervisor waits on the CPU of the runner that answers."""
    client, _ = judge
    score(client, HONEST)
    seen: list[tuple[str, str]] = []
    supervise = box_pool.StartedBox.supervise

    def watched(self: box_pool.StartedBox, timeout: float) -> Any:
        assert self.supervisor is not None and self.pid is not None
        supervisor_pid, box_pid = self.supervisor.process.pid, self.pid
        done = threading.Event()

        def watch() -> None:
            while not done.wait(0.01):
                try:
                    # The box's first process answers before the runner has loaded anything.
                    seen.append((_allowed_cpus(supervisor_pid), _allowed_cpus(box_pid)))
                except OSError:
                    return

        watcher = threading.Thread(target=watch)
        watcher.start()
        try:
            return supervise(self, timeout)
        finally:
            done.set()
            watcher.join()
            seen.append((_allowed_cpus(supervisor_pid), "after"))

    monkeypatch.setattr(box_pool.StartedBox, "supervise", watched)
    body = score(client, SLOW)
    assert body["correct"] is True, body["reason"]
    everything = _allowed_cpus(os.getpid())
    box_cpus = {cpus for _, cpus in seen if cpus != "after"}
    assert box_cpus, "the watcher saw no call"
    lowest = str(min(os.sched_getaffinity(0)))
    # While calls ran, the supervisor waited on the lowest CPU its box may use; after, on all.
    assert (lowest, everything) in seen[:-1], seen
    assert seen[-1] == (everything, "after")


def test_a_probe_or_a_judge_that_does_not_serve_keeps_no_box(tmp_path: Path) -> None:
    limits = sandbox.Limits(uid_base=UID_RANGE.start, uid_count=len(UID_RANGE))
    plain = runner.box_setup(tmp_path, limits, threads=1)
    probed = runner.box_setup(tmp_path, limits, threads=1, probe=runner.BoxProbe(prefix=("env",)))
    assert plain != probed
    names = []
    # A judge that does not serve (hb submit, a benchmark's handler) keeps nothing warm; a probe,
    # even under a serving judge, gets a box of its own and keeps none.
    for setup, warm in ((plain, False), (probed, True)):
        if warm:
            box_pool.keep_warm(tmp_path)
        with box_pool.started(setup, runner.timing_slot, pooled=setup is plain) as box:
            assert box.pid is not None and Path(f"/proc/{box.pid}").exists()
            names.append(box.name)
        assert box_pool.settle()
        assert box_pool.idle(plain) == [] and box_pool.idle(probed) == []
    box_pool.shutdown(tmp_path)
    assert all(_cgroups_of(name) == [] and not (tmp_path / name).exists() for name in names)


def test_a_judge_that_shuts_down_leaves_no_box_behind(tmp_path: Path) -> None:
    uids = {"uid_base": OTHER_UIDS.start, "uid_count": len(OTHER_UIDS)}
    config = make_config(tmp_path, sandbox={**LIMITS, **uids}, grading={"reps": 1, "warmup": 0})
    with TestClient(create_app(config)) as client:
        handler = client.app.state.handler  # type: ignore[attr-defined]
        setup = runner.box_setup(
            config.sandbox_dir, handler.limits, config.sandbox.threads, paired=True
        )
        assert score(client, HONEST)["correct"] is True
        waiting = box_pool.idle(setup)
        assert waiting, "no box was started for the next grade"
    assert box_pool.idle(setup) == []
    assert all(_cgroups_of(name) == [] for name in waiting)
    deadline = time.monotonic() + 5
    while _box_uid_processes() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _box_uid_processes() == []
    left = [p.name for p in config.sandbox_dir.iterdir()] if config.sandbox_dir.exists() else []
    assert [name for name in left if name.startswith((sandbox.BOX_PREFIX, "job-"))] == []


def _box_uid_processes() -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and entry.stat().st_uid in OTHER_UIDS:
                found.append(int(entry.name))
        except OSError:
            continue
    return found
