"""Extract every function of the CUDA runtime's cuda_runtime_api.h, and the C header reader the
three NVIDIA extracts share (a small preprocessor with function-like macros, and a prototype parser)
built on the common pieces of usis.extract.cheader.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

from usis.extract.cheader import (
    Conditionals,
    HeaderParseError,
    logical_lines,
    pinned_sources,
    render_declarator,
    sha256_of,
)

SOURCES: tuple[str, ...] = ("nvidia-cuda-runtime-cu12",)


CUDA_INCLUDE_DIR = "nvidia/cuda_runtime/include"
CUDA_HEADER = "cuda_runtime_api.h"


# ---------------------------------------------------------------------------------------------
# Tokens


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


# ---------------------------------------------------------------------------------------------
# Macros


@dataclass(frozen=True)
class Macro:
    name: str
    body: tuple[Token, ...]
    parameters: tuple[str, ...] | None = None  # None: object-like
    variadic: bool = False


def split_arguments(tokens: list[Token], start: int, where: str) -> tuple[list[list[Token]], int]:
    """Arguments of a macro call whose '(' is at `start`; returns them and the index after ')'."""
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


class MacroTable:
    """The #define'd macros in force, and the expansion of token lists against them."""

    def __init__(self, protected: Iterable[str] = ()) -> None:
        self.macros: dict[str, Macro] = {}
        # Names whose definitions are ignored, so that the declaration reader sees the marker
        # itself (`__host__`, `__dv(0)`, ...) rather than what the compiler would make of it.
        self.protected = frozenset(protected)

    def define(self, text: str, line: int, where: str) -> None:
        match = re.match(r"\s*([A-Za-z_]\w*)(\()?", text)
        if match is None:
            raise HeaderParseError(f"{where}:{line}: #define without a name: {text!r}")
        name = match.group(1)
        if name in self.protected:
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


# ---------------------------------------------------------------------------------------------
# Preprocessing


@dataclass
class SourceLine:
    """Output text of the preprocessor: one chunk of active, macro-expanded tokens from a file."""

    file: str
    tokens: list[Token]


@dataclass
class Preprocessor:
    """A C preprocessor sufficient for vendor API headers.

    Conditionals, object- and function-like macros (with `#` and `##`) and quoted #includes
    resolved under `include_root`. Text is emitted only for files listed in `emit`; the others
    contribute their macros. Names in `protected` are never expanded.
    """

    include_root: Path
    defines: Mapping[str, str] = field(default_factory=dict)
    protected: Iterable[str] = ()
    emit: Iterable[str] = ()

    def __post_init__(self) -> None:
        self.table = MacroTable(self.protected)
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
                # System and toolkit headers outside the wheel are not needed for the API.
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
        # Headers outside the wheel are taken as absent; compiler feature probes as unsupported.
        expression = re.sub(r"__has_\w+\s*\((?:[^()]|\([^()]*\))*\)", " 0 ", expression)
        expression = re.sub(
            r"defined\s*\(\s*(\w+)\s*\)|defined\s+(\w+)",
            lambda m: " 1 " if (m.group(1) or m.group(2)) in self.table.macros else " 0 ",
            expression,
        )
        tokens = self.table.expand(tokenize(expression, 0, where), where)
        pieces: list[str] = []
        for token in tokens:
            if token.kind == "ident":
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


# ---------------------------------------------------------------------------------------------
# Declarations


@dataclass(frozen=True)
class Statement:
    """A top-level declaration or function definition, with where it starts."""

    file: str
    line: int
    tokens: tuple[Token, ...]
    has_body: bool


