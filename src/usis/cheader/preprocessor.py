"""A C preprocessor sufficient for vendor API headers: `#if` nesting, object- and function-like
macros (with `#`, `##`, `__VA_ARGS__` and rescanning under hide sets) and includes resolved
inside one include folder."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from usis.cheader.tokens import (
    HeaderParseError,
    Token,
    logical_lines,
    render,
    split_arguments,
    tokenize,
)

# The alternative operator spellings C++ reserves (and C has as <iso646.h> macros) that vendor
# headers write in #if lines, as the Python text that evaluates them.
ALTERNATIVE_OPERATORS = {"not": " not ", "and": " and ", "or": " or "}


class Conditionals:
    """The #if nesting of one file: whether the text at the current line is compiled.

    A condition is passed as a callable and asked only inside active text, so that an
    expression the evaluator cannot read is no error where the compiler would skip it.
    """

    def __init__(self) -> None:
        # Each frame: (this branch active, some branch of this #if already taken, parent active).
        self.stack: list[tuple[bool, bool, bool]] = []
        self.active = True

    def directive(self, keyword: str, condition: Callable[[], bool], where: str) -> bool:
        """Apply #if, #ifdef, #ifndef, #elif, #else or #endif; False for any other keyword."""
        if keyword in ("if", "ifdef", "ifndef"):
            taken = self.active and condition()
            self.stack.append((self.active and taken, taken, self.active))
            self.active = self.active and taken
        elif keyword in ("elif", "else", "endif"):
            if not self.stack:
                raise HeaderParseError(f"{where}: #{keyword} without #if")
            _, already, parent = self.stack.pop()
            if keyword == "endif":
                self.active = parent
                return True
            taken = not already and parent and (keyword == "else" or condition())
            self.stack.append((parent and taken, already or taken, parent))
            self.active = parent and taken
        else:
            return False
        return True

    def close(self, where: str) -> None:
        """The end of the file: every #if must have met its #endif."""
        if self.stack:
            raise HeaderParseError(f"{where}: unterminated #if at end of file")


@dataclass(frozen=True)
class Macro:
    name: str
    body: tuple[Token, ...]
    parameters: tuple[str, ...] | None = None  # None: object-like
    variadic: bool = False


