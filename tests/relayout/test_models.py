"""The request models: validation into RequestError naming the entry, the JSON writer, the schema."""

from __future__ import annotations

import json

import jsonschema
import pytest

from relayout import REQUESTS_ADAPTER, RequestError, Requests, requests_schema, requests_schema_text
from relayout.models import ACTIONS, OPERATION_MODELS
from tests.relayout.spec_request import spec_request

SPEC_EXAMPLE = spec_request(["P"])

ONE_OF_EACH = [
    {"action": "cast", "array": "A", "to": "bf16"},
    {"action": "format", "array": "S", "to": "csc"},
    {"action": "distribute", "array": "A", "grid_dim": 0, "digit": "b", "scheme": "cyclic"},
    {"action": "replicate", "array": "x"},
    {"action": "split", "array": "A", "digit": "i0", "parts": "P0", "into": ["b", "o"]},
    {"action": "unsplit", "array": "A", "digits": ["b", "o"], "parts": "P0", "into": "i0"},
    {"action": "block", "array": "A", "digit": "i1", "factor": 4, "into": ["c", "f"]},
    {"action": "unblock", "array": "A", "digits": ["c", "f"], "factor": 4, "into": "i1"},
    {"action": "permute", "array": "A", "order": ["i1", "i0"]},
    {"action": "pad", "array": "A", "digit": "i1", "amount": "N % 8"},
    {"action": "unpad", "array": "A", "digit": "i1", "amount": "N % 8"},
    {"action": "shuffle", "array": "A", "digits": ["i0"], "f": ["i0 ^ 1"], "f_inv": ["i0 ^ 1"]},
    {
        "action": "linear_shuffle",
        "array": "T",
        "digits": ["i0"],
        "bits": [2],
        "matrix": [[1, 1], [0, 1]],
    },
    {"action": "zip", "arrays": ["u", "v"], "into": "uv", "dim": 0},
    {"action": "unzip", "array": "z", "into": ["re", "im"]},
    {"action": "place", "array": "A", "on": "host"},
]


def test_every_action_has_a_model() -> None:
    assert {op["action"] for op in ONE_OF_EACH} == set(ACTIONS) == set(OPERATION_MODELS)
    requests = Requests.validate({"operations": ONE_OF_EACH})
    assert [op.action for op in requests.operations] == [op["action"] for op in ONE_OF_EACH]


def test_round_trip_through_json_text() -> None:
    requests = Requests.validate(SPEC_EXAMPLE)
    text = requests.to_json()
    assert json.loads(text) == SPEC_EXAMPLE
    assert text == json.dumps(json.loads(text), sort_keys=True)
    assert Requests.validate(text) == requests
    assert Requests.validate(text.encode()) == requests


def test_empty_request_writes_nothing() -> None:
    assert Requests().to_json() == ""
    assert Requests.validate({}).to_json() == ""
    assert Requests.validate("").to_json() == ""
    assert Requests.validate({"startup": {"load": []}, "operations": []}).to_json() == ""


def test_defaults_are_left_out() -> None:
    text = Requests.validate(
        {"operations": [{"action": "zip", "arrays": ["u", "v"], "into": "w"}]}
    ).to_json()
    assert text == '{"operations": [{"action": "zip", "arrays": ["u", "v"], "into": "w"}]}'


