"""Integer expressions of the request language: a safe parser (no eval), int64 evaluation over ints
or numpy arrays that refuses every step leaving int64, canonical printing, C rendering without
undefined behaviour, and the folding constructors the digit algebra builds with.

Every value is an int64, as in the generated C: a sum, difference, product, negation, shift or
quotient whose value leaves int64 is an overflow (ExprOverflow), and so is a shift count outside
0..63; `root(x, k)` takes a constant k in 1..64. Parsing bounds the text's length, nesting and
height; substitution bounds the size and height of what it builds, so that no expression costs
more than a bounded amount of work to check, evaluate or print.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Union

import numpy as np

__all__ = [
    "C_PRELUDE",
    "INT64_MAX",
    "INT64_MIN",
    "MAX_LENGTH",
    "MAX_NODES",
    "MAX_ROOT_DEGREE",
    "MAX_SHIFT",
    "Bin",
    "Call",
    "Const",
    "Expr",
    "ExprError",
    "ExprOverflow",
    "ExprTooLarge",
    "Neg",
    "Sym",
    "as_expr",
    "c_proof",
    "iroot",
    "parse",
    "quote",
    "substitution_budget",
    "walk",
]


class ExprError(ValueError):
    """An expression that does not parse or does not evaluate; `position` is the 0-based offset,
    `cell` the flat index of the first offending element where numpy arrays were evaluated."""

    def __init__(self, message: str, position: int | None = None, cell: int | None = None) -> None:
        self.position = position
        self.cell = cell
        self.reason = message
        where = f" at position {position}" if position is not None else ""
        super().__init__(f"{message}{where}")


class ExprOverflow(ExprError):
    """A step of an evaluation whose value leaves int64, or a shift count outside 0..63."""


class ExprTooLarge(ExprError):
    """A substitution whose result would pass MAX_NODES nodes or MAX_BUILT_HEIGHT levels, or
    that would pass the request's substitution_budget."""


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

# Every value is an int64, as in the generated C.
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
# A shift count is 0..MAX_SHIFT; root(x, k) takes 1 <= k <= MAX_ROOT_DEGREE.
MAX_SHIFT = 63
MAX_ROOT_DEGREE = 64
# The longest expression text accepted.
MAX_LENGTH = 4096
# The most nodes (operators and operands) an expression may grow to as substitution composes
# the operations of a request, and the most levels tall it may grow.
MAX_NODES = 2**15
MAX_BUILT_HEIGHT = 480
# How much of an expression an error message quotes.
QUOTED = 80


def quote(expr: Expr) -> str:
    """The expression's text for a message, cut to QUOTED characters."""
    text = str(expr)
    return text if len(text) <= QUOTED else text[: QUOTED - 3] + "..."


