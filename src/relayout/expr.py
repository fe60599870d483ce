"""Integer expressions of the request language: a safe parser (no eval), evaluation over ints or numpy
arrays, canonical printing, C rendering, and the folding constructors the digit algebra builds with."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Union

import numpy as np

__all__ = [
    "C_PRELUDE",
    "Bin",
    "Call",
    "Const",
    "Expr",
    "ExprError",
    "Neg",
    "Sym",
    "as_expr",
    "iroot",
    "parse",
]


class ExprError(ValueError):
    """An expression that does not parse or does not evaluate; `position` is the 0-based offset."""

    def __init__(self, message: str, position: int | None = None) -> None:
        self.position = position
        where = f" at position {position}" if position is not None else ""
        super().__init__(f"{message}{where}")


# Binding strength of each binary operator; higher binds tighter (Python's order).
PRECEDENCE = {
    "<": 1,
    "<=": 1,
    ">": 1,
    ">=": 1,
    "==": 1,
    "!=": 1,
    "|": 2,
    "^": 3,
    "&": 4,
    "<<": 5,
    ">>": 5,
    "+": 6,
    "-": 6,
    "*": 7,
    "//": 7,
    "%": 7,
}
UNARY_PRECEDENCE = 8
ARITHMETIC_OPERATORS = frozenset({"+", "-", "*", "//", "%"})
FUNCTIONS = {"min": (1, None), "max": (1, None), "root": (2, 2)}

Number = Union[int, "np.ndarray[Any, Any]"]


def iroot(value: int, k: int) -> int:
    """The exact integer k-th root of value; ExprError when value is not a k-th power."""
    if k < 1:
        raise ExprError(f"root(x, k) needs k >= 1, got {k}")
    if value < 0:
        raise ExprError(f"root of a negative number {value}")
    guess = round(value ** (1.0 / k)) if value else 0
    for candidate in (guess - 1, guess, guess + 1):
        if candidate >= 0 and candidate**k == value:
            return candidate
    # Large values: fall back to an exact integer search around the float estimate.
    low, high = 0, 1
    while high**k <= value:
        high *= 2
    while low < high - 1:
        middle = (low + high) // 2
        if middle**k <= value:
            low = middle
        else:
            high = middle
    if low**k == value:
        return low
    raise ExprError(f"root({value}, {k}) is not an integer")


def _is_array(value: object) -> bool:
    return isinstance(value, np.ndarray)


class Expr:
    """An integer expression; immutable, hashable, compared structurally."""

    __slots__ = ()

    def evaluate(self, env: Mapping[str, Any] | None = None) -> Any:
        """The value with `env`'s symbols bound (ints, or numpy integer arrays elementwise)."""
        return _evaluate(self, env or {})

    def symbols(self) -> frozenset[str]:
        """Every symbol the expression names."""
        found: set[str] = set()
        _collect_symbols(self, found)
        return frozenset(found)

    def to_c(self, names: Mapping[str, str] | None = None) -> str:
        """C99 int64_t text; // % min max root go through the helpers of C_PRELUDE."""
        return _to_c(self, names or {})

    def substitute(self, mapping: Mapping[str, Expr]) -> Expr:
        """The expression with each named symbol replaced, folded where constant."""
        return _substitute(self, mapping)

    def is_const(self) -> bool:
        return isinstance(self, Const)

    def const_value(self) -> int | None:
        return self.value if isinstance(self, Const) else None

    def __str__(self) -> str:
        return _to_text(self)


@dataclass(frozen=True, eq=True, slots=True)
class Const(Expr):
    value: int

    def __repr__(self) -> str:
        return f"Const({self.value})"


@dataclass(frozen=True, eq=True, slots=True)
class Sym(Expr):
    name: str

    def __repr__(self) -> str:
        return f"Sym({self.name!r})"


@dataclass(frozen=True, eq=True, slots=True)
class Neg(Expr):
    operand: Expr

    def __repr__(self) -> str:
        return f"Neg({self.operand!r})"


