"""The lexical layer of the C header reader: comment stripping, backslash continuations and the
preprocessing tokens the preprocessor and the declaration parser work on."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import NamedTuple


class HeaderParseError(ValueError):
    """Header text the reader cannot make sense of; the message names the file and line."""


def strip_comments(text: str) -> str:
    """Remove C comments, keeping newlines so that line numbers survive; strings are kept."""

    def replace(match: re.Match[str]) -> str:
        found = match.group(0)
        if found.startswith(("/*", "//")):
            return "\n" * found.count("\n") if found.startswith("/*") else ""
        return found

    return re.sub(r'"(?:\\.|[^"\\\n])*"|/\*.*?\*/|//[^\n]*', replace, text, flags=re.S)


def logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """(first line number, text) with backslash continuations joined and comments removed."""
    lines = strip_comments(text).split("\n")
    index = 0
    while index < len(lines):
        number = index + 1
        line = lines[index]
        while line.endswith("\\") and index + 1 < len(lines):
            index += 1
            line = line[:-1] + " " + lines[index]
        index += 1
        # Keep the count of physical lines so that later line numbers stay true.
        yield number, line
        for _ in range(index - number):
            yield number, ""


TOKEN = re.compile(
    r"""(?P<space>[ \t\r\f\v]+)
      |(?P<newline>\n)
      |(?P<ident>[A-Za-z_]\w*)
      |(?P<number>\.?\d(?:[eEpP][+-]|[\w.])*)
      |(?P<string>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')
      |(?P<punct>\#\#|\.\.\.|<<=|>>=|->|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||::|[-+*/%&|^!~<>=?:;,.()\[\]{}\#@\\`$])
    """,
    re.X,
)


class Token(NamedTuple):
    """One preprocessing token; `hidden` holds the macros that may not expand it again."""

    kind: str
    text: str
    line: int
    hidden: frozenset[str] = frozenset()
    space_before: bool = False


def tokenize(text: str, line: int, where: str) -> list[Token]:
    """Tokens of `text` (newlines kept as tokens so statements keep their line numbers)."""
    tokens: list[Token] = []
    position = 0
    space = False
    while position < len(text):
        match = TOKEN.match(text, position)
        if match is None:
            raise HeaderParseError(f"{where}:{line}: unexpected character {text[position]!r}")
        kind = match.lastgroup or "punct"
        position = match.end()
        if kind == "space":
            space = True
            continue
        if kind == "newline":
            tokens.append(Token("newline", "\n", line))
            line += 1
            space = True
            continue
        tokens.append(Token(kind, match.group(kind), line, space_before=space))
        space = False
    return tokens


def render(tokens: Iterable[Token]) -> str:
    """Tokens back into text, one space where the source had any."""
    out: list[str] = []
    for token in tokens:
        if token.kind == "newline":
            out.append(" ")
            continue
        if out and token.space_before:
            out.append(" ")
        out.append(token.text)
    return "".join(out).strip()


def split_arguments(tokens: list[Token], start: int, where: str) -> tuple[list[list[Token]], int]:
    """Arguments of a call whose '(' is at `start` (a macro's, an attribute's); returns them and
    the index after ')'."""
    arguments: list[list[Token]] = [[]]
    depth = 0
    index = start
    while index < len(tokens):
        token = tokens[index]
        if token.text == "(" and token.kind == "punct":
            depth += 1
            if depth > 1:
                arguments[-1].append(token)
        elif token.text == ")" and token.kind == "punct":
            depth -= 1
            if depth == 0:
                return arguments, index + 1
            arguments[-1].append(token)
        elif token.text == "," and depth == 1:
            arguments.append([])
        elif token.kind != "newline":
            arguments[-1].append(token)
        index += 1
    raise HeaderParseError(f"{where}: unterminated macro call")
