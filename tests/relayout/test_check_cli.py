"""Requests.check, the relayout command (schema, check, examples) and docs/layout.md's examples."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from relayout import ArraySpec, RequestError, Requests, parse_arrays, requests_schema_text
from relayout.check import check_requests
from relayout.cli import main, read_examples, run_example
from relayout.distribution import plan_requests
from tests.relayout.spec_request import spec_request

ROOT = Path(__file__).resolve().parents[2]
LAYOUT_DOC = ROOT / "docs" / "layout.md"
SPEC_PLAN = {
    "grid": [2, 2],
    "arrays": {
        "A": {
            "axes": [
                {"grid_dim": 0, "scheme": "block_cyclic", "block_size": 32},
                {"grid_dim": None},
            ],
            "location": "device",
        },
        "x": {"replicated": True},
    },
}
SPEC_REQUEST = spec_request(["root(P, 2)", "root(P, 2)"])


def test_array_specs() -> None:
    spec = ArraySpec.parse("fp64[N,N]:inout")
    assert (spec.dtype, spec.extents, spec.intent, spec.sparse, spec.index) == (
        "fp64",
        ("N", "N"),
        "inout",
        None,
        False,
    )
    assert ArraySpec.parse("csr:fp64[M,N]").sparse == "csr"
    assert ArraySpec.parse("index:int64[nnz]").index
    assert ArraySpec.parse({"dtype": "fp32", "extents": ["N+1"]}).extents == ("N + 1",)
    assert str(ArraySpec.parse("fp64[ N , (N+3)//4 ]:out")) == "fp64[N,(N + 3) // 4]:out"
    parsed = parse_arrays({"A": "fp64[N]", "B": ArraySpec.parse("fp32[N]"), "C": {"dtype": "int8"}})
    assert list(parsed) == ["A", "B", "C"]
    for bad, words in [
        ("fp128[N]", "unknown dtype"),
        ("fp64[N]:rw", "intent"),
        ("foo:fp64[N]", "unknown prefix"),
        ("fp64[N+]", "extent"),
        ("index:fp64[N]", "integer dtype"),
    ]:
        with pytest.raises(ValueError, match=words):
            ArraySpec.parse(bad)


def test_check_accepts_with_the_plan_in_the_spec_shape() -> None:
    answer = check_requests(
        Requests.validate(SPEC_REQUEST), {"A": "fp64[N,N]", "x": "fp64[N]"}, {"N": 128}, ranks=4
    )
    data = answer.to_dict()
    assert data["accepted"] is True and "refusal" not in data
    assert data["plan"] == SPEC_PLAN
    assert data["arrays"]["A"] == {
        "dtype": "fp32",
        "extents": ["d0", "d1"],
        "declaration": "const float *restrict A",
    }
    # Exactly the spec's text, key order included.
    assert json.dumps(answer.plan.model_dump(mode="json") if answer.plan else None) == json.dumps(
        SPEC_PLAN
    )


def test_check_describes_zips_and_unzips() -> None:
    request = {
        "operations": [
            {"action": "cast", "array": "u", "to": "fp32"},
            {"action": "zip", "arrays": ["u", "v"], "into": "uv"},
            {"action": "zip", "arrays": ["a", "b"], "into": "ab", "dim": 0},
            {"action": "unzip", "array": "z", "into": ["re", "im"]},
        ]
    }
    arrays = {
        "u": "fp64[N]:inout",
        "v": "fp64[N]",
        "a": "fp32[N,M]",
        "b": "fp32[N,M]",
        "z": "complex64[N]",
    }
    data = check_requests(Requests.validate(request), arrays).to_dict()
    assert data["arrays"]["uv"] == {
        "dtype": "struct",
        "extents": ["d0"],
        "declaration": "relayout_zip_uv *restrict uv",
        "typedef": "typedef struct { float u; double v; } relayout_zip_uv;",
        "zips": ["u", "v"],
        "struct": {"u": "fp32", "v": "fp64"},
    }
    assert data["arrays"]["ab"] == {
        "dtype": "fp32",
        "extents": ["2", "d0", "d1"],
        "declaration": "const float *restrict ab",
        "zips": ["a", "b"],
        "dim": 0,
    }
    assert data["arrays"]["re"] == {
        "dtype": "fp32",
        "extents": ["d0"],
        "declaration": "const float *restrict re",
        "unzips": "z",
    }
    assert list(data["arrays"]) == ["uv", "ab", "re", "im"]


def test_check_refuses_and_raises_on_malformed() -> None:
    answer = check_requests(
        Requests.validate({"operations": [{"action": "cast", "array": "B", "to": "fp32"}]}),
        {"A": "fp64[N]"},
    )
    assert answer.to_dict() == {
        "accepted": False,
        "refusal": "operations[0] (cast): unknown array 'B'; arrays now: A",
    }
    with pytest.raises(RequestError):
        Requests.validate({"operations": [{"action": "nope"}]})


def test_grid_at() -> None:
    requests = Requests.validate({"startup": {"grid": ["root(P, 2)", "root(P, 2)"]}})
    assert requests.grid_at(16) == (4, 4)
    with pytest.raises(RequestError, match=r"startup.grid\[0\]: 'root\(P, 2\)' at P = 8"):
        requests.grid_at(8)
    with pytest.raises(RequestError, match="multiply to 4, not P = 5"):
        Requests.validate({"startup": {"grid": ["2", "2"]}}).grid_at(5)
    with pytest.raises(RequestError, match="at least 1"):
        Requests.validate({"startup": {"grid": ["P - 4", "1"]}}).grid_at(4)
    with pytest.raises(RequestError, match="over P only"):
        Requests.validate({"startup": {"grid": ["N"]}}).grid_at(4)
    assert Requests.validate({"startup": {"grid": ["P // 2", 2]}}).grid_at(8) == (4, 2)


def test_from_plan_writes_the_short_form() -> None:
    requests = Requests.from_plan(SPEC_PLAN)
    assert requests.startup.grid == [2, 2]
    assert [op.action for op in requests.operations] == ["distribute", "place", "replicate"]
    assert (
        plan_requests(requests, {"A": "fp64[N,N]", "x": "fp64[N]"}, {"N": 64}, 4).model_dump(
            mode="json"
        )
        == SPEC_PLAN
    )


def write_request(tmp_path: Path, request: object, name: str) -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(request))
    return str(path)


def test_cli_check_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    accepted = write_request(tmp_path, SPEC_REQUEST, "accepted")
    assert (
        main(
            [
                "check",
                accepted,
                "--array",
                "A=fp64[N,N]:inout",
                "--array",
                "x=fp64[N]",
                "--size",
                "N=64",
                "--ranks",
                "4",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["accepted"] and out["plan"] == SPEC_PLAN

    refused = write_request(
        tmp_path, {"operations": [{"action": "cast", "array": "A", "to": "fp64"}]}, "refused"
    )
    assert main(["check", refused, "--array", "A=fp64[N]"]) == 1
    captured = capsys.readouterr()
    assert json.loads(captured.out) == {
        "accepted": False,
        "refusal": "operations[0] (cast): A already is fp64, its problem dtype; cast to another precision or drop the cast",
    }
    assert "operations[0] (cast)" in captured.err

    malformed = write_request(
        tmp_path, {"operations": [{"action": "cast", "array": "A"}]}, "malformed"
    )
    assert main(["check", malformed, "--array", "A=fp64[N]"]) == 2
    assert "operations[0] (cast): to: field required" in capsys.readouterr().err

    assert main(["check", accepted, "--array", "A=fp99[N]"]) == 2
    assert "unknown dtype" in capsys.readouterr().err


def test_cli_schema(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 0
    assert capsys.readouterr().out == requests_schema_text()


def test_console_script_runs() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "relayout.cli", "schema"], capture_output=True, text=True, check=True
    )
    assert result.stdout == requests_schema_text()


def test_the_documented_examples_behave_as_documented() -> None:
    examples = read_examples(LAYOUT_DOC.read_text())
    assert len(examples) >= 8
    for example in examples:
        answer, matches = run_example(example)
        assert matches, f"{example.title} (docs/layout.md line {example.line}): {answer.refusal}"
    assert any(e.expect != "accepted" for e in examples) and any(e.ranks for e in examples)


def test_the_documented_extents_are_what_check_says() -> None:
    # The prose after the first example states its pointers; keep it true.
    example = read_examples(LAYOUT_DOC.read_text())[0]
    answer, _ = run_example(example)
    assert answer.arrays is not None
    assert (
        answer.arrays["A"].extents == ["d1", "d0"]
        and answer.arrays["A"].declaration == "double *restrict A"
    )
    assert answer.arrays["B"].extents == ["d0", "(d1 + 3) // 4", "4"]
    assert "`[d0][(d1 + 3) // 4][4]`" in LAYOUT_DOC.read_text()


def test_the_documented_struct_is_what_check_says() -> None:
    # The prose after the mixed-zip example states its typedef and pointer; keep it true.
    example = next(e for e in read_examples(LAYOUT_DOC.read_text()) if "mixed zip" in e.title)
    answer, _ = run_example(example)
    assert answer.arrays is not None
    uvw = answer.arrays["uvw"]
    text = LAYOUT_DOC.read_text()
    assert f"gives `{uvw.typedef}` and the pointer\n`{uvw.declaration}`." in text


def test_cli_examples(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["examples", str(LAYOUT_DOC)]) == 0
    out = capsys.readouterr().out
    assert "not as documented" in out and ", 0 not as documented" in out
    assert "relayout_zip_uvw *restrict uvw" in out


def test_check_carries_the_signature_when_asked() -> None:
    request = Requests.validate({"operations": [{"action": "cast", "array": "u", "to": "fp16"}]})
    answer = check_requests(
        request,
        {"u": "fp64[N]:inout", "v": "fp64[N]"},
        kernel="k_fp64",
        scalars=[("N", "int64"), ("alpha", "fp64")],
    )
    assert answer.signature == (
        "void k_fp64(_Float16 *restrict u, const double *restrict v, int64_t N, double alpha, "
        "void *workspace, int64_t workspace_bytes);"
    )
    assert (
        "signature" not in check_requests(request, {"u": "fp64[N]:inout", "v": "fp64[N]"}).to_dict()
    )
