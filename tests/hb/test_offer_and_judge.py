"""The offer and the judge agree: for every kernel of the catalog and each setup, what /task
offers (cast precisions, the distribution and its grid) is what /requests/check accepts, and what
it does not offer is refused; the problem's own precision is never a cast target; under
mpi.grade_distributed the prompt and the signature show the MPI entry point."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from hb import kernels
from hb.distributed.policy import default_requests
from hb.service import create_app
from tests.hb.conftest import make_config

SETUPS = {
    "cast": ({"allow": ["load", "cast"], "precisions": ["fp64", "fp32", "fp16", "bf16"]}, {}),
    "distribute": ({"allow": ["load", "distribute"]}, {}),
    "grade_distributed": ({"allow": ["load"]}, {"grade_distributed": True}),
}


def judge(tmp_path: Path, setup: str) -> TestClient:
    requests, mpi = SETUPS[setup]
    return TestClient(create_app(make_config(tmp_path, requests=requests, mpi=mpi)))


def checked(client: TestClient, kernel: str, requests: dict[str, Any]) -> dict[str, Any]:
    answer = client.post("/requests/check", json={"kernel": kernel, "requests": requests})
    assert answer.status_code == 200, answer.text
    return answer.json()


@pytest.mark.parametrize("kernel", kernels.kernel_names())
def test_cast_offers_exactly_the_precisions_the_judge_accepts(tmp_path: Path, kernel: str) -> None:
    with judge(tmp_path, "cast") as client:
        task = client.get(f"/task/{kernel}").json()
        offer, precision = task["request_actions"], task["precision"]
        assert precision not in offer["precisions"]
        floating = [
            name for name, spec in task["arrays"].items()
            if isinstance(spec, dict) and spec.get("dtype") == precision
        ]  # fmt: skip
        if not floating:
            return
        array = floating[0]
        for target in ("fp64", "fp32", "fp16", "bf16"):
            request = {"operations": [{"action": "cast", "array": array, "to": target}]}
            accepted = checked(client, kernel, request)["accepted"]
            assert accepted == ("cast" in offer["actions"] and target in offer["precisions"]), (
                target
            )


@pytest.mark.parametrize("setup", ["distribute", "grade_distributed"])
@pytest.mark.parametrize("kernel", kernels.kernel_names())
def test_the_distribution_is_offered_exactly_where_it_is_accepted(
    tmp_path: Path, setup: str, kernel: str
) -> None:
    manifest = kernels.load_manifest(kernel)
    with judge(tmp_path, setup) as client:
        task = client.get(f"/task/{kernel}").json()
        offer = task["request_actions"]
        if not manifest.distribution:
            assert not offer["grid"] and "distribute" not in offer["actions"]
            return
        default = json.loads(default_requests(manifest, 4).to_json())
        accepted = checked(client, kernel, default)
        assert accepted["accepted"] == (offer["grid"] and "distribute" in offer["actions"]), (
            accepted
        )
        if setup == "grade_distributed" and accepted["accepted"]:
            entry = f"{kernel}_mpi_{task['precision']}("
            assert entry in task["signature"] and entry in task["requests_section"]
            assert f"{kernel}_{task['precision']}(" not in task["requests_section"]


def test_the_machine_learning_tracks_distributed_grades_take_no_cast(tmp_path: Path) -> None:
    config = make_config(
        tmp_path,
        requests={"allow": ["load", "cast", "distribute"], "precisions": ["fp16", "bf16"]},
        grading={"datatype": "fp32"},
    )
    cast = {"action": "cast", "array": "x", "to": "fp16"}
    on_ranks = json.loads(default_requests(kernels.load_manifest("softmax"), 2).to_json())
    on_ranks["operations"].append(cast)
    with TestClient(create_app(config)) as client:
        refused = checked(client, "softmax", on_ranks)
        assert refused["accepted"] is False
        assert "machine_learning track" in refused["refusal"], refused
        assert checked(client, "softmax", {"operations": [cast]})["accepted"] is True