@dataclass(frozen=True, eq=True, slots=True)
class Bin(Expr):
    op: str
    left: Expr
    right: Expr

    def __repr__(self) -> str:
        return f"Bin({self.op!r}, {self.left!r}, {self.right!r})"

    # A chain `a + b + c ...` is a left spine as tall as it is long: these walk the spine in a
    # loop, where the generated methods would take several stack frames per term.
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Bin):
            return NotImplemented
        a: Expr = self
        b: Expr = other
        while isinstance(a, Bin) and isinstance(b, Bin):
            if a is b:
                return True
            if a.op != b.op or a.right != b.right:
                return False
            a, b = a.left, b.left
        if isinstance(a, Bin) or isinstance(b, Bin):
            return False
        return a == b

    def __hash__(self) -> int:
        parts: list[int] = []
        node: Expr = self
        while isinstance(node, Bin):
            parts.append(hash((node.op, node.right)))
            node = node.left
        return hash((hash(node), *parts))


@dataclass(frozen=True, eq=True, slots=True)
class Call(Expr):
    function: str
    args: tuple[Expr, ...]

    def __repr__(self) -> str:
        return f"Call({self.function!r}, {self.args!r})"


# ---------------------------------------------------------------------------------------------
# Parsing

TOKEN = re.compile(
    r"\s*(?:(?P<int>\d+)|(?P<name>[A-Za-z_][A-Za-z_0-9]*)"
    r"|(?P<op>//|<<|>>|<=|>=|==|!=|[-+*%()<>^&|,]))"
)
BITWISE_OPERATORS = frozenset({"^", "&", "|", "<<", ">>", "<", "<=", ">", ">=", "==", "!="})


MAX_DEPTH = 200
# A chain `a + b + c ...` is one level of nesting however long, but its tree is as tall as it is
# long, and evaluation, printing, hashing and substitution recurse over the tree: this bounds it.
MAX_HEIGHT = 320
# Every value is an int64 in the generated C.
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def _depth(expr: Expr) -> tuple[int, int]:
    """The nesting depth (a left operand continuing a chain of one precedence adds no level) and
    the height of the tree, without recursion (so a hostile input cannot exhaust the stack)."""
    deepest = tallest = 0
    stack: list[tuple[Expr, int, int]] = [(expr, 1, 1)]
    while stack:
        node, depth, height = stack.pop()
        deepest = max(deepest, depth)
        tallest = max(tallest, height)
        if isinstance(node, Neg):
            stack.append((node.operand, depth + 1, height + 1))
        elif isinstance(node, Bin):
            left = node.left
            chained = isinstance(left, Bin) and PRECEDENCE[left.op] == PRECEDENCE[node.op]
            stack.append((left, depth if chained else depth + 1, height + 1))
            stack.append((node.right, depth + 1, height + 1))
        elif isinstance(node, Call):
            stack.extend((arg, depth + 1, height + 1) for arg in node.args)
    return deepest, tallest


def _int64_const(value: int, position: int | None) -> Const:
    if not INT64_MIN <= value <= INT64_MAX:
        raise ExprError(f"integer {value} is outside int64", position)
    return Const(value)


