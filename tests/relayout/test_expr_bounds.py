"""Bounded evaluation of every expression a request carries: int64 semantics in the evaluator (a
step that leaves int64, or a shift count outside 0..63, is an overflow), bounded root degrees,
shift counts, lengths and growth, refusals that come quickly and as relayout's own errors, and
generated C that agrees with the evaluator and has no undefined behaviour near the bounds."""

from __future__ import annotations

import shutil
import subprocess
import textwrap
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from relayout import Requests
from relayout import expr as E
from relayout.algebra.state import BIJECTION_CHECK_LIMIT
from relayout.check import check_requests
from relayout.errors import RequestError
from relayout.models import MAX_OPERATIONS
from tests.relayout.test_convert_build import run_sanitizer_clean

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
# Generous: a refusal takes milliseconds; this catches the hangs of seconds to minutes.
QUICK_S = 0.5


def shuffle(f: str, f_inv: str = "i0") -> dict[str, Any]:
    return {"action": "shuffle", "array": "x", "digits": ["i0"], "f": [f], "f_inv": [f_inv]}


def _refusal_once(
    request: Mapping[str, Any],
    arrays: Mapping[str, str] | None,
    sizes: Mapping[str, int] | None,
    ranks: int | None,
) -> tuple[str, float]:
    start = time.perf_counter()
    try:
        answer = check_requests(
            Requests.validate(request), arrays or {"x": "fp64[N]"}, sizes, ranks
        )
    except RequestError as error:
        return str(error), time.perf_counter() - start
    elapsed = time.perf_counter() - start
    assert not answer.accepted, f"accepted: {request}"
    assert answer.refusal is not None
    return answer.refusal, elapsed


def refusal(
    request: Mapping[str, Any],
    arrays: Mapping[str, str] | None = None,
    sizes: Mapping[str, int] | None = None,
    ranks: int | None = None,
) -> tuple[str, float]:
    """The refusal of a request (raised while validating it, or answered by its check) and the
    seconds it took at best of three tries (a request that is costly is so every time; one
    pause of a loaded machine is not the request's); fails when the request is accepted or
    anything but RequestError escapes."""
    tries = [_refusal_once(request, arrays, sizes, ranks) for _ in range(3)]
    assert len({message for message, _ in tries}) == 1, tries
    return tries[0][0], min(elapsed for _, elapsed in tries)


