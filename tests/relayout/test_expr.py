"""The expression language: parsing with positions, evaluation (ints and numpy), printing, C."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from relayout import expr as E


@pytest.mark.parametrize(
    ("text", "env", "value"),
    [
        ("1 + 2 * 3", {}, 7),
        ("(N + 3) // 4", {"N": 10}, 3),
        ("-7 // 2", {}, -4),
        ("-7 % 3", {}, 2),
        ("min(N, 4, M)", {"N": 9, "M": 5}, 4),
        ("max(1, P0 * P1)", {"P0": 2, "P1": 3}, 6),
        ("root(P, 2)", {"P": 16}, 4),
        ("root(27, 3) - 1", {}, 2),
        ("-(N - 1)", {"N": 5}, -4),
        ("i0 ^ i1 & 3", {"i0": 5, "i1": 6}, 5 ^ (6 & 3)),
        ("(i0 << 2) | i1 >> 1", {"i0": 1, "i1": 6}, (1 << 2) | (6 >> 1)),
        ("i0 < 3", {"i0": 2}, 1),
        ("i0 == 3", {"i0": 2}, 0),
    ],
)
def test_evaluates_like_python(text: str, env: dict[str, int], value: int) -> None:
    assert E.parse(text).evaluate(env) == value


@pytest.mark.parametrize(
    ("text", "position", "words"),
    [
        ("N +", 3, "end"),
        ("N ** 2", 3, "'*'"),
        ("(N + 1", 6, "')'"),
        ("foo(N)", 0, "unknown function"),
        ("N $ 2", 2, "'$'"),
        ("1 < 2 < 3", 6, "chain"),
        ("root(N, M)", 0, "constant"),
        ("min()", 4, "unexpected"),
    ],
)
def test_errors_carry_the_position(text: str, position: int, words: str) -> None:
    with pytest.raises(E.ExprError) as caught:
        E.parse(text)
    assert caught.value.position == position
    assert words in str(caught.value)


def test_bitwise_operators_only_where_allowed() -> None:
    with pytest.raises(E.ExprError, match="only in shuffle"):
        E.parse("N ^ 1", bitwise=False)
    assert E.parse("N ^ 1").evaluate({"N": 4}) == 5


def test_root_refuses_an_inexact_root() -> None:
    with pytest.raises(E.ExprError, match="not an integer"):
        E.parse("root(P, 2)").evaluate({"P": 8})
    assert E.iroot(10**30, 3) == 10**10


def test_no_eval_of_python() -> None:
    for text in ("__import__('os')", "N.real", "[1]", "lambda: 1", "1 if N else 2"):
        with pytest.raises(E.ExprError):
            E.parse(text)


def test_unbound_symbol_and_division_by_zero() -> None:
    with pytest.raises(E.ExprError, match="unbound symbol 'N'"):
        E.parse("N + 1").evaluate({})
    with pytest.raises(E.ExprError, match="division by zero"):
        E.parse("4 // N").evaluate({"N": 0})
    with pytest.raises(E.ExprError, match="division by zero"):
        E.parse("4 // N").evaluate({"N": np.array([1, 0])})


def test_canonical_printing() -> None:
    assert str(E.parse("(N+3)//4")) == "(N + 3) // 4"
    assert str(E.parse("a - (b - c)")) == "a - (b - c)"
    assert str(E.parse("a*(b+c)")) == "a * (b + c)"
    assert str(E.parse("min(N,  4)")) == "min(N, 4)"
    assert E.parse("a + b").symbols() == {"a", "b"}


def test_numpy_evaluation_is_elementwise_with_floor_semantics() -> None:
    values = np.arange(-6, 7)
    result = E.parse("(x // 4) * 3 + x % 4 - min(x, 2) + (x < 0)").evaluate({"x": values})
    expected = [(v // 4) * 3 + v % 4 - min(v, 2) + int(v < 0) for v in range(-6, 7)]
    assert result.tolist() == expected


def test_folding_undoes_a_block() -> None:
    x = E.Sym("x")
    four = E.Const(4)
    merged = E.add(E.mul(E.floordiv(x, four), four), E.mod(x, four))
    assert merged == x
    assert E.add(E.Const(2), E.Const(3)) == E.Const(5)


# Random expression trees over + - * // % min max and the bitwise operators.
leaves = st.one_of(
    st.integers(min_value=-20, max_value=20).map(E.Const), st.sampled_from("abc").map(E.Sym)
)
trees = st.recursive(
    leaves,
    lambda children: st.one_of(
        st.tuples(
            st.sampled_from(["+", "-", "*", "//", "%", "^", "&", "|", "<", "=="]),
            children,
            children,
        ).map(lambda t: E.Bin(t[0], t[1], t[2])),
        st.tuples(st.sampled_from(["min", "max"]), st.lists(children, min_size=1, max_size=3)).map(
            lambda t: E.Call(t[0], tuple(t[1]))
        ),
        children.map(E.Neg),
    ),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(trees)
def test_printing_parses_back_to_the_same_tree(tree: E.Expr) -> None:
    reparsed = E.parse(str(tree))
    env = {"a": 7, "b": -3, "c": 5}
    try:
        expected = tree.evaluate(env)
    except E.ExprError:
        return
    assert reparsed.evaluate(env) == expected


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not on this machine")
def test_c_rendering_agrees_with_python(tmp_path: Path) -> None:
    texts = [
        "(a + 3) // 4",
        "-a // 3 + a % -3",
        "min(a, b, 2) * max(a, -b)",
        "(a ^ b) & 7 | (a << 2) >> 1",
        "(a < b) + (a >= b) * 2 + (a != b)",
        "root(b * b, 2)",
        "root(a, 2) + a // b",
    ]
    points = [(a, b) for a in (-7, -1, 0, 5, 9) for b in (-3, 0, 1, 4)]
    rows = []
    expected: list[int | None] = []
    for text in texts:
        parsed = E.parse(text)
        rows.append(
            f"    relayout_bad = 0; value = {parsed.to_c()};"
            ' printf("%lld %d\\n", (long long)value, relayout_bad);'
        )
        for a, b in points:
            try:
                expected.append(int(parsed.evaluate({"a": a, "b": b})))
            except E.ExprError:
                expected.append(None)
    body = []
    for a, b in points:
        body.append(f"  {{ int64_t a = {a}, b = {b}, value; int relayout_bad; (void)a; (void)b;")
        body.extend(rows)
        body.append("  }")
    source = "#include <stdint.h>\n#include <stdio.h>\n" + E.C_PRELUDE
    source += "int main(void) {\n" + "\n".join(body) + "\n  return 0;\n}\n"
    (tmp_path / "e.c").write_text(source)
    subprocess.run(
        ["gcc", "-std=c99", "-O1", "-o", str(tmp_path / "e"), str(tmp_path / "e.c")], check=True
    )
    output = subprocess.run(
        [str(tmp_path / "e")], check=True, capture_output=True, text=True
    ).stdout.splitlines()
    ordered = []
    for p in range(len(points)):
        for t in range(len(texts)):
            ordered.append(expected[t * len(points) + p])
    for line, want in zip(output, ordered, strict=True):
        value, bad = (int(word) for word in line.split())
        # The C flags exactly what Python refuses, and otherwise agrees on the value.
        assert bool(bad) == (want is None), line
        if want is not None:
            assert value == want


@pytest.mark.parametrize(
    ("text", "position"),
    [("i0 * 1180591620717411303424", 5), ("9223372036854775808", 0), (2**70, None)],
)
def test_integers_outside_int64_are_refused_with_the_position(
    text: str | int, position: int | None
) -> None:
    with pytest.raises(E.ExprError, match="outside int64") as caught:
        E.parse(text)
    assert caught.value.position == position
    assert E.parse(str(2**63 - 1)) == E.Const(2**63 - 1)


def test_a_chain_of_one_precedence_is_one_level_of_nesting() -> None:
    chain = E.parse(" + ".join(["1"] * 300))
    assert chain.evaluate() == 300
    assert E.parse(" - ".join(["N"] * 300)) == E.parse(" - ".join(["N"] * 300))
    assert E.parse("(" * 250 + "1" + ")" * 250) == E.Const(1)
    with pytest.raises(E.ExprError, match="nested deeper than 200"):
        E.parse("1 + (" * 201 + "1" + ")" * 201)
    with pytest.raises(E.ExprError, match="operators along one path"):
        E.parse(" + ".join(["1"] * (E.MAX_HEIGHT + 1)))