def parse(text: str | int, *, bitwise: bool = True) -> Expr:
    """Parse integer expression text; `bitwise=False` refuses ^ & | << >> and comparisons.

    Raises ExprError carrying the 0-based position of the offending token.
    """
    if isinstance(text, bool):
        raise ExprError("an expression is an integer or text, not a boolean")
    if isinstance(text, int):
        return _int64_const(text, None)
    if not isinstance(text, str):
        raise ExprError(f"an expression is an integer or text, not {type(text).__name__}")
    tokens: list[tuple[str, str, int]] = []
    position = 0
    while position < len(text):
        if text[position:].strip() == "":
            break
        match = TOKEN.match(text, position)
        if not match:
            stripped = position + len(text[position:]) - len(text[position:].lstrip())
            raise ExprError(f"unexpected character {text[stripped]!r}", stripped)
        kind = match.lastgroup or ""
        start = match.start(kind)
        tokens.append((kind, match.group(kind), start))
        position = match.end()
    parser = _Parser(text, tokens, bitwise)
    try:
        result = parser.expression(0)
    except RecursionError:
        raise ExprError("expression nested too deeply", 0) from None
    depth, height = _depth(result)
    if depth > MAX_DEPTH:
        raise ExprError(f"expression nested deeper than {MAX_DEPTH} levels", 0)
    if height > MAX_HEIGHT:
        raise ExprError(f"expression has more than {MAX_HEIGHT} operators along one path", 0)
    if parser.index < len(tokens):
        kind, value, start = tokens[parser.index]
        raise ExprError(f"unexpected {value!r}", start)
    return result


class _Parser:
    def __init__(self, text: str, tokens: list[tuple[str, str, int]], bitwise: bool) -> None:
        self.text = text
        self.tokens = tokens
        self.index = 0
        self.bitwise = bitwise

    def peek(self) -> tuple[str, str, int] | None:
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def take(self) -> tuple[str, str, int]:
        token = self.peek()
        if token is None:
            raise ExprError("unexpected end of expression", len(self.text))
        self.index += 1
        return token

    def expect(self, value: str) -> None:
        token = self.peek()
        if token is None or token[0] != "op" or token[1] != value:
            where = token[2] if token else len(self.text)
            found = repr(token[1]) if token else "the end"
            raise ExprError(f"expected {value!r}, found {found}", where)
        self.index += 1

    def expression(self, min_precedence: int) -> Expr:
        left = self.unary()
        while True:
            token = self.peek()
            if token is None or token[0] != "op" or token[1] not in PRECEDENCE:
                return left
            op = token[1]
            precedence = PRECEDENCE[op]
            if precedence < min_precedence:
                return left
            if op in BITWISE_OPERATORS and not self.bitwise:
                raise ExprError(
                    f"operator {op!r} is accepted only in shuffle's f and f_inv "
                    "(elsewhere: + - * // % min max root)",
                    token[2],
                )
            self.index += 1
            right = self.expression(precedence + 1)
            if precedence == 1:
                following = self.peek()
                if following and following[0] == "op" and PRECEDENCE.get(following[1]) == 1:
                    raise ExprError("comparisons do not chain; add parentheses", following[2])
            left = Bin(op, left, right)

    def unary(self) -> Expr:
        token = self.peek()
        if token and token[0] == "op" and token[1] == "-":
            self.index += 1
            operand = self.unary()
            if isinstance(operand, Const):
                return _int64_const(-operand.value, token[2])
            return Neg(operand)
        if token and token[0] == "op" and token[1] == "+":
            self.index += 1
            return self.unary()
        return self.atom()

    def atom(self) -> Expr:
        kind, value, start = self.take()
        if kind == "int":
            return _int64_const(int(value), start)
        if kind == "name":
            following = self.peek()
            if following and following[0] == "op" and following[1] == "(":
                return self.call(value, start)
            return Sym(value)
        if value == "(":
            inner = self.expression(0)
            self.expect(")")
            return inner
        raise ExprError(f"unexpected {value!r}", start)

    def call(self, name: str, start: int) -> Expr:
        if name not in FUNCTIONS:
            raise ExprError(f"unknown function {name!r} (known: min, max, root)", start)
        self.expect("(")
        args = [self.expression(0)]
        while True:
            token = self.peek()
            if token and token[0] == "op" and token[1] == ",":
                self.index += 1
                args.append(self.expression(0))
                continue
            break
        self.expect(")")
        low, high = FUNCTIONS[name]
        if len(args) < low or (high is not None and len(args) > high):
            wanted = f"{low}" if low == high else f"at least {low}"
            raise ExprError(f"{name}() takes {wanted} arguments, got {len(args)}", start)
        if name == "root" and not isinstance(args[1], Const):
            raise ExprError("root(x, k) needs a constant integer k", start)
        return Call(name, tuple(args))