@pytest.mark.parametrize(
    ("request_obj", "sizes", "words"),
    [
        # Each of these was a 500 or a hang of seconds to minutes.
        (
            {"operations": [shuffle("i0 ^ (1 << 9223372036854775807)")]},
            {"N": 8},
            ["shift count 9223372036854775807 of 1 << 9223372036854775807 is outside 0..63"],
        ),
        (
            {"operations": [shuffle("root(i0, 9223372036854775807)")]},
            {"N": 8},
            ["root(x, k) needs 1 <= k <= 64", "k = 9223372036854775807", "at position 0"],
        ),
        (
            {"operations": [shuffle("i0 + 0 * (1 << 6000000)")]},
            {"N": 8},
            ["shift count 6000000", "at position 12"],
        ),
        (
            {"operations": [shuffle("i0 << (6000000 - 1)")]},
            None,
            ["shift count 5999999 of i0 << 6000000 - 1 is outside 0..63"],
        ),
        (
            {"operations": [shuffle("i0 ^ (1 << 63)")]},
            None,
            ["f expression", "overflows int64", "1 << 63 is 9223372036854775808, outside int64"],
        ),
        (
            {"operations": [shuffle("i0 * 4611686018427387904 * 4")]},
            {"N": 8},
            [
                "not inverse bijections: f overflows int64 at (i0=2)",
                "i0 * 4611686018427387904 is 9223372036854775808, outside int64",
            ],
        ),
        (
            {"operations": [shuffle("i0", "i0 << (i0 + 60)")]},
            {"N": 8},
            ["f_inv(f(...)) overflows int64 at (i0=4)", "shift count 64 of i0 << i0 + 60"],
        ),
        (
            # Checked as written, though the layout folds (x * c) // c to x.
            {"operations": [shuffle("i0", "i0 * 4611686018427387904 // 4611686018427387904")]},
            {"N": 8},
            ["f_inv(f(...)) overflows int64 at (i0=2)"],
        ),
        (
            {"operations": [shuffle("i0 - 9223372036854775807 - 2", "i0")]},
            {"N": 8},
            ["f overflows int64 at (i0=0)", "is -9223372036854775809, outside int64"],
        ),
        (
            {"operations": [shuffle("-i0 - 9223372036854775807 - 1 + i0 // -1 // -1")]},
            {"N": 8},
            ["overflows int64"],
        ),
        (
            {
                "operations": [
                    {
                        "action": "block",
                        "array": "x",
                        "digit": "i0",
                        "factor": "3037000500 * 3037000500 * 3037000500",
                        "into": ["b", "f"],
                    }
                ]
            },
            None,
            ["factor '3037000500 * 3037000500 * 3037000500'", "outside int64"],
        ),
        (
            {"operations": [{"action": "pad", "array": "x", "digit": "i0", "amount": "N * N"}]},
            {"N": 2**40},
            ["amount 'N * N'", "N * N is 1208925819614629174706176, outside int64"],
        ),
        (
            {"operations": [shuffle("i0 + " * 1100 + "0")]},
            None,
            ["longer than 4096 characters"],
        ),
    ],
)
def test_hostile_expressions_are_refused_quickly(
    request_obj: dict[str, Any], sizes: dict[str, int] | None, words: list[str]
) -> None:
    message, elapsed = refusal(request_obj, sizes=sizes)
    assert elapsed < QUICK_S, (elapsed, message)
    for word in words:
        assert word in message, message
    assert message.startswith("operations[0] (")


def test_a_grid_entry_is_bounded_like_every_expression() -> None:
    for text, words in [
        ("root(P, 9223372036854775807)", "root(x, k) needs 1 <= k <= 64"),
        ("root(P, 0)", "root(x, k) needs 1 <= k <= 64"),
        ("P * 4294967296 * 4294967296 // P", "outside int64"),
    ]:
        request = {
            "startup": {"grid": [text]},
            "operations": [{"action": "replicate", "array": "x"}],
        }
        message, elapsed = refusal(request, sizes={"N": 8}, ranks=4)
        assert elapsed < QUICK_S
        assert message.startswith("startup.grid[0]") and words in message, message
    accepted = {
        "startup": {"grid": ["root(P, 2)", "root(P, 2)"]},
        "operations": [{"action": "replicate", "array": "x"}],
    }
    assert check_requests(Requests.validate(accepted), {"x": "fp64[N]"}, {"N": 8}, 4).accepted


def test_an_array_extent_that_overflows_is_refused_with_the_array() -> None:
    answer = check_requests(Requests(), {"x": "fp64[N * N * N]"}, {"N": 2**30})
    assert answer.refusal is not None
    assert answer.refusal.startswith("arrays.x: extent N * N * N: N * N * N is ")
    assert answer.refusal.endswith("outside int64")


def test_composition_cannot_grow_an_expression_without_bound() -> None:
    # Each shuffle doubles the cell map (i0 -> i0 | i0): thirty of them would be 2**30 nodes.
    doubling = shuffle("i0", "i0 | i0")
    message, elapsed = refusal({"operations": [doubling] * 30}, sizes={"N": 8})
    assert elapsed < QUICK_S
    assert "grows past 32768 nodes" in message and message.startswith("operations[14] (shuffle)")
    # Each one nests the map 150 levels deeper.
    deep = shuffle("i0", "(" * 150 + "i0" + " | 0)" * 150)
    message, elapsed = refusal({"operations": [deep] * 10}, sizes={"N": 8})
    assert elapsed < QUICK_S
    assert "grows past 480 levels" in message


