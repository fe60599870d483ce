"""Refusals at the graded sizes: a request the graded preset's sizes refuse (a pad whose buffers
cannot fit, a shuffle that is no bijection there) is a 400 naming the entry before anything is
built, and /requests/check says the same at the sizes it is given; names a request gives may not
be the kernel's own; reasons never carry an exception's class name."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from hb import kernels, results_db
from hb.execution.supervisor import describe
from hb.service import create_app
from tests.hb.conftest import make_config

SOURCE = kernels.solution_source("scaled_add")
HUGE_PAD = {"operations": [{"action": "pad", "array": "x", "digit": "i0", "amount": 2**40}]}
ODD_SHUFFLE = {
    "operations": [
        {"action": "shuffle", "array": "x", "digits": ["i0"], "f": ["i0 ^ 1"], "f_inv": ["i0 ^ 1"]}
    ]
}


@pytest.fixture(scope="module")
def judge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    config = make_config(
        tmp_path_factory.mktemp("refusals"),
        requests={"allow": ["load", "cast", "layout"], "precisions": ["fp32"]},
    )
    with TestClient(create_app(config)) as client:
        yield client


def check(judge: TestClient, requests: dict, **where: object) -> dict:
    body = {"kernel": "scaled_add", "requests": requests, **where}
    answer = judge.post("/requests/check", json=body)
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_buffers_that_cannot_fit_are_refused_before_the_build(judge: TestClient) -> None:
    answer = judge.post(
        "/score",
        json={"kernel": "scaled_add", "source": SOURCE, "preset": "S", "requests": HUGE_PAD},
    )
    assert answer.status_code == 400
    detail = answer.json()["detail"]
    assert detail.startswith("operations[0] (pad): at preset S") and "box's memory" in detail
    submitted = judge.post(
        "/submit", json={"kernel": "scaled_add", "source": SOURCE, "requests": HUGE_PAD}
    )
    assert submitted.status_code == 400
    refused = check(judge, HUGE_PAD)
    assert refused["accepted"] is False and refused["refusal"] == detail


def test_a_shuffle_is_checked_at_the_sizes_asked_for(judge: TestClient) -> None:
    # i0 ^ 1 is a bijection over an even extent, not over an odd one.
    assert check(judge, ODD_SHUFFLE)["accepted"] is True
    assert check(judge, ODD_SHUFFLE, preset="M")["accepted"] is True
    odd = check(judge, ODD_SHUFFLE, sizes={"N": 4097})
    assert odd["accepted"] is False
    assert odd["refusal"].startswith(
        "operations[0] (shuffle): f and f_inv are not inverse bijections"
    )
    assert odd["refusal"].endswith("(at the given sizes: {'N': 4097})")


def test_sizes_and_presets_of_a_check_are_validated(judge: TestClient) -> None:
    both = judge.post(
        "/requests/check",
        json={"kernel": "scaled_add", "requests": {}, "preset": "S", "sizes": {"N": 8}},
    )
    assert both.status_code == 400 and "give one of them" in both.json()["detail"]
    unknown = judge.post(
        "/requests/check", json={"kernel": "scaled_add", "requests": {}, "sizes": {"Q": 8}}
    )
    assert unknown.status_code == 400 and "unknown ['Q']" in unknown.json()["detail"]
    assert "missing ['N']" in unknown.json()["detail"]
    negative = judge.post(
        "/requests/check", json={"kernel": "scaled_add", "requests": {}, "sizes": {"N": 0}}
    )
    assert negative.status_code == 400 and negative.json()["detail"].startswith("sizes.N:")
    preset = judge.post(
        "/requests/check", json={"kernel": "scaled_add", "requests": {}, "preset": "XL"}
    )
    assert preset.status_code == 400 and "is not one of" in preset.json()["detail"]


@pytest.mark.parametrize("name, what", [("alpha", "a scalar"), ("N", "a size symbol")])
def test_a_name_the_kernel_uses_is_refused(judge: TestClient, name: str, what: str) -> None:
    requests = {"operations": [{"action": "zip", "arrays": ["x", "y"], "into": name}]}
    answer = judge.post(
        "/score",
        json={"kernel": "scaled_add", "source": SOURCE, "preset": "S", "requests": requests},
    )
    assert answer.status_code == 400
    assert answer.json()["detail"] == (
        f"operations[0] (zip): into {name!r} is {what} of scaled_add; choose a name the kernel does not use"
    )
    block = {
        "operations": [
            {"action": "block", "array": "x", "digit": "i0", "factor": 4, "into": [name, "f"]}
        ]
    }
    refused = check(judge, block)
    assert refused["accepted"] is False and f"into {name!r} is {what}" in refused["refusal"]


def test_a_refused_submission_is_recorded_as_refused(judge: TestClient, tmp_path: Path) -> None:
    answer = judge.post(
        "/submit", json={"kernel": "scaled_add", "source": SOURCE, "requests": HUGE_PAD}
    )
    assert answer.status_code == 400
    engine = results_db.connect(judge.app.state.handler.config.database_url)  # type: ignore[attr-defined]
    rows = results_db.list_grades(engine, route="submit.refused", limit=5)
    assert rows and rows[0]["detail"] == answer.json()["detail"]


def test_reasons_say_what_went_wrong_without_class_names() -> None:
    assert describe(MemoryError()) == "the staged buffers do not fit in the judge's memory"
    assert (
        describe(FileNotFoundError(2, "No such file or directory")) == "No such file or directory"
    )
    assert describe(ValueError("x: too large")) == "x: too large"
    assert "Error" not in describe(RuntimeError())


def test_a_mixed_zip_is_checked_with_the_judges_names(judge: TestClient) -> None:
    # A cast then a zip makes a struct: its buffers are sized by the struct, and the judge's ABI
    # names it hb_zip_<pointer> (relayout's own names are relayout_*).
    requests = {
        "operations": [
            {"action": "cast", "array": "x", "to": "fp32"},
            {"action": "zip", "arrays": ["x", "y"], "into": "xy"},
        ]
    }
    answer = check(judge, requests)
    assert answer["accepted"] is True, answer.get("refusal")
    assert answer["arrays"]["xy"]["typedef"].startswith("typedef struct")
    assert "hb_zip_xy" in answer["signature"] and "relayout_" not in answer["signature"]
    half = check(judge, {"operations": [{"action": "cast", "array": "x", "to": "fp32"}]})
    assert "const float *restrict x" in half["signature"]