# ---------------------------------------------------------------------------------------------
# Evaluation


def _floordiv(a: Any, b: Any) -> Any:
    if _is_array(a) or _is_array(b):
        b_array = np.asarray(b)
        if np.any(b_array == 0):
            raise ExprError("division by zero")
        return np.floor_divide(a, b)
    if b == 0:
        raise ExprError("division by zero")
    return a // b


def _floormod(a: Any, b: Any) -> Any:
    if _is_array(a) or _is_array(b):
        if np.any(np.asarray(b) == 0):
            raise ExprError("modulo by zero")
        return np.mod(a, b)
    if b == 0:
        raise ExprError("modulo by zero")
    return a % b


def _compare(function: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    def compare(a: Any, b: Any) -> Any:
        result = function(a, b)
        if isinstance(result, np.ndarray):
            return result.astype(np.int64)
        return int(bool(result))

    return compare


def _shift_left(a: Any, b: Any) -> Any:
    if np.any(np.asarray(b) < 0):
        raise ExprError("negative shift count")
    return np.left_shift(a, b) if (_is_array(a) or _is_array(b)) else a << b


def _shift_right(a: Any, b: Any) -> Any:
    if np.any(np.asarray(b) < 0):
        raise ExprError("negative shift count")
    return np.right_shift(a, b) if (_is_array(a) or _is_array(b)) else a >> b


BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "//": _floordiv,
    "%": _floormod,
    "^": lambda a, b: a ^ b,
    "&": lambda a, b: a & b,
    "|": lambda a, b: a | b,
    "<<": _shift_left,
    ">>": _shift_right,
    "<": _compare(lambda a, b: a < b),
    "<=": _compare(lambda a, b: a <= b),
    ">": _compare(lambda a, b: a > b),
    ">=": _compare(lambda a, b: a >= b),
    "==": _compare(lambda a, b: a == b),
    "!=": _compare(lambda a, b: a != b),
}


def _root(value: Any, k: Any) -> Any:
    if _is_array(value):
        flat = np.asarray(value).ravel()
        return np.array([iroot(int(v), int(k)) for v in flat], dtype=np.int64).reshape(
            np.shape(value)
        )
    return iroot(int(value), int(k))


def _evaluate(expr: Expr, env: Mapping[str, Any]) -> Any:
    if isinstance(expr, Const):
        return expr.value
    if isinstance(expr, Sym):
        if expr.name not in env:
            raise ExprError(f"unbound symbol {expr.name!r}")
        value = env[expr.name]
        return value if _is_array(value) else int(value)
    if isinstance(expr, Neg):
        return -_evaluate(expr.operand, env)
    if isinstance(expr, Bin):
        return BINARY[expr.op](_evaluate(expr.left, env), _evaluate(expr.right, env))
    if isinstance(expr, Call):
        values = [_evaluate(arg, env) for arg in expr.args]
        if expr.function == "root":
            return _root(values[0], values[1])
        if any(_is_array(v) for v in values):
            reduce = np.minimum if expr.function == "min" else np.maximum
            result = values[0]
            for value in values[1:]:
                result = reduce(result, value)
            return result
        return min(values) if expr.function == "min" else max(values)
    raise TypeError(f"not an expression: {expr!r}")


def _collect_symbols(expr: Expr, found: set[str]) -> None:
    if isinstance(expr, Sym):
        found.add(expr.name)
    elif isinstance(expr, Neg):
        _collect_symbols(expr.operand, found)
    elif isinstance(expr, Bin):
        _collect_symbols(expr.left, found)
        _collect_symbols(expr.right, found)
    elif isinstance(expr, Call):
        for arg in expr.args:
            _collect_symbols(arg, found)