def test_a_request_has_a_bounded_number_of_operations() -> None:
    pad = {"action": "pad", "array": "x", "digit": "i0", "amount": 1}
    message, elapsed = refusal({"operations": [pad] * (MAX_OPERATIONS + 1)}, sizes={"N": 8})
    assert elapsed < QUICK_S
    assert (
        message
        == f"operations: a request has at most {MAX_OPERATIONS} operations, this one has {MAX_OPERATIONS + 1}"
    )


def test_the_substitutions_of_a_request_have_a_budget() -> None:
    # Grow a cell map near the bound, then keep substituting into it.
    arrays = {"x": "fp64[N,M]"}
    grow = {"action": "shuffle", "array": "x", "digits": ["i0"], "f": ["i0"], "f_inv": ["i0 | i0"]}
    other = {"action": "shuffle", "array": "x", "digits": ["i1"], "f": ["i1"], "f_inv": ["i1 | 0"]}
    message, elapsed = refusal({"operations": [grow] * 14 + [other] * 100}, arrays)
    assert elapsed < 2.0, elapsed
    assert "budget of nodes one request may visit" in message


def test_the_bijection_checks_of_a_request_have_a_budget() -> None:
    # Many shuffles at the cell limit: after the budget the rest are not enumerated, so the
    # request's checks take a bounded time.
    request = {
        "operations": [shuffle("(i0 * 5 + 3) % 1048576", "((i0 + 1048573) * 838861) % 1048576")]
        * 40
    }
    start = time.perf_counter()
    answer = check_requests(
        Requests.validate(request), {"x": "fp32[N]"}, {"N": BIJECTION_CHECK_LIMIT}
    )
    assert time.perf_counter() - start < 2.0
    assert answer.accepted


def test_integer_bounds_of_the_language() -> None:
    assert E.parse("-9223372036854775808") == E.Const(INT64_MIN)
    assert E.parse(str(E.Const(INT64_MIN))) == E.Const(INT64_MIN)
    assert E.parse("i0 << 63").evaluate({"i0": -1}) == INT64_MIN
    assert E.parse("-1 >> 63").evaluate() == -1
    with pytest.raises(E.ExprOverflow, match=r"1 << 63 is 9223372036854775808, outside int64"):
        E.parse("1 << 63").evaluate()
    with pytest.raises(E.ExprError, match=r"shift count -1 of i0 >> \(-1\) is outside 0..63") as e:
        E.parse("i0 >> -1")
    assert e.value.position == 3
    with pytest.raises(E.ExprOverflow, match="shift count 64"):
        E.parse("i0 >> s").evaluate({"i0": 1, "s": 64})
    with pytest.raises(
        E.ExprOverflow, match=r"\(-9223372036854775808\) // \(-1\) is 9223372036854775808"
    ):
        E.parse("-9223372036854775808 // -1").evaluate()
    assert E.parse("-9223372036854775808 % -1").evaluate() == 0
    assert E.parse("root(9223372036854775807, 1)").evaluate() == INT64_MAX
    assert E.parse("root(a, 64)").evaluate({"a": 0}) == 0
    assert E.parse("root(a, 2)").evaluate({"a": 3037000499**2}) == 3037000499
    with pytest.raises(E.ExprError, match="needs 1 <= k <= 64"):
        E.parse("root(a, 65)")
    # Folding never builds a value outside int64: the step stays, and evaluating it says so.
    product = E.mul(E.Const(2**62), E.Const(4))
    assert isinstance(product, E.Bin)
    assert E.binary("<<", E.Const(1), E.Const(2**62)) == E.Bin("<<", E.Const(1), E.Const(2**62))
    assert E.neg(E.Const(INT64_MIN)) == E.Neg(E.Const(INT64_MIN))
    with pytest.raises(E.ExprOverflow):
        product.evaluate()


