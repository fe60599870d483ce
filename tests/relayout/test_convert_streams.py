"""The streaming conversion paths equal the reference bit for bit: a cast that is only a cast
(widening included) goes through the plain cast library, a zip's whole and an unzip's part through
the stacking kernel, at sizes where the loops split over threads and a run splits into pieces."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from relayout import Requests
from relayout.convert import aligned_empty, compile_program
from relayout.convert.build import Toolchain
from relayout.convert.casts import STREAM_BYTES, convert_plain
from relayout.convert.codegen import STACK_PIECE, Stacking, stacking
from tests.relayout.convert_support.programs import compare_with_reference, random_inputs

SCALAR = Toolchain.from_environment(native=False, extra=("-DRELAYOUT_SCALAR_CASTS",))

# Long enough that a run of the inner extent splits into pieces and the loops go parallel.
LONG = STACK_PIECE * 2 + 5

STREAMS: list[tuple[str, list[dict[str, Any]], dict[str, str], dict[str, int], list[Stacking]]] = [
    (
        "zip last",
        [{"action": "zip", "arrays": ["u", "v"], "into": "uv"}],
        {"u": "fp64[N]:inout", "v": "fp64[N]:out"},
        {"N": LONG},
        [Stacking(1, ("u", "v"))],
    ),
    (
        "zip of three 2-d fp32 arrays, cast",
        [
            {"action": "cast", "array": "u", "to": "fp16"},
            {"action": "cast", "array": "v", "to": "fp16"},
            {"action": "cast", "array": "w", "to": "fp16"},
            {"action": "zip", "arrays": ["u", "v", "w"], "into": "uvw"},
        ],
        {"u": "fp32[M,N]:inout", "v": "fp32[M,N]", "w": "fp32[M,N]:out"},
        {"M": 9, "N": 4001},
        [Stacking(2, ("u", "v", "w"))],
    ),
    (
        "zip first (SoA)",
        [{"action": "zip", "arrays": ["u", "v"], "into": "uv", "dim": 0}],
        {"u": "fp64[M,N]:inout", "v": "fp64[M,N]:inout"},
        {"M": 3, "N": LONG},
        [Stacking(0, ("u", "v"))],
    ),
    (
        "zip in the middle",
        [{"action": "zip", "arrays": ["u", "v"], "into": "uv", "dim": 1}],
        {"u": "fp32[M,N]:inout", "v": "fp32[M,N]"},
        {"M": 5, "N": 7},
        [Stacking(1, ("u", "v"))],
    ),
    (
        "unzip last + cast",
        [
            {"action": "unzip", "array": "q", "into": ["a", "b"], "dim": 1},
            {"action": "cast", "array": "b", "to": "bf16"},
        ],
        {"q": "fp64[N,2]:inout"},
        {"N": LONG},
        [Stacking(1, ("q",), 0), Stacking(1, ("q",), 1)],
    ),
    (
        "unzip first",
        [{"action": "unzip", "array": "q", "into": ["a", "b", "c"], "dim": 0}],
        {"q": "fp32[3,N,M]:inout"},
        {"N": 3, "M": LONG},
        [Stacking(0, ("q",), 0), Stacking(0, ("q",), 1), Stacking(0, ("q",), 2)],
    ),
]


@pytest.mark.parametrize(
    ("operations", "arrays", "sizes", "expected"),
    [case[1:] for case in STREAMS],
    ids=[case[0] for case in STREAMS],
)
def test_stacking_kernels_match_the_reference(
    operations: list[dict[str, Any]],
    arrays: dict[str, str],
    sizes: dict[str, int],
    expected: list[Stacking],
) -> None:
    result = compare_with_reference(operations, arrays, sizes, seed=len(operations))
    program = result["program"]
    found = [stacking(program.layout, pointer) for pointer in program.pointers]
    assert [s for s in found if s is not None] == expected
    for name, restored in result["outputs"].items():
        if not any(op["action"] == "cast" for op in operations):
            assert restored.tobytes() == result["inputs"][name].tobytes(), name


def test_a_blocked_zip_is_no_stacking() -> None:
    program = compile_program(
        {
            "operations": [
                {"action": "zip", "arrays": ["u", "v"], "into": "uv", "dim": 0},
                {"action": "block", "array": "uv", "digit": "i1", "factor": 4, "into": ["b", "f"]},
            ]
        },
        {"u": "fp64[N]:inout", "v": "fp64[N]"},
    )
    assert [stacking(program.layout, p) for p in program.pointers] == [None]


@pytest.mark.parametrize("sizes", [{"N": 300, "M": 129}, {"N": 3, "M": 5}], ids=["large", "tiny"])
@pytest.mark.parametrize(
    ("source", "to"), [("fp32", "fp64"), ("fp64", "fp32"), ("fp64", "bf16"), ("fp32", "fp8_e5m2")]
)
def test_a_cast_alone_is_plain_both_ways(source: str, to: str, sizes: dict[str, int]) -> None:
    operations = [{"action": "cast", "array": "A", "to": to}]
    arrays = {"A": f"{source}[N,M]:inout", "B": f"{source}[N]"}
    result = compare_with_reference(operations, arrays, sizes)
    program = result["program"]
    steps = program._steps(sizes)
    assert [step.plain for step in steps] == [True, True]
    if to == "fp64":
        assert result["outputs"]["A"].tobytes() == result["inputs"]["A"].tobytes()


def test_buffers_are_refilled_in_place_on_the_plain_and_stacking_paths() -> None:
    request = Requests.validate(
        {
            "operations": [
                {"action": "cast", "array": "x", "to": "fp64"},
                {"action": "zip", "arrays": ["u", "v"], "into": "uv"},
            ]
        }
    )
    arrays = {"x": "fp32[N]:inout", "u": "fp32[N]", "v": "fp32[N]:out"}
    program = compile_program(request, arrays)
    first = program.convert_in(random_inputs(arrays, {"N": 50}, seed=1))
    again = random_inputs(arrays, {"N": 50}, seed=2)
    second = program.convert_in(again, buffers=first)
    assert all(second[name] is first[name] for name in ("x", "uv"))
    assert second["x"].tobytes() == again["x"].astype(np.float64).tobytes()
    assert second["uv"].tobytes() == np.stack([again["u"], again["v"]], axis=1).tobytes()


def test_the_streaming_widening_past_the_cache_gives_the_scalar_bits() -> None:
    # Every float32 bit pattern class (NaNs with payloads, subnormals, infinities) at a length
    # past STREAM_BYTES, an odd tail and an unaligned start included.
    count = STREAM_BYTES // 12 + 1013
    bits = np.random.default_rng(5).integers(0, 2**32, count, dtype=np.uint64).astype(np.uint32)
    values = bits.view(np.float32)
    for start in (0, 3):
        part = values[start:]
        wide = aligned_empty(part.size, np.float64)
        scalar = aligned_empty(part.size, np.float64)
        convert_plain(part, wide)
        convert_plain(part, scalar, SCALAR)
        assert wide.view(np.uint64).tobytes() == scalar.view(np.uint64).tobytes()
        finite = np.isfinite(part)
        assert np.array_equal(wide[finite], part[finite].astype(np.float64))


@pytest.mark.parametrize(("source", "to"), [("fp32", "fp64"), ("fp64", "fp64")])
def test_a_transpose_past_the_cache_writes_the_same_cells(source: str, to: str) -> None:
    # Past STREAM_BYTES the rows of whole cache lines go out as streaming stores; the odd
    # extents leave partial tiles and rows whose lines are not aligned.
    operations: list[dict[str, Any]] = [{"action": "permute", "array": "A", "order": ["i1", "i0"]}]
    if to != source:
        operations.append({"action": "cast", "array": "A", "to": to})
    per_cell = 4 + 8 if source == "fp32" else 16
    side = int((STREAM_BYTES // per_cell) ** 0.5) + 9
    sizes = {"N": side, "M": side - 3}
    result = compare_with_reference(operations, {"A": f"{source}[N,M]:inout"}, sizes)
    assert result["outputs"]["A"].tobytes() == result["inputs"]["A"].tobytes()


@pytest.mark.parametrize(
    "order", [["i1", "i0", "i2"], ["i0", "i2", "i1"], ["i2", "i1", "i0"]], ids=str
)
def test_three_dimensional_permutations_over_several_tiles(order: list[str]) -> None:
    # Runs along the last dimension on both sides, a transpose of it under an outer digit, and
    # neither: each tile shape, with tiles cut at the edges.
    operations: list[dict[str, Any]] = [{"action": "permute", "array": "A", "order": order}]
    sizes = {"N": 5, "M": 37, "K": 1100}
    result = compare_with_reference(operations, {"A": "fp32[N,M,K]:inout"}, sizes)
    assert result["outputs"]["A"].tobytes() == result["inputs"]["A"].tobytes()