# ---------------------------------------------------------------------------------------------
# Printing


def _to_text(expr: Expr) -> str:
    if isinstance(expr, Const):
        return str(expr.value) if expr.value >= 0 else f"({expr.value})"
    if isinstance(expr, Sym):
        return expr.name
    if isinstance(expr, Neg):
        inner = _to_text(expr.operand)
        if isinstance(expr.operand, Bin):
            inner = f"({inner})"
        return f"-{inner}"
    if isinstance(expr, Call):
        return f"{expr.function}({', '.join(_to_text(arg) for arg in expr.args)})"
    if isinstance(expr, Bin):
        precedence = PRECEDENCE[expr.op]
        left = _to_text(expr.left)
        right = _to_text(expr.right)
        if isinstance(expr.left, Bin) and PRECEDENCE[expr.left.op] < precedence:
            left = f"({left})"
        if precedence == 1 and isinstance(expr.left, Bin) and PRECEDENCE[expr.left.op] == 1:
            left = f"({left})"
        if isinstance(expr.right, Bin) and PRECEDENCE[expr.right.op] <= precedence:
            right = f"({right})"
        return f"{left} {expr.op} {right}"
    raise TypeError(f"not an expression: {expr!r}")


C_PRELUDE = """\
static inline int64_t relayout_floordiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
static inline int64_t relayout_floormod(int64_t a, int64_t b) {
    int64_t r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
static inline int64_t relayout_min(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t relayout_max(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t relayout_root(int64_t x, int64_t k) {
    /* floor of the k-th root; relayout checks exactness before a kernel is generated */
    int64_t r = 0;
    for (;;) {
        int64_t next = r + 1, power = 1;
        for (int64_t i = 0; i < k; ++i) power *= next;
        if (power > x) return r;
        r = next;
    }
}
"""

C_OPERATOR = {"+": "+", "-": "-", "*": "*", "^": "^", "&": "&", "|": "|", "<<": "<<", ">>": ">>"}


def _to_c(expr: Expr, names: Mapping[str, str]) -> str:
    if isinstance(expr, Const):
        return f"INT64_C({expr.value})" if expr.value >= 0 else f"(-INT64_C({-expr.value}))"
    if isinstance(expr, Sym):
        return names.get(expr.name, expr.name)
    if isinstance(expr, Neg):
        return f"(-{_to_c(expr.operand, names)})"
    if isinstance(expr, Call):
        args = [_to_c(arg, names) for arg in expr.args]
        if expr.function == "root":
            return f"relayout_root({args[0]}, {args[1]})"
        helper = f"relayout_{expr.function}"
        result = args[0]
        for arg in args[1:]:
            result = f"{helper}({result}, {arg})"
        return result
    if isinstance(expr, Bin):
        left, right = _to_c(expr.left, names), _to_c(expr.right, names)
        if expr.op == "//":
            return f"relayout_floordiv({left}, {right})"
        if expr.op == "%":
            return f"relayout_floormod({left}, {right})"
        if expr.op in C_OPERATOR:
            return f"({left} {C_OPERATOR[expr.op]} {right})"
        return f"((int64_t)({left} {expr.op} {right}))"
    raise TypeError(f"not an expression: {expr!r}")


# ---------------------------------------------------------------------------------------------
# Folding constructors: the digit algebra builds expressions through these so that constants fold
# and an inverse operation gives back the expression it started from.


def as_expr(value: Expr | int | str) -> Expr:
    if isinstance(value, Expr):
        return value
    return parse(value)