class MacroTable:
    """The #define'd macros in force, and the expansion of token lists against them."""

    def __init__(self, protected: Iterable[str] = (), protected_pattern: str | None = None) -> None:
        self.macros: dict[str, Macro] = {}
        # Names whose definitions are ignored, so that the declaration reader sees the marker
        # itself (`__host__`, `__dv(0)`, ...) rather than what the compiler would make of it.
        self.protected = frozenset(protected)
        self.protected_pattern = re.compile(protected_pattern) if protected_pattern else None

    def function_aliases(
        self, declared: Iterable[str], wrappers: Iterable[str] = ()
    ) -> dict[str, str]:
        """Object-like macros in force that rename a declared function (`#define nvshmem_sync
        nvshmem_team_sync`; through an identity wrapper of `wrappers` too, as
        `__CUDART_API_PTSZ(cudaStreamGetCaptureInfo_v2)` is outside the per-thread-stream
        configuration): alias -> function, for names no prototype declares themselves."""
        functions = set(declared)
        skip = {"(", ")", *wrappers}
        aliases = {}
        for name, macro in self.macros.items():
            words = [token.text for token in macro.body if token.text not in skip]
            simple = macro.parameters is None and len(words) == 1
            if simple and words[0] in functions and name not in functions:
                aliases[name] = words[0]
        return dict(sorted(aliases.items()))

    def is_protected(self, name: str) -> bool:
        return name in self.protected or bool(
            self.protected_pattern and self.protected_pattern.fullmatch(name)
        )

    def define(self, text: str, line: int, where: str) -> None:
        match = re.match(r"\s*([A-Za-z_]\w*)(\()?", text)
        if match is None:
            raise HeaderParseError(f"{where}:{line}: #define without a name: {text!r}")
        name = match.group(1)
        if self.is_protected(name):
            return
        parameters: tuple[str, ...] | None = None
        variadic = False
        rest = text[match.end() :]
        if match.group(2):
            close = rest.index(")")
            names = [p.strip() for p in rest[:close].split(",") if p.strip()]
            if names and names[-1] == "...":
                variadic = True
                names[-1] = "__VA_ARGS__"
            elif names and names[-1].endswith("..."):
                variadic = True
                names[-1] = names[-1][:-3].strip()
            parameters = tuple(names)
            rest = rest[close + 1 :]
        body = tuple(t for t in tokenize(rest, line, where) if t.kind != "newline")
        self.macros[name] = Macro(name, body, parameters, variadic)

    def undefine(self, name: str) -> None:
        self.macros.pop(name, None)

    def expand(self, tokens: list[Token], where: str) -> list[Token]:
        """Fully macro-expand a token list (rescanning, with per-token hide sets)."""
        pending = list(reversed(tokens))
        out: list[Token] = []
        while pending:
            token = pending.pop()
            macro = self.macros.get(token.text) if token.kind == "ident" else None
            if macro is None or token.text in token.hidden:
                out.append(token)
                continue
            if macro.parameters is None:
                replacement = self.substitute(macro, {}, token, where)
                pending.extend(reversed(replacement))
                continue
            # A function-like macro expands only when a '(' follows.
            look = len(pending) - 1
            while look >= 0 and pending[look].kind == "newline":
                look -= 1
            if look < 0 or pending[look].text != "(":
                out.append(token)
                continue
            rest = list(reversed(pending[: look + 1]))
            arguments, after = split_arguments(rest, 0, f"{where}:{token.line} {macro.name}")
            del pending[len(pending) - after :]
            replacement = self.substitute(macro, self.bind(macro, arguments, where), token, where)
            pending.extend(reversed(replacement))
        return out

    def bind(
        self, macro: Macro, arguments: list[list[Token]], where: str
    ) -> dict[str, list[Token]]:
        parameters = macro.parameters or ()
        if len(parameters) == 0 and arguments == [[]]:
            return {}
        if macro.variadic:
            fixed = len(parameters) - 1
            head, tail = arguments[:fixed], arguments[fixed:]
            joined: list[Token] = []
            for position, argument in enumerate(tail):
                if position:
                    joined.append(Token("punct", ",", argument[0].line if argument else 0))
                joined.extend(argument)
            arguments = [*head, joined]
        if len(arguments) != len(parameters):
            raise HeaderParseError(
                f"{where}: macro {macro.name} takes {len(parameters)} arguments, "
                f"got {len(arguments)}"
            )
        return dict(zip(parameters, arguments, strict=True))

    def substitute(
        self, macro: Macro, bound: dict[str, list[Token]], call: Token, where: str
    ) -> list[Token]:
        """The macro body with parameters replaced, `#` stringified and `##` pasted."""
        hidden = call.hidden | {macro.name}
        body = list(macro.body)
        result: list[Token] = []
        index = 0
        expanded_cache: dict[str, list[Token]] = {}
        while index < len(body):
            token = body[index]
            if token.text == "#" and index + 1 < len(body) and body[index + 1].text in bound:
                text = render(bound[body[index + 1].text]).replace('"', '\\"')
                result.append(Token("string", f'"{text}"', call.line, space_before=True))
                index += 2
                continue
            pasting = (index + 1 < len(body) and body[index + 1].text == "##") or (
                result and result[-1].text == "##"
            )
            if token.kind == "ident" and token.text in bound:
                if pasting:
                    piece = bound[token.text]
                else:
                    if token.text not in expanded_cache:
                        expanded_cache[token.text] = self.expand(bound[token.text], where)
                    piece = expanded_cache[token.text]
                first = True
                for item in piece:
                    result.append(
                        Token(
                            item.kind,
                            item.text,
                            call.line,
                            item.hidden,
                            token.space_before if first else item.space_before,
                        )
                    )
                    first = False
                if not piece:
                    result.append(Token("placemarker", "", call.line))
            else:
                result.append(
                    Token(token.kind, token.text, call.line, space_before=token.space_before)
                )
            index += 1
        pasted: list[Token] = []
        index = 0
        while index < len(result):
            token = result[index]
            if token.text == "##" and token.kind == "punct" and pasted and index + 1 < len(result):
                left = pasted.pop()
                right = result[index + 1]
                text = left.text + right.text
                if text:
                    retokenized = tokenize(text, call.line, where)
                    for position, item in enumerate(retokenized):
                        pasted.append(
                            Token(
                                item.kind,
                                item.text,
                                call.line,
                                space_before=left.space_before if position == 0 else False,
                            )
                        )
                else:
                    pasted.append(Token("placemarker", "", call.line))
                index += 2
                continue
            pasted.append(token)
            index += 1
        return [
            Token(t.kind, t.text, t.line, t.hidden | hidden, t.space_before)
            for t in pasted
            if t.kind != "placemarker"
        ]


@dataclass
class SourceLine:
    """Output text of the preprocessor: one chunk of active, macro-expanded tokens from a file."""

    file: str
    tokens: list[Token]