def test_array_evaluation_names_the_first_cell_that_overflows() -> None:
    values = np.arange(8, dtype=np.int64)
    with pytest.raises(E.ExprOverflow) as caught:
        E.parse("i0 * 2305843009213693952").evaluate({"i0": values})
    assert caught.value.cell == 4
    assert "is 9223372036854775808, outside int64" in str(caught.value)
    assert E.parse("root(i0 * i0 * i0, 3)").evaluate({"i0": values}).tolist() == values.tolist()
    with pytest.raises(E.ExprError, match=r"root\(2, 2\) is not an integer") as caught:
        E.parse("root(i0, 2)").evaluate({"i0": values})
    assert caught.value.cell == 2


# ---------------------------------------------------------------------------------------------
# The evaluator against a reference: exact Python integers, every step checked against int64.


class ReferenceOverflow(Exception):
    pass


class ReferenceFailure(Exception):
    pass


def _exact_root(value: int, k: int) -> int:
    if not 1 <= k <= 64 or value < 0:
        raise ReferenceFailure
    low, high = 0, value + 1
    while high - low > 1:
        middle = (low + high) // 2
        if middle**k <= value:
            low = middle
        else:
            high = middle
    if low**k != value:
        raise ReferenceFailure
    return low


def reference(expr: E.Expr, env: Mapping[str, int]) -> int:
    """The int64 value: every step's true value, refused (ReferenceOverflow) outside int64."""

    def bounded(value: int) -> int:
        if not INT64_MIN <= value <= INT64_MAX:
            raise ReferenceOverflow
        return value

    if isinstance(expr, E.Const):
        return bounded(expr.value)
    if isinstance(expr, E.Sym):
        return env[expr.name]
    if isinstance(expr, E.Neg):
        return bounded(-reference(expr.operand, env))
    if isinstance(expr, E.Call):
        values = [reference(arg, env) for arg in expr.args]
        if expr.function == "root":
            return _exact_root(values[0], values[1])
        return min(values) if expr.function == "min" else max(values)
    assert isinstance(expr, E.Bin)
    a, b = reference(expr.left, env), reference(expr.right, env)
    if expr.op in ("<<", ">>") and not 0 <= b <= 63:
        raise ReferenceOverflow
    if expr.op in ("//", "%") and b == 0:
        raise ReferenceFailure
    exact = {
        "+": lambda: a + b,
        "-": lambda: a - b,
        "*": lambda: a * b,
        "//": lambda: a // b,
        "%": lambda: a % b,
        "<<": lambda: a << b,
        ">>": lambda: a >> b,
        "^": lambda: a ^ b,
        "&": lambda: a & b,
        "|": lambda: a | b,
        "<": lambda: int(a < b),
        "==": lambda: int(a == b),
        ">=": lambda: int(a >= b),
    }[expr.op]()
    return bounded(exact)


def outcome(expr: E.Expr, env: Mapping[str, Any]) -> Any:
    """The evaluator's value, or the kind of its refusal."""
    try:
        return expr.evaluate(env)
    except E.ExprOverflow:
        return "overflow"
    except E.ExprError:
        return "error"


def reference_outcome(expr: E.Expr, env: Mapping[str, int]) -> int | str:
    try:
        return reference(expr, env)
    except ReferenceOverflow:
        return "overflow"
    except ReferenceFailure:
        return "error"


