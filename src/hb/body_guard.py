"""What the judge's service reads of a request body before any route sees it: at most MAX_BODY_BYTES
(a longer body is refused unread, 413), and no JSON string holding a lone UTF-16 surrogate (an
escape such as \\ud800 that stands for no character, so that no text can be written, hashed or
built from it; 400 naming the field)."""

from __future__ import annotations

import json
import re
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

# The most bytes of a request body the judge reads: a hundred times the catalog's longest solution.
MAX_BODY_BYTES = 1 << 20
# An escape of a surrogate code unit; only a body holding one can hold a lone surrogate.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def lone_surrogate(value: Any) -> str | None:
    """Where in the parsed JSON `value` a string (or an object's key) holds a lone surrogate, as
    a path ("requests.operations[2].array"); None when every string is text."""
    pending: list[tuple[str, Any]] = [("", value)]
    while pending:
        path, item = pending.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return path or "body"
        elif isinstance(item, dict):
            for key, inner in item.items():
                shown = key.encode("utf-8", "backslashreplace").decode()  # a key said as text
                where = f"{path}.{shown}" if path else shown
                pending.append((where, key))
                pending.append((where, inner))
        elif isinstance(item, list):
            pending.extend((f"{path}[{index}]", inner) for index, inner in enumerate(item))
    return None


class BodyGuard:
    """ASGI middleware: each HTTP request's body read whole (up to MAX_BODY_BYTES) and checked,
    then handed to the app as one message."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await self._refuse(send, 413, self._too_large())
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.limit:
                await self._refuse(send, 413, self._too_large())
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        if _SURROGATE_ESCAPE.search(body):
            where = self._surrogate_in(body)
            if where is not None:
                await self._refuse(send, 400, (
                    f"{where}: holds a lone UTF-16 surrogate (an escape such as \\ud800 that "
                    "stands for no character); send the text as UTF-8"
                ))  # fmt: skip
                return
        handed = False

        async def replay() -> Message:
            nonlocal handed
            if not handed:
                handed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    def _too_large(self) -> str:
        return (
            f"body: the request body is larger than {self.limit} bytes, the most this judge reads"
        )

    @staticmethod
    def _surrogate_in(body: bytes) -> str | None:
        try:
            parsed = json.loads(body)
        except (ValueError, RecursionError):
            return None  # not JSON: the route says so
        return lone_surrogate(parsed)

    @staticmethod
    async def _refuse(send: Send, status: int, detail: str) -> None:
        payload = json.dumps({"detail": detail}).encode()
        await send({
            "type": "http.response.start", "status": status,
            "headers": [(b"content-type", b"application/json"),
                        (b"content-length", str(len(payload)).encode())],
        })  # fmt: skip
        await send({"type": "http.response.body", "body": payload})
