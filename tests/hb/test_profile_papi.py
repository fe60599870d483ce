"""POST /profile with tool papi: PAPI's counters around each timed kernel call, a table per thread
count; the events the machine does not count named with PAPI's reason, an event PAPI does not
know refused by name, the box's counts trusted for their shape only, and the refusal in words
where libpapi is absent."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from hb import kernels, profiling
from hb.agent.client import JudgeAnswer, JudgeClient
from hb.agent.mcp_server import ToolError, ToolServer
from hb.execution import runner, sandbox

SCALED_ADD = kernels.solution_source("scaled_add")
NO_PAPI = profiling.counters_refusal("papi")
needs_papi = pytest.mark.skipif(NO_PAPI is not None, reason=f"no PAPI counters here: {NO_PAPI}")


def papi_profile(client: TestClient, preset: str, **fields: Any) -> dict[str, Any]:
    body = {"kernel": "scaled_add", "source": SCALED_ADD, "tool": "papi", "preset": preset}
    answer = client.post("/profile", json={**body, **fields})
    assert answer.status_code == 200, answer.text
    result: dict[str, Any] = answer.json()
    return result


@pytest.fixture(scope="module")
def by_preset(client: TestClient) -> dict[str, dict[str, Any]]:
    """The default events' counters of scaled_add at S (4096 elements) and M (1048576)."""
    if NO_PAPI is not None:
        pytest.skip(f"no PAPI counters here: {NO_PAPI}")
    return {preset: papi_profile(client, preset)["counters"] for preset in ("S", "M")}


def one_thread(counters: dict[str, Any]) -> dict[str, int]:
    (row,) = [row for row in counters["table"] if row["threads"] == 1]
    assert row["ok"], row
    values: dict[str, int] = row["values"]
    return values


def test_every_thread_count_has_a_row_of_counts_per_timed_call(
    by_preset: dict[str, dict[str, Any]],
) -> None:
    for counters in by_preset.values():
        assert counters["available"], counters
        assert counters["events"] == list(profiling.PAPI_EVENTS)
        assert [row["threads"] for row in counters["table"]] == profiling.thread_counts(2)
        for row in counters["table"]:
            # The test judge runs 1 warm-up and 2 timed reps: the warm-up is left out.
            assert row["ok"] and row["calls"] == 2, row
            # Every event is counted or named unavailable, never dropped.
            assert set(row["values"]) | set(counters["unavailable"]) == set(counters["events"])
            assert not set(row["values"]) & set(counters["unavailable"])


def test_the_kernels_cpu_time_grows_with_the_size(by_preset: dict[str, dict[str, Any]]) -> None:
    # perf::TASK-CLOCK (a software event, nanoseconds on the CPU) counts on a VM too; 256 times
    # the elements take far more than 4 times the time of a call.
    small, large = (one_thread(by_preset[p])["perf::TASK-CLOCK"] for p in ("S", "M"))
    assert small > 0 and large > 4 * small, (small, large)


def test_the_instruction_count_grows_with_the_size(by_preset: dict[str, dict[str, Any]]) -> None:
    if "PAPI_TOT_INS" in by_preset["S"]["unavailable"]:
        pytest.skip(
            "this machine does not count PAPI_TOT_INS "
            f"({by_preset['S']['reasons']['PAPI_TOT_INS']}; a VM without a virtual PMU)"
        )
    small, large = (one_thread(by_preset[p])["PAPI_TOT_INS"] for p in ("S", "M"))
    # 4096 against 1048576 elements: the loop's instructions dominate at M.
    assert small > 0 and large > 20 * small, (small, large)


def test_the_events_the_machine_does_not_count_are_named_with_papis_reason(
    by_preset: dict[str, dict[str, Any]],
) -> None:
    counters = by_preset["S"]
    assert set(counters["reasons"]) == set(counters["unavailable"])
    assert all(counters["reasons"][name] for name in counters["unavailable"])
    if counters["unavailable"]:
        assert counters["note"] == profiling.PAPI_NOTE
    assert counters["scope"] == profiling.PAPI_SCOPE and counters["papi"]