def split_statements(chunks: Iterable[SourceLine]) -> list[Statement]:
    """Top-level statements: text up to ';' or a function body; `extern "C"` blocks are opened."""
    statements: list[Statement] = []
    for chunk in chunks:
        current: list[Token] = []
        # Brace stack: True for a transparent block (extern "C", namespace), False for a body.
        braces: list[bool] = []
        for token in chunk.tokens:
            if token.kind == "newline":
                continue
            in_body = any(not transparent for transparent in braces)
            if token.text == "{" and token.kind == "punct":
                head = render(current)
                if not in_body and (
                    head in ('extern "C"',) or re.fullmatch(r"namespace\s*\w*", head)
                ):
                    braces.append(True)
                    current = []
                    continue
                braces.append(False)
                if not in_body:
                    current.append(token)
                continue
            if token.text == "}" and token.kind == "punct":
                transparent = braces.pop() if braces else True
                if not transparent and not any(not t for t in braces):
                    # The end of a top-level body: a function definition, or a struct/enum/union
                    # whose declaration continues to ';'.
                    head = render(current)
                    if re.search(r"\)\s*(const)?\s*\{$", head) and not head.startswith(
                        ("typedef", "struct", "enum", "union")
                    ):
                        statements.append(
                            Statement(chunk.file, current[0].line, tuple(current[:-1]), True)
                        )
                        current = []
                    else:
                        current.append(token)
                continue
            if in_body:
                continue
            if token.text == ";" and token.kind == "punct":
                if current:
                    statements.append(Statement(chunk.file, current[0].line, tuple(current), False))
                current = []
                continue
            current.append(token)
    return statements


@dataclass(frozen=True)
class CParameter:
    """One parameter: its C type with pointer stars attached, name, array-ness and default."""

    type: str
    name: str | None
    array: bool = False
    default: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"type": self.type, "name": self.name, "array": self.array, "default": self.default}


@dataclass(frozen=True)
class CPrototype:
    """A function as the header declares it: types, the markers around it and where it is."""

    name: str
    return_type: str
    parameters: tuple[CParameter, ...]
    markers: tuple[str, ...]
    deprecated: bool
    file: str
    line: int
    has_body: bool

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "return_type": self.return_type,
            "parameters": [p.as_dict() for p in self.parameters],
            "markers": list(self.markers),
            "deprecated": self.deprecated,
            "file": self.file,
            "line": self.line,
            "has_body": self.has_body,
        }


C_TYPE_WORDS = frozenset(
    {
        "void",
        "char",
        "short",
        "int",
        "long",
        "float",
        "double",
        "signed",
        "unsigned",
        "_Bool",
        "bool",
        "const",
        "volatile",
        "restrict",
        "__restrict__",
        "struct",
        "enum",
        "union",
    }
)


def balanced_groups(tokens: list[Token]) -> list[list[Token]]:
    """Split a token list at top-level commas."""
    groups: list[list[Token]] = [[]]
    depth = 0
    for token in tokens:
        if token.text in "([<" and token.kind == "punct":
            depth += 1
        elif token.text in ")]>" and token.kind == "punct":
            depth -= 1
        if token.text == "," and depth == 0:
            groups.append([])
        else:
            groups[-1].append(token)
    return groups


def parse_parameter(tokens: list[Token], where: str) -> CParameter:
    default: str | None = None
    words = list(tokens)
    # `__dv(x)` is the runtime header's spelling of a C++ default argument.
    for index, token in enumerate(words):
        if token.text == "__dv":
            arguments, after = split_arguments(words, index + 1, where)
            default = render(arguments[0])
            words = words[:index] + words[after:]
            break
        if token.text == "=":
            default = render(words[index + 1 :])
            words = words[:index]
            break
    array = False
    while words and words[-1].text == "]":
        opening = max(i for i, t in enumerate(words) if t.text == "[")
        words = words[:opening]
        array = True
    texts = [t.text for t in words if t.kind in ("ident", "punct") and t.text not in ("&",)]
    if not texts:
        raise HeaderParseError(f"{where}: empty parameter")
    name: str | None = None
    last = texts[-1]
    others = [t for t in texts[:-1] if t not in ("*", "const", "volatile")]
    if re.fullmatch(r"[A-Za-z_]\w*", last) and last not in C_TYPE_WORDS and others:
        name = last
        texts = texts[:-1]
    stars = "".join(t for t in texts if t == "*")
    # `T * const p` keeps const on the pointer; C spells the value type first either way.
    body = [t for t in texts if t != "*"]
    qualifiers = [t for t in body if t in ("const", "volatile")]
    base = [t for t in body if t not in ("const", "volatile", "__restrict__", "restrict")]
    c_type = " ".join([*dict.fromkeys(qualifiers), *base]) + stars
    return CParameter(type=c_type, name=name, array=array, default=default)