EDGES = [
    INT64_MIN,
    INT64_MIN + 1,
    -(2**62),
    -3037000500,
    -(2**31),
    -1,
    0,
    1,
    2,
    62,
    63,
    64,
    2**31,
    3037000499,
    3037000500,
    2**62,
    INT64_MAX - 1,
    INT64_MAX,
]
numbers = st.one_of(st.integers(-20, 20), st.sampled_from(EDGES), st.integers(INT64_MIN, INT64_MAX))
leaves = st.one_of(numbers.map(E.Const), st.sampled_from("abc").map(E.Sym))
trees = st.recursive(
    leaves,
    lambda children: st.one_of(
        st.tuples(
            st.sampled_from(["+", "-", "*", "//", "%", "<<", ">>", "^", "&", "|", "<", "==", ">="]),
            children,
            children,
        ).map(lambda t: E.Bin(t[0], t[1], t[2])),
        st.tuples(st.sampled_from(["min", "max"]), st.lists(children, min_size=1, max_size=3)).map(
            lambda t: E.Call(t[0], tuple(t[1]))
        ),
        st.tuples(children, st.integers(1, 4)).map(lambda t: E.Call("root", (t[0], E.Const(t[1])))),
        children.map(E.Neg),
    ),
    max_leaves=10,
)
environments = st.fixed_dictionaries({"a": numbers, "b": numbers, "c": numbers})


@settings(max_examples=400, deadline=None)
@given(trees, environments)
def test_the_evaluator_agrees_with_an_int64_reference(tree: E.Expr, env: dict[str, int]) -> None:
    # Overflow is reported exactly where a step's true value leaves int64 (or a shift count
    # leaves 0..63), other failures (division by zero, an inexact root) as ExprError.
    assert outcome(tree, env) == reference_outcome(tree, env)


@settings(max_examples=200, deadline=None)
@given(trees, st.lists(environments, min_size=1, max_size=6))
def test_array_evaluation_agrees_with_the_reference_at_every_element(
    tree: E.Expr, points: list[dict[str, int]]
) -> None:
    expected = [reference_outcome(tree, point) for point in points]
    env = {name: np.array([p[name] for p in points], dtype=np.int64) for name in "abc"}
    got = outcome(tree, env)
    failures = {kind for kind in expected if isinstance(kind, str)}
    if not failures:
        assert np.broadcast_to(got, (len(points),)).tolist() == expected
    elif failures == {"overflow"}:
        assert got == "overflow"
    else:
        assert got in ("overflow", "error")


# ---------------------------------------------------------------------------------------------
# The generated C near the bounds: no undefined behaviour, and it refuses what Python refuses.

C_TEXTS = [
    "a + b",
    "a - b",
    "a * b",
    "-a",
    "a // b",
    "a % b",
    "a << b",
    "a >> b",
    "a << 63",
    "a >> 63",
    "root(a, 2)",
    "root(a, 3)",
    "root(a, 64)",
    "root(a, 1) + b",
    "(a * 3037000499) // b",
    "min(a, b) - max(a, b)",
    "(a ^ b) + (a & b) * 2",
    "-9223372036854775808 + a",
    "(a < b) * 9223372036854775807 + b",
]
C_POINTS = [
    INT64_MIN,
    INT64_MIN + 1,
    -(2**62),
    -3037000500,
    -1,
    0,
    1,
    2,
    63,
    64,
    3037000499,
    3037000500,
    2**62,
    INT64_MAX,
]


