"""A judge seen over HTTP by the agent tools: JSON in and out, the caller identity sent in headers
with every call, a judge that is down or answers a refusal said in words."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any

from hb.envelope import Caller

DEFAULT_JUDGE_URL = "http://127.0.0.1:8800"


class JudgeUnavailable(RuntimeError):
    """The judge did not answer (not running, the wrong address, or a broken answer)."""


@dataclass(frozen=True)
class JudgeAnswer:
    """One answer: its HTTP status and JSON body; `refusal` the judge's words for a 4xx."""

    status: int
    body: Any

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def refusal(self) -> str:
        if isinstance(self.body, dict) and "detail" in self.body:
            return str(self.body["detail"])
        return json.dumps(self.body)


@dataclass(frozen=True)
class JudgeClient:
    """The judge at `url`, called on behalf of `caller`."""

    url: str = DEFAULT_JUDGE_URL
    caller: Caller = field(default_factory=Caller)
    timeout_s: float = 600.0

    def get(self, path: str) -> JudgeAnswer:
        return self._call("GET", path, None)

    def post(self, path: str, body: dict[str, Any]) -> JudgeAnswer:
        return self._call("POST", path, body)

    def _call(self, method: str, path: str, body: dict[str, Any] | None) -> JudgeAnswer:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Accept": "application/json", **self.caller.headers()}
        if data is not None:
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(
            self.url.rstrip("/") + path, data=data, method=method, headers=headers
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                return JudgeAnswer(response.status, _json(response.read(), self.url))
        except urllib.error.HTTPError as error:
            return JudgeAnswer(error.code, _json(error.read(), self.url))
        except (urllib.error.URLError, OSError) as error:
            reason = getattr(error, "reason", error)
            raise JudgeUnavailable(
                f"the judge at {self.url} is not reachable ({reason}); is `hb serve` running "
                "there (HB_JUDGE_URL, --judge)?"
            ) from None


def _json(data: bytes, url: str) -> Any:
    try:
        return json.loads(data or b"null")
    except ValueError:
        raise JudgeUnavailable(
            f"the judge at {url} answered something that is not JSON: {data[:200]!r}"
        ) from None