# Attribute-like words whose parenthesized argument is dropped (noting a deprecation in it).
ATTRIBUTE_WORDS = frozenset(
    {
        "__attribute__",
        "__declspec",
        "__DEPRECATED__",
        "__CDPRT_DEPRECATED",
        "__launch_bounds__",
        "alignas",
    }
)


def parse_prototype(statement: Statement, markers: frozenset[str]) -> CPrototype | None:
    """The function a statement declares or defines, or None for anything else."""
    where = f"{statement.file}:{statement.line}"
    tokens = list(statement.tokens)
    found: list[str] = []
    deprecated = False
    kept: list[Token] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        text = token.text
        followed_by_call = index + 1 < len(tokens) and tokens[index + 1].text == "("
        if text in ATTRIBUTE_WORDS and followed_by_call:
            arguments, after = split_arguments(tokens, index + 1, where)
            inside = [item for argument in arguments for item in argument]
            if "deprecated" in render(inside) or "DEPRECATED" in text:
                deprecated = True
            index = after
            continue
        if text in markers:
            found.append(text)
            if "DEPRECATED" in text:
                deprecated = True
            index += 1
            continue
        kept.append(token)
        index += 1
    if not kept or kept[0].text in (
        "typedef",
        "struct",
        "enum",
        "union",
        "template",
        "using",
        "class",
        "static_assert",
    ):
        return None
    # Leading storage classes and inline specifiers say nothing about the C signature.
    while kept and kept[0].text in (
        "extern",
        "static",
        "inline",
        "__inline__",
        "__forceinline__",
        '"C"',
    ):
        found.append(kept[0].text)
        kept = kept[1:]
    open_index = next((i for i, t in enumerate(kept) if t.text == "("), None)
    if open_index is None or open_index == 0:
        return None
    name_token = kept[open_index - 1]
    if name_token.kind != "ident" or name_token.text in C_TYPE_WORDS:
        return None
    arguments, after = split_arguments(kept, open_index, where)
    trailing = [t.text for t in kept[after:]]
    if any(t not in ("const", "noexcept", "throw", "(", ")") for t in trailing):
        return None
    head = kept[: open_index - 1]
    if not head or any(t.text in ("(", ")", "=", "operator", "::", "<", ">") for t in head):
        return None
    parameters: list[CParameter] = []
    joined: list[Token] = []
    for position, argument in enumerate(arguments):
        if position:
            joined.append(Token("punct", ",", 0))
        joined.extend(argument)
    groups = balanced_groups(joined)
    if not (len(groups) == 1 and [t.text for t in groups[0]] in ([], ["void"])):
        for position, group in enumerate(groups):
            parameters.append(
                parse_parameter(group, f"{where} {name_token.text} parameter {position}")
            )
    return_type = parse_parameter([*head, Token("ident", "__return__", 0)], where)
    if return_type.name != "__return__":
        return None
    return CPrototype(
        name=name_token.text,
        return_type=return_type.type,
        parameters=tuple(parameters),
        markers=tuple(dict.fromkeys(found)),
        deprecated=deprecated,
        file=statement.file,
        line=statement.line,
        has_body=statement.has_body,
    )


def read_prototypes(
    preprocessor: Preprocessor,
    headers: str | tuple[str, ...],
    *,
    markers: Iterable[str],
    name_pattern: str,
) -> list[CPrototype]:
    """Every function declared or defined in the emitted files whose name matches the pattern."""
    marker_set = frozenset(markers)
    prototypes: list[CPrototype] = []
    names = (headers,) if isinstance(headers, str) else headers
    for statement in split_statements(preprocessor.run(*names)):
        prototype = parse_prototype(statement, marker_set)
        if prototype is not None and re.fullmatch(name_pattern, prototype.name):
            prototypes.append(prototype)
    return prototypes


def find_include_dir(root: Path, relative: str, marker: str) -> Path:
    """The include directory inside an unpacked wheel (or `root` itself if it is that directory)."""
    for candidate in (root / relative, root):
        if (candidate / marker).is_file():
            return candidate
    raise FileNotFoundError(
        f"{marker} not found under {root}; expected the unpacked wheel (with {relative}/) "
        "or that include directory itself"
    )


def render_signature(prototype: Mapping[str, Any]) -> str:
    """The C prototype text in one canonical spacing, e.g. `int f(const void *buf, int n)`."""

    parts = [
        render_declarator(p["type"], p["name"]) + ("[]" if p["array"] else "")
        for p in prototype["parameters"]
    ]
    head = render_declarator(prototype["return_type"], prototype["name"])
    return f"{head}({', '.join(parts) or 'void'})"


