"""Requests whose expressions leave int64 (or would take the judge seconds to check) are answered
quickly with a 400 naming the entry, never a 500: the HTTP face of relayout's bounded evaluation."""

from __future__ import annotations

import time
from typing import Any

import pytest
from fastapi.testclient import TestClient

from hb import kernels

SCALED_ADD = kernels.solution_source("scaled_add")
QUICK_S = 0.5


def _shuffle(f: str, f_inv: str = "i0") -> dict[str, Any]:
    return {
        "operations": [
            {"action": "shuffle", "array": "x", "digits": ["i0"], "f": [f], "f_inv": [f_inv]}
        ]
    }


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
    for route, body in [
        ("/requests/check", {"kernel": "scaled_add", "requests": requests}),
        ("/score", {"kernel": "scaled_add", "source": SCALED_ADD, "requests": requests}),
    ]:
        start = time.perf_counter()
        answer = client.post(route, json=body)
        assert time.perf_counter() - start < QUICK_S, route
        assert answer.status_code == 400, (route, answer.text)
        detail = answer.json()["detail"]
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
