"""Hostile submissions: a segfault, an endless loop, an allocation far beyond memory, a fork bomb,
a write outside the private directory and a network socket each end in a clean `correct: false`
with the reason, and the service keeps answering. Limits here are tight so the machine is spared."""

from __future__ import annotations

import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from hb import sandbox
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


@pytest.mark.skipif(
    not sandbox.namespaces_available(), reason="needs root and unshare for a network namespace"
)
def test_network_socket(hostile_client: TestClient) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.2)
    port = listener.getsockname()[1]
    connections: list[object] = []
    graded = threading.Event()

    def accept() -> None:
        while not graded.is_set() and not connections:
            try:
                connections.append(listener.accept())
            except TimeoutError:
                continue

    watcher = threading.Thread(target=accept)
    watcher.start()
    prelude = "#include <arpa/inet.h>\n#include <sys/socket.h>\n#include <unistd.h>"
    connect = (
        "int s = socket(AF_INET, SOCK_STREAM, 0); struct sockaddr_in a = {0};"
        f"a.sin_family = AF_INET; a.sin_port = htons({port}); a.sin_addr.s_addr = htonl(0x7f000001);"
        "if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof a) != 0) abort(); close(s);"
    )
    body = score(hostile_client, submission(prelude, connect + CORRECT_BODY))
    graded.set()
    watcher.join()
    listener.close()
    assert body["correct"] is False and "SIGABRT" in body["reason"]
    assert connections == []


def test_protections_are_reported(hostile_client: TestClient) -> None:
    body = score(hostile_client, submission("", CORRECT_BODY))
    assert body["correct"]
    assert {"rlimits", "wall-clock timeout", "private directory"} <= set(body["protections"])
    if sandbox.namespaces_available():
        assert {"no network", "private /tmp"} <= set(body["protections"])


@pytest.mark.skipif(not sandbox.namespaces_available(), reason="needs root and unshare")
def test_the_child_sees_its_own_uid_and_tmp(tmp_path: Path) -> None:
    limits = sandbox.Limits(timeout_s=10)
    result = sandbox.run_sandboxed(
        ["/bin/sh", "-c", "id -u; ls -A /tmp | tr '\\n' ' '; echo; pwd"], tmp_path / "box", limits
    )
    uid, listing, cwd = result.stdout.split("\n")[:3]
    assert result.returncode == 0
    assert limits.uid_base <= int(uid) < limits.uid_base + limits.uid_count
    # Beside its own directory the child sees only what it must read (a checkout under /tmp).
    kept = {Path(p).relative_to("/tmp").parts[0] for p in sandbox.paths_kept_under_tmp()}
    assert set(listing.split()) == {"hb-work", *kept} and cwd == sandbox.SANDBOX_WORKDIR


@pytest.mark.skipif(not sandbox.namespaces_available(), reason="needs root and unshare")
def test_what_the_runner_reads_under_tmp_stays_visible_and_read_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept = Path(tempfile.mkdtemp(prefix="hb-kept-", dir="/tmp"))
    try:
        kept.chmod(0o755)
        (kept / "module.py").write_text("visible\n")
        (kept / "module.py").chmod(0o644)
        monkeypatch.setattr(sandbox, "paths_kept_under_tmp", lambda: (str(kept),))
        script = f"cat {kept}/module.py; (touch {kept}/new && echo writable) 2>/dev/null || echo read-only; ls -A /tmp"
        result = sandbox.run_sandboxed(
            ["/bin/sh", "-c", script], tmp_path / "box", sandbox.Limits(timeout_s=10)
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout.split() == ["visible", "read-only", kept.name, "hb-work"]
        assert not (kept / "new").exists()
    finally:
        shutil.rmtree(kept)


def test_without_namespaces_the_limits_still_apply(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sandbox, "namespaces_available", lambda: False)
    limits = sandbox.Limits(timeout_s=2)
    result = sandbox.run_sandboxed(
        ["/bin/sh", "-c", "echo started; exit 3"], tmp_path / "box", limits
    )
    assert result.returncode == 3 and result.stdout.strip() == "started"
    assert result.protections == ["rlimits", "wall-clock timeout", "private directory"]
    assert result.failure("the run") == "the run exited with status 3"
    slow = sandbox.run_sandboxed(["/bin/sh", "-c", "sleep 30"], tmp_path / "slow", limits)
    assert slow.timed_out and slow.wall_s < 10
