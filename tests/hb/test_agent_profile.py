"""POST /profile and POST /syntax-check, the judge routes behind the profile and syntax_check tools:
the timing table per thread count with nothing recorded, perf's counters or the reason there are
none (PAPI's are test_profile_papi.py's), zip and unzip refused, the profile box's one extra system
call (and no other box's), and the caller headers' own refusals."""

from __future__ import annotations

import ctypes.util
import errno
import platform
import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from hb import kernels, profiling, results_db
from hb.execution import sandbox
from hb.service import JudgeHandler
from tests.hb.conftest import make_config

SCALED_ADD = kernels.solution_source("scaled_add")
# perf_event_open(NULL, 0, -1, -1, 0): EFAULT where the call is allowed (the attribute pointer is
# NULL), EPERM where the box's seccomp filter refuses it.
PROBE = (
    "import ctypes, sys; libc = ctypes.CDLL(None, use_errno=True); "
    "libc.syscall(298, None, 0, -1, -1, 0); sys.stdout.write(str(ctypes.get_errno()))"
)


def grade_count(handler: JudgeHandler) -> int:
    return len(results_db.list_grades(handler.engine, limit=1000))


def test_profile_times_each_thread_count_and_records_nothing(
    client: TestClient, handler: JudgeHandler
) -> None:
    before = grade_count(handler)
    answer = client.post("/profile", json={"kernel": "scaled_add", "source": SCALED_ADD})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["tool"] == "none" and body["built"] and "counters" not in body
    assert [row["threads"] for row in body["timing"]] == profiling.thread_counts(2) == [1, 2]
    for row in body["timing"]:
        assert row["ok"] and row["correct"] and row["min_ns"] > 0
        assert row["min_ns"] == min(row["reps_ns"])
    assert grade_count(handler) == before


def test_profile_with_perf_counts_or_says_why_not(client: TestClient) -> None:
    body = client.post(
        "/profile", json={"kernel": "scaled_add", "source": SCALED_ADD, "tool": "perf"}
    ).json()
    assert len(body["timing"]) == 2 and all(row["correct"] for row in body["timing"])
    counters = body["counters"]
    refusal = profiling.counters_refusal("perf")
    if refusal is not None:
        assert counters == {"available": False, "reason": refusal}
        return
    # perf can count here: the software events at least, in the box's own process.
    assert counters["available"], counters
    assert counters["values"]["task-clock"] > 0
    assert set(counters["values"]) | set(counters["unavailable"]) == set(profiling.PERF_EVENTS)
    # At preset S the kernel takes microseconds: the samples land where the process spends its
    # time, which the rows name (object and symbol) with their share.
    assert counters["hot_symbols"], counters
    assert all(0 < row["percent"] <= 100 and row["symbol"] for row in counters["hot_symbols"])


def test_papi_is_refused_in_words_only_where_it_cannot_count() -> None:
    reason = profiling.counters_refusal("papi")
    paranoid = profiling.perf_event_paranoid()
    if ctypes.util.find_library("papi") is None:
        assert reason == "papi: the PAPI library (libpapi) is not installed on this judge"
    elif paranoid is None or paranoid > 2:
        assert reason is not None and reason.startswith("papi: ")
    else:
        # tests/hb/test_profile_papi.py reads the counters.
        assert reason is None


def test_profile_refuses_zip_and_what_score_refuses(client: TestClient) -> None:
    zipped = {"operations": [{"action": "zip", "arrays": ["x", "y"], "into": "xy"}]}
    answer = client.post("/profile", json={"kernel": "jacobi_2d", "source": "", "requests": zipped})
    assert answer.status_code == 400
    assert answer.json()["detail"] == "operations[0] (zip): /profile takes no zip or unzip"
    placed = {"operations": [{"action": "place", "array": "x", "on": "device"}]}
    answer = client.post(
        "/profile", json={"kernel": "scaled_add", "source": SCALED_ADD, "requests": placed}
    )
    assert answer.status_code == 400 and "operations[0] (place)" in answer.json()["detail"]
    answer = client.post(
        "/profile", json={"kernel": "scaled_add", "source": SCALED_ADD, "tool": "vtune"}
    )
    assert answer.status_code == 400 and "tool" in answer.json()["detail"]


def test_the_profile_box_alone_may_call_perf_event_open(tmp_path: Path) -> None:
    if platform.machine() != "x86_64":
        pytest.skip("the probe calls perf_event_open by its x86_64 number (298)")
    if "seccomp" not in sandbox.machine_protections():
        pytest.skip("this machine gives boxes no seccomp filter, so there is no denial to lift")
    box_limits = make_config(tmp_path).sandbox.limits()
    outcomes = {}
    for allowed in (frozenset(), sandbox.PROFILE_SYSCALLS):
        with sandbox.Box(tmp_path, box_limits, allow_syscalls=allowed) as box:
            ended = box.run([sys.executable, "-I", "-c", PROBE])
        assert ended.returncode == 0, ended.stderr
        outcomes[allowed] = int(ended.stdout)
    assert outcomes[frozenset()] == errno.EPERM
    assert outcomes[sandbox.PROFILE_SYSCALLS] != errno.EPERM
    with pytest.raises(ValueError, match="only"):
        sandbox.seccomp_program(frozenset({"ptrace"}))


def test_syntax_check_compiles_in_the_box_with_the_judges_flags(client: TestClient) -> None:
    good = client.post("/syntax-check", json={"kernel": "scaled_add", "source": SCALED_ADD})
    assert good.status_code == 200 and good.json()["ok"] and good.json()["diagnostics"] == ""
    assert good.json()["command"].endswith("-fsyntax-only")
    bad = client.post(
        "/syntax-check", json={"kernel": "scaled_add", "source": "void f(void) { return 1 }"}
    ).json()
    assert not bad["ok"] and "error: expected" in bad["diagnostics"]
    unknown = client.post("/syntax-check", json={"kernel": "nope", "source": ""})
    assert unknown.status_code == 404


def test_a_bad_caller_header_is_a_400_naming_it(client: TestClient) -> None:
    answer = client.post(
        "/score",
        json={"kernel": "scaled_add", "source": SCALED_ADD},
        headers={"X-HB-Agent-Round": "first"},
    )
    assert answer.status_code == 400
    assert answer.json()["detail"] == (
        "headers: x-hb-agent-round: expected a non-negative integer, got 'first'"
    )
