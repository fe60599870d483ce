"""The distributed side's requests (default distributions, the task's grid, a task-grid setup
refusing a submission that lays out no array) and the refusals made before any build (shuffle
bijection at preset S, what a sparse array cannot take, a sparse kernel with a grid, the fp64-only
cast)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hb import abi, kernels
from hb.distributed.policy import default_grid, default_requests
from hb.envelope import RequestsCheckBody, Submission
from hb.requests_api import DistributionPlan, RequestAllowances, Requests
from hb.service import JudgeHandler, RequestFault, with_task_grid
from relayout.distribution import plan_requests
from tests.hb.conftest import make_config


@pytest.mark.parametrize(
    "name", [n for n in kernels.kernel_names() if kernels.load_manifest(n).distribution]
)
def test_default_requests_lower_to_the_manifest_plan(name: str) -> None:
    manifest = kernels.load_manifest(name)
    requests = default_requests(manifest, ranks=4)
    assert requests.startup.grid == default_grid(manifest)
    if any(a.is_sparse for a in manifest.arrays):
        return  # distributing a sparse format is a later issue; the short form still reads back
    plan = plan_requests(
        requests, abi.relayout_arrays(manifest, "fp64"), manifest.preset_sizes("S"), 4
    )
    grid = Requests.validate({"startup": {"grid": default_grid(manifest)}}).grid_at(4)
    expected = DistributionPlan.model_validate(
        {"grid": list(grid), "arrays": manifest.distribution.get("arrays", {})}
    )
    assert plan == expected


def test_task_grid_is_injected_only_under_grid_task() -> None:
    manifest = kernels.load_manifest("jacobi_2d")
    empty = Requests()
    task = RequestAllowances.resolve(["load", "distribute"], None, grid="task")
    agent = RequestAllowances.resolve(["load", "distribute"], None, grid="agent")
    assert with_task_grid(empty, manifest, task).startup.grid == ["P"]
    assert with_task_grid(empty, manifest, agent) == empty


def test_a_distributed_setup_refuses_cleanly_naming_what_is_missing(tmp_path: Path) -> None:
    handler = JudgeHandler(
        make_config(
            tmp_path,
            requests={"allow": ["load", "distribute"], "grid": "task"},
            mpi={"grade_distributed": True},
        )
    )
    answer = handler.check(RequestsCheckBody(kernel="scaled_add"))
    assert answer["accepted"] is False
    assert answer["refusal"].startswith(
        "operations: array x is left neither distributed nor replicated"
    )
    own_grid = handler.check(
        RequestsCheckBody(kernel="scaled_add", requests={"startup": {"grid": ["P"]}})
    )
    assert "requests.grid: task" in own_grid["refusal"]


@pytest.fixture(scope="module")
def layout_handler(tmp_path_factory: pytest.TempPathFactory) -> JudgeHandler:
    config = make_config(
        tmp_path_factory.mktemp("layout"), requests={"allow": ["load", "layout", "sparse_format"]}
    )
    return JudgeHandler(config)


def shuffle(f: str, f_inv: str) -> dict:
    return {
        "operations": [
            {"action": "shuffle", "array": "x", "digits": ["i0"], "f": [f], "f_inv": [f_inv]}
        ]
    }


def test_shuffle_bijection_is_checked_at_preset_s(layout_handler: JudgeHandler) -> None:
    refused = layout_handler.check(
        RequestsCheckBody(kernel="scaled_add", requests=shuffle("i0 // 2", "i0 * 2"))
    )
    assert refused["accepted"] is False
    assert (
        refused["refusal"].startswith("operations[0] (shuffle):")
        and "preset S" in refused["refusal"]
    )
    accepted = layout_handler.check(
        RequestsCheckBody(kernel="scaled_add", requests=shuffle("i0 ^ 1", "i0 ^ 1"))
    )
    assert accepted["accepted"] is True


def test_sparse_kernels_take_a_format_and_refuse_what_a_sparse_array_cannot_take(
    layout_handler: JudgeHandler,
) -> None:
    requests = {"operations": [{"action": "format", "array": "A", "to": "csc"}]}
    answer = layout_handler.check(RequestsCheckBody(kernel="spmv", requests=requests))
    assert answer["accepted"] is True
    assert {entry["format"] for name, entry in answer["arrays"].items() if name[:2] == "A_"} == {
        "csc"
    }
    assert "const int64_t *restrict A_indptr" in answer["signature"]
    plain = layout_handler.check(RequestsCheckBody(kernel="spmv"))
    assert plain["accepted"] and list(plain["arrays"]) == [
        "A_data",
        "A_indices",
        "A_indptr",
        "x",
        "y",
    ]
    assert plain["signature"] == abi.default_signature(kernels.load_manifest("spmv"), "fp64")
    for refused, expected in (
        (
            {"operations": [{"action": "pad", "array": "A", "digit": "i0", "amount": 1}]},
            "operations[0] (pad): A is a sparse array (csr); it takes format, replicate and "
            "place, never a digit operation",
        ),
        (
            {
                "operations": [
                    {"action": "format", "array": "A", "to": "ell"},
                    {"action": "zip", "arrays": ["A_data", "x"], "into": "z"},
                ]
            },
            "operations[1] (zip): A_data is a buffer of the sparse array A; sparse arrays and "
            "their buffers never regroup",
        ),
        (
            {"operations": [{"action": "format", "array": "y", "to": "ell"}]},
            "operations[0] (format): y is a dense array; format applies only to the sparse "
            "arrays of spmv (A)",
        ),
    ):
        answer = layout_handler.check(RequestsCheckBody(kernel="spmv", requests=refused))
        assert answer["accepted"] is False and answer["refusal"].startswith(expected)


GRID = {"startup": {"grid": ["P"]}, "operations": [{"action": "replicate", "array": "A"}]}
NOT_YET = "distributing a sparse format is not implemented yet"


def test_a_sparse_kernel_with_a_grid_is_refused_on_the_distributed_path(tmp_path: Path) -> None:
    agent = JudgeHandler(
        make_config(tmp_path / "agent", requests={"allow": ["load", "distribute", "sparse_format"]})
    )
    for requests in (GRID, {"startup": {"grid": ["P"]}}):
        answer = agent.check(RequestsCheckBody(kernel="spmv", requests=requests))
        assert answer["accepted"] is False
        assert answer["refusal"].startswith("startup.grid: spmv has the sparse array(s) A")
        assert NOT_YET in answer["refusal"]
    for grid in ("task", "agent"):
        distributed = JudgeHandler(
            make_config(
                tmp_path / grid,
                requests={"allow": ["load", "distribute", "sparse_format"], "grid": grid},
                mpi={"grade_distributed": True},
            )
        )
        for document in ({}, {"operations": [{"action": "format", "array": "A", "to": "ell"}]}):
            answer = distributed.check(RequestsCheckBody(kernel="spmm", requests=document))
            assert answer["accepted"] is False
            assert answer["refusal"].startswith(
                "startup.grid: this setup grades distributed (mpi.grade_distributed), and spmm "
                "has the sparse array(s) A"
            )
            assert NOT_YET in answer["refusal"]
    with pytest.raises(RequestFault, match=NOT_YET):
        agent.grade(
            Submission(kernel="spmv", source="", preset="S", requests=GRID),
            "score",
        ).model_dump()


def test_unbuilt_language_is_refused(layout_handler: JudgeHandler) -> None:
    answer = layout_handler.check(RequestsCheckBody(kernel="scaled_add", language="cobol"))
    assert answer["accepted"] is False and "is not built by this judge" in answer["refusal"]
