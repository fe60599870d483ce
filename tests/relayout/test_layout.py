"""The digit algebra on worked cases: what each operation does to the cells, and every refusal."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

from relayout import RequestError, Requests, StructType, lower_single_node
from relayout.algebra.digits import gf2_inverse
from relayout.check import check_requests
from relayout.distribution import plan_requests

SQUARE = {"A": "fp64[N,N]:inout"}


def ops(*operations: dict[str, Any], grid: list[Any] | None = None) -> dict[str, Any]:
    request: dict[str, Any] = {"operations": list(operations)}
    if grid:
        request["startup"] = {"grid": grid}
    return request


def gathered(
    request: dict[str, Any], arrays: dict[str, str], sizes: dict[str, int], pointer: str
) -> np.ndarray:
    layout = lower_single_node(request, arrays)
    extents = [int(e.evaluate(sizes)) for e in layout.pointer(pointer).extents]
    return layout.gather_indices(pointer, sizes)[None].reshape(extents)


def refusal(
    request: dict[str, Any],
    arrays: dict[str, str],
    sizes: dict[str, int] | None = None,
    ranks: int | None = None,
) -> str:
    answer = check_requests(Requests.validate(request), arrays, sizes, ranks)
    assert not answer.accepted
    assert answer.refusal is not None
    return answer.refusal


def test_permute_transposes() -> None:
    result = gathered(
        ops({"action": "permute", "array": "A", "order": ["i1", "i0"]}), SQUARE, {"N": 3}, "A"
    )
    assert result.tolist() == np.arange(9).reshape(3, 3).T.tolist()


def test_block_of_the_outermost_digit_pads_with_dead_cells() -> None:
    request = ops({"action": "block", "array": "x", "digit": "i0", "factor": 4, "into": ["c", "f"]})
    result = gathered(request, {"x": "fp32[N]"}, {"N": 6}, "x")
    assert result.tolist() == [[0, 1, 2, 3], [4, 5, -1, -1]]


def test_split_makes_balanced_bands() -> None:
    request = ops({"action": "split", "array": "x", "digit": "i0", "parts": 4, "into": ["b", "o"]})
    result = gathered(request, {"x": "fp32[N]"}, {"N": 10}, "x")
    bands = [list(band) for band in np.array_split(np.arange(10), 4)]
    assert [[v for v in row if v >= 0] for row in result.tolist()] == [
        [int(v) for v in b] for b in bands
    ]
    assert result.tolist() == [[0, 1, 2], [3, 4, 5], [6, 7, -1], [8, 9, -1]]


def test_pad_and_unpad() -> None:
    request = ops({"action": "pad", "array": "A", "digit": "i1", "amount": 2})
    assert gathered(request, SQUARE, {"N": 2}, "A").tolist() == [[0, 1, -1, -1], [2, 3, -1, -1]]
    undone = ops(
        {"action": "pad", "array": "A", "digit": "i1", "amount": 2},
        {"action": "unpad", "array": "A", "digit": "i1", "amount": 2},
    )
    pointer = lower_single_node(undone, SQUARE).pointer("A")
    assert [str(e) for e in pointer.extents] == ["N", "N"]
    assert pointer.cells[0].live == ()


def test_shuffle_stores_f_inv() -> None:
    request = ops(
        {
            "action": "shuffle",
            "array": "x",
            "digits": ["i0"],
            "f": ["(i0 + 1) % N"],
            "f_inv": ["(i0 + N - 1) % N"],
        }
    )
    # Stored cell p holds logical cell f_inv(p): logical 0 goes to stored f(0) = 1.
    assert gathered(request, {"x": "fp64[N]"}, {"N": 4}, "x").tolist() == [3, 0, 1, 2]


def test_linear_shuffle_bit_convention() -> None:
    # Two 1-bit digits a (first, most significant) and b: stored = M @ logical, M = [[1, 0], [1, 1]]:
    # stored a = a, stored b = a ^ b. So logical (a, b) = (1, 0) is stored at (1, 1).
    request = ops(
        {
            "action": "linear_shuffle",
            "array": "T",
            "digits": ["i0", "i1"],
            "bits": [1, 1],
            "matrix": [[1, 0], [1, 1]],
        }
    )
    result = gathered(request, {"T": "fp32[2,2]"}, {}, "T")
    stored_of = {}
    for a, b in itertools.product(range(2), repeat=2):
        stored_of[(a, b)] = (a, a ^ b)
    for (a, b), (sa, sb) in stored_of.items():
        assert result[sa, sb] == a * 2 + b


def test_linear_shuffle_matches_a_direct_gf2_product() -> None:
    rng = np.random.default_rng(5)
    bits = [2, 3]
    total = sum(bits)
    while True:
        matrix = rng.integers(0, 2, size=(total, total))
        if gf2_inverse(matrix.tolist()) is not None:
            break
    request = ops(
        {
            "action": "linear_shuffle",
            "array": "T",
            "digits": ["i0", "i1"],
            "bits": bits,
            "matrix": matrix.tolist(),
        }
    )
    result = gathered(request, {"T": "fp32[4,8]"}, {}, "T")
    for i0, i1 in itertools.product(range(4), range(8)):
        logical = [(i0 >> 1) & 1, i0 & 1, (i1 >> 2) & 1, (i1 >> 1) & 1, i1 & 1]
        stored = (matrix @ np.array(logical)) % 2
        s0 = stored[0] * 2 + stored[1]
        s1 = stored[2] * 4 + stored[3] * 2 + stored[4]
        assert result[s0, s1] == i0 * 8 + i1


def test_struct_matches_numpy_aligned_dtype() -> None:
    for members in [
        (("u", "fp32"), ("v", "fp64")),
        (("a", "fp16"), ("b", "int64"), ("c", "int8")),
        (("a", "bf16"), ("b", "fp8_e4m3"), ("c", "complex128"), ("d", "fp32")),
        (("a", "int8"), ("b", "complex64")),
    ]:
        struct = StructType(members)
        dtype = struct.numpy_dtype()
        assert struct.itemsize == dtype.itemsize
        assert struct.offsets == tuple(dtype.fields[name][1] for name, _ in members)
    assert (
        StructType((("u", "fp32"), ("v", "fp16"))).c_typedef("relayout_zip_uv")
        == "typedef struct { float u; uint16_t v; } relayout_zip_uv;"
    )


def test_zip_stacks_and_unzip_gives_it_back() -> None:
    arrays = {"u": "fp64[N]", "v": "fp64[N]:out"}
    stacked = ops({"action": "zip", "arrays": ["u", "v"], "into": "uv"})
    layout = lower_single_node(stacked, arrays)
    (pointer,) = layout.pointers
    assert pointer.name == "uv" and pointer.intent == "inout"
    # Logical space: u's 3 cells then v's 3; uv[i][k] is field k.
    assert layout.gather_indices(pointer, {"N": 3})[None].reshape(3, 2).tolist() == [
        [0, 3],
        [1, 4],
        [2, 5],
    ]
    back = lower_single_node(
        ops(stacked["operations"][0], {"action": "unzip", "array": "uv", "into": ["u2", "v2"]}),
        arrays,
    )
    assert [(p.name, p.intent) for p in back.pointers] == [("u2", "in"), ("v2", "out")]
    assert back.gather_indices("v2", {"N": 3})[None].tolist() == [0, 1, 2]


def test_pointer_order_follows_the_manifest() -> None:
    arrays = {"a": "fp32[N]", "b": "fp64[N]", "c": "fp32[N]", "z": "complex64[N]"}
    request = ops(
        {"action": "zip", "arrays": ["c", "a"], "into": "ca"},
        {"action": "unzip", "array": "z", "into": ["z_re", "z_im"]},
    )
    layout = lower_single_node(request, arrays)
    assert [p.name for p in layout.pointers] == ["b", "ca", "z_re", "z_im"]
    assert [p.element for p in layout.pointers] == ["fp64", "fp32", "fp32", "fp32"]


@pytest.mark.parametrize(
    ("request_obj", "arrays", "sizes", "ranks", "expected"),
    [
        (
            ops({"action": "cast", "array": "B", "to": "fp32"}),
            SQUARE,
            None,
            None,
            "operations[0] (cast): unknown array 'B'",
        ),
        (
            ops({"action": "block", "array": "A", "digit": "j", "factor": 2, "into": ["c", "f"]}),
            SQUARE,
            None,
            None,
            "operations[0] (block): unknown digit 'j'",
        ),
        (
            ops({"action": "permute", "array": "A", "order": ["i1", "i1"]}),
            SQUARE,
            None,
            None,
            "operations[0] (permute): order must name each current digit",
        ),
        (
            ops(
                {"action": "block", "array": "A", "digit": "i0", "factor": 4, "into": ["c", "f"]},
                {"action": "block", "array": "A", "digit": "f", "factor": 3, "into": ["g", "h"]},
            ),
            SQUARE,
            None,
            None,
            "operations[1] (block): factor 3 does not divide the extent 4",
        ),
        (
            ops(
                {"action": "block", "array": "A", "digit": "i0", "factor": 4, "into": ["c", "f"]},
                {
                    "action": "unblock",
                    "array": "A",
                    "digits": ["f", "c"],
                    "factor": 4,
                    "into": "i0",
                },
            ),
            SQUARE,
            None,
            None,
            "operations[1] (unblock): [f, c] is not a pair a block made",
        ),
        (
            ops(
                {"action": "split", "array": "A", "digit": "i0", "parts": 2, "into": ["b", "o"]},
                {"action": "unsplit", "array": "A", "digits": ["b", "o"], "parts": 3, "into": "i0"},
            ),
            SQUARE,
            None,
            None,
            "operations[1] (unsplit): b, o were made with parts 2, not 3",
        ),
        (
            ops(
                {"action": "block", "array": "A", "digit": "i0", "factor": 4, "into": ["c", "f"]},
                {"action": "split", "array": "A", "digit": "f", "parts": 2, "into": ["b", "o"]},
            ),
            SQUARE,
            None,
            None,
            "operations[1] (split): split cuts a whole dimension",
        ),
        (
            ops({"action": "unpad", "array": "A", "digit": "i0", "amount": 1}),
            SQUARE,
            None,
            None,
            "operations[0] (unpad): unpad of 1 would drop live cells",
        ),
        (
            ops(
                {
                    "action": "shuffle",
                    "array": "A",
                    "digits": ["i0"],
                    "f": ["i0 ^ 1"],
                    "f_inv": ["i0 ^ 1"],
                }
            ),
            SQUARE,
            {"N": 5},
            None,
            "operations[0] (shuffle): f and f_inv are not inverse bijections",
        ),
        (
            ops(
                {
                    "action": "shuffle",
                    "array": "A",
                    "digits": ["i0"],
                    "f": ["(i0 + 1) % N"],
                    "f_inv": ["(i0 + 1) % N"],
                }
            ),
            SQUARE,
            {"N": 5},
            None,
            "operations[0] (shuffle): f and f_inv are not inverse bijections",
        ),
        (
            ops(
                {"action": "shuffle", "array": "A", "digits": ["i0"], "f": ["i1"], "f_inv": ["i0"]}
            ),
            SQUARE,
            None,
            None,
            "operations[0] (shuffle): f expression i1 names ['i1']",
        ),
        (
            ops(
                {
                    "action": "linear_shuffle",
                    "array": "A",
                    "digits": ["i0"],
                    "bits": [2],
                    "matrix": [[1, 0], [0, 1]],
                }
            ),
            SQUARE,
            None,
            None,
            "operations[0] (linear_shuffle): digit i0 has extent N, not 2**2",
        ),
        (
            ops(
                {
                    "action": "linear_shuffle",
                    "array": "T",
                    "digits": ["i0"],
                    "bits": [2],
                    "matrix": [[1, 1], [1, 1]],
                }
            ),
            {"T": "fp32[4]"},
            None,
            None,
            "operations[0] (linear_shuffle): matrix is singular over GF(2)",
        ),
        (
            ops({"action": "cast", "array": "k", "to": "fp32"}),
            {"k": "int32[N]"},
            None,
            None,
            "operations[0] (cast): k is int32, not a floating array",
        ),
        (
            ops({"action": "cast", "array": "k", "to": "fp32"}),
            {"k": "index:int64[N]"},
            None,
            None,
            "operations[0] (cast): k is an index array",
        ),
        (
            ops({"action": "cast", "array": "S", "to": "fp32"}),
            {"S": "csr:fp64[N,N]"},
            None,
            None,
            "operations[0] (cast): S is a sparse array (csr); a cast of sparse values",
        ),
        (
            ops({"action": "cast", "array": "A", "to": "fp64"}),
            SQUARE,
            None,
            None,
            "operations[0] (cast): A already is fp64, its problem dtype",
        ),
        (
            ops({"action": "cast", "array": "z", "to": "fp32"}),
            {"z": "complex128[N]"},
            None,
            None,
            "operations[0] (cast): z is complex128, not a floating array",
        ),
        (
            ops({"action": "zip", "arrays": ["A", "x"], "into": "Ax"}),
            {"A": "fp64[N,N]", "x": "fp64[N]"},
            None,
            None,
            "operations[0] (zip): zip needs arrays of one logical shape",
        ),
        (
            ops({"action": "zip", "arrays": ["S", "x"], "into": "Sx"}),
            {"S": "csr:fp64[N]", "x": "fp64[N]"},
            None,
            None,
            "operations[0] (zip): S is a sparse array",
        ),
        (
            ops({"action": "zip", "arrays": ["k", "x"], "into": "kx"}),
            {"k": "index:int64[N]", "x": "fp64[N]"},
            None,
            None,
            "operations[0] (zip): k is an index array",
        ),
        (
            ops(
                {"action": "unzip", "array": "z", "into": ["r", "i"]},
                {"action": "zip", "arrays": ["r", "x"], "into": "rx"},
            ),
            {"z": "complex128[N]", "x": "fp64[N]"},
            None,
            None,
            "operations[1] (zip): r is a part of an unzip of z",
        ),
        (
            ops({"action": "unzip", "array": "A", "into": ["a", "b"], "dim": 0}),
            SQUARE,
            None,
            None,
            "operations[0] (unzip): dimension 0 of A has extent N, not a constant",
        ),
        (
            ops({"action": "distribute", "array": "A", "grid_dim": 0, "dim": 0, "scheme": "block"}),
            SQUARE,
            None,
            None,
            "operations[0] (distribute): distribute needs startup.grid",
        ),
        (
            ops({"action": "replicate", "array": "A"}),
            SQUARE,
            None,
            None,
            "operations[0] (replicate): replicate needs startup.grid",
        ),
        (
            ops({"action": "place", "array": "A", "on": "device"}),
            SQUARE,
            None,
            None,
            "operations[0] (place): place needs startup.grid",
        ),
        (
            ops({"action": "pad", "array": "A", "digit": "i0", "amount": 1}, grid=["P"]),
            SQUARE,
            None,
            None,
            "operations[0] (pad): pad is single-node only",
        ),
        (
            ops({"action": "zip", "arrays": ["A", "B"], "into": "AB"}, grid=["P"]),
            {**SQUARE, "B": "fp64[N,N]"},
            None,
            None,
            "operations[0] (zip): zip is single-node only",
        ),
        (
            ops({"action": "replicate", "array": "A"}, grid=["P"]),
            {**SQUARE, "x": "fp64[N]"},
            None,
            None,
            "operations: array x is left neither distributed nor replicated",
        ),
        (
            ops(
                {"action": "distribute", "array": "A", "grid_dim": 1, "dim": 0, "scheme": "cyclic"},
                grid=["2", "P // 2"],
            ),
            SQUARE,
            {"N": 8},
            8,
            "operations[0] (distribute): a cyclic layout needs an equal-edge grid",
        ),
        (
            ops({"action": "block", "array": "S", "digit": "i0", "factor": 2, "into": ["c", "f"]}),
            {"S": "csr:fp64[N,N]"},
            None,
            None,
            "operations[0] (block): S is a sparse array (csr); it takes format, replicate and place",
        ),
        (
            ops(
                {"action": "split", "array": "A", "digit": "i0", "parts": 3, "into": ["b", "o"]},
                {"action": "distribute", "array": "A", "grid_dim": 0, "digit": "b"},
                grid=["P"],
            ),
            SQUARE,
            {"N": 8},
            4,
            "operations[1] (distribute): the band digit comes from a split into 3 parts, but grid dimension 0 has 4 ranks",
        ),
        (
            ops(
                {"action": "block", "array": "A", "digit": "i0", "factor": 4, "into": ["c", "f"]},
                {"action": "distribute", "array": "A", "grid_dim": 0, "digit": "f"},
                grid=["P"],
            ),
            SQUARE,
            None,
            None,
            "operations[1] (distribute): distributing digit f does not lower to a plan",
        ),
        (
            ops(
                {"action": "block", "array": "A", "digit": "i0", "factor": 4, "into": ["c", "f"]},
                {"action": "distribute", "array": "A", "grid_dim": 0, "digit": "c"},
                grid=["P"],
            ),
            SQUARE,
            None,
            None,
            "operations[1] (distribute): c is a block's coarse digit",
        ),
        (
            ops(
                {"action": "block", "array": "A", "digit": "i0", "factor": 4, "into": ["c", "f"]},
                {"action": "distribute", "array": "A", "grid_dim": 0, "dim": 0, "scheme": "block"},
                grid=["P"],
            ),
            SQUARE,
            None,
            None,
            "operations[1] (distribute): dimension 0 of A was cut",
        ),
        (
            ops({"action": "distribute", "array": "S", "grid_dim": 0, "dim": 0}, grid=["P"]),
            {"S": "csr:fp64[N,N]"},
            None,
            None,
            "operations[0] (distribute): S is a sparse array (csr); distributing a sparse format",
        ),
        (
            ops({"action": "format", "array": "A", "to": "csr"}),
            SQUARE,
            None,
            None,
            "operations[0] (format): A is a dense array",
        ),
    ],
)
def test_refusals(
    request_obj: dict[str, Any],
    arrays: dict[str, str],
    sizes: dict[str, int] | None,
    ranks: int | None,
    expected: str,
) -> None:
    message = refusal(request_obj, arrays, sizes, ranks)
    assert message.startswith(expected), message


def test_lower_single_node_refuses_like_check() -> None:
    with pytest.raises(RequestError, match=r"operations\[0\] \(cast\): unknown array 'B'"):
        lower_single_node(ops({"action": "cast", "array": "B", "to": "fp32"}), SQUARE)
    with pytest.raises(RequestError, match=r"startup\.grid"):
        lower_single_node(ops({"action": "replicate", "array": "A"}, grid=["P"]), SQUARE)


def test_the_bijection_check_stops_at_its_limit() -> None:
    # 2**21 cells: above BIJECTION_CHECK_LIMIT, so a wrong pair is not caught (documented).
    request = ops(
        {"action": "shuffle", "array": "x", "digits": ["i0"], "f": ["i0 ^ 1"], "f_inv": ["i0"]}
    )
    assert check_requests(Requests.validate(request), {"x": "fp32[N]"}, {"N": 2**21}).accepted
    assert not check_requests(Requests.validate(request), {"x": "fp32[N]"}, {"N": 2**10}).accepted


def test_gf2_inverse() -> None:
    matrix = [[1, 1, 0], [0, 1, 1], [0, 0, 1]]
    inverse = gf2_inverse(matrix)
    assert inverse is not None
    product = (np.array(matrix) @ np.array(inverse)) % 2
    assert product.tolist() == np.eye(3, dtype=int).tolist()
    assert gf2_inverse([[1, 1], [1, 1]]) is None


def test_values_beyond_int64_are_refused_not_raised() -> None:
    shuffle = {
        "action": "shuffle",
        "array": "x",
        "digits": ["i0"],
        "f": ["i0 * 4611686018427387904 * 4"],
        "f_inv": ["i0"],
    }
    answer = check_requests(
        Requests.validate({"operations": [shuffle]}), {"x": "fp64[N]"}, {"N": 8}
    )
    assert not answer.accepted and "not inverse bijections" in str(answer.refusal)
    with pytest.raises(RequestError, match=r"operations\[0\] \(block\): factor: .*outside int64"):
        Requests.validate({"operations": [_block("x", "i0", 100000000000000000000, ["b", "f"])]})
    big = _block("x", "i0", "4294967296 * 4294967296", ["b", "f"])
    answer = check_requests(Requests.validate({"operations": [big]}), {"x": "fp64[N]"})
    assert answer.refusal is not None
    assert answer.refusal.startswith("operations[0] (block): factor '4294967296 * 4294967296'")
    assert "outside int64" in answer.refusal
    pad = {"action": "pad", "array": "x", "digit": "i0", "amount": "9223372036854775807 - N + 1"}
    answer = check_requests(Requests.validate({"operations": [pad]}), {"x": "fp64[N]"}, {"N": 8})
    assert answer.refusal is not None and "outside int64" in answer.refusal
    cyclic = {
        "action": "distribute",
        "array": "x",
        "grid_dim": 0,
        "dim": 0,
        "scheme": "block_cyclic",
        "block_size": "4294967296 * 4294967296",
    }
    distributed = {"startup": {"grid": ["P"]}, "operations": [cyclic]}
    answer = check_requests(Requests.validate(distributed), {"x": "fp64[N]"}, {"N": 8}, 2)
    assert answer.refusal is not None and "outside int64" in answer.refusal
    answer = check_requests(Requests(), {"x": "fp64[N,N]"}, {"N": 2**40})
    assert (
        answer.refusal
        == "arrays.x: the cell count of x is 1208925819614629174706176, outside int64"
    )


def _block(array: str, digit: str, factor: Any, into: list[str]) -> dict[str, Any]:
    return {"action": "block", "array": array, "digit": digit, "factor": factor, "into": into}


@pytest.mark.parametrize(
    ("sizes", "message"),
    [
        ({"N": -1}, "sizes.N: -1 is not a size"),
        ({"N": "4"}, "sizes.N: '4' is not an integer"),
        ({"N": 4.5}, "sizes.N: 4.5 is not an integer"),
        ({"N": True}, "sizes.N: True is not an integer"),
        ({"N": 2**63}, "sizes.N: 9223372036854775808 is not a size"),
        ({"N": 4, "P": 4}, "sizes.P: P, P<k> and d<k> are reserved"),
        ({"N": 4, "P1": 4}, "sizes.P1: P, P<k> and d<k> are reserved"),
        ({"N": 4, "d0": 4}, "sizes.d0: P, P<k> and d<k> are reserved"),
    ],
)
def test_bad_sizes_are_refused_by_check_plan_and_compile(
    sizes: dict[str, Any], message: str
) -> None:
    arrays = {"A": "fp64[N]"}
    with pytest.raises(RequestError, match=message.replace("(", r"\(")):
        check_requests(Requests(), arrays, sizes)
    distributed = Requests.validate(
        {"startup": {"grid": ["P"]}, "operations": [{"action": "replicate", "array": "A"}]}
    )
    with pytest.raises(RequestError, match=message.replace("(", r"\(")):
        plan_requests(distributed, arrays, sizes, 2)
    with pytest.raises(RequestError, match=message.replace("(", r"\(")):
        lower_single_node(Requests(), arrays, sizes)


def test_a_size_no_extent_uses_is_ignored_and_zero_is_an_empty_problem() -> None:
    # A kernel's size set also names symbols only its scalars use.
    assert check_requests(Requests(), {"A": "fp64[N]"}, {"N": 4, "iters": 10}).accepted
    assert check_requests(Requests(), {"A": "fp64[N]"}, {"N": 0}).accepted


@pytest.mark.parametrize("spec", ["fp64[-1]", "fp64[0]", "fp64[N,2-2]"])
def test_a_constant_extent_below_one_is_refused(spec: str) -> None:
    with pytest.raises(ValueError, match=r"array A: .*an extent is at least 1"):
        check_requests(Requests(), {"A": spec})


def test_a_negative_extent_at_the_sizes_is_refused() -> None:
    answer = check_requests(Requests(), {"A": "fp64[N - 9]"}, {"N": 8})
    assert answer.refusal == "arrays.A: extent N - 9 is -1 at these sizes; an extent is at least 0"


@pytest.mark.parametrize("name", ["int", "double", "restrict", "workspace", "__x", "_Big"])
def test_names_that_are_not_c_identifiers_are_refused(name: str) -> None:
    with pytest.raises(RequestError, match=f"operations\\[0\\] \\(cast\\): array: '{name}' is"):
        Requests.validate({"operations": [{"action": "cast", "array": name, "to": "fp32"}]})
    zip_into = {"action": "zip", "arrays": ["u", "v"], "into": name}
    with pytest.raises(RequestError, match=r"operations\[0\] \(zip\): into"):
        Requests.validate({"operations": [zip_into]})
    unzip_into = {"action": "unzip", "array": "z", "into": ["re", name]}
    with pytest.raises(RequestError, match=r"operations\[0\] \(unzip\): into"):
        Requests.validate({"operations": [unzip_into]})
    with pytest.raises(ValueError, match=f"array {name}: '{name}' is"):
        check_requests(Requests(), {name: "fp64[N]"})