def test_the_threads_the_kernel_starts_count_where_counters_inherit(
    by_preset: dict[str, dict[str, Any]],
) -> None:
    counters = by_preset["M"]
    if not counters["threads_counted"].startswith("all"):
        pytest.skip(f"counters do not inherit here: {counters['threads_counted']}")
    # Two threads share the same work: counted in both, the call's CPU time does not halve.
    (two,) = [row for row in counters["table"] if row["threads"] == 2]
    assert two["values"]["perf::TASK-CLOCK"] > 0.75 * one_thread(counters)["perf::TASK-CLOCK"]


@needs_papi
def test_an_event_papi_does_not_know_is_a_400_naming_it(client: TestClient) -> None:
    answer = client.post(
        "/profile",
        json={"kernel": "scaled_add", "source": SCALED_ADD, "tool": "papi",
              "events": ["PAPI_TOT_INS", "NO_SUCH_EVENT"]},
    )  # fmt: skip
    assert answer.status_code == 400
    detail = answer.json()["detail"]
    assert (
        detail.startswith("events: ['NO_SUCH_EVENT'] unknown to PAPI")
        and "PAPI_TOT_INS" not in detail
    )


@needs_papi
def test_a_chosen_event_list_is_counted_in_its_order(client: TestClient) -> None:
    counters = papi_profile(client, "S", events=["perf::PAGE-FAULTS", "perf::TASK-CLOCK"])[
        "counters"
    ]
    assert counters["events"] == ["perf::PAGE-FAULTS", "perf::TASK-CLOCK"]
    assert list(one_thread(counters)) == ["perf::PAGE-FAULTS", "perf::TASK-CLOCK"]


@pytest.mark.parametrize(
    ("fields", "detail"),
    [
        ({"tool": "perf", "events": ["PAPI_TOT_INS"]}, "events: tool perf takes no events"),
        ({"tool": "papi", "events": ["PAPI TOT"]}, "events: item 0, 'PAPI TOT', is not a PAPI"),
        ({"tool": "papi", "events": ["PAPI_TOT_INS", "PAPI_TOT_INS"]}, "events: item 1, "),
        ({"tool": "papi", "events": "PAPI_TOT_INS"}, "events: "),
    ],
)
def test_a_bad_event_list_is_a_400_naming_it(
    client: TestClient, fields: dict[str, Any], detail: str
) -> None:
    answer = client.post("/profile", json={"kernel": "scaled_add", "source": "", **fields})
    assert answer.status_code == 400
    assert answer.json()["detail"].startswith(detail), answer.json()