def add(a: Expr, b: Expr) -> Expr:
    if isinstance(a, Const) and isinstance(b, Const):
        return Const(a.value + b.value)
    if a == Const(0):
        return b
    if b == Const(0):
        return a
    # (x // f) * f + x % f == x: the merge of a block's coarse and fine digits.
    if (
        isinstance(a, Bin)
        and a.op == "*"
        and isinstance(a.left, Bin)
        and a.left.op == "//"
        and isinstance(b, Bin)
        and b.op == "%"
        and a.left.left == b.left
        and a.left.right == a.right == b.right
    ):
        return b.left
    # a + (x - a) == x: what a split's inverse leaves.
    if isinstance(b, Bin) and b.op == "-" and b.right == a:
        return b.left
    if isinstance(b, Const) and b.value < 0:
        return Bin("-", a, Const(-b.value))
    return Bin("+", a, b)


def sub(a: Expr, b: Expr) -> Expr:
    if isinstance(a, Const) and isinstance(b, Const):
        return Const(a.value - b.value)
    if b == Const(0):
        return a
    if a == b:
        return Const(0)
    # (x + c) - c == x: what an offset's inverse leaves.
    if isinstance(a, Bin) and a.op == "+" and a.right == b:
        return a.left
    return Bin("-", a, b)


def mul(a: Expr, b: Expr) -> Expr:
    if isinstance(a, Const) and isinstance(b, Const):
        return Const(a.value * b.value)
    if Const(0) in (a, b):
        return Const(0)
    if a == Const(1):
        return b
    if b == Const(1):
        return a
    return Bin("*", a, b)


def floordiv(a: Expr, b: Expr) -> Expr:
    if isinstance(a, Const) and isinstance(b, Const) and b.value != 0:
        return Const(a.value // b.value)
    if b == Const(1):
        return a
    # (x * f + y) // f == x when 0 <= y < f is not known here, so only the exact product folds.
    if isinstance(a, Bin) and a.op == "*" and a.right == b and isinstance(b, Const) and b.value:
        return a.left
    return Bin("//", a, b)


def mod(a: Expr, b: Expr) -> Expr:
    if isinstance(a, Const) and isinstance(b, Const) and b.value != 0:
        return Const(a.value % b.value)
    if b == Const(1):
        return Const(0)
    return Bin("%", a, b)


def ceil_div(a: Expr, b: Expr) -> Expr:
    if isinstance(b, Const) and b.value == 1:
        return a
    return floordiv(add(a, sub(b, Const(1))), b)


def binary(op: str, a: Expr, b: Expr) -> Expr:
    """Any binary operator, folded when both sides are constant."""
    builders: dict[str, Callable[[Expr, Expr], Expr]] = {
        "+": add,
        "-": sub,
        "*": mul,
        "//": floordiv,
        "%": mod,
    }
    if op in builders:
        return builders[op](a, b)
    if isinstance(a, Const) and isinstance(b, Const):
        try:
            return Const(int(BINARY[op](a.value, b.value)))
        except ExprError:
            pass
    if op == "^" and b == Const(0):
        return a
    return Bin(op, a, b)


def call(function: str, args: Iterable[Expr]) -> Expr:
    arguments = tuple(args)
    if all(isinstance(arg, Const) for arg in arguments):
        values = [arg.value for arg in arguments if isinstance(arg, Const)]
        if function == "min":
            return Const(min(values))
        if function == "max":
            return Const(max(values))
        if function == "root":
            try:
                return Const(iroot(values[0], values[1]))
            except ExprError:
                pass
    if function in ("min", "max") and len(arguments) == 1:
        return arguments[0]
    return Call(function, arguments)


def _substitute(expr: Expr, mapping: Mapping[str, Expr]) -> Expr:
    if isinstance(expr, Const):
        return expr
    if isinstance(expr, Sym):
        return mapping.get(expr.name, expr)
    if isinstance(expr, Neg):
        operand = _substitute(expr.operand, mapping)
        return Const(-operand.value) if isinstance(operand, Const) else Neg(operand)
    if isinstance(expr, Bin):
        return binary(expr.op, _substitute(expr.left, mapping), _substitute(expr.right, mapping))
    if isinstance(expr, Call):
        return call(expr.function, (_substitute(arg, mapping) for arg in expr.args))
    raise TypeError(f"not an expression: {expr!r}")