# ---------------------------------------------------------------------------------------------
# The CUDA runtime

# Markers the runtime header puts around a prototype; kept as tokens, read by classify.
CUDA_MARKERS = frozenset(
    {
        "__host__",
        "__device__",
        "__cudart_builtin__",
        "CUDARTAPI",
        "__CUDA_DEPRECATED",
        "CUDART_DEVICE",
    }
)
# A C compiler (not nvcc, not C++), with the header's own API version.
CUDA_DEFINES = {"__GNUC__": "12"}


@dataclass(frozen=True)
class DocFacts:
    """What a function's doc comment states in machine-readable form: the codes after `\\return`
    and the `\\note_*` markers (`note_sync`, `note_async`, `note_null_stream`, ...)."""

    returns: tuple[str, ...]
    notes: tuple[str, ...]
    line: int


def doc_blocks(text: str) -> list[tuple[int, DocFacts]]:
    """(last line, facts) for every `/** ... */` block of a header."""
    blocks = []
    for match in re.finditer(r"/\*\*(.*?)\*/", text, flags=re.S):
        body = match.group(1)
        end_line = text.count("\n", 0, match.end()) + 1
        returns: list[str] = []
        section = re.search(r"\\return(.*?)(?=\\(?!return)[a-z]|\Z)", body, flags=re.S)
        if section:
            returns = re.findall(r"::(\w+)", section.group(1))
        notes = sorted(set(re.findall(r"\\(note_\w+)", body)))
        blocks.append((end_line, DocFacts(tuple(dict.fromkeys(returns)), tuple(notes), end_line)))
    return blocks


def attach_docs(
    prototypes: list[CPrototype], blocks: list[tuple[int, DocFacts]], reach: int = 8
) -> dict[str, DocFacts]:
    """The doc block that ends just above each prototype (within `reach` lines, nothing between)."""
    attached: dict[str, DocFacts] = {}
    ends = sorted(blocks, key=lambda block: block[0])
    lines = sorted(p.line for p in prototypes)
    for prototype in prototypes:
        candidates = [facts for end, facts in ends if end < prototype.line]
        if not candidates:
            continue
        facts = candidates[-1]
        between = [line for line in lines if facts.line < line < prototype.line]
        if prototype.line - facts.line <= reach and not between:
            attached[prototype.name] = facts
    return attached


def extract(paths: Mapping[str, Path]) -> dict[str, Any]:
    """Read cuda_runtime_api.h from the unpacked nvidia-cuda-runtime-cu12 wheel."""
    root = Path(paths["nvidia-cuda-runtime-cu12"])
    include = find_include_dir(root, CUDA_INCLUDE_DIR, CUDA_HEADER)
    preprocessor = Preprocessor(
        include_root=include,
        defines=CUDA_DEFINES,
        protected=CUDA_MARKERS | {"__dv"},
        emit=[CUDA_HEADER],
    )
    prototypes = read_prototypes(
        preprocessor, CUDA_HEADER, markers=CUDA_MARKERS, name_pattern=r"cuda\w+"
    )
    docs = attach_docs(
        prototypes,
        doc_blocks((include / CUDA_HEADER).read_text(encoding="utf-8", errors="replace")),
    )
    records: dict[str, dict[str, Any]] = {}
    for prototype in prototypes:
        if prototype.has_body:
            continue
        record = prototype.as_dict()
        facts = docs.get(prototype.name)
        record["doc_returns"] = list(facts.returns) if facts else []
        record["doc_notes"] = list(facts.notes) if facts else []
        record["doc_line"] = facts.line if facts else None
        if prototype.name in records:
            raise HeaderParseError(
                f"{CUDA_HEADER}:{prototype.line}: {prototype.name} declared twice "
                f"(first at line {records[prototype.name]['line']})"
            )
        records[prototype.name] = record
    return {
        "model": "cuda",
        "sources": pinned_sources(SOURCES),
        "header_files": [[CUDA_HEADER, sha256_of(include / CUDA_HEADER)]],
        "records": sorted(records.values(), key=lambda r: r["name"]),
    }
