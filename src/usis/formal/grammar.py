"""The reference grammar of the formal layer: selectors, offset expressions and match keys.

A selector says which participant instances play a role (`rank == param:root`), an offset says
where a participant's slice starts (`rank * extent_size(param:count, param:datatype)`), a match key
names a parameter that must agree across paired call instances (`param:tag`). Parsing returns a
small tree; `parameter_names` lists the parameters an expression refers to.

`rank` is the rank of the instance an expression is evaluated for. In a pairwise exchange
(alltoall) that instance is the other side of the pair: the read offset of the outgoing slice is
evaluated for the instance the slice goes to, and a gathered source's placement offset for the
instance it came from, so `rank * extent_size(param:count, param:datatype)` is block j of the
sender's buffer for receiver j and block i of the receiver's buffer for sender i.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# name -> (arity, result): a closed registry, so an unknown function is a parse error.
FUNCTIONS: dict[str, tuple[int, str]] = {
    "is_neighbor": (2, "bool"),
    "extent_size": (2, "int"),
    "comm_size": (1, "int"),
    # prefix_sum(param:a, i) = a[0] + ... + a[i-1]; total(param:a) sums the whole array (its
    # length is the communicator's size): what reduce_scatter's recvcounts need.
    "prefix_sum": (2, "int"),
    "total": (1, "int"),
    # neighbor_index(param:comm, r): r's position in the caller's neighbour list of the
    # communicator's attached topology (sources for what it receives, destinations for what it
    # sends): neighbourhood collectives place blocks by it, not by rank.
    "neighbor_index": (2, "int"),
    # disp_unit(param:win): the displacement unit the target gave its window, in bytes; an RMA
    # target offset is target_disp * disp_unit(param:win).
    "disp_unit": (1, "int"),
}

# Aggregation scopes for data_flow inputs[].scope and gathered sources: closed and documented.
SCOPES: dict[str, str] = {
    "all_participant_instances": "one contribution from every participant instance of the call",
    "instances_up_to_self_in_order": (
        "contributions of the instances ranked at or before the reader, in rank order (scan)"
    ),
    "instances_before_self_in_order": (
        "contributions of the instances ranked strictly before the reader, in rank order (exscan)"
    ),
    "neighbor_instances": "contributions of the reader's neighbours in the attached topology",
    "rma_target_prior": "the value the target location held before this one-sided update",
    "single_instance": "exactly one contribution, from the one instance that supplies it",
}

KEYWORDS = {"rank", "self", "in", "true", "false"}
TOKEN_PATTERN = re.compile(
    r"\s*(?:(?P<param>param:[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<type>type:\{?[A-Za-z_][A-Za-z0-9_ ]*\}?)"
    r"|(?P<number>[0-9]+)"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<op>==|!=|<=|>=|&&|\|\||[<>!+\-*/%(),\[\]]))"
)


class GrammarError(ValueError):
    """An expression that is not in the reference grammar; the message says where and why."""


@dataclass(frozen=True)
class Param:
    name: str
    index: Expr | None = None


@dataclass(frozen=True)
class Rank:
    pass


@dataclass(frozen=True)
class Self:
    pass


@dataclass(frozen=True)
class Literal:
    value: int | bool | str


@dataclass(frozen=True)
class Call:
    function: str
    arguments: tuple[Expr, ...]


@dataclass(frozen=True)
class Unary:
    operator: str
    operand: Expr


@dataclass(frozen=True)
class Binary:
    operator: str
    left: Expr
    right: Expr


Expr = Param | Rank | Self | Literal | Call | Unary | Binary

COMPARISONS = ("==", "!=", "<=", ">=", "<", ">")


def tokenize(text: str) -> list[tuple[str, str, int]]:
    """(kind, text, column) triples; kind is param, type, number, name or op."""
    tokens, position = [], 0
    stripped_end = len(text.rstrip())
    while position < stripped_end:
        match = TOKEN_PATTERN.match(text, position)
        if not match or match.end() == position:
            raise GrammarError(f"{text!r}: unexpected character {text[position]!r} at {position}")
        kind = match.lastgroup or "op"
        tokens.append((kind, match.group(kind), match.start(kind)))
        position = match.end()
    return tokens


class Parser:
    """Recursive descent over one expression; `kind` is 'selector', 'offset' or 'match_key'."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.position = 0

    def peek(self) -> tuple[str, str, int] | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def take(self, expected: str | None = None) -> tuple[str, str, int]:
        token = self.peek()
        if token is None:
            raise GrammarError(f"{self.text!r}: unexpected end, expected {expected or 'a term'}")
        if expected is not None and token[1] != expected:
            raise GrammarError(
                f"{self.text!r}: expected {expected!r} at {token[2]}, found {token[1]!r}"
            )
        self.position += 1
        return token

    def at(self, *texts: str) -> bool:
        token = self.peek()
        return token is not None and token[0] == "op" and token[1] in texts

    def finish(self, tree: Expr) -> Expr:
        token = self.peek()
        if token is not None:
            raise GrammarError(f"{self.text!r}: unexpected {token[1]!r} at {token[2]}")
        return tree

    # selectors: or > and > not > comparison/membership/predicate call
    def selector(self) -> Expr:
        tree = self.conjunction()
        while self.at("||"):
            self.take()
            tree = Binary("||", tree, self.conjunction())
        return tree

    def conjunction(self) -> Expr:
        tree = self.negation()
        while self.at("&&"):
            self.take()
            tree = Binary("&&", tree, self.negation())
        return tree

    def negation(self) -> Expr:
        if self.at("!"):
            self.take()
            return Unary("!", self.negation())
        return self.predicate()

    def predicate(self) -> Expr:
        token = self.peek()
        if token is not None and token[1] == "self":
            self.take()
            return Self()
        if token is not None and token[1] in ("true", "false"):
            self.take()
            return Literal(token[1] == "true")
        if self.at("("):
            # A parenthesis opens either a nested selector or an arithmetic term; try the selector.
            saved = self.position
            try:
                self.take("(")
                inner = self.selector()
                self.take(")")
                if not self.at(*COMPARISONS, "+", "-", "*", "/", "%") and not self.at_in():
                    return inner
            except GrammarError:
                pass
            self.position = saved
        if (
            token is not None
            and token[0] == "name"
            and FUNCTIONS.get(token[1], (0, ""))[1] == "bool"
        ):
            return self.call()
        left = self.arithmetic()
        if self.at_in():
            self.take()
            target = self.take()
            if target[0] != "param":
                raise GrammarError(
                    f"{self.text!r}: 'in' takes a param: reference, found {target[1]!r} at {target[2]}"
                )
            return Binary("in", left, Param(target[1].removeprefix("param:")))
        if self.at(*COMPARISONS):
            operator = self.take()[1]
            return Binary(operator, left, self.arithmetic())
        raise GrammarError(
            f"{self.text!r}: a selector needs a comparison, 'in', 'self' or a predicate call"
        )

    def at_in(self) -> bool:
        token = self.peek()
        return token is not None and token[0] == "name" and token[1] == "in"

    # arithmetic: sum > product > unary minus > atom
    def arithmetic(self) -> Expr:
        tree = self.product()
        while self.at("+", "-"):
            operator = self.take()[1]
            tree = Binary(operator, tree, self.product())
        return tree

    def product(self) -> Expr:
        tree = self.factor()
        while self.at("*", "/", "%"):
            operator = self.take()[1]
            tree = Binary(operator, tree, self.factor())
        return tree

    def factor(self) -> Expr:
        if self.at("-"):
            self.take()
            return Unary("-", self.factor())
        if self.at("("):
            self.take()
            inner = self.arithmetic()
            self.take(")")
            return inner
        token = self.peek()
        if token is None:
            raise GrammarError(f"{self.text!r}: unexpected end, expected a term")
        kind, text, column = token
        if kind == "number":
            self.take()
            return Literal(int(text))
        if kind == "param":
            self.take()
            index = None
            if self.at("["):
                self.take()
                index = self.arithmetic()
                self.take("]")
            return Param(text.removeprefix("param:"), index)
        if kind == "type":
            self.take()
            return Literal(text)
        if kind == "name" and text == "rank":
            self.take()
            return Rank()
        if kind == "name" and text in FUNCTIONS:
            if FUNCTIONS[text][1] != "int":
                raise GrammarError(f"{self.text!r}: {text}() is a predicate, not a number")
            return self.call()
        raise GrammarError(
            f"{self.text!r}: unexpected {text!r} at {column}; expected rank, a number, a "
            f"param: reference or one of {sorted(FUNCTIONS)}"
        )

    def call(self) -> Expr:
        name = self.take()[1]
        arity = FUNCTIONS[name][0]
        self.take("(")
        arguments = [self.arithmetic()]
        while self.at(","):
            self.take()
            arguments.append(self.arithmetic())
        self.take(")")
        if len(arguments) != arity:
            raise GrammarError(
                f"{self.text!r}: {name}() takes {arity} arguments, found {len(arguments)}"
            )
        return Call(name, tuple(arguments))


