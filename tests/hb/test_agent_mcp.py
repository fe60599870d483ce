"""The agent tool server end to end: `hb mcp` spoken to by the MCP SDK's own stdio client, against
a real judge (`hb serve`) started here. The tool list under several offers (the request schema
filtered byte for byte as requests_api.md §0 says, the requests-check packet changing nothing else),
each tool called once, the caller identity recorded, and bad calls answered as tool errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from hb import kernels
from hb.agent import experiments
from hb.agent.client import JudgeClient
from hb.agent.mcp_server import SAME_AS_SUBMIT, vendored_schema
from hb.requests_api import RequestActions

SCALED_ADD = kernels.solution_source("scaled_add")
LAYOUT_OFFER = "permute,block,load"
CAST_OFFER = "cast:fp32|fp16,load"
BASE_TOOLS = ["task", "syntax_check", "score", "submit", "profile"]


@pytest.fixture(scope="module")
def judge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A judge on a free port: small reps, casts and layouts allowed, its own data directory."""
    root = tmp_path_factory.mktemp("mcp-judge")
    config = root / "config.yaml"
    config.write_text(
        f"data_dir: {root / 'data'}\n"
        "grading: {reps: 2, warmup: 1, max_pairs: 2, box_pairs: 1, hidden_seed: 7}\n"
        "sandbox: {timeout_s: 30, threads: 2}\n"
        "requests: {allow: [load, cast, layout], precisions: [fp32, fp16]}\n"
    )
    with experiments.started_judge({}, str(config)) as url:
        yield url


def session_env(judge: str, offer: str | None, **extra: str) -> dict[str, str]:
    env = {"HB_JUDGE_URL": judge, "HB_TASK": "scaled_add", "HB_AGENT_ID": "test-agent",
           "HB_AGENT_ROUND": "3", "HB_EXPERIMENT": "mcp-test", "HB_SETUP": "s1", **extra}  # fmt: skip
    if offer is not None:
        env["HPCAGENT_BENCH_REQUEST_ACTIONS"] = offer
    return env


def with_server(env: dict[str, str], script: Any, *args: str) -> Any:
    """Run `script(session)` against `hb mcp` (with `args`) started by the SDK's stdio client."""
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def main() -> Any:
        server = StdioServerParameters(
            command=sys.executable, args=["-m", "hb.cli", "mcp", *args], env=env
        )
        async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await script(session)

    return anyio.run(main)


async def listed(session: Any) -> dict[str, dict[str, Any]]:
    tools = (await session.list_tools()).tools
    return {tool.name: tool.input_schema for tool in tools}


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def test_tool_lists_follow_the_offer_byte_for_byte(judge: str) -> None:
    for offer in (LAYOUT_OFFER, CAST_OFFER):
        tools = with_server(session_env(judge, offer), listed)
        assert list(tools) == BASE_TOOLS
        expected = RequestActions.from_env(offer)
        assert expected is not None
        filtered = expected.filter_schema(vendored_schema())
        # The filtered schema ships once, as submit's requests property.
        assert canonical(tools["submit"]["properties"]["requests"]) == canonical(filtered)
        for name in ("score", "profile"):
            assert tools[name]["properties"]["requests"] == {
                "type": "object",
                "description": SAME_AS_SUBMIT,
            }
        assert "requests" not in tools["syntax_check"]["properties"]
    cast_schema = with_server(session_env(judge, CAST_OFFER), listed)["submit"]["properties"]
    (cast,) = cast_schema["requests"]["properties"]["operations"]["items"]["oneOf"]
    assert cast["properties"]["action"]["const"] == "cast"
    assert cast["properties"]["to"]["enum"] == ["fp32", "fp16"]


@pytest.mark.parametrize("offer", [None, ""])
def test_no_offer_or_an_unset_variable_shows_no_requests_field(
    judge: str, offer: str | None
) -> None:
    tools = with_server(session_env(judge, offer), listed)
    for name in ("score", "submit", "profile"):
        assert "requests" not in tools[name]["properties"], name


def test_the_packet_adds_requests_check_and_changes_nothing_else(judge: str) -> None:
    plain = with_server(session_env(judge, LAYOUT_OFFER), listed)
    by_variable = with_server(
        session_env(judge, LAYOUT_OFFER, HB_TOOL_PACKETS="requests-check"), listed
    )
    by_flag = with_server(session_env(judge, LAYOUT_OFFER), listed, "--packet", "requests-check")
    for packed in (by_variable, by_flag):
        assert list(packed) == [*BASE_TOOLS, "requests_check"]
        assert {k: v for k, v in packed.items() if k != "requests_check"} == plain


