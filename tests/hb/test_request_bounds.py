"""Requests whose expressions leave int64 (or would take the judge seconds to check) are answered
quickly with a 400 naming the entry, never a 500: the HTTP face of relayout's bounded evaluation;
and the bounds of a body itself (hb.body_guard): its size, the count of its operations, and its
strings, which must be text."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from fastapi.testclient import TestClient

from hb import kernels
from hb.body_guard import MAX_BODY_BYTES

SCALED_ADD = kernels.solution_source("scaled_add")
# The CPU this process (the service, in the test client) may spend on a refusal: measured as CPU
# time, not wall time, so that another process's work on a loaded machine is not counted, and as
# the least of TRIES tries, since the process's CPU also counts the threads that earlier tests'
# judges leave at work in it (a refusal that costs seconds costs them every time).
QUICK_S = 0.5
TRIES = 3


def _shuffle(f: str, f_inv: str = "i0") -> dict[str, Any]:
    return {
        "operations": [
            {"action": "shuffle", "array": "x", "digits": ["i0"], "f": [f], "f_inv": [f_inv]}
        ]
    }


def _quick_400s(client: TestClient, requests: dict[str, Any]) -> list[str]:
    """The details of the 400s that /requests/check and /score answer `requests` with, each
    within QUICK_S of CPU."""
    details = []
    for route, body in [
        ("/requests/check", {"kernel": "scaled_add", "requests": requests}),
        ("/score", {"kernel": "scaled_add", "source": SCALED_ADD, "requests": requests}),
    ]:
        spent = []
        for _ in range(TRIES):
            start = time.process_time()
            answer = client.post(route, json=body)
            spent.append(time.process_time() - start)
            assert answer.status_code == 400, (route, answer.text)
        assert min(spent) < QUICK_S, (route, spent)
        details.append(answer.json()["detail"])
    return details


@pytest.mark.parametrize(
    ("requests", "words"),
    [
        (_shuffle("i0 ^ (1 << 9223372036854775807)"), "is outside 0..63"),
        (_shuffle("i0 + root(i0, 9223372036854775807)"), "needs 1 <= k <= 64"),
        (_shuffle("i0 + 0 * (1 << 6000000)"), "shift count 6000000"),
    ],
)
def test_an_unbounded_expression_is_a_quick_400(
    client: TestClient, requests: dict[str, Any], words: str
) -> None:
    for detail in _quick_400s(client, requests):
        assert detail.startswith("operations[0] (shuffle): f.0: ") and words in detail, detail


def test_a_shuffle_that_overflows_at_the_preset_is_refused(client: TestClient) -> None:
    requests = _shuffle("i0 * 4611686018427387904 * 4")
    answer = client.post(
        "/score", json={"kernel": "scaled_add", "source": SCALED_ADD, "requests": requests}
    )
    assert answer.status_code == 400, answer.text
    detail = answer.json()["detail"]
    assert "not inverse bijections: f overflows int64 at (i0=2)" in detail, detail
    checked = client.post("/requests/check", json={"kernel": "scaled_add", "requests": requests})
    assert checked.status_code == 200 and not checked.json()["accepted"]


def test_a_request_of_too_many_operations_is_refused_before_they_are_read(
    client: TestClient,
) -> None:
    pad = {"action": "pad", "array": "x", "digit": "i0", "amount": 1}
    requests = {"operations": [pad] * 15000}  # most of the body's bound
    assert (
        _quick_400s(client, requests)
        == ["operations: a request has at most 128 operations, this one has 15000"] * 2
    )


def test_a_body_past_the_bound_is_refused_unread(client: TestClient) -> None:
    body = b'{"kernel": "scaled_add", "source": "/*' + b"a" * MAX_BODY_BYTES + b'*/"}'

    def streamed() -> Any:  # no Content-Length: the bound is counted as the body arrives
        for start in range(0, len(body), 65536):
            yield body[start : start + 65536]

    for content in (body, streamed()):
        answer = client.post(
            "/score", content=content, headers={"content-type": "application/json"}
        )
        assert answer.status_code == 413, answer.text
        assert answer.json()["detail"] == (
            f"body: the request body is larger than {MAX_BODY_BYTES} bytes, the most this judge "
            "reads"
        )
    assert client.get("/health").status_code == 200


@pytest.mark.parametrize(
    ("route", "raw", "where"),
    [
        ("/score", rb'{"kernel": "scaled_add", "source": "\\\ud800"}', "source"),
        ("/submit", rb'{"kernel": "scaled_add", "source": "int x; /* \udc00 */"}', "source"),
        ("/score", rb'{"kernel": "\ud8ff", "source": "x"}', "kernel"),
        ("/requests/check",
         rb'{"kernel": "scaled_add", "requests": {"operations": [{"action": "cast", '
         rb'"array": "x\uDBFF", "to": "fp32"}]}}', "requests.operations[0].array"),
        ("/score", rb'{"kernel": "scaled_add", "source": "x", "\ud800": 1}', r"\ud800"),
    ],
)  # fmt: skip
def test_a_string_that_is_not_text_is_a_400_naming_it(
    client: TestClient, route: str, raw: bytes, where: str
) -> None:
    # A lone UTF-16 surrogate stands for no character: no source, name or record can hold it.
    answer = client.post(route, content=raw, headers={"content-type": "application/json"})
    assert answer.status_code == 400, answer.text
    detail = answer.json()["detail"]
    assert detail.startswith(f"{where}: holds a lone UTF-16 surrogate"), detail
    assert client.get("/health").status_code == 200


def test_escaped_text_that_is_text_passes(client: TestClient) -> None:
    # A surrogate pair is one character, and an escaped backslash before "ud800" is no escape.
    source = SCALED_ADD.replace("\n", "\n// \\ud800 and \U0001f600\n", 1)
    raw = b'{"kernel": "scaled_add", "preset": "S", "source": ' + json.dumps(source).encode() + b"}"
    assert rb"\\ud800" in raw and rb"\ud83d\ude00" in raw
    answer = client.post("/score", content=raw, headers={"content-type": "application/json"})
    assert answer.status_code == 200, answer.text
    assert answer.json()["correct"], answer.json()
