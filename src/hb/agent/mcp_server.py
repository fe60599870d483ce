"""The agent tool server (`hb mcp`): a Model Context Protocol server on stdio, through the official
SDK, whose tools (task, score, submit, profile, syntax_check and, in the requests-check packet,
requests_check) call one judge over HTTP for one task.

The request schema follows requests_api.md §0: the vendored schema, filtered by the task's offer
($HPCAGENT_BENCH_REQUEST_ACTIONS, RequestActions.from_env), ships once as submit's `requests`
property; score and profile describe theirs as "Same as submit's requests."; with nothing offered,
or the variable unset, none of them has a `requests` field. Nothing here reads the judge's
configuration."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hb.agent import REQUESTS_SCHEMA_PATH
from hb.agent.client import DEFAULT_JUDGE_URL, JudgeAnswer, JudgeClient, JudgeUnavailable
from hb.envelope import Caller
from hb.requests_api import RequestActions

if TYPE_CHECKING:
    import mcp_types as types

REQUEST_ACTIONS_VARIABLE = "HPCAGENT_BENCH_REQUEST_ACTIONS"
PACKETS = ("requests-check",)
SAME_AS_SUBMIT = "Same as submit's requests."
# The fields of a grade an agent reads (the judge's GradeOutcome answers more).
GRADE_FIELDS = (
    "grade_id", "route", "kernel", "preset", "language", "correct", "reason", "speedup",
    "native_ns", "baseline_ns", "convert_in_ns", "convert_out_ns", "max_rel_error", "suspect",
    "requests",
)  # fmt: skip
LOG_LIMIT = 4000


class ToolError(ValueError):
    """A call the tool cannot make: the message names the argument (or the judge's state)."""


def vendored_schema() -> dict[str, Any]:
    """The request's JSON Schema, every $ref inlined (requests_api.requests_schema_text())."""
    schema: dict[str, Any] = json.loads(REQUESTS_SCHEMA_PATH.read_text())
    return schema


@dataclass(frozen=True)
class ToolArgument:
    """One argument of a tool: its JSON Schema and whether a call must give it."""

    schema: Mapping[str, Any]
    required: bool = False


_SOURCE = ToolArgument(
    {"type": "string", "description": "The complete source of the task's function."}, True
)
_LANGUAGE = ToolArgument(
    {"type": "string", "description": "The source's language (default c).", "default": "c"}
)
_PRESET = ToolArgument(
    {"type": "string", "description": "S, M or L (default: the judge's graded preset)."}
)
_TOOL = ToolArgument(
    {
        "type": "string",
        "enum": ["none", "perf", "papi"],
        "default": "none",
        "description": "none: the timing table per thread count; perf: Linux perf counters and "
        "hot symbols; papi: PAPI counters around each kernel call where the library is present.",
    }
)
_EVENTS = ToolArgument(
    {
        "type": "array",
        "items": {"type": "string"},
        "description": "tool papi only: the PAPI events to count (default: cycles, instructions, "
        "L1/L2/L3 misses, branch misses, floating-point operations, task clock, page faults).",
    }
)


class ToolServer:
    """The tools of one task on one judge, under one offer and set of packets."""

    def __init__(
        self,
        client: JudgeClient,
        kernel: str,
        offer: RequestActions | None,
        packets: frozenset[str] = frozenset(),
    ) -> None:
        unknown = sorted(packets - set(PACKETS))
        if unknown:
            raise ToolError(f"--packet: unknown {unknown}; known: {list(PACKETS)}")
        self.client = client
        self.kernel = kernel
        self.packets = packets
        # None: nothing offered (or the variable unset), so no tool shows a requests field.
        self.requests_schema = offer.filter_schema(vendored_schema()) if offer else None
        self._arguments = self._declare()

    @classmethod
    def from_environment(
        cls, environ: Mapping[str, str], judge: str | None = None, kernel: str | None = None,
        packets: list[str] | None = None,
    ) -> ToolServer:  # fmt: skip
        """The server a problem line's environment describes: HB_JUDGE_URL, HB_TASK, the offer,
        HB_TOOL_PACKETS and the caller (HB_AGENT_ID, HB_AGENT_ROUND, HB_EXPERIMENT, HB_SETUP);
        the arguments win over the variables."""
        task = kernel or environ.get("HB_TASK", "")
        if not task:
            raise ToolError("no task: give --kernel NAME or set HB_TASK")
        chosen = packets if packets else environ.get("HB_TOOL_PACKETS", "").split(",")
        try:
            caller = Caller.from_environment(environ)
        except ValueError as error:
            raise ToolError(str(error)) from None
        url = judge or environ.get("HB_JUDGE_URL") or DEFAULT_JUDGE_URL
        offer = RequestActions.from_env(environ.get(REQUEST_ACTIONS_VARIABLE))
        return cls(
            JudgeClient(url, caller), task, offer, frozenset(p.strip() for p in chosen if p.strip())
        )

    # -- the tool list ---------------------------------------------------------------------------

    def _declare(self) -> dict[str, dict[str, ToolArgument]]:
        same: dict[str, ToolArgument] = {}
        submit_requests: dict[str, ToolArgument] = {}
        if self.requests_schema is not None:
            submit_requests = {"requests": ToolArgument(self.requests_schema)}
            same = {"requests": ToolArgument({"type": "object", "description": SAME_AS_SUBMIT})}
        tools: dict[str, dict[str, ToolArgument]] = {
            "task": {},
            "syntax_check": {"source": _SOURCE, "language": _LANGUAGE},
            "score": {"source": _SOURCE, "language": _LANGUAGE, **same, "preset": _PRESET},
            "submit": {"source": _SOURCE, "language": _LANGUAGE, **submit_requests},
            "profile": {
                "source": _SOURCE,
                "language": _LANGUAGE,
                **same,
                "preset": _PRESET,
                "tool": _TOOL,
                "events": _EVENTS,
            },
        }
        if "requests-check" in self.packets:
            described = same.get("requests") or ToolArgument(
                {"type": "object", "description": "A request (this task offers none)."}
            )
            tools["requests_check"] = {"requests": ToolArgument(described.schema, True)}
        return tools

    def tools(self) -> list[types.Tool]:
        import mcp_types as types

        return [
            types.Tool(
                name=name,
                description=TOOL_DESCRIPTIONS[name].format(kernel=self.kernel),
                input_schema=_object_schema(arguments),
            )
            for name, arguments in self._arguments.items()
        ]

    # -- calls -----------------------------------------------------------------------------------

    def call(self, name: str, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """The tool's answer as JSON; ToolError (a tool error the agent reads) for bad arguments
        or a refusal, JudgeUnavailable for a judge that is down."""
        if name not in self._arguments:
            raise ToolError(f"unknown tool {name!r}; this server has {list(self._arguments)}")
        given = dict(arguments or {})
        self._check_arguments(name, given)
        if name == "task":
            return self._answer(self.client.get(f"/task/{self.kernel}"), _task_view)
        if name == "requests_check":
            body = {"kernel": self.kernel, "requests": given["requests"]}
            return self._answer(self.client.post("/requests/check", body), dict)
        body = {"kernel": self.kernel, **given}
        if name == "syntax_check":
            return self._answer(self.client.post("/syntax-check", body), dict)
        if name == "profile":
            return self._answer(self.client.post("/profile", body), dict)
        return self._answer(self.client.post(f"/{name}", body), _grade_view)

    def _check_arguments(self, name: str, given: dict[str, Any]) -> None:
        declared = self._arguments[name]
        unknown = sorted(set(given) - set(declared))
        if unknown:
            why = (
                " (this task offers no requests)"
                if "requests" in unknown and self.requests_schema is None
                else ""
            )
            raise ToolError(
                f"{name}: unknown argument(s) {unknown}{why}; accepted: {sorted(declared)}"
            )
        for argument, spec in declared.items():
            if spec.required and argument not in given:
                raise ToolError(f"{name}: missing required argument {argument!r}")
            if argument not in given:
                continue
            expected = spec.schema.get("type")
            value = given[argument]
            if expected == "string" and not isinstance(value, str):
                raise ToolError(f"{name}: argument {argument!r} must be a string")
            if expected == "object" and not isinstance(value, dict):
                raise ToolError(f"{name}: argument {argument!r} must be a JSON object")
            if expected == "array" and not (
                isinstance(value, list) and all(isinstance(item, str) for item in value)
            ):
                raise ToolError(f"{name}: argument {argument!r} must be a list of strings")
            choices = spec.schema.get("enum")
            if choices is not None and value not in choices:
                raise ToolError(f"{name}: argument {argument!r} must be one of {choices}")

    @staticmethod
    def _answer(answer: JudgeAnswer, view: Any) -> dict[str, Any]:
        if not answer.ok:
            raise ToolError(f"refused ({answer.status}): {answer.refusal}")
        shown: dict[str, Any] = view(answer.body)
        return shown


TOOL_DESCRIPTIONS = {
    "task": "The task {kernel}: its whole prompt and facts (signature, sizes, presets, offer).",
    "syntax_check": "Compile the source with the judge's own flags and -fsyntax-only, in the "
    "judge's box; answers ok and the compiler's diagnostics. Grades and records nothing.",
    "score": "Grade the source on the public inputs (any preset): correct, reason, speedup, "
    "times, conversions. Recorded, never on the leaderboard.",
    "submit": "Grade the source on the hidden inputs at the graded preset: the recorded grade.",
    "profile": "Time the source per thread count and, with tool perf or papi, read hardware "
    "counters where the machine allows them. Records nothing.",
    "requests_check": "Check a request against {kernel} without building: accepted with the "
    "pointers and C signature it gives, or the refusal a submission would get.",
}


def _object_schema(arguments: Mapping[str, ToolArgument]) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {name: dict(spec.schema) for name, spec in arguments.items()},
        "additionalProperties": False,
    }
    required = [name for name, spec in arguments.items() if spec.required]
    if required:
        schema["required"] = required
    return schema


def _grade_view(grade: dict[str, Any]) -> dict[str, Any]:
    """The grade compactly: the fields an agent acts on, the reps' times and a build's log."""
    shown = {key: grade[key] for key in GRADE_FIELDS if grade.get(key) not in (None, {}, "")}
    timing = grade.get("timing") or {}
    if timing.get("reps_ns"):
        shown["reps_ns"] = timing["reps_ns"]
    if grade.get("log"):
        shown["log"] = str(grade["log"])[-LOG_LIMIT:]
    return shown


def _task_view(task: dict[str, Any]) -> dict[str, Any]:
    """The task's prompt and its facts, without the prompt's text a second time (its sections,
    the requests section)."""
    return {k: v for k, v in task.items() if k not in ("prompt_sections", "requests_section")}


async def serve_stdio(server: ToolServer) -> None:
    """Serve the tools on stdin/stdout until the client closes them."""
    import anyio
    import mcp_types as types
    from mcp.server import Server
    from mcp.server.stdio import stdio_server

    async def list_tools(_: Any, __: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=server.tools())

    async def call_tool(_: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            answer = await anyio.to_thread.run_sync(server.call, params.name, params.arguments)
        except (ToolError, JudgeUnavailable) as error:
            return types.CallToolResult(
                content=[types.TextContent(text=json.dumps({"error": str(error)}))], is_error=True
            )
        text = json.dumps(answer, separators=(",", ":"), sort_keys=True)
        return types.CallToolResult(content=[types.TextContent(text=text)])

    mcp_server: Server[Any] = Server(
        "hb",
        version="0.1.0",
        instructions=f"Tools of the hb judge for the task {server.kernel}: read it with task, "
        "check and score drafts, submit the answer.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    async with stdio_server() as (read_stream, write_stream):
        await mcp_server.run(read_stream, write_stream, mcp_server.create_initialization_options())


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--judge", help=f"the judge's URL (default: $HB_JUDGE_URL, else {DEFAULT_JUDGE_URL})"
    )
    parser.add_argument("--kernel", help="the task (default: $HB_TASK)")
    parser.add_argument(
        "--packet",
        action="append",
        choices=PACKETS,
        help="an opt-in tool packet (default: $HB_TOOL_PACKETS, comma-separated)",
    )


def main(args: argparse.Namespace, environ: Mapping[str, str] | None = None) -> int:
    server = ToolServer.from_environment(
        os.environ if environ is None else environ, args.judge, args.kernel, args.packet
    )
    import anyio

    anyio.run(serve_stdio, server)
    return 0