def test_without_libpapi_the_answer_says_so_and_keeps_the_timing(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(profiling, "papi_library", lambda: None)
    answer = papi_profile(client, "S")
    assert answer["counters"] == {
        "available": False,
        "reason": "papi: the PAPI library (libpapi) is not installed on this judge",
    }
    assert [row["threads"] for row in answer["timing"]] == [1, 2]
    assert all(row["correct"] for row in answer["timing"])


def test_the_boxs_counts_are_read_for_their_shape_only() -> None:
    assert profiling.parse_papi_calls("[1, 2]\n[3, 4]\n", 2) == [[1, 2], [3, 4]]
    assert profiling.parse_papi_calls("", 2) == []
    assert profiling.parse_papi_calls("[1, 2]\n{", 2) == "line 2 of the box's counts is not JSON"
    for forged in ("[1]", "[1, 2.5]", "[true, 1]", '{"a": 1}', "[1, 2, 3]"):
        assert (
            profiling.parse_papi_calls(forged, 2) == "line 1 of the box's counts is not 2 integers"
        )
    assert profiling.parse_papi_calls('"PAPI_read failed: x"', 2) == "call 1: PAPI_read failed: x"


def test_the_boxs_header_names_no_event_beyond_those_asked_for() -> None:
    header = {"opened": ["perf::TASK-CLOCK"], "no_inherit": None,
              "refused": {"PAPI_TOT_INS": "Event does not exist", "FORGED": "x"}}  # fmt: skip

    def timed(threads: int, probe: runner.BoxProbe) -> runner.RunResult:
        assert probe.prefix[3] == "hb.execution.papibox" and probe.allow == sandbox.PROFILE_SYSCALLS
        calls = "[5]\n[7]\n[9]\n" if threads == 1 else "[5]\n"
        files = {profiling.PAPI_HEADER_FILE: json.dumps(header), profiling.PAPI_CALLS_FILE: calls}
        return runner.RunResult(True, rep_kernel_ns=[1, 2, 3], warmup=1, probed=files)

    asked = ["PAPI_TOT_INS", "perf::TASK-CLOCK", "PAPI_L1_DCM"]
    counters = profiling.papi_counters(timed, [1, 2], asked, ["PAPI_L1_DCM"], "7.0.0.0")
    one, two = counters["table"]
    # The warm-up's 5 is left out: the median of 7 and 9.
    assert one == {"threads": 1, "ok": True, "calls": 2, "values": {"perf::TASK-CLOCK": 8}}
    assert two == {
        "threads": 2,
        "ok": False,
        "reason": "the box's counts have 1 lines, for 3 calls",
    }
    assert counters["unavailable"] == ["PAPI_TOT_INS", "PAPI_L1_DCM"]
    assert counters["reasons"] == {
        "PAPI_L1_DCM": profiling.PAPI_UNKNOWN, "PAPI_TOT_INS": "Event does not exist"
    }  # fmt: skip
    assert counters["threads_counted"].startswith("all")
    header["opened"] = ["PAPI_TOT_CYC"]
    forged = profiling.papi_counters(timed, [1], asked, [], "7.0.0.0")
    assert not forged["available"]
    assert forged["table"][0]["reason"] == "the box's PAPI header names events not asked for"


def test_papibox_runs_only_the_judges_box_runners(tmp_path: Path) -> None:
    argv = [sys.executable, "-I", "-m", "hb.execution.papibox", "--library", "libpapi-none.so", "--events",
            "PAPI_TOT_INS", "--header", "h.json", "--out", "c.jsonl", "--",
            sys.executable, "-I", "-m", "http.server"]  # fmt: skip
    ended = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert ended.returncode == 2
    assert "http.server is not a box runner" in ended.stderr
    # A library that does not load is said in the header; nothing is counted.
    assert "could not be loaded" in (tmp_path / "h.json").read_text()
    assert (tmp_path / "c.jsonl").read_text() == ""


@dataclass(frozen=True)
class _InProcessJudge(JudgeClient):
    """The tool server's client, answered by the test judge in this process."""

    test_client: TestClient | None = None

    def _call(self, method: str, path: str, body: dict[str, Any] | None) -> JudgeAnswer:
        assert self.test_client is not None
        answer = self.test_client.request(method, path, json=body)
        return JudgeAnswer(answer.status_code, answer.json())


def test_the_profile_tool_takes_events_and_passes_the_judges_refusal(client: TestClient) -> None:
    tools = ToolServer(_InProcessJudge(test_client=client), "scaled_add", None)
    schema = {tool.name: tool.input_schema for tool in tools.tools()}["profile"]
    assert schema["properties"]["events"]["type"] == "array"
    with pytest.raises(ToolError, match="argument 'events' must be a list of strings"):
        tools.call("profile", {"source": SCALED_ADD, "tool": "papi", "events": "PAPI_TOT_INS"})
    with pytest.raises(ToolError, match=r"refused \(400\): events: tool none takes no events"):
        tools.call("profile", {"source": SCALED_ADD, "events": ["PAPI_TOT_INS"]})
