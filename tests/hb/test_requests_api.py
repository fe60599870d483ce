"""The requests API's judge-side rules: what a setup allows (config and environment), the refusals
naming their entry, what a task offers, the fp64-only cast refusal, the envelope's field and the
recorded version."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from hb import kernels
from hb.config import load_config
from hb.envelope import Submission
from hb.prompts import build_context, task_actions
from hb.requests_api import (
    RECORDED_VERSION,
    REQUESTS_ADAPTER,
    RequestActions,
    RequestAllowances,
    RequestError,
    Requests,
    cast_refusal,
    from_recorded,
    requests_schema_text,
    to_recorded,
)

CAST = {"operations": [{"action": "cast", "array": "x", "to": "fp32"}]}


def test_default_allows_load_only() -> None:
    allowances = RequestAllowances.resolve(None, None)
    assert allowances.allow == {"load"}
    assert allowances.refusal(Requests.validate({"startup": {"load": ["openblas"]}})) is None
    refusal = allowances.refusal(Requests.validate(CAST))
    assert refusal is not None and refusal.startswith("operations[0] (cast):")


def test_config_and_environment(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("requests:\n  allow: [load, cast]\n  precisions: [fp32]\n")
    from_file = RequestAllowances.from_config(load_config(path, environ={}))
    assert from_file.allow == {"load", "cast"} and from_file.precisions == ("fp32",)
    from_env = RequestAllowances.from_config(
        load_config(
            path,
            environ={
                "HPCAGENT_BENCH_REQUESTS_ALLOW": "load,layout",
                "HPCAGENT_BENCH_REQUESTS_PRECISIONS": "",
            },
        )
    )
    assert from_env.allow == {"load", "layout"} and from_env.precisions == ()


@pytest.mark.parametrize(
    "written", ['["load","cast"]', "[load, cast]", "load, cast", " [ 'load', cast ] "]
)
def test_environment_takes_a_list_or_comma_separated(written: str) -> None:
    config = load_config(
        None,
        environ={
            "HPCAGENT_BENCH_REQUESTS_ALLOW": written,
            "HPCAGENT_BENCH_REQUESTS_PRECISIONS": written.replace("load", "fp32").replace(
                "cast", "fp16"
            ),
        },
    )
    allowances = RequestAllowances.from_config(config)
    assert allowances.allow == {"load", "cast"} and allowances.precisions == ("fp32", "fp16")
    with pytest.raises(ValueError, match="not a list"):
        RequestAllowances.resolve("[load, cast", None)


def test_empty_set_allows_nothing() -> None:
    allowances = RequestAllowances.resolve([], None)
    assert allowances.refusal(Requests.validate({"startup": {"load": ["openblas"]}})) is not None
    assert task_actions(kernels.load_manifest("gemm"), allowances).empty


@pytest.mark.parametrize(
    ("allow", "precisions", "message"),
    [
        (["load", "teleport"], None, "unknown"),
        (["cast"], None, "list the precisions"),
        (["load"], ["fp32"], "only when requests.allow includes cast"),
        (["cast"], ["fp12"], "unknown"),
    ],
)
def test_bad_allowances_are_refused(
    allow: list[str], precisions: list[str] | None, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        RequestAllowances.resolve(allow, precisions)


def test_grade_distributed_implies_distribute() -> None:
    assert "distribute" in RequestAllowances.resolve(["load"], None, grade_distributed=True).allow


def test_refusals_name_the_entry() -> None:
    allowances = RequestAllowances.resolve(["load", "cast"], ["fp16"])
    request = Requests.validate(
        {
            "operations": [
                {"action": "cast", "array": "x", "to": "fp16"},
                {"action": "cast", "array": "y", "to": "fp32"},
            ]
        }
    )
    assert allowances.refusal(request) == (
        "operations[1] (cast): this setup does not allow casts to fp32 (requests.precisions: ['fp16'])"
    )
    layout = Requests.validate(
        {"operations": [{"action": "permute", "array": "A", "order": ["i1", "i0"]}]}
    )
    assert (allowances.refusal(layout) or "").startswith(
        "operations[0] (permute): this setup does not allow layout"
    )
    grid = Requests.validate({"startup": {"grid": ["P"]}})
    assert (allowances.refusal(grid) or "").startswith("startup.grid:")
    task_grid = RequestAllowances.resolve(["load", "distribute"], None, grid="task")
    assert "requests.grid: task" in (task_grid.refusal(grid) or "")


def test_actions_narrow_to_the_task() -> None:
    allowances = RequestAllowances.resolve(
        ["load", "cast", "layout", "sparse_format"], ["fp32", "bf16"]
    )
    dense = task_actions(kernels.load_manifest("gemm"), allowances)
    assert "cast" in dense.actions and "permute" in dense.actions and "format" not in dense.actions
    assert dense.precisions == ("fp32", "bf16") and dense.load and not dense.grid
    fp64_only = task_actions(kernels.load_manifest("channel_flow"), allowances)
    assert "cast" not in fp64_only.actions and "zip" in fp64_only.actions
    sparse = task_actions(kernels.load_manifest("spmv"), allowances)
    assert "format" in sparse.actions
    assert RequestActions.from_env(dense.to_env()) == dense
    assert RequestActions.from_env(None) is None


def test_filtered_schema_offers_only_the_actions() -> None:
    schema = json.loads(requests_schema_text())
    offer = RequestActions(actions=("cast",), load=True)
    filtered = offer.filter_schema(schema)
    assert filtered is not None
    variants = filtered["properties"]["operations"]["items"]["oneOf"]
    assert [v["properties"]["action"]["const"] for v in variants] == ["cast"]
    assert "grid" not in filtered["properties"]["startup"]["properties"]
    assert RequestActions().filter_schema(schema) is None


def test_offer_carries_the_cast_precisions() -> None:
    schema = json.loads(requests_schema_text())
    offer = RequestActions(actions=("cast", "permute"), load=True, precisions=("fp32", "fp16"))
    filtered = offer.filter_schema(schema)
    assert filtered is not None
    variants = filtered["properties"]["operations"]["items"]["oneOf"]
    cast = next(v for v in variants if v["properties"]["action"]["const"] == "cast")
    assert cast["properties"]["to"]["enum"] == ["fp32", "fp16"]
    # The shipped schema is left whole.
    assert "bf16" in json.dumps(schema)
    assert offer.to_env() == "cast:fp32|fp16,permute,load"
    assert RequestActions.from_env(offer.to_env()) == offer


def test_prompt_section_states_the_offer() -> None:
    allowances = RequestAllowances.resolve(["load", "cast"], ["fp32"])
    context = build_context(kernels.load_manifest("scaled_add"), allowances)
    assert "fp32 → `float *`" in context.requests_section
    assert "void scaled_add_fp64(" in context.requests_section
    assert (
        build_context(
            kernels.load_manifest("scaled_add"), RequestAllowances.resolve([], None)
        ).requests_section
        == ""
    )


def test_cast_refusal_on_fp64_only_kernels() -> None:
    request = Requests.validate({"operations": [{"action": "cast", "array": "u", "to": "fp32"}]})
    refusal = cast_refusal(request, "channel_flow", fp64_only=True)
    assert refusal is not None and refusal.startswith(
        "operations[0] (cast): channel_flow runs in fp64 only"
    )
    assert cast_refusal(request, "channel_flow", True, ["channel_flow"], "fp32") is None
    assert cast_refusal(request, "scaled_add", fp64_only=False) is None


def test_submission_field() -> None:
    submission = Submission(kernel="scaled_add", source="", requests=CAST)
    assert submission.model_dump()["requests"] == CAST
    assert "requests" not in Submission(kernel="scaled_add", source="").model_dump()
    with pytest.raises(ValidationError, match="operations\\[0\\] \\(cast\\)"):
        Submission(
            kernel="scaled_add",
            source="",
            requests={"operations": [{"action": "cast", "array": "x"}]},
        )
    with pytest.raises(ValidationError, match="extra"):
        Submission(kernel="scaled_add", source="", datatype="fp32")
    schema = Submission.model_json_schema()
    assert "operations" in json.dumps(schema["properties"]["requests"])


def test_adapter_reads_and_writes_like_the_field() -> None:
    text = json.dumps(CAST)
    assert REQUESTS_ADAPTER.validate_python(text) == Requests.validate(CAST)
    assert REQUESTS_ADAPTER.validate_json(text) == Requests.validate(CAST)
    with pytest.raises(ValidationError, match="operations\\[0\\] \\(cast\\)"):
        REQUESTS_ADAPTER.validate_python({"operations": [{"action": "cast", "array": "x"}]})
    request = Requests.validate(CAST)
    compact = json.dumps(json.loads(request.to_json()), separators=(",", ":"))
    assert REQUESTS_ADAPTER.dump_json(request).decode() == compact
    assert REQUESTS_ADAPTER.dump_python(request) == json.loads(request.to_json())
    # An empty request: to_json's "" is null here; Submission leaves it out of its dump.
    assert REQUESTS_ADAPTER.validate_python(None) == Requests()
    assert REQUESTS_ADAPTER.dump_python(Requests()) is None
    assert REQUESTS_ADAPTER.dump_json(Requests()) == b"null"
    assert "operations" in json.dumps(REQUESTS_ADAPTER.json_schema())


def test_recorded_version() -> None:
    request = Requests.validate(CAST)
    text = to_recorded(request)
    assert json.loads(text)["v"] == RECORDED_VERSION
    assert from_recorded(text) == request
    assert from_recorded(request.to_json()) == request  # a row before v1: version 0, same fields
    assert from_recorded("") == Requests()
    assert Requests.from_recorded(text) == request
    with pytest.raises(RequestError, match="newer"):
        from_recorded(json.dumps({**CAST, "v": RECORDED_VERSION + 1}))
