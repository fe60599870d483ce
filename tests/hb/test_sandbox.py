"""The box's basics: a segfault, an endless loop, an allocation far beyond memory, a fork bomb and a
write outside the run directory each end in a clean `correct: false` with the reason and the
service keeps answering; what a box sees; the limits without bubblewrap. Limits here are tight so
the machine is spared. The attack classes, on one node and on ranks, are tests/hb/test_hostile.py."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from hb.execution import sandbox
from hb.service import create_app
from tests.hb.conftest import make_config

SIGNATURE = (
    "void scaled_add_fp64(const double *restrict x, double *restrict y, int64_t N, double alpha, "
    "void *workspace, int64_t workspace_bytes)"
)
CORRECT_BODY = "for (int64_t i = 0; i < N; ++i) y[i] += alpha * x[i];"


def submission(prelude: str, body: str) -> str:
    return f"#include <stdint.h>\n#include <stdlib.h>\n{prelude}\n{SIGNATURE} {{\n{body}\n}}\n"


@pytest.fixture(scope="module")
def hostile_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    data_dir = tmp_path_factory.mktemp("hostile")
    config = make_config(
        data_dir,
        sandbox={
            "timeout_s": 4,
            "cpu_s": 10,
            "memory_mb": 2048,
            "nproc": 24,
            "fsize_mb": 16,
            "threads": 1,
        },
        grading={"reps": 1, "warmup": 0},
    )
    with TestClient(create_app(config)) as client:
        yield client


def score(client: TestClient, source: str) -> dict:
    answer = client.post("/score", json={"kernel": "scaled_add", "source": source, "preset": "S"})
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_segfault(hostile_client: TestClient) -> None:
    body = score(hostile_client, submission("", "volatile double *p = 0; *p = 1.0;"))
    assert body["correct"] is False and "SIGSEGV" in body["reason"]
    assert hostile_client.get("/health").status_code == 200


def test_endless_loop_is_killed_at_the_wall_clock(hostile_client: TestClient) -> None:
    started = time.monotonic()
    body = score(hostile_client, submission("", 'for (;;) { __asm__ volatile(""); }'))
    assert body["correct"] is False
    assert (
        "wall-clock" in body["reason"] or "SIGXCPU" in body["reason"] or "SIGKILL" in body["reason"]
    )
    assert time.monotonic() - started < 30
    assert hostile_client.get("/health").status_code == 200


def test_allocation_beyond_memory(hostile_client: TestClient) -> None:
    hog = (
        "size_t bytes = (size_t)1 << 36; char *block = malloc(bytes);"
        "for (size_t i = 0; i < bytes; i += 4096) block[i] = 1;"  # NULL under RLIMIT_AS: a fault
        + CORRECT_BODY
    )
    body = score(hostile_client, submission("", hog))
    assert body["correct"] is False and body["reason"]
    assert hostile_client.get("/health").status_code == 200


@pytest.mark.skipif(
    not sandbox.namespaces_available(),
    reason="without a uid of its own per run, RLIMIT_NPROC counts every process of this user",
)
def test_fork_bomb(hostile_client: TestClient) -> None:
    bomb = "#include <unistd.h>"
    body = score(hostile_client, submission(bomb, "for (;;) fork();"))
    assert body["correct"] is False and body["reason"]
    assert hostile_client.get("/health").status_code == 200
    # The bomb is gone: a correct submission runs right after it.
    assert score(hostile_client, submission("", CORRECT_BODY))["correct"]


@pytest.mark.skipif(
    not sandbox.namespaces_available(), reason="needs root and unshare for private /tmp"
)
def test_write_outside_the_private_directory(hostile_client: TestClient, tmp_path: Path) -> None:
    targets = [tmp_path / "escaped.txt", Path("/tmp") / f"hb-escape-{time.time_ns()}.txt"]
    opens = "".join(f'if (fopen("{t}", "w") == NULL) refused = 1;' for t in targets)
    # The submission aborts when a write is refused; the /tmp one lands in the run's own /tmp,
    # which vanishes with it, so neither file may exist on the host afterwards.
    body_text = f"int refused = 0; {opens} if (refused) abort(); {CORRECT_BODY}"
    body = score(hostile_client, submission("#include <stdio.h>", body_text))
    assert body["correct"] is False and "SIGABRT" in body["reason"]
    assert not any(t.exists() for t in targets)


def test_protections_are_reported(hostile_client: TestClient) -> None:
    body = score(hostile_client, submission("", CORRECT_BODY))
    assert body["correct"]
    assert body["protections"] == list(sandbox.machine_protections())
    assert {"rlimits", "wall-clock timeout", "private directory"} <= set(body["protections"])
    if sandbox.namespaces_available():
        assert {"network namespace", "pid namespace", "minimal root"} <= set(body["protections"])
    assert hostile_client.get("/health").json()["sandbox"] == body["protections"]


@pytest.mark.skipif(not sandbox.namespaces_available(), reason="needs bubblewrap")
def test_the_box_sees_its_own_uid_tmp_and_processes(tmp_path: Path) -> None:
    limits = sandbox.Limits(timeout_s=10)
    result, _ = sandbox.run_sandboxed(
        ["/bin/sh", "-c", "id -u; ls -A /tmp | wc -l; pwd; ls /proc | grep -c '^[0-9]'"],
        tmp_path / "boxes",
        limits,
    )
    uid, tmp_entries, cwd, processes = result.stdout.split("\n")[:4]
    assert result.returncode == 0, result.stderr
    if os.geteuid() == 0:
        assert limits.uid_base <= int(uid) < limits.uid_base + limits.uid_count
    # The box's own /tmp holds nothing but what it must read of a checkout that lives there.
    kept = {
        Path(p).relative_to("/tmp").parts[0]
        for p in sandbox._project_paths()
        if p.startswith("/tmp/")
    }
    assert int(tmp_entries) == len(kept) and cwd == sandbox.SANDBOX_WORKDIR
    assert int(processes) <= 4  # bwrap's init, the shell and its pipeline


@pytest.mark.skipif(not sandbox.namespaces_available(), reason="needs bubblewrap")
def test_the_projects_packages_are_read_only_and_the_checkout_hidden(tmp_path: Path) -> None:
    import hb

    package = Path(hb.__file__).resolve().parent
    checkout = package.parents[1]
    script = (
        f"ls {package}/execution/sandbox.py && (touch {package}/new 2>/dev/null && echo writable || echo read-only);"
        f" ls {checkout}/tests 2>/dev/null | wc -l"
    )
    result, _ = sandbox.run_sandboxed(
        ["/bin/sh", "-c", script], tmp_path / "boxes", sandbox.Limits()
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[1:] == ["read-only", "0"]
    assert not (package / "new").exists()


def test_without_bubblewrap_the_limits_still_apply(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sandbox, "bwrap_path", lambda: None)
    sandbox.machine_protections.cache_clear()
    try:
        limits = sandbox.Limits(timeout_s=2)
        result, _ = sandbox.run_sandboxed(
            ["/bin/sh", "-c", "echo started; exit 3"], tmp_path / "box", limits
        )
        assert result.returncode == 3 and result.stdout.strip() == "started"
        assert result.protections[:3] == ["rlimits", "wall-clock timeout", "private directory"]
        assert "bwrap" not in result.protections and "seccomp" not in result.protections
        assert result.failure("the run") == "the run exited with status 3"
        slow, _ = sandbox.run_sandboxed(["/bin/sh", "-c", "sleep 30"], tmp_path / "slow", limits)
        assert slow.timed_out and slow.wall_s < 10
        # A setup that demands a protection the machine lacks is refused before anything runs.
        with pytest.raises(sandbox.SandboxUnavailable, match="seccomp"):
            sandbox.run_sandboxed(["true"], tmp_path / "box", sandbox.Limits(require=("seccomp",)))
    finally:
        monkeypatch.undo()
        sandbox.machine_protections.cache_clear()