@dataclass
class Preprocessor:
    """A C preprocessor sufficient for vendor API headers.

    Conditionals, object- and function-like macros (with `#` and `##`) and quoted or bracketed
    #includes resolved under `include_root` (others are left out). Text is emitted only for files
    listed in `emit`; the others contribute their macros. Names in `protected`, and names that
    `protected_pattern` matches in full, are never defined or expanded.
    """

    include_root: Path
    defines: Mapping[str, str] = field(default_factory=dict)
    protected: Iterable[str] = ()
    emit: Iterable[str] = ()
    protected_pattern: str | None = None

    def __post_init__(self) -> None:
        self.table = MacroTable(self.protected, self.protected_pattern)
        for name, value in self.defines.items():
            self.table.define(f"{name} {value}", 0, "<command line>")
        self.emit_files = frozenset(self.emit)
        self.output: list[SourceLine] = []
        self.seen: set[str] = set()

    def relative(self, path: Path) -> str:
        return path.resolve().relative_to(self.include_root.resolve()).as_posix()

    def run(self, *headers: str) -> list[SourceLine]:
        """Preprocess the headers in order, as one translation unit including each of them."""
        for header in headers:
            self.process(self.include_root / header)
        return self.output

    def resolve_include(self, current: Path, spec: str) -> Path | None:
        for base in (current.parent, self.include_root):
            candidate = base / spec
            if candidate.is_file():
                return candidate
        return None

    def process(self, path: Path) -> None:
        name = self.relative(path)
        emitting = name in self.emit_files
        conditionals = Conditionals()
        chunk: list[tuple[int, str]] = []

        def flush() -> None:
            if chunk and emitting:
                text = "\n".join(line for _, line in chunk)
                tokens = tokenize(text, chunk[0][0], name)
                self.output.append(SourceLine(name, self.table.expand(tokens, name)))
            chunk.clear()

        for number, line in logical_lines(path.read_text(encoding="utf-8", errors="replace")):
            stripped = line.strip()
            if not stripped.startswith("#"):
                if conditionals.active:
                    chunk.append((number, line))
                continue
            flush()
            directive = re.match(r"#\s*(\w*)\s*(.*)", stripped)
            keyword, rest = (
                (directive.group(1), directive.group(2).strip()) if directive else ("", "")
            )
            where = f"{name}:{number}"
            condition = partial(self.condition_holds, keyword, rest, where)
            if conditionals.directive(keyword, condition, where) or not conditionals.active:
                continue
            if keyword == "define":
                self.table.define(rest, number, name)
            elif keyword == "pragma" and rest.split()[:1] == ["once"]:
                if name in self.seen:
                    return
                self.seen.add(name)
            elif keyword == "undef":
                self.table.undefine(rest.split()[0])
            elif keyword == "include":
                spec = re.match(r'["<]([^">]+)[">]', rest)
                if spec is None:
                    continue
                target = self.resolve_include(path, spec.group(1))
                # System and toolkit headers outside the include folder are not needed for the API.
                if target is not None:
                    self.process(target)
        flush()
        conditionals.close(name)

    def condition_holds(self, keyword: str, rest: str, where: str) -> bool:
        """Whether an #if, #ifdef, #ifndef or #elif with text `rest` takes its branch."""
        if keyword == "ifdef":
            return rest.split()[0] in self.table.macros
        if keyword == "ifndef":
            return rest.split()[0] not in self.table.macros
        return self.evaluate(rest, where)

    def evaluate(self, expression: str, where: str) -> bool:
        """The truth of an #if expression under the macros in force."""
        # Headers outside the include folder are taken as absent; compiler feature probes as
        # unsupported.
        expression = re.sub(r"__has_\w+\s*\((?:[^()]|\([^()]*\))*\)", " 0 ", expression)
        expression = re.sub(
            r"defined\s*\(\s*(\w+)\s*\)|defined\s+(\w+)",
            lambda m: " 1 " if (m.group(1) or m.group(2)) in self.table.macros else " 0 ",
            expression,
        )
        tokens = self.table.expand(tokenize(expression, 0, where), where)
        pieces: list[str] = []
        for token in tokens:
            if token.kind == "ident" and token.text in ALTERNATIVE_OPERATORS:
                # C++'s alternative spellings (`#if not defined __CUDACC_RTC__` in NVSHMEM 3.1).
                pieces.append(ALTERNATIVE_OPERATORS[token.text])
            elif token.kind == "ident":
                pieces.append("0")
            elif token.kind == "number":
                pieces.append(re.sub(r"[uUlL]+$", "", token.text))
            elif token.text == "&&":
                pieces.append(" and ")
            elif token.text == "||":
                pieces.append(" or ")
            elif token.text == "!":
                pieces.append(" not ")
            elif token.text == "/":
                pieces.append("//")
            elif token.kind == "punct" and token.text in "()+-*%<>==!=<=>=<<>>&|^~":
                pieces.append(token.text)
            else:
                raise HeaderParseError(f"{where}: #if expression not understood: {expression!r}")
        text = "".join(pieces)
        try:
            return bool(eval(text, {"__builtins__": {}}, {}))
        except SyntaxError as error:
            raise HeaderParseError(
                f"{where}: #if expression not understood: {expression!r}"
            ) from error