def test_each_tool_answers_and_the_caller_is_recorded(judge: str) -> None:
    env = session_env(judge, LAYOUT_OFFER, HB_TOOL_PACKETS="requests-check")
    permute = {"operations": [{"action": "permute", "array": "x", "order": ["i0"]}]}

    async def script(session: Any) -> dict[str, Any]:
        answers = {}
        calls = {
            "task": {},
            "syntax_check": {"source": SCALED_ADD},
            "score": {"source": SCALED_ADD, "preset": "S", "requests": permute},
            "submit": {"source": SCALED_ADD},
            "profile": {"source": SCALED_ADD, "tool": "none"},
            "requests_check": {"requests": permute},
        }
        for name, arguments in calls.items():
            result = await session.call_tool(name, arguments)
            assert not result.is_error, (name, result.content)
            answers[name] = json.loads(result.content[0].text)
        return answers

    answers = with_server(env, script)
    assert (
        answers["task"]["kernel"] == "scaled_add" and "## Correctness" in answers["task"]["prompt"]
    )
    assert answers["syntax_check"]["ok"] and "-fsyntax-only" in answers["syntax_check"]["command"]
    score, submit = answers["score"], answers["submit"]
    assert score["correct"] and score["route"] == "score" and score["speedup"] > 0
    assert score["requests"] == permute and score["convert_in_ns"] > 0
    assert submit["correct"] and submit["route"] == "submit"
    assert [row["threads"] for row in answers["profile"]["timing"]] == [1, 2]
    assert all(row["correct"] for row in answers["profile"]["timing"])
    assert answers["requests_check"]["accepted"] is True
    rows = JudgeClient(judge).get("/grades?agent_id=test-agent&limit=10").body
    assert {row["id"] for row in rows} == {score["grade_id"], submit["grade_id"]}
    for row in rows:
        assert (row["agent_round"], row["experiment"], row["setup"]) == (3, "mcp-test", "s1")


def test_bad_calls_are_tool_errors_naming_the_argument(judge: str) -> None:
    async def script(session: Any) -> list[tuple[bool, str]]:
        outcomes = []
        for name, arguments in (
            ("score", {}),
            ("score", {"source": 3}),
            ("submit", {"source": SCALED_ADD, "requests": {}}),
            ("profile", {"source": SCALED_ADD, "tool": "vtune"}),
            ("score", {"source": SCALED_ADD, "language": "cobol"}),
            ("nope", {}),
        ):
            result = await session.call_tool(name, arguments)
            outcomes.append((result.is_error, json.loads(result.content[0].text)["error"]))
        return outcomes

    outcomes = with_server(session_env(judge, None), script)
    assert all(is_error for is_error, _ in outcomes)
    messages = [message for _, message in outcomes]
    assert "missing required argument 'source'" in messages[0]
    assert "'source' must be a string" in messages[1]
    assert "this task offers no requests" in messages[2]
    assert "'tool' must be one of" in messages[3]
    assert messages[4].startswith("refused (400): language:")
    assert "unknown tool 'nope'" in messages[5]


def test_a_judge_that_is_down_is_a_tool_error_and_the_server_stays_up(tmp_path: Path) -> None:
    env = session_env("http://127.0.0.1:9", LAYOUT_OFFER)

    async def script(session: Any) -> list[Any]:
        first = await session.call_tool("task", {})
        second = await session.call_tool("score", {"source": SCALED_ADD})
        return [first, second, await listed(session)]

    first, second, tools = with_server(env, script)
    for result in (first, second):
        assert result.is_error
        assert "is not reachable" in json.loads(result.content[0].text)["error"]
    assert list(tools) == BASE_TOOLS


def test_hb_mcp_without_a_task_says_so() -> None:
    env = {k: v for k, v in os.environ.items() if k != "HB_TASK"}
    ended = subprocess.run(
        [sys.executable, "-m", "hb.cli", "mcp"], env=env, capture_output=True, text=True,
        stdin=subprocess.DEVNULL, timeout=60, check=False,
    )  # fmt: skip
    assert ended.returncode == 2
    assert ended.stderr.strip() == "hb mcp: no task: give --kernel NAME or set HB_TASK"