def parse_selector(text: str) -> Expr:
    """Parse a participant selector, e.g. 'rank == param:root' or 'is_neighbor(rank, param:comm)'."""
    parser = Parser(text)
    return parser.finish(parser.selector())


def parse_offset(text: str) -> Expr:
    """Parse an offset expression, e.g. 'rank * extent_size(param:count, param:datatype)'."""
    parser = Parser(text)
    return parser.finish(parser.arithmetic())


def parse_match_key(text: str) -> Expr:
    """Parse a match key: exactly one param: reference, e.g. 'param:tag'."""
    tree = parse_offset(text)
    if not isinstance(tree, Param) or tree.index is not None:
        raise GrammarError(f"{text!r}: a match key is one param: reference, e.g. 'param:tag'")
    return tree


def parse_reference(text: str) -> Expr:
    """Parse a buffer/handle/count reference: a param: reference, 'return_value' or 'type:...'."""
    if text == "return_value":
        return Literal(text)
    tree = parse_offset(text)
    if isinstance(tree, Param) or (isinstance(tree, Literal) and isinstance(tree.value, str)):
        return tree
    raise GrammarError(f"{text!r}: expected a param: reference, 'return_value' or a type: literal")


def parameter_names(tree: Expr) -> set[str]:
    """Every parameter name an expression refers to."""
    if isinstance(tree, Param):
        return {tree.name} | (parameter_names(tree.index) if tree.index is not None else set())
    if isinstance(tree, Call):
        return set().union(*(parameter_names(argument) for argument in tree.arguments))
    if isinstance(tree, Unary):
        return parameter_names(tree.operand)
    if isinstance(tree, Binary):
        return parameter_names(tree.left) | parameter_names(tree.right)
    return set()


