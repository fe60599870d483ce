"""The scripted reference agent (`hb agent scripted`): no model; it drives the MCP tools of `hb mcp`
over stdio the way an agent would (read the task, check the syntax, score the catalog's reference
solution, try one request from the offer, submit) and prints what each call answered."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from typing import Any, TextIO

from hb import kernels
from hb.requests_api import RequestActions


class ScriptFailed(RuntimeError):
    """A tool answered an error the script cannot go on from."""


def one_request(offer: RequestActions | None, task: Mapping[str, Any]) -> dict[str, Any] | None:
    """A request from the offer the reference solution stays correct under: the identity permute
    of the first dense array where permute is offered (the same buffer, through the layout
    machinery), else startup.load of the first library offered; None where neither is."""
    if offer is None or offer.empty:
        return None
    if "permute" in offer.actions:
        for name, spec in task.get("arrays", {}).items():
            text = str(spec)
            if ":" in text.split("[", 1)[0]:
                continue  # a sparse array (csr:fp64[...]) takes no digit operation
            rank = text[text.index("[") + 1 : text.index("]")].count(",") + 1
            order = [f"i{d}" for d in range(rank)]
            return {"operations": [{"action": "permute", "array": name, "order": order}]}
    libraries = task.get("libraries") or []
    if offer.load and libraries:
        return {"startup": {"load": [libraries[0]]}}
    return None


async def drive(environ: Mapping[str, str], out: TextIO) -> int:
    """One scripted session against the `hb mcp` the environment describes; 0 when the submit is
    correct, 1 when it is not, 2 when a tool answered an error."""
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    server = StdioServerParameters(
        command=sys.executable, args=["-m", "hb.cli", "mcp"], env=dict(environ)
    )
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        listed = await session.list_tools()
        names = [tool.name for tool in listed.tools]

        async def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
            result = await session.call_tool(name, arguments)
            text = "".join(getattr(block, "text", "") for block in result.content)
            answer: dict[str, Any] = json.loads(text)
            shown = {k: v for k, v in answer.items() if k not in ("prompt", "requests_section")}
            out.write(json.dumps({"tool": name, "error": result.is_error, "answer": shown}) + "\n")
            if result.is_error:
                raise ScriptFailed(f"{name}: {answer.get('error')}")
            return answer

        out.write(json.dumps({"tools": names}) + "\n")
        try:
            task = await call("task", {})
            source = kernels.solution_source(task["kernel"])
            checked = await call("syntax_check", {"source": source})
            if not checked.get("ok"):
                raise ScriptFailed(f"syntax_check: {checked.get('diagnostics')}")
            plain = await call("score", {"source": source, "preset": "S"})
            offer = RequestActions.from_env(environ.get("HPCAGENT_BENCH_REQUEST_ACTIONS"))
            request = one_request(offer, task)
            submitted: dict[str, Any] = {"source": source}
            if request is not None:
                if "requests_check" in names:
                    await call("requests_check", {"requests": request})
                tried = await call("score", {"source": source, "requests": request, "preset": "S"})
                if tried.get("correct") and tried.get("speedup", 0) >= plain.get("speedup", 0):
                    submitted["requests"] = request
            grade = await call("submit", submitted)
        except ScriptFailed as failure:
            out.write(json.dumps({"failed": str(failure)}) + "\n")
            return 2
    return 0 if grade.get("correct") else 1


def main(environ: Mapping[str, str] | None = None, out: TextIO | None = None) -> int:
    import anyio

    chosen = dict(os.environ if environ is None else environ)
    stream = out or sys.stdout

    async def session() -> int:
        return await drive(chosen, stream)

    return int(anyio.run(session))
