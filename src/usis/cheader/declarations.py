"""Function prototypes out of preprocessed header text: top-level statements, their parameters
(types with pointer stars, names, arrays, defaults), the markers around them, and the one
canonical C rendering of a prototype that every corpus uses in `bindings.c.signature`."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from usis.cheader.preprocessor import Preprocessor, SourceLine
from usis.cheader.tokens import HeaderParseError, Token, render, split_arguments, tokenize


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


DEPRECATION_MARKER = re.compile(r"__\w*DEPRECATED\w*")


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

    def as_declaration(self) -> dict[str, Any]:
        """The declaration alone: name, types, parameter names and array-ness, the line, and the
        deprecation markers among the markers (`__GOMP_DEPRECATED_5_0`) as `attributes`."""
        return {
            "name": self.name,
            "return_type": self.return_type,
            "parameters": [
                {"type": p.type, "name": p.name, "array": p.array} for p in self.parameters
            ],
            "line": self.line,
            "attributes": sorted({m for m in self.markers if DEPRECATION_MARKER.fullmatch(m)}),
        }

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


# Words that can end an unnamed parameter's type: a trailing identifier that is one of these is
# part of the type, not a parameter name.
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
        "complex",
        "_Complex",
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
    # `__dv(x)` is the CUDA runtime header's spelling of a C++ default argument.
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
    # `T * const p` keeps const on the pointer; C spells the value type first either way, and
    # `char const *` is `const char *`.
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


def parse_declaration(text: str, where: str) -> CPrototype | None:
    """The prototype one declaration's text states, read as written (no preprocessing), or None
    when the text declares no function."""
    tokens = tuple(t for t in tokenize(text, 1, where) if t.kind != "newline")
    return parse_prototype(Statement(where, 1, tokens, False), frozenset())


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


def split_template(statement: Statement) -> tuple[str, Statement] | None:
    """A C++ function template's parameter list (`typename T, int N`) and the declaration it
    introduces, or None for a statement that is not `template <...> ...`."""
    tokens = list(statement.tokens)
    if len(tokens) < 3 or tokens[0].text != "template" or tokens[1].text != "<":
        return None
    depth = 0
    for index, token in enumerate(tokens[1:], start=1):
        depth += {"<": 1, ">": -1, ">>": -2}.get(token.text, 0)
        if depth == 0:
            rest = tuple(tokens[index + 1 :])
            return render(tokens[2:index]), Statement(
                statement.file, statement.line, rest, statement.has_body
            )
    return None


def read_template_prototypes(
    preprocessor: Preprocessor,
    headers: str | tuple[str, ...],
    *,
    markers: Iterable[str],
    name_pattern: str,
) -> list[tuple[str, CPrototype]]:
    """(template parameter list, prototype) of every function template declared or defined in
    the emitted files whose name matches the pattern."""
    marker_set = frozenset(markers)
    found: list[tuple[str, CPrototype]] = []
    names = (headers,) if isinstance(headers, str) else headers
    for statement in split_statements(preprocessor.run(*names)):
        split = split_template(statement)
        if split is None:
            continue
        prototype = parse_prototype(split[1], marker_set)
        if prototype is not None and re.fullmatch(name_pattern, prototype.name):
            found.append((split[0], prototype))
    return found


def find_include_dir(root: Path, relative: str, marker: str) -> Path:
    """The include directory inside an unpacked wheel (or `root` itself if it is that directory)."""
    for candidate in (root / relative, root):
        if (candidate / marker).is_file():
            return candidate
    raise FileNotFoundError(
        f"{marker} not found under {root}; expected the unpacked wheel (with {relative}/) "
        "or that include directory itself"
    )


def render_declarator(c_type: str, name: str | None) -> str:
    """`int*` + `x` -> `int *x`; `int*` alone -> `int *`; C's own spacing for declarators."""
    base = c_type.rstrip("*")
    stars = c_type[len(base) :]
    if not name:
        return f"{base}{' ' + stars if stars else ''}".strip()
    return f"{base} {stars}{name}"


def render_signature(name: str, return_type: str, parameters: Iterable[Mapping[str, Any]]) -> str:
    """The C prototype text `ret name(type *p, ...)` in one canonical spacing, e.g.
    `int f(const void *buf, int n)`; an array parameter renders as `type name[]`."""
    rendered = [
        render_declarator(p["type"], p["name"]) + ("[]" if p.get("array") else "")
        for p in parameters
    ]
    return f"{render_declarator(return_type, name)}({', '.join(rendered) or 'void'})"