def indexed_parameters(tree: Expr) -> set[str]:
    """The parameters an expression indexes (`param:recvcounts[rank]` indexes recvcounts)."""
    if isinstance(tree, Param):
        if tree.index is None:
            return set()
        return {tree.name} | indexed_parameters(tree.index)
    if isinstance(tree, Call):
        return set().union(*(indexed_parameters(argument) for argument in tree.arguments))
    if isinstance(tree, Unary):
        return indexed_parameters(tree.operand)
    if isinstance(tree, Binary):
        return indexed_parameters(tree.left) | indexed_parameters(tree.right)
    return set()


def render(tree: Expr) -> str:
    """Canonical text of a tree; parsing it again gives the same tree."""
    if isinstance(tree, Param):
        index = f"[{render(tree.index)}]" if tree.index is not None else ""
        return f"param:{tree.name}{index}"
    if isinstance(tree, Rank):
        return "rank"
    if isinstance(tree, Self):
        return "self"
    if isinstance(tree, Literal):
        return str(tree.value).lower() if isinstance(tree.value, bool) else str(tree.value)
    if isinstance(tree, Call):
        return f"{tree.function}({', '.join(render(argument) for argument in tree.arguments)})"
    if isinstance(tree, Unary):
        return f"{tree.operator}({render(tree.operand)})"
    return f"({render(tree.left)} {tree.operator} {render(tree.right)})"
