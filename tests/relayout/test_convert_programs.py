"""Generated kernels equal the numpy reference engine bit for bit, both ways, for fixed and random
programs; dead cells are zero; convert_out(convert_in(x)) == x at fp64; errors say what was wrong."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from relayout import RequestError, Requests
from relayout.algebra.state import BIJECTION_CHECK_LIMIT
from relayout.check import check_requests
from relayout.convert import ConversionError, Group, compile_program
from relayout.convert.program import ConversionTimings
from tests.relayout.convert_support.programs import as_inout, compare_with_reference, random_inputs
from tests.relayout.test_properties import programs

PERMUTE = {"action": "permute", "array": "A", "order": ["i1", "i0"]}

FIXED: list[tuple[str, list[dict[str, Any]], dict[str, str], dict[str, int]]] = [
    ("transpose", [PERMUTE], {"A": "fp64[N,M]:inout"}, {"N": 37, "M": 29}),
    (
        "transpose 3-d cast fp16",
        [
            {"action": "cast", "array": "A", "to": "fp16"},
            {"action": "permute", "array": "A", "order": ["i2", "i0", "i1"]},
        ],
        {"A": "fp64[N,M,3]:inout"},
        {"N": 19, "M": 11},
    ),
    (
        "block + cast bf16",
        [
            {"action": "cast", "array": "A", "to": "bf16"},
            {"action": "block", "array": "A", "digit": "i1", "factor": 3, "into": ["b", "f"]},
        ],
        {"A": "fp64[N,M]:inout"},
        {"N": 5, "M": 7},
    ),
    (
        "split + permute",
        [
            {"action": "split", "array": "A", "digit": "i0", "parts": 3, "into": ["b", "o"]},
            {"action": "permute", "array": "A", "order": ["o", "i1", "b"]},
        ],
        {"A": "fp64[N,M]:inout"},
        {"N": 7, "M": 4},
    ),
    (
        "pad + cast fp8_e4m3",
        [
            {"action": "pad", "array": "A", "digit": "i1", "amount": 3},
            {"action": "cast", "array": "A", "to": "fp8_e4m3"},
        ],
        {"A": "fp64[N,M]:inout"},
        {"N": 7, "M": 4},
    ),
    (
        "rotate shuffle + cast fp8_e5m2",
        [
            {
                "action": "shuffle",
                "array": "A",
                "digits": ["i0"],
                "f": ["(i0 + 3) % N"],
                "f_inv": ["(i0 + N - 3) % N"],
            },
            {"action": "cast", "array": "A", "to": "fp8_e5m2"},
        ],
        {"A": "fp64[N,M]:inout"},
        {"N": 7, "M": 4},
    ),
    (
        "xor swizzle",
        [
            {"action": "block", "array": "A", "digit": "i1", "factor": 8, "into": ["b", "f"]},
            {
                "action": "linear_shuffle",
                "array": "A",
                "digits": ["f"],
                "bits": [3],
                "matrix": [[1, 1, 0], [0, 1, 0], [0, 0, 1]],
            },
        ],
        {"A": "fp64[N,M]:inout"},
        {"N": 7, "M": 16},
    ),
    (
        "zip stacked",
        [{"action": "zip", "arrays": ["u", "v"], "into": "uv"}],
        {"u": "fp64[N]:inout", "v": "fp64[N]"},
        {"N": 7},
    ),
    (
        "zip struct (mixed types)",
        [
            {"action": "cast", "array": "u", "to": "fp32"},
            {"action": "cast", "array": "w", "to": "fp8_e4m3"},
            {"action": "zip", "arrays": ["u", "v", "w"], "into": "uvw"},
        ],
        {"u": "fp64[N]:inout", "v": "fp64[N]:inout", "w": "fp64[N]:out"},
        {"N": 9},
    ),
    (
        "AoSoA: zip dim 0 + block + permute",
        [
            {"action": "zip", "arrays": ["u", "v"], "into": "uv", "dim": 0},
            {"action": "block", "array": "uv", "digit": "i1", "factor": 4, "into": ["b", "f"]},
            {"action": "permute", "array": "uv", "order": ["b", "i0", "f"]},
        ],
        {"u": "fp64[N]:inout", "v": "fp64[N]"},
        {"N": 7},
    ),
    (
        "unzip along dim + cast",
        [
            {"action": "unzip", "array": "q", "into": ["a", "b", "c"], "dim": 0},
            {"action": "cast", "array": "b", "to": "fp16"},
        ],
        {"q": "fp64[3,N]:inout"},
        {"N": 7},
    ),
    (
        "unzip complex + cast",
        [
            {"action": "unzip", "array": "z", "into": ["re", "im"]},
            {"action": "cast", "array": "im", "to": "fp32"},
        ],
        {"z": "complex128[N]:inout"},
        {"N": 7},
    ),
    (
        "complex permute",
        [{"action": "permute", "array": "z", "order": ["i1", "i0"]}],
        {"z": "complex128[N,2]:inout"},
        {"N": 5},
    ),
    (
        "block then unblock",
        [
            {"action": "block", "array": "A", "digit": "i0", "factor": 2, "into": ["b", "f"]},
            {"action": "unblock", "array": "A", "digits": ["b", "f"], "factor": 2, "into": "x"},
        ],
        {"A": "fp64[N,M]:inout"},
        {"N": 7, "M": 3},
    ),
    (
        "split then unsplit",
        [
            {"action": "split", "array": "A", "digit": "i0", "parts": 3, "into": ["b", "f"]},
            {"action": "unsplit", "array": "A", "digits": ["b", "f"], "parts": 3, "into": "x"},
        ],
        {"A": "fp64[N,M]:inout"},
        {"N": 7, "M": 3},
    ),
    (
        "fp32 problem to fp16",
        [{"action": "cast", "array": "A", "to": "fp16"}],
        {"A": "fp32[N]:inout"},
        {"N": 77},
    ),
    (
        "fp32 problem widened to fp64 and transposed",
        [{"action": "cast", "array": "A", "to": "fp64"}, PERMUTE],
        {"A": "fp32[N,N]:inout"},
        {"N": 9},
    ),
    (
        "plain cast",
        [{"action": "cast", "array": "A", "to": "bf16"}],
        {"A": "fp64[N,M]:inout"},
        {"N": 33, "M": 5},
    ),
    ("untouched array", [], {"A": "fp64[N]:inout", "B": "int32[N]"}, {"N": 4}),
    ("empty extent", [PERMUTE], {"A": "fp64[N,M]:inout"}, {"N": 0, "M": 3}),
]


# Every test over the fixed programs (here and in test_convert_device.py) takes them this way.
FIXED_PROGRAMS = pytest.mark.parametrize(
    ("operations", "arrays", "sizes"), [case[1:] for case in FIXED], ids=[case[0] for case in FIXED]
)


@FIXED_PROGRAMS
def test_fixed_programs_match_the_reference(
    operations: list[dict[str, Any]], arrays: dict[str, str], sizes: dict[str, int]
) -> None:
    compare_with_reference(operations, arrays, sizes)


def narrows(operations: list[dict[str, Any]]) -> bool:
    return any(op["action"] == "cast" for op in operations)


def assert_round_trip(result: dict[str, Any], operations: list[dict[str, Any]]) -> None:
    """At fp64 every logical cell is live exactly once, so the way out restores the input."""
    if narrows(operations):
        return
    for name, restored in result["outputs"].items():
        assert restored.tobytes() == result["inputs"][name].tobytes(), name


@st.composite
def with_casts(draw: st.DrawFn) -> tuple[list[dict[str, Any]], dict[str, str], dict[str, int]]:
    operations, arrays, sizes = draw(programs())
    # The language's strategy casts to fp32/fp16/bf16 only; widen the draw to the fp8 types.
    for op in operations:
        if op["action"] == "cast":
            op["to"] = draw(st.sampled_from(["fp32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2"]))
    return operations, as_inout(arrays), sizes


def matches_the_reference(
    program: tuple[list[dict[str, Any]], dict[str, str], dict[str, int]], seed: int
) -> None:
    operations, arrays, sizes = program
    result = compare_with_reference(operations, arrays, sizes, seed=seed)
    assert_round_trip(result, operations)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(with_casts(), st.integers(0, 2**16))
def test_random_programs_match_the_reference(
    program: tuple[list[dict[str, Any]], dict[str, str], dict[str, int]], seed: int
) -> None:
    matches_the_reference(program, seed)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(with_casts(), st.integers(0, 2**16))
def test_many_random_programs_match_the_reference(
    program: tuple[list[dict[str, Any]], dict[str, str], dict[str, int]], seed: int
) -> None:
    matches_the_reference(program, seed)


def test_round_trip_restores_every_cell_at_fp64() -> None:
    operations = [
        {"action": "split", "array": "A", "digit": "i0", "parts": 4, "into": ["b", "o"]},
        {"action": "block", "array": "A", "digit": "i1", "factor": 3, "into": ["c", "f"]},
        {"action": "pad", "array": "A", "digit": "f", "amount": 2},
        {"action": "permute", "array": "A", "order": ["c", "o", "b", "f"]},
    ]
    result = compare_with_reference(operations, {"A": "fp64[N,M]:inout"}, {"N": 10, "M": 7})
    assert_round_trip(result, operations)
    assert result["buffers"]["A"].shape == (3, 3, 4, 5)


def test_a_new_size_does_not_rebuild_and_timings_are_recorded() -> None:
    request = Requests.validate({"operations": [PERMUTE]})
    program = compile_program(request, {"A": "fp64[N,M]:inout"})
    assert program.timings == ConversionTimings(0, 0)
    library = program.library._name  # type: ignore[attr-defined]
    for n, m in [(3, 4), (40, 17)]:
        values = random_inputs({"A": "fp64[N,M]"}, {"N": n, "M": m}, seed=n)["A"]
        buffers = program.convert_in({"A": values})  # sizes inferred from the shape
        assert buffers["A"].tobytes() == np.ascontiguousarray(values.T).tobytes()
        restored = np.empty_like(values)
        program.convert_out(buffers, {"A": restored})
        assert restored.tobytes() == values.tobytes()
        assert program.timings.convert_in_ns > 0 and program.timings.convert_out_ns > 0
    again = compile_program(request, {"A": "fp64[N,M]:inout"})
    assert again.library._name == library  # type: ignore[attr-defined]


def test_buffers_are_refilled_in_place() -> None:
    program = compile_program(
        {"operations": [{"action": "cast", "array": "A", "to": "fp32"}, PERMUTE]},
        {"A": "fp64[N,N]:inout"},
    )
    first = program.convert_in({"A": np.ones((8, 8))})
    second = program.convert_in({"A": np.full((8, 8), 2.0)}, buffers=first)
    assert second["A"] is first["A"] and (second["A"] == 2).all()


def test_group_regroups_zip_and_unzip() -> None:
    group = Group(
        {
            "operations": [
                {"action": "zip", "arrays": ["u", "v"], "into": "uv"},
                {"action": "unzip", "array": "q", "into": ["q0", "q1"], "dim": 1},
            ]
        },
        {"u": "fp64[N]:inout", "v": "fp64[N]", "q": "fp64[N,2]:inout"},
    )
    assert group.regrouped == ("uv", "q0", "q1")
    u, v, q = np.arange(5.0), -np.arange(5.0), np.arange(10.0).reshape(5, 2)
    parts = group.fill({"u": u, "v": v, "q": q})
    assert np.array_equal(parts["uv"], np.stack([u, v], axis=1))
    assert np.array_equal(parts["q1"], q[:, 1])
    parts["q1"][:] = 7
    new_u, new_q = np.zeros(5), np.zeros((5, 2))
    group.drain(parts, {"u": new_u, "q": new_q})
    assert np.array_equal(new_u, u) and np.array_equal(new_q[:, 1], np.full(5, 7.0))


def test_errors_name_what_was_wrong() -> None:
    program = compile_program({"operations": [PERMUTE]}, {"A": "fp64[N,M]:inout"})
    with pytest.raises(
        ValueError, match=r"inputs\['A'\]: expected float64\[3, 4\] .* got float32\[3, 4\]"
    ):
        program.convert_in({"A": np.zeros((3, 4), np.float32)}, sizes={"N": 3, "M": 4})
    with pytest.raises(ValueError, match=r"inputs: missing array 'A'"):
        program.convert_in({}, sizes={"N": 3, "M": 4})
    with pytest.raises(ValueError, match=r"outputs: 'B' is not one of the arrays \['A'\]"):
        program.convert_out({}, {"B": np.zeros(3)}, sizes={"N": 3, "M": 4})
    with pytest.raises(ValueError, match="target 'gpu': expected 'host' or 'device'"):
        compile_program({"operations": []}, {"A": "fp64[N]"}, target="gpu")


def test_an_index_outside_the_array_is_skipped_and_reported() -> None:
    # i0 + 1 is no bijection of 0..N-1: the last row would read past the array.
    shifted = {
        "action": "shuffle",
        "array": "A",
        "digits": ["i0"],
        "f": ["i0 - 1"],
        "f_inv": ["i0 + 1"],
    }
    program = compile_program({"operations": [shifted, PERMUTE]}, {"A": "fp64[N,M]:inout"})
    # Where the sized check enumerates the shuffle, it refuses before any conversion runs.
    with pytest.raises(RequestError, match="not inverse bijections"):
        program.convert_in({"A": np.ones((4, 3))})
    # Above BIJECTION_CHECK_LIMIT cells the check is skipped and the kernels' bounds checks catch it.
    rows = BIJECTION_CHECK_LIMIT + 1
    with pytest.raises(
        ConversionError, match=r"pointer 'A' \(convert_in\): 3 cells had a logical index outside"
    ):
        program.convert_in({"A": np.ones((rows, 3))})


def test_device_target_without_cupy_says_why() -> None:
    try:
        import cupy  # type: ignore[import-not-found]  # noqa: F401
    except ImportError:
        with pytest.raises(RuntimeError, match=r'target="device" needs cupy'):
            compile_program({"operations": [PERMUTE]}, {"A": "fp64[N,M]"}, target="device")
    else:
        pytest.skip("cupy is installed: the device tests in test_convert_device.py cover it")


def test_sizes_the_sized_check_refuses_are_refused_before_converting() -> None:
    requests = Requests.validate(
        {
            "operations": [
                {"action": "split", "array": "A", "digit": "i0", "parts": 4, "into": ["p", "off"]},
                {"action": "block", "array": "A", "digit": "off", "factor": 2, "into": ["c", "f"]},
            ]
        }
    )
    refusal = check_requests(requests, {"A": "fp64[N]:inout"}, {"N": 12}).refusal
    assert refusal is not None and "does not divide the extent 3 of off" in refusal
    program = compile_program(requests, {"A": "fp64[N]:inout"})
    with pytest.raises(RequestError) as caught:
        program.convert_in({"A": np.zeros(12)})
    assert str(caught.value) == refusal
    with pytest.raises(RequestError):
        program.convert_out({"A": np.zeros(16)}, {"A": np.zeros(12)})
    buffers = program.convert_in({"A": np.arange(16.0)})
    out = np.zeros(16)
    program.convert_out(buffers, {"A": out})
    assert np.array_equal(out, np.arange(16.0))


def test_a_program_compiled_at_sizes_lowers_again_at_others() -> None:
    # Lowered at N=8 the block's extents are constants (2, 4); at N=10 they are (3, 4), and no
    # element may be dropped.
    block = {"action": "block", "array": "A", "digit": "i0", "factor": 4, "into": ["b", "f"]}
    program = compile_program(
        Requests.validate({"operations": [block]}), {"A": "fp64[N]:inout"}, sizes={"N": 8}
    )
    for n in (8, 10, 13):
        values = np.arange(n, dtype=np.float64) + 1
        buffers = program.convert_in({"A": values}, {"N": n})
        assert buffers["A"].shape == (-(-n // 4), 4)
        restored = np.zeros(n)
        program.convert_out(buffers, {"A": restored}, {"N": n})
        assert restored.tobytes() == values.tobytes()
        assert program.timings.convert_in_ns > 0