@pytest.mark.parametrize(
    ("request_obj", "message"),
    [
        (
            {"operations": [{"action": "cast", "array": "A", "to": "fp32"}, {"action": "explode"}]},
            "operations[1] (explode): unknown action 'explode'",
        ),
        ({"operations": [{"array": "A"}]}, "operations[0]: missing 'action'"),
        (
            {"operations": [{"action": "cast", "array": "A", "to": "fp32", "mode": 1}]},
            "operations[0] (cast): unknown field 'mode'; accepted: action, array, to",
        ),
        (
            {"operations": [{"action": "cast", "array": "A", "to": "fp128"}]},
            "operations[0] (cast): to:",
        ),
        (
            {"operations": [{}, {}, {}, {"action": "distribute", "array": "A", "grid_dim": 0}]},
            "operations[0]",
        ),
        (
            {"operations": [{"action": "distribute", "array": "A", "grid_dim": 0}]},
            "operations[0] (distribute): give either dim",
        ),
        (
            {
                "operations": [
                    {
                        "action": "distribute",
                        "array": "A",
                        "grid_dim": 0,
                        "dim": 0,
                        "scheme": "block_cyclic",
                    }
                ]
            },
            "operations[0] (distribute): scheme block_cyclic needs block_size",
        ),
        (
            {
                "operations": [
                    {
                        "action": "block",
                        "array": "A",
                        "digit": "i0",
                        "factor": "N +",
                        "into": ["a", "b"],
                    }
                ]
            },
            "operations[0] (block): factor: expression 'N +': unexpected end of expression at position 3",
        ),
        (
            {
                "operations": [
                    {
                        "action": "block",
                        "array": "A",
                        "digit": "i0",
                        "factor": 2,
                        "into": ["a", "a"],
                    }
                ]
            },
            "operations[0] (block): into must be distinct",
        ),
        (
            {
                "operations": [
                    {
                        "action": "linear_shuffle",
                        "array": "A",
                        "digits": ["i0"],
                        "bits": [2],
                        "matrix": [[1]],
                    }
                ]
            },
            "operations[0] (linear_shuffle): matrix must be 2x2",
        ),
        (
            {
                "operations": [
                    {"action": "shuffle", "array": "A", "digits": ["i0"], "f": ["i0"], "f_inv": []}
                ]
            },
            "operations[0] (shuffle)",
        ),
        ({"startup": {"grid": ["P", "P**2"]}}, "startup.grid[1]: expression 'P**2'"),
        ({"startup": {"cores": 4}}, "startup: unknown field 'cores'; accepted: load, grid"),
        ({"operation": []}, "request: unknown field 'operation'; accepted: startup, operations"),
        ([1, 2], "request: expected an object"),
        ("{not json", "request: not JSON"),
        (
            {"operations": [{"action": "cast", "array": "1A", "to": "fp32"}]},
            "operations[0] (cast): array:",
        ),
        (
            {"operations": [{"action": "pad", "array": "A", "digit": "i0", "amount": True}]},
            "operations[0] (pad)",
        ),
    ],
)
def test_refusals_name_the_entry(request_obj: object, message: str) -> None:
    with pytest.raises(RequestError) as caught:
        Requests.validate(request_obj)
    assert isinstance(caught.value, ValueError)
    assert str(caught.value).startswith(message), str(caught.value)


def test_schema_is_inlined_and_validates_requests() -> None:
    text = requests_schema_text()
    assert "$ref" not in text and "$defs" not in text
    assert text.endswith("\n") and text == requests_schema_text()
    schema = requests_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    validator.validate(SPEC_EXAMPLE)
    validator.validate({"operations": ONE_OF_EACH})
    assert list(validator.iter_errors({"operations": [{"action": "explode"}]}))
    assert list(
        validator.iter_errors(
            {"operations": [{"action": "cast", "array": "A", "to": "fp32", "x": 1}]}
        )
    )


def test_adapter_is_the_model() -> None:
    assert REQUESTS_ADAPTER.validate_python(SPEC_EXAMPLE) == Requests.validate(SPEC_EXAMPLE)


def test_a_format_takes_only_its_own_fields() -> None:
    accepted = Requests.validate(
        {"operations": [{"action": "format", "array": "A", "to": "bcsr", "block_size": [2, 3]}]}
    )
    assert (
        accepted.to_json()
        == '{"operations": [{"action": "format", "array": "A", "block_size": [2, 3], "to": "bcsr"}]}'
    )
    with pytest.raises(
        RequestError,
        match=r"operations\[0\] \(format\): block_size applies only to bcsr; format ell takes no other fields",
    ):
        Requests.validate(
            {"operations": [{"action": "format", "array": "A", "to": "ell", "block_size": 2}]}
        )