def iroot(value: int, k: int) -> int:
    """The exact integer k-th root of value (1 <= k <= 64); ExprError when value is negative or
    not a k-th power."""
    if not 1 <= k <= MAX_ROOT_DEGREE:
        raise ExprError(f"root(x, k) needs 1 <= k <= {MAX_ROOT_DEGREE}, got {k}")
    if value < 0:
        raise ExprError(f"root of a negative number {value}")
    if k == 1:
        return value
    # value < 2**bits, so its root is below 2**(bits // k + 1): a short bisection finds it.
    high = 1 << (value.bit_length() // k + 1)
    low = 0
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
        """The int64 value with `env`'s symbols bound (ints, or numpy integer arrays elementwise).

        ExprOverflow when a step leaves int64 (or shifts by a count outside 0..63), naming the
        step; ExprError for an unbound symbol, a division by zero or an inexact root.
        """
        return _evaluate(self, env or {})

    def symbols(self) -> frozenset[str]:
        """Every symbol the expression names."""
        return frozenset(node.name for node in walk(self) if isinstance(node, Sym))

    def to_c(self, names: Mapping[str, str] | None = None, flag: str = "relayout_bad") -> str:
        """C99 int64_t text with no undefined behaviour: every step that can overflow, divide by
        zero, shift too far or take an inexact root goes through a checked helper of C_PRELUDE,
        which sets the int variable `flag` to 1 where Python's evaluation would refuse it (the
        value is then meaningless) and leaves it alone otherwise."""
        return _to_c(self, names or {}, flag)

    def to_c_unchecked(self, names: Mapping[str, str] | None = None) -> str:
        """C99 int64_t text without checks, exact only where c_proof has shown every step to
        stay in range (where it has not, a step could overflow: use to_c)."""
        return _to_c_unchecked(self, names or {})

    def substitute(self, mapping: Mapping[str, Expr]) -> Expr:
        """The expression with each named symbol replaced, folded where constant.

        ExprTooLarge when the result would grow past MAX_NODES nodes or MAX_BUILT_HEIGHT levels
        (or pass the request's substitution_budget).
        """
        return _substitute_bounded(self, mapping)

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
SHIFTS = frozenset({"<<", ">>"})


MAX_DEPTH = 200
# A chain `a + b + c ...` is one level of nesting however long, but its tree is as tall as it is
# long, and printing, hashing and substitution recurse over the tree: this bounds it.
MAX_HEIGHT = 320


def _children(node: Expr) -> tuple[Expr, ...]:
    if isinstance(node, Neg):
        return (node.operand,)
    if isinstance(node, Bin):
        return (node.left, node.right)
    if isinstance(node, Call):
        return node.args
    return ()


def walk(expr: Expr) -> Iterable[Expr]:
    """Every node of the tree, without recursion."""
    stack = [expr]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(_children(node))


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


def _size_and_height(expr: Expr, cap: int) -> tuple[int, int]:
    """The node count (counting stops past `cap`) and the height of the tree, without recursion."""
    count = tallest = 0
    stack: list[tuple[Expr, int]] = [(expr, 1)]
    while stack and count <= cap:
        node, height = stack.pop()
        count += 1
        tallest = max(tallest, height)
        stack.extend((child, height + 1) for child in _children(node))
    return count, tallest


def _int64_const(value: int, position: int | None) -> Const:
    if not INT64_MIN <= value <= INT64_MAX:
        raise ExprError(f"integer {value} is outside int64", position)
    return Const(value)


def parse(text: str | int, *, bitwise: bool = True) -> Expr:
    """Parse integer expression text; `bitwise=False` refuses ^ & | << >> and comparisons.

    Raises ExprError carrying the 0-based position of the offending token: for text longer than
    MAX_LENGTH, nested deeper than MAX_DEPTH or taller than MAX_HEIGHT, an integer outside int64,
    a constant shift count outside 0..63 and a root degree outside 1..64.
    """
    if isinstance(text, bool):
        raise ExprError("an expression is an integer or text, not a boolean")
    if isinstance(text, int):
        return _int64_const(text, None)
    if not isinstance(text, str):
        raise ExprError(f"an expression is an integer or text, not {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise ExprError(f"expression is longer than {MAX_LENGTH} characters", MAX_LENGTH)
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
            if op in SHIFTS:
                _check_constant_shift(left, token[2])

    def unary(self) -> Expr:
        token = self.peek()
        if token and token[0] == "op" and token[1] == "-":
            self.index += 1
            following = self.peek()
            if following and following[0] == "int":
                # A negative literal is one integer, so that -9223372036854775808 is int64's least.
                self.index += 1
                return _int64_const(-int(following[1]), token[2])
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
        if name == "root":
            degree = args[1]
            if not isinstance(degree, Const):
                raise ExprError("root(x, k) needs a constant integer k", start)
            if not 1 <= degree.value <= MAX_ROOT_DEGREE:
                raise ExprError(
                    f"root(x, k) needs 1 <= k <= {MAX_ROOT_DEGREE}, got k = {degree.value} in "
                    f"{quote(Call(name, tuple(args)))}",
                    start,
                )
        return Call(name, tuple(args))


def _check_constant_shift(shift: Bin, position: int) -> None:
    """Refuse a shift whose count is constant and outside 0..63 (or does not evaluate)."""
    count = shift.right
    if isinstance(count, Const):
        value = count.value
    elif count.symbols():
        return
    else:
        try:
            value = int(_evaluate(count, {}))
        except ExprError as error:
            raise ExprError(
                f"the shift count of {quote(shift)}: {error.reason}", position
            ) from None
    if not 0 <= value <= MAX_SHIFT:
        raise ExprError(
            f"shift count {value} of {quote(shift)} is outside 0..{MAX_SHIFT}", position
        )


# ---------------------------------------------------------------------------------------------
# Evaluation: int64 semantics. Python ints are checked against int64 after each step (int64
# operands keep every intermediate under 128 bits, and a shift count is checked before the
# shift); numpy int64 arrays wrap, so each step tests its own overflow from the wrapped result.


def _overflow(node: Expr, value: int, cell: int | None = None) -> ExprOverflow:
    return ExprOverflow(f"{quote(node)} is {value}, outside int64", cell=cell)


def _first(mask: Any) -> int:
    return int(np.flatnonzero(mask)[0])


def _at(value: Any, cell: int) -> int:
    return int(value.flat[cell]) if _is_array(value) else int(value)


def _checked_scalar(node: Expr, value: int) -> int:
    if not INT64_MIN <= value <= INT64_MAX:
        raise _overflow(node, value)
    return value


def _exact(node: Bin | Neg, values: list[int]) -> int:
    """The true value of one step over int64 operands (a shift count 0..63): under 128 bits."""
    if isinstance(node, Neg):
        return -values[0]
    a, b = values
    if node.op == "+":
        return a + b
    if node.op == "-":
        return a - b
    if node.op == "*":
        return a * b
    if node.op == "//":
        return a // b
    return a << b


def _refuse_overflow(node: Bin | Neg, bad: Any, operands: tuple[Any, ...]) -> None:
    """ExprOverflow naming the first element where `bad` holds, with its true value."""
    if not np.any(bad):
        return
    shape = np.broadcast(*operands).shape
    cell = _first(np.broadcast_to(bad, shape))
    values = [_at(np.broadcast_to(value, shape), cell) for value in operands]
    raise _overflow(node, _exact(node, values), cell)


def _shift_count(node: Bin, count: Any) -> Any:
    """The count where it is 0..63; ExprOverflow naming the first one outside."""
    bad = (np.asarray(count) < 0) | (np.asarray(count) > MAX_SHIFT)
    if np.any(bad):
        cell = _first(bad) if _is_array(count) else None
        value = _at(count, cell) if cell is not None else int(count)
        raise ExprOverflow(
            f"shift count {value} of {quote(node)} is outside 0..{MAX_SHIFT}", cell=cell
        )
    return count


SCALAR_OPERATORS: dict[str, Callable[[int, int], Any]] = {
    "^": lambda a, b: a ^ b,
    "&": lambda a, b: a & b,
    "|": lambda a, b: a | b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
}
ARRAY_OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "^": np.bitwise_xor,
    "&": np.bitwise_and,
    "|": np.bitwise_or,
    "<": np.less,
    "<=": np.less_equal,
    ">": np.greater,
    ">=": np.greater_equal,
    "==": np.equal,
    "!=": np.not_equal,
}


def _binary_scalar(node: Bin, a: int, b: int) -> int:
    op = node.op
    if op == "+":
        return _checked_scalar(node, a + b)
    if op == "-":
        return _checked_scalar(node, a - b)
    if op == "*":
        return _checked_scalar(node, a * b)
    if op == "//":
        if b == 0:
            raise ExprError(f"division by zero in {quote(node)}")
        return _checked_scalar(node, a // b)
    if op == "%":
        if b == 0:
            raise ExprError(f"modulo by zero in {quote(node)}")
        return a % b
    if op == "<<":
        return _checked_scalar(node, a << _shift_count(node, b))
    if op == ">>":
        return a >> _shift_count(node, b)
    return int(SCALAR_OPERATORS[op](a, b))


def _product_overflows(a: Any, b: Any, product: Any) -> Any:
    """Where the wrapped int64 `product` of a and b (one of them an array) is not their true
    product."""
    if not _is_array(a):
        a, b = b, a
    if not _is_array(b):
        # A scalar factor: the other must lie within int64's bounds divided by it.
        if b == 0:
            return np.zeros(np.shape(a), dtype=bool)
        if b > 0:
            low, high = -(-INT64_MIN // b), INT64_MAX // b
        else:
            low, high = -(INT64_MAX // -b), INT64_MIN // b
        return (a < low) | (a > high)
    # Two arrays: a float product well inside int64 settles most elements at once. For the rest,
    # where the wrapped product divided by a gives b back it is the true product (a true product
    # outside int64 differs from the wrapped one by a multiple of 2**64, more than |a|); a == -1
    # overflows only at b == INT64_MIN.
    bad = np.zeros(np.broadcast(a, b).shape, dtype=bool)
    unsure = np.flatnonzero(np.abs(a.astype(np.float64) * b) >= 2.0**62)
    if unsure.size:
        a, b, product = (np.broadcast_to(v, bad.shape).ravel()[unsure] for v in (a, b, product))
        unit = (a == 0) | (a == -1)
        quotient = np.floor_divide(product, np.where(unit, 1, a))
        bad.ravel()[unsure] = np.where(a == -1, b == INT64_MIN, ~unit & (quotient != b))
    return bad


def _binary_array(node: Bin, a: Any, b: Any) -> Any:
    op = node.op
    if op in ARRAY_OPERATORS:
        result = ARRAY_OPERATORS[op](a, b)
        return result.astype(np.int64) if result.dtype == bool else result
    if op in ("+", "-") and not _is_array(b):
        # A scalar term: one comparison against int64's bound shifted by it.
        step = b if op == "+" else -b
        result = np.add(a, b) if op == "+" else np.subtract(a, b)
        bad = a > INT64_MAX - step if step > 0 else a < INT64_MIN - step
        _refuse_overflow(node, bad, (a, b))
        return result
    if op in ("+", "-"):
        result = np.add(a, b) if op == "+" else np.subtract(a, b)
        # Overflow: a + b when a and b share a sign the result lacks, a - b when a and b differ
        # in sign and the result's is b's (for -, other ^ result is a ^ b).
        other = b if op == "+" else a ^ b ^ result
        bad = ((a ^ result) & (other ^ result)) < 0
        _refuse_overflow(node, bad, (a, b))
        return result
    if op == "*":
        result = np.multiply(a, b)
        _refuse_overflow(node, _product_overflows(a, b, result), (a, b))
        return result
    if op in ("//", "%"):
        zero = np.asarray(b) == 0
        if np.any(zero):
            cell = _first(np.broadcast_to(zero, np.broadcast(a, b).shape))
            word = "division" if op == "//" else "modulo"
            raise ExprError(f"{word} by zero in {quote(node)}", cell=cell)
        minus_one = np.asarray(b) == -1
        safe = np.where(minus_one, 1, b)
        if op == "//":
            _refuse_overflow(node, (np.asarray(a) == INT64_MIN) & minus_one, (a, b))
            return np.where(minus_one, np.negative(a), np.floor_divide(a, safe))
        # x % -1 is 0 (numpy's INT64_MIN % -1 is not to be trusted).
        return np.where(minus_one, 0, np.mod(a, safe))
    count = _shift_count(node, b)
    if op == ">>":
        return np.right_shift(a, count)
    result = np.left_shift(a, count)
    _refuse_overflow(node, np.right_shift(result, count) != a, (a, b))
    return result


def _root_array(node: Call, value: Any, k: int) -> Any:
    """The exact k-th roots of an int64 array, vectorised: a float estimate, then an exact test
    of it and its neighbours (their k-th powers wrap in uint64; a true power of 2**64 or more is
    ruled out by the float estimate, one in 2**63 .. 2**64 wraps to no int64 value)."""
    if not 1 <= k <= MAX_ROOT_DEGREE:
        raise ExprError(f"root(x, k) needs 1 <= k <= {MAX_ROOT_DEGREE}, got {k}")
    negative = value < 0
    if np.any(negative):
        cell = _first(negative)
        raise ExprError(f"root of a negative number {_at(value, cell)} in {quote(node)}", cell=cell)
    if k == 1:
        return value
    estimate = np.rint(np.power(value.astype(np.float64), 1.0 / k)).astype(np.int64)
    found = np.full(value.shape, -1, dtype=np.int64)
    flat_value, flat_estimate, flat_found = value.ravel(), estimate.ravel(), found.ravel()
    unsure = np.arange(value.size)
    for delta in (0, -1, 1):
        candidate = np.maximum(flat_estimate[unsure] + delta, 0)
        small = np.power(candidate.astype(np.float64), k) < 1.5 * 2.0**63
        power = np.power(candidate.astype(np.uint64), np.uint64(k))
        exact = small & (power == flat_value[unsure].astype(np.uint64))
        flat_found[unsure[exact]] = candidate[exact]
        unsure = unsure[~exact]
        if not unsure.size:
            break
    if unsure.size:
        cell = int(unsure[0])
        raise ExprError(f"root({int(flat_value[cell])}, {k}) is not an integer", cell=cell)
    return found


def _bind(node: Sym, env: Mapping[str, Any]) -> Any:
    """The symbol's value as an int or an int64 array; None where it is unbound."""
    if node.name not in env:
        return None
    value = env[node.name]
    if _is_array(value):
        if value.dtype.kind not in "biu":
            raise ExprError(f"symbol {node.name!r} is bound to {value.dtype} values, not integers")
        if value.dtype.kind == "u" and value.size and int(value.max()) > INT64_MAX:
            raise ExprOverflow(f"symbol {node.name!r} is bound to a value outside int64")
        return value.astype(np.int64, copy=False)
    number = int(value)
    if not INT64_MIN <= number <= INT64_MAX:
        raise ExprOverflow(f"symbol {node.name!r} is {number}, outside int64")
    return number


def _apply(node: Expr, values: list[Any]) -> Any:
    """One step of the evaluation: `node` over its children's values (None where unknown)."""
    if any(value is None for value in values):
        return None
    arrays = any(_is_array(value) for value in values)
    if isinstance(node, Neg):
        (operand,) = values
        if arrays:
            _refuse_overflow(node, operand == INT64_MIN, (operand,))
            return np.negative(operand)
        return _checked_scalar(node, -operand)
    if isinstance(node, Bin):
        if arrays:
            with np.errstate(all="ignore"):
                return _binary_array(node, values[0], values[1])
        return _binary_scalar(node, values[0], values[1])
    if isinstance(node, Call):
        if node.function == "root":
            value, degree = values
            if _is_array(degree):
                raise ExprError("root(x, k) needs a constant integer k")
            if _is_array(value):
                with np.errstate(all="ignore"):
                    return _root_array(node, value, int(degree))
            return iroot(value, int(degree))
        if arrays:
            reduce = np.minimum if node.function == "min" else np.maximum
            result = values[0]
            for value in values[1:]:
                result = reduce(result, value)
            return np.asarray(result, dtype=np.int64)
        return min(values) if node.function == "min" else max(values)
    raise TypeError(f"not an expression: {node!r}")


def _evaluate(expr: Expr, env: Mapping[str, Any]) -> Any:
    """Post-order over the tree with an explicit stack. An unbound symbol makes its ancestors
    unknown rather than stopping the walk, so that a constant part that overflows is refused
    even where the symbols are not bound."""
    missing: list[str] = []
    results: list[Any] = []
    stack: list[tuple[Expr, bool]] = [(expr, False)]
    while stack:
        node, ready = stack.pop()
        if isinstance(node, Const):
            results.append(_checked_scalar(node, node.value))
        elif isinstance(node, Sym):
            value = _bind(node, env)
            if value is None:
                missing.append(node.name)
            results.append(value)
        elif not isinstance(node, Neg | Bin | Call):
            raise TypeError(f"not an expression: {node!r}")
        elif ready:
            count = len(_children(node))
            values = results[-count:]
            del results[-count:]
            results.append(_apply(node, values))
        else:
            stack.append((node, True))
            stack.extend((child, False) for child in reversed(_children(node)))
    (result,) = results
    if result is None:
        raise ExprError(f"unbound symbol {missing[0]!r}")
    return result


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


# The C helpers: each checked one sets *bad to 1 where Python's value would be an ExprOverflow or
# ExprError (the value it gives is then meaningless), and otherwise gives exactly Python's int64
# value. None has undefined behaviour: no signed overflow (a step that may wrap is done in uint64,
# whose wrap is defined, and converted back), no division by zero or INT64_MIN / -1 (the divisor
# is replaced where the step is refused), no shift of a negative number or by a count outside
# 0..63. They are branch-free where they can be, so that the kernels' loops still vectorise.
C_PRELUDE = """\
#define RELAYOUT_INT64_MAX INT64_C(9223372036854775807)
#define RELAYOUT_INT64_MIN (-RELAYOUT_INT64_MAX - 1)
static inline int64_t relayout_add(int64_t a, int64_t b, int *bad) {
    const uint64_t r = (uint64_t)a + (uint64_t)b;
    /* overflow: a and b share a sign that the sum lacks */
    *bad |= (int)((((uint64_t)a ^ r) & ((uint64_t)b ^ r)) >> 63);
    return (int64_t)r;
}
static inline int64_t relayout_sub(int64_t a, int64_t b, int *bad) {
    const uint64_t r = (uint64_t)a - (uint64_t)b;
    /* overflow: a and b differ in sign and the difference has b's */
    *bad |= (int)((((uint64_t)a ^ (uint64_t)b) & ((uint64_t)a ^ r)) >> 63);
    return (int64_t)r;
}
static inline int64_t relayout_mul(int64_t a, int64_t b, int *bad) {
    *bad |= a > 0 ? (b > 0 ? a > RELAYOUT_INT64_MAX / b : b < RELAYOUT_INT64_MIN / a)
                  : (b > 0 ? a < RELAYOUT_INT64_MIN / b : (a != 0 && b < RELAYOUT_INT64_MAX / a));
    return (int64_t)((uint64_t)a * (uint64_t)b);
}
static inline int64_t relayout_neg(int64_t a, int *bad) {
    *bad |= a == RELAYOUT_INT64_MIN;
    return (int64_t)((uint64_t)0 - (uint64_t)a);
}
static inline int64_t relayout_shl(int64_t a, int64_t b, int *bad) {
    /* a * 2**b: refused where b is outside 0..63 or the product leaves int64 */
    const int64_t s = b & 63;
    *bad |= b < 0 || b > 63 || a > (RELAYOUT_INT64_MAX >> s) || a < -(RELAYOUT_INT64_MAX >> s) - 1;
    return (int64_t)((uint64_t)a << s);
}
static inline int64_t relayout_shr(int64_t a, int64_t b, int *bad) {
    /* floor(a / 2**b): refused where b is outside 0..63; a negative a shifts as ~(~a >> b) */
    const int64_t s = b & 63;
    *bad |= b < 0 || b > 63;
    return a < 0 ? ~(~a >> s) : a >> s;
}
static inline int64_t relayout_floordiv(int64_t a, int64_t b, int *bad) {
    const int refused = b == 0 || (a == RELAYOUT_INT64_MIN && b == -1);
    const int64_t d = refused ? 1 : b;
    const int64_t q = a / d;
    *bad |= refused;
    return (a % d != 0 && ((a < 0) != (d < 0))) ? q - 1 : q;
}
static inline int64_t relayout_floormod(int64_t a, int64_t b, int *bad) {
    /* x % -1 is 0, as is x % 1: the divisor -1 becomes 1 (INT64_MIN % -1 is undefined in C) */
    const int64_t d = (b == 0 || b == -1) ? 1 : b;
    const int64_t r = a % d;
    *bad |= b == 0;
    return (r != 0 && ((r < 0) != (d < 0))) ? r + d : r;
}
static inline int64_t relayout_min(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t relayout_max(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int relayout_power_at_most(int64_t r, int64_t k, int64_t x) {
    /* r**k <= x, for r >= 1 and x >= 0, without overflow */
    int64_t power = 1;
    for (int64_t i = 0; i < k; ++i) {
        if (power > x / r) return 0;
        power *= r;
    }
    return 1;
}
static inline int64_t relayout_root(int64_t x, int64_t k, int *bad) {
    /* the exact k-th root; refused where x < 0, k is outside 1..64 or x is no k-th power */
    if (x < 0 || k < 1 || k > 64) { *bad = 1; return 0; }
    if (k == 1) return x;
    /* low**k <= x < high**k; 3037000500**2 exceeds int64 */
    int64_t low = 0, high = x < INT64_C(3037000500) ? x + 1 : INT64_C(3037000500);
    while (high - low > 1) {
        const int64_t middle = low + (high - low) / 2;
        if (relayout_power_at_most(middle, k, x)) low = middle; else high = middle;
    }
    int64_t power = low == 0 ? 0 : 1;
    for (int64_t i = 0; low != 0 && i < k; ++i) power *= low;
    if (power != x) { *bad = 1; return 0; }
    return low;
}
/* The unchecked steps, for code that c_proof has shown never to need the checks. */
static inline int64_t relayout_floordiv_exact(int64_t a, int64_t b) {
    const int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
static inline int64_t relayout_floormod_exact(int64_t a, int64_t b) {
    const int64_t r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
static inline int64_t relayout_shl_exact(int64_t a, int64_t b) {
    return (int64_t)((uint64_t)a << b);
}
static inline int64_t relayout_shr_exact(int64_t a, int64_t b) {
    return a < 0 ? ~(~a >> b) : a >> b;
}
/* Bounds on magnitudes for c_proof, in uint64, saturating at its largest value. */
#define RELAYOUT_BOUND_MAX (~(uint64_t)0)
static inline uint64_t relayout_magnitude(int64_t x) {
    return x < 0 ? (uint64_t)0 - (uint64_t)x : (uint64_t)x;
}
static inline uint64_t relayout_bound_add(uint64_t a, uint64_t b) {
    return a > RELAYOUT_BOUND_MAX - b ? RELAYOUT_BOUND_MAX : a + b;
}
static inline uint64_t relayout_bound_mul(uint64_t a, uint64_t b) {
    return b != 0 && a > RELAYOUT_BOUND_MAX / b ? RELAYOUT_BOUND_MAX : a * b;
}
static inline uint64_t relayout_bound_shl(uint64_t a, int64_t b) {
    return b < 0 || b > 63 ? RELAYOUT_BOUND_MAX : relayout_bound_mul(a, (uint64_t)1 << b);
}
static inline uint64_t relayout_bound_max(uint64_t a, uint64_t b) { return a > b ? a : b; }
static inline uint64_t relayout_bound_bits(uint64_t a) {
    /* the least power of two above a: the values of |x| <= a lie in -p .. p - 1, and so do
       their ^ & | */
    uint64_t p = 1;
    while (p <= a && p <= ((uint64_t)1 << 62)) p <<= 1;
    return p <= a ? RELAYOUT_BOUND_MAX : p;
}
"""

C_CHECKED = {
    "+": "relayout_add",
    "-": "relayout_sub",
    "*": "relayout_mul",
    "//": "relayout_floordiv",
    "%": "relayout_floormod",
    "<<": "relayout_shl",
    ">>": "relayout_shr",
}
C_OPERATOR = {"^": "^", "&": "&", "|": "|"}
C_EXACT = {
    "//": "relayout_floordiv_exact",
    "%": "relayout_floormod_exact",
    "<<": "relayout_shl_exact",
    ">>": "relayout_shr_exact",
}
# c_proof gives up on expressions with more nodes than this (the proof is C code, one statement
# per node).
MAX_PROVED_NODES = 4096


def _c_const(value: int) -> str:
    if value == INT64_MIN:
        return "(-INT64_C(9223372036854775807) - 1)"
    return f"INT64_C({value})" if value >= 0 else f"(-INT64_C({-value}))"


def _to_c(expr: Expr, names: Mapping[str, str], flag: str) -> str:
    if isinstance(expr, Const):
        return _c_const(expr.value)
    if isinstance(expr, Sym):
        return names.get(expr.name, expr.name)
    if isinstance(expr, Neg):
        return f"relayout_neg({_to_c(expr.operand, names, flag)}, &{flag})"
    if isinstance(expr, Call):
        args = [_to_c(arg, names, flag) for arg in expr.args]
        if expr.function == "root":
            return f"relayout_root({args[0]}, {args[1]}, &{flag})"
        helper = f"relayout_{expr.function}"
        result = args[0]
        for arg in args[1:]:
            result = f"{helper}({result}, {arg})"
        return result
    if isinstance(expr, Bin):
        left, right = _to_c(expr.left, names, flag), _to_c(expr.right, names, flag)
        if expr.op in C_CHECKED:
            return f"{C_CHECKED[expr.op]}({left}, {right}, &{flag})"
        if expr.op in C_OPERATOR:
            return f"({left} {C_OPERATOR[expr.op]} {right})"
        return f"((int64_t)({left} {expr.op} {right}))"
    raise TypeError(f"not an expression: {expr!r}")


def _to_c_unchecked(expr: Expr, names: Mapping[str, str]) -> str:
    if isinstance(expr, Const):
        return _c_const(expr.value)
    if isinstance(expr, Sym):
        return names.get(expr.name, expr.name)
    if isinstance(expr, Neg):
        return f"(-{_to_c_unchecked(expr.operand, names)})"
    if isinstance(expr, Call):
        if expr.function == "root":
            raise ValueError("root has no unchecked C form (it refuses an inexact root)")
        args = [_to_c_unchecked(arg, names) for arg in expr.args]
        result = args[0]
        for arg in args[1:]:
            result = f"relayout_{expr.function}({result}, {arg})"
        return result
    if isinstance(expr, Bin):
        left, right = _to_c_unchecked(expr.left, names), _to_c_unchecked(expr.right, names)
        if expr.op in C_EXACT:
            return f"{C_EXACT[expr.op]}({left}, {right})"
        if expr.op in ("+", "-", "*") or expr.op in C_OPERATOR:
            return f"({left} {expr.op} {right})"
        return f"((int64_t)({left} {expr.op} {right}))"
    raise TypeError(f"not an expression: {expr!r}")


def c_proof(
    exprs: Iterable[Expr], names: Mapping[str, str], ranges: Mapping[str, str], prefix: str
) -> tuple[list[str], str] | None:
    """C statements, and the name of the int they set, that hold only where evaluating every one
    of `exprs` with Expr.to_c_unchecked is exact: each step's value stays in int64, each divisor
    is nonzero and each shift count is 0..63.

    A symbol in `ranges` lies in 0 .. (the C value named there) - 1 (a digit, below its extent);
    every other symbol is the value of its C name in `names`, known before the statements run.
    The statements bound the magnitude of every step from its operands' (in uint64, saturating),
    so the int is a sufficient condition, not a necessary one. None where no proof is tried: a
    root (it can be inexact), a divisor or shift count that is not a constant or a plain symbol
    outside `ranges` (hoist such parts first), or more than MAX_PROVED_NODES nodes."""
    lines: list[str] = []
    holds = f"{prefix}holds"
    conditions: list[str] = []
    nodes = 0
    limit = f"(uint64_t){_c_const(INT64_MAX)}"

    def plain(node: Expr) -> str | None:
        """The C value of a constant or a symbol outside `ranges`, else None."""
        if isinstance(node, Const):
            return _c_const(node.value)
        if isinstance(node, Sym) and node.name not in ranges:
            return names.get(node.name, node.name)
        return None

    def step(node: Expr, bounds: list[str]) -> tuple[str, bool] | None:
        """The C bound of one step from its operands' bounds, and whether the step can overflow
        (then its bound must be at most INT64_MAX); None where it cannot be proved."""
        if isinstance(node, Neg):
            return bounds[0], True
        if isinstance(node, Call):
            if node.function == "root":
                return None
            value = bounds[0]
            for other in bounds[1:]:
                value = f"relayout_bound_max({value}, {other})"
            return value, False
        assert isinstance(node, Bin)
        a, b = bounds
        if node.op in ("+", "-"):
            return f"relayout_bound_add({a}, {b})", True
        if node.op == "*":
            return f"relayout_bound_mul({a}, {b})", True
        if node.op in C_OPERATOR:
            return f"relayout_bound_bits(relayout_bound_max({a}, {b}))", False
        if node.op not in C_EXACT:
            return "1ULL", False  # a comparison
        right = plain(node.right)
        if right is None:
            return None
        if node.op in ("//", "%"):
            # b != 0, and |a| <= INT64_MAX rules out INT64_MIN / -1; |a // b| <= |a| and
            # |a % b| < |b|.
            conditions.append(f"{right} != 0 && {a} <= {limit}")
            return (a if node.op == "//" else b), False
        conditions.append(f"{right} >= 0 && {right} <= {MAX_SHIFT}")
        if node.op == ">>":
            return a, False
        return f"relayout_bound_shl({a}, {right})", True

    def bound(node: Expr) -> str | None:
        """The C name (or literal) of a bound on |node| at every cell; None past the proof."""
        nonlocal nodes
        nodes += 1
        if nodes > MAX_PROVED_NODES:
            return None
        if isinstance(node, Const):
            return f"{abs(node.value)}ULL"
        if isinstance(node, Sym):
            if node.name in ranges:
                return f"(uint64_t){ranges[node.name]}"
            return f"relayout_magnitude({names.get(node.name, node.name)})"
        bounds = []
        for operand in _children(node):
            operand_bound = bound(operand)
            if operand_bound is None:
                return None
            bounds.append(operand_bound)
        found = step(node, bounds)
        if found is None:
            return None
        value, can_overflow = found
        name = f"{prefix}{len(lines)}"
        lines.append(f"const uint64_t {name} = {value};")
        if can_overflow:
            conditions.append(f"{name} <= {limit}")
        return name

    for expr in exprs:
        if bound(expr) is None:
            return None
    lines.append(f"int {holds} = 1;")
    lines.extend(f"{holds} = {holds} && ({condition});" for condition in conditions)
    return lines, holds


# ---------------------------------------------------------------------------------------------
# Folding constructors: the digit algebra builds expressions through these so that constants fold
# and an inverse operation gives back the expression it started from. A constant folds only where
# its int64 value exists (the bounds are checked before any shift); otherwise the operation stays
# in the tree and its evaluation reports the overflow.


def as_expr(value: Expr | int | str) -> Expr:
    if isinstance(value, Expr):
        return value
    return parse(value)


def _folded(node: Expr) -> Expr:
    """`node` (over constants) as its constant when that evaluates in int64, else `node`."""
    try:
        return Const(int(_evaluate(node, {})))
    except ExprError:
        return node


def add(a: Expr, b: Expr) -> Expr:
    if isinstance(a, Const) and isinstance(b, Const):
        return _folded(Bin("+", a, b))
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
    if isinstance(b, Const) and INT64_MIN < b.value < 0:
        return Bin("-", a, Const(-b.value))
    return Bin("+", a, b)


def sub(a: Expr, b: Expr) -> Expr:
    if isinstance(a, Const) and isinstance(b, Const):
        return _folded(Bin("-", a, b))
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
        return _folded(Bin("*", a, b))
    if Const(0) in (a, b):
        return Const(0)
    if a == Const(1):
        return b
    if b == Const(1):
        return a
    return Bin("*", a, b)


def floordiv(a: Expr, b: Expr) -> Expr:
    if isinstance(a, Const) and isinstance(b, Const) and b.value != 0:
        return _folded(Bin("//", a, b))
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
    """Any binary operator, folded when both sides are constant (and the value is an int64)."""
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
        return _folded(Bin(op, a, b))
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
            return _folded(Call(function, arguments))
    if function in ("min", "max") and len(arguments) == 1:
        return arguments[0]
    return Call(function, arguments)


def neg(operand: Expr) -> Expr:
    """-operand, folded when constant (and not int64's least)."""
    if isinstance(operand, Const):
        return _folded(Neg(operand))
    return Neg(operand)


# What the substitutions of one request may visit in all (see substitution_budget).
_SUBSTITUTION_BUDGET: ContextVar[list[int] | None] = ContextVar(
    "relayout_substitution_budget", default=None
)


@contextmanager
def substitution_budget(nodes: int) -> Iterator[None]:
    """Within the block (one request's run), all substitutions together may visit at most `nodes`
    nodes; past that they raise ExprError. Each thread and task has its own budget."""
    token = _SUBSTITUTION_BUDGET.set([nodes])
    try:
        yield
    finally:
        _SUBSTITUTION_BUDGET.reset(token)


def _substitute_bounded(expr: Expr, mapping: Mapping[str, Expr]) -> Expr:
    """Substitution that refuses, as it goes, a result past MAX_NODES nodes or MAX_BUILT_HEIGHT
    levels, so that composing many operations cannot grow an expression without bound; and, under
    substitution_budget, one that would pass the request's budget of visited nodes."""
    sizes = {name: _size_and_height(value, MAX_NODES) for name, value in mapping.items()}
    budget = [MAX_NODES, 0]
    try:
        result = _substitute(expr, mapping, sizes, budget, 1)
    except RecursionError:
        raise ExprTooLarge("expression nested too deeply to substitute into") from None
    _charge(budget[1] + sum(count for count, _ in sizes.values()))
    return result


def _charge(visited: int) -> None:
    request = _SUBSTITUTION_BUDGET.get()
    if request is None:
        return
    request[0] -= visited
    if request[0] < 0:
        raise ExprTooLarge(
            "the request's operations compose expressions too large to check (their "
            "substitutions pass the budget of nodes one request may visit); use fewer or "
            "simpler operations"
        )


def _grown_too_far(what: str) -> ExprTooLarge:
    return ExprTooLarge(
        f"an expression grows past {what} as the operations compose (each substitutes its "
        "digits' maps into the cell maps); use fewer or simpler operations"
    )


def _substitute(
    expr: Expr,
    mapping: Mapping[str, Expr],
    sizes: Mapping[str, tuple[int, int]],
    budget: list[int],
    depth: int,
) -> Expr:
    if isinstance(expr, Sym) and expr.name in mapping:
        count, height = sizes[expr.name]
        budget[1] += 1
        budget[0] -= count
        if budget[0] < 0:
            raise _grown_too_far(f"{MAX_NODES} nodes")
        if depth + height - 1 > MAX_BUILT_HEIGHT:
            raise _grown_too_far(f"{MAX_BUILT_HEIGHT} levels")
        return mapping[expr.name]
    budget[0] -= 1
    budget[1] += 1
    if budget[0] < 0:
        raise _grown_too_far(f"{MAX_NODES} nodes")
    if depth > MAX_BUILT_HEIGHT:
        raise _grown_too_far(f"{MAX_BUILT_HEIGHT} levels")
    if isinstance(expr, Const | Sym):
        return expr
    if isinstance(expr, Neg):
        return neg(_substitute(expr.operand, mapping, sizes, budget, depth + 1))
    if isinstance(expr, Bin):
        left = _substitute(expr.left, mapping, sizes, budget, depth + 1)
        right = _substitute(expr.right, mapping, sizes, budget, depth + 1)
        return binary(expr.op, left, right)
    if isinstance(expr, Call):
        args = [_substitute(arg, mapping, sizes, budget, depth + 1) for arg in expr.args]
        return call(expr.function, args)
    raise TypeError(f"not an expression: {expr!r}")