def _ubsan_compiles(tmp_path: Path) -> bool:
    probe = tmp_path / "probe.c"
    probe.write_text("int main(void) { return 0; }\n")
    result = subprocess.run(
        ["gcc", "-fsanitize=undefined", "-o", str(tmp_path / "probe"), str(probe)],
        capture_output=True,
        check=False,
    )
    return result.returncode == 0


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not on this machine")
def test_the_c_rendering_near_the_bounds_is_free_of_undefined_behaviour(tmp_path: Path) -> None:
    if not _ubsan_compiles(tmp_path):
        pytest.skip("gcc cannot link UndefinedBehaviorSanitizer here")
    parsed = [E.parse(text) for text in C_TEXTS]
    points = [(a, b) for a in C_POINTS for b in C_POINTS]
    rows = []
    for k, e in enumerate(parsed):
        # Checked, and unchecked where c_proof (a and b as known values) says it is exact.
        proof = E.c_proof([e], {}, {}, f"p{k}_")
        rows.append("    {")
        unchecked = "0"
        if proof is not None:
            lines, holds = proof
            rows.extend(f"      {line}" for line in lines)
            unchecked = f"{holds} ? {e.to_c_unchecked()} : 0"
        else:
            rows.append(f"      const int p{k}_holds = 0;")
            holds = f"p{k}_holds"
        rows.append(
            f"      relayout_bad = 0; value = {e.to_c()}; const int64_t fast = {unchecked};"
            f' printf("%lld %d %d %lld\\n", (long long)value, relayout_bad, {holds},'
            " (long long)fast);"
        )
        rows.append("    }")
    literal = {v: E.Const(v).to_c() for v in C_POINTS}
    body = []
    for a, b in points:
        body.append(f"  {{ const int64_t a = {literal[a]}, b = {literal[b]};")
        body.append("    int64_t value; int relayout_bad; (void)a; (void)b;")
        body.extend(rows)
        body.append("  }")
    source = "#include <stdint.h>\n#include <stdio.h>\n" + E.C_PRELUDE
    source += "int main(void) {\n" + "\n".join(body) + "\n  return 0;\n}\n"
    (tmp_path / "bounds.c").write_text(source)
    flags = ["-std=c99", "-O1", "-fsanitize=undefined", "-fno-sanitize-recover=undefined"]
    subprocess.run(
        ["gcc", *flags, "-o", str(tmp_path / "bounds"), str(tmp_path / "bounds.c")], check=True
    )
    run = subprocess.run(
        [str(tmp_path / "bounds")],
        capture_output=True,
        text=True,
        check=False,
        env={"UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1"},
    )
    assert run.returncode == 0 and "runtime error" not in run.stderr, run.stderr[-2000:]
    lines = iter(run.stdout.splitlines())
    proved = 0
    for a, b in points:
        for text, expression in zip(C_TEXTS, parsed, strict=True):
            value, bad, holds, fast = (int(word) for word in next(lines).split())
            want = outcome(expression, {"a": a, "b": b})
            assert bool(bad) == isinstance(want, str), (text, a, b, want)
            if not bad:
                assert value == want, (text, a, b)
            if holds:
                # The proof is sound: where it holds, the unchecked C is exact.
                proved += 1
                assert fast == want, (text, a, b, want)
    assert proved > len(points)


SANITIZED_BOUNDS = textwrap.dedent(
    """
    import numpy as np
    from relayout.convert import compile_program
    from relayout.convert.program import ConversionError
    from tests.relayout.convert_support.programs import compare_with_reference

    # Near the bounds but inside them: (i0 - INT64_MAX) + INT64_MAX is i0 at every cell.
    near = [{"action": "shuffle", "array": "A", "digits": ["i0"], "f": ["i0"],
             "f_inv": ["i0 - 9223372036854775807 + 9223372036854775807"]}]
    compare_with_reference(near, {"A": "fp64[N]:inout"}, {"N": 37}, seed=1, sanitize=True)
    # Past them at every cell but the first two: the check at these sizes enumerates no shuffle
    # above its cell limit, so the kernel itself meets the overflow, skips those cells and
    # counts them.
    n = 2**20 + 3
    past = [{"action": "shuffle", "array": "A", "digits": ["i0"], "f": ["i0"],
             "f_inv": ["(i0 << 62) >> 62"]}]
    program = compile_program({"operations": past}, {"A": "fp32[N]:inout"}, sanitize=True)
    try:
        program.convert_in({"A": np.zeros(n, np.float32)}, {"N": n})
    except ConversionError as error:
        print("REFUSED", error)
    print("SANITIZED-OK")
    """
)


def test_a_kernel_near_and_past_the_bounds_is_sanitizer_clean(tmp_path: Path) -> None:
    printed = run_sanitizer_clean(SANITIZED_BOUNDS, tmp_path)
    assert f"REFUSED pointer 'A' (convert_in): {2**20 + 1} cells" in printed
    assert "does not evaluate in int64" in printed
