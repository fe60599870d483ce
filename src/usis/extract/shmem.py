"""Extract every routine prototype from Open MPI's OpenSHMEM header (Debian's libopenmpi-dev).

Also home of the small C prototype reader shared with the OpenMP extract: a conditional-aware
preprocessor pass (on the common pieces of usis.extract.cheader) and a declaration splitter, enough
for vendor API headers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from usis.extract.cheader import (
    Conditionals,
    HeaderParseError,
    logical_lines,
    pinned_sources,
    render_declarator,
    sha256_of,
)

SOURCES: tuple[str, ...] = ("libopenmpi-dev",)

# Where the Debian package puts the header, relative to the unpacked package root.
SHMEM_INCLUDE_DIR = "usr/lib/x86_64-linux-gnu/openmpi/include"
SHMEM_HEADERS = ("shmem.h", "shmem-compat.h")
# The profiling interface: every pshmem_X declared here makes pshmem_X the profiling name of X.
PROFILING_HEADER = "pshmem.h"

# Tokens that decorate a prototype without changing the C signature (visibility, calling
# convention, storage class).
DECORATION_TOKENS = frozenset({"OSHMEM_DECLSPEC", "extern"})

# Words that can end an unnamed parameter's type; a trailing identifier that is one of these is
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
        "const",
        "volatile",
        "restrict",
        "struct",
        "enum",
    }
)
C_QUALIFIERS = frozenset({"const", "volatile", "restrict"})


@dataclass(frozen=True)
class CParameter:
    """One parameter of a C prototype: its type (pointer stars attached) and its name, if any."""

    type: str
    name: str | None
    array: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {"type": self.type, "name": self.name, "array": self.array}


@dataclass(frozen=True)
class CPrototype:
    """A function prototype as declared in a header, with the line it starts on."""

    name: str
    return_type: str
    parameters: tuple[CParameter, ...]
    line: int
    attributes: tuple[str, ...] = field(default=())

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "return_type": self.return_type,
            "parameters": [p.as_dict() for p in self.parameters],
            "line": self.line,
            "attributes": list(self.attributes),
        }


def render_signature(name: str, return_type: str, parameters: Iterable[Mapping[str, Any]]) -> str:
    """The C prototype text `ret name(type *p, ...)` in one canonical spacing."""
    rendered = [render_parameter(p["type"], p["name"], bool(p.get("array"))) for p in parameters]
    return f"{render_declarator(return_type, name)}({', '.join(rendered) or 'void'})"


def render_parameter(c_type: str, name: str | None, array: bool = False) -> str:
    text = render_declarator(c_type, name)
    return (text + "[]" if array else text).strip()


def evaluate_condition(expression: str, defines: Mapping[str, str]) -> bool:
    """Evaluate an #if expression with the given macro values; unknown identifiers are 0."""
    expression = re.sub(
        r"defined\s*\(\s*(\w+)\s*\)|defined\s+(\w+)",
        lambda m: "1" if (m.group(1) or m.group(2)) in defines else "0",
        expression,
    )
    expression = re.sub(r"\b(\d+)[LlUu]+\b", r"\1", expression)

    def value_of(match: re.Match[str]) -> str:
        word = match.group(0)
        if word.isdigit():
            return word
        value = defines.get(word, "0")
        return value if re.fullmatch(r"\d+", value) else "0"

    expression = re.sub(r"\b\w+\b", value_of, expression)
    expression = expression.replace("&&", " and ").replace("||", " or ")
    expression = re.sub(r"!(?!=)", " not ", expression)
    if not re.fullmatch(r"[\d\s()<>=!+\-*andotr]*", expression):
        raise HeaderParseError(f"#if expression not understood: {expression!r}")
    return bool(eval(expression, {"__builtins__": {}}, {}))


def condition_holds(keyword: str, rest: str, defines: Mapping[str, str]) -> bool:
    """Whether an #if, #ifdef, #ifndef or #elif with text `rest` takes its branch."""
    if keyword == "ifdef":
        return rest.split()[0] in defines
    if keyword == "ifndef":
        return rest.split()[0] not in defines
    return evaluate_condition(rest, defines)


def preprocess(text: str, defines: Mapping[str, str], where: str) -> list[tuple[int, str]]:
    """Keep the lines a C compiler with `defines` would see; drop every directive.

    Returns (line number, text) pairs. Only conditionals are interpreted: the headers read here
    use #define for constants and attribute macros, which the declaration reader handles itself.
    """
    kept: list[tuple[int, str]] = []
    conditionals = Conditionals()
    for number, line in logical_lines(text):
        stripped = line.strip()
        if not stripped.startswith("#"):
            if conditionals.active:
                kept.append((number, line))
            continue
        directive = re.match(r"#\s*(\w+)\s*(.*)", stripped)
        if not directive:
            continue
        keyword, rest = directive.group(1), directive.group(2).strip()
        condition = partial(condition_holds, keyword, rest, defines)
        if conditionals.directive(keyword, condition, f"{where}:{number}"):
            continue
        if keyword == "define" and conditionals.active:
            # Record object-like macros so that later conditionals can test them.
            name_value = re.match(r"(\w+)(?!\()\s*(.*)", rest)
            if name_value and "(" not in rest.split()[0]:
                defines = {**defines, name_value.group(1): name_value.group(2).strip() or "1"}
    conditionals.close(where)
    return kept


def split_statements(lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """Top-level statements ending in ';', each with the line it starts on; bodies are dropped."""
    statements: list[tuple[int, str]] = []
    current: list[str] = []
    start_line = 0
    depth = 0
    for number, line in lines:
        for char in line + "\n":
            if not current and depth == 0:
                if char.isspace():
                    continue
                start_line = number
            if char == "{":
                depth += 1
            elif char == "}":
                depth -= 1
                if depth == 0 and re.search(r"\)\s*$", "".join(current).split("{")[0]):
                    # A function definition (static inline ...) has no trailing ';'.
                    current = []
                    continue
            elif char == ";" and depth == 0:
                statements.append((start_line, " ".join("".join(current).split())))
                current = []
                continue
            if depth == 0 or char in "{}" or current:
                current.append(char)
    return statements


def parse_parameter(text: str, where: str) -> CParameter:
    text = re.sub(r"=.*$", "", text).strip()
    array = False
    array_match = re.search(r"\[\s*\w*\s*\]\s*$", text)
    if array_match:
        array = True
        text = text[: array_match.start()].strip()
    tokens = re.findall(r"\*|[A-Za-z_]\w*", text)
    if not tokens:
        raise HeaderParseError(f"{where}: empty parameter in {text!r}")
    name: str | None = None
    last = tokens[-1]
    leading = tokens[:-1]
    if (
        last != "*"
        and last not in C_TYPE_WORDS
        and any(t not in C_QUALIFIERS for t in leading if t != "*")
    ):
        name = last
        tokens = leading
    stars = "".join(t for t in tokens if t == "*")
    words = [t for t in tokens if t != "*"]
    # `char const *` and `const char *` are the same type; spell it the common way.
    qualifiers = [w for w in words if w in ("const", "volatile")]
    base = [w for w in words if w not in ("const", "volatile")]
    c_type = " ".join([*qualifiers, *base]) + stars
    return CParameter(type=c_type, name=name, array=array)


PROTOTYPE = re.compile(r"^(?P<head>.*?)\b(?P<name>[A-Za-z_]\w*)\s*\((?P<params>.*)\)\s*$")


def parse_prototype(
    line: int, statement: str, drop_tokens: frozenset[str], where: str
) -> CPrototype | None:
    """A prototype from one statement, or None when the statement declares something else."""
    attributes = tuple(sorted(set(re.findall(r"\b(__\w*DEPRECATED\w*)\b", statement))))
    text = re.sub(r"__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)", "", statement)
    text = " ".join(t for t in re.split(r"\s+", text) if t and t not in drop_tokens)
    text = re.sub(r"\b(?:" + "|".join(map(re.escape, sorted(drop_tokens))) + r")\b", "", text)
    if text.startswith(("typedef", "enum", "struct", "union", "static")) or "(" not in text:
        return None
    # Peel trailing decoration (macros after the parameter list) off the statement.
    while True:
        trimmed = re.sub(r"\)\s*[A-Za-z_]\w*\s*$", ")", text)
        if trimmed == text:
            break
        text = trimmed
    match = PROTOTYPE.match(text.strip())
    if not match or "(" in match.group("head"):
        return None
    head = match.group("head").strip()
    if not head:
        return None
    params_text = match.group("params").strip()
    parameters: list[CParameter] = []
    if params_text not in ("", "void"):
        depth = 0
        piece: list[str] = []
        pieces: list[str] = []
        for char in params_text:
            if char == "(":
                depth += 1
            elif char == ")":
                depth -= 1
            if char == "," and depth == 0:
                pieces.append("".join(piece))
                piece = []
            else:
                piece.append(char)
        pieces.append("".join(piece))
        for position, piece_text in enumerate(pieces):
            parameters.append(
                parse_parameter(
                    piece_text, f"{where}:{line} {match.group('name')} parameter {position}"
                )
            )
    return_type = parse_parameter(head, f"{where}:{line} return type").type
    if parse_parameter(head, where).name is not None:
        # `void *` parsed as unnamed is the normal case; a named head means a missed macro.
        raise HeaderParseError(
            f"{where}:{line}: return type {head!r} of {match.group('name')} has an unknown word; "
            "add it to the tokens to drop"
        )
    return CPrototype(
        name=match.group("name"),
        return_type=return_type,
        parameters=tuple(parameters),
        line=line,
        attributes=attributes,
    )


def read_prototypes(
    text: str,
    *,
    where: str,
    defines: Mapping[str, str],
    drop_tokens: frozenset[str],
    substitutions: Iterable[tuple[str, str]] = (),
    name_pattern: str = r".",
) -> list[CPrototype]:
    """Every function prototype a C compiler would see in `text`, in header order."""
    for pattern, replacement in substitutions:
        text = re.sub(pattern, replacement, text)
    prototypes = []
    for line, statement in split_statements(preprocess(text, defines, where)):
        prototype = parse_prototype(line, statement, drop_tokens, where)
        if prototype is not None and re.match(name_pattern, prototype.name):
            prototypes.append(prototype)
    return prototypes


# The C branch of the header's own `OSHMEM_COMPLEX_TYPE` definition (C++ uses std::complex).
SHMEM_SUBSTITUTIONS = ((r"OSHMEM_COMPLEX_TYPE\(\s*(\w+)\s*\)", r"\1 complex"),)
# A C11 compiler, not C++, as the corpus describes the C binding.
SHMEM_DEFINES = {"__STDC_VERSION__": "201112"}


def read_shmem_header(path: Path, header: str) -> list[CPrototype]:
    """The prototypes of one of Open MPI's OpenSHMEM headers, as a C11 compiler sees them."""
    return read_prototypes(
        path.read_text(),
        where=header,
        defines=SHMEM_DEFINES,
        drop_tokens=DECORATION_TOKENS,
        substitutions=SHMEM_SUBSTITUTIONS,
    )


def extract(paths: Mapping[str, Path]) -> dict[str, Any]:
    """Read shmem.h (and the compat header it includes) from the unpacked libopenmpi-dev."""
    root = Path(paths["libopenmpi-dev"])
    include = root / SHMEM_INCLUDE_DIR if (root / SHMEM_INCLUDE_DIR).is_dir() else root
    records: list[dict[str, Any]] = []
    files = []
    for header in SHMEM_HEADERS:
        path = include / header
        if not path.is_file():
            raise FileNotFoundError(
                f"libopenmpi-dev: {header} not found under {include}; expected the unpacked "
                f"Debian package (with {SHMEM_INCLUDE_DIR}/) or that include directory"
            )
        files.append([header, sha256_of(path)])
        for prototype in read_shmem_header(path, header):
            record = prototype.as_dict()
            record["file"] = header
            records.append(record)
    profiling_path = include / PROFILING_HEADER
    profiling_names: set[str] = set()
    if profiling_path.is_file():
        files.append([PROFILING_HEADER, sha256_of(profiling_path)])
        profiling_names = {p.name for p in read_shmem_header(profiling_path, PROFILING_HEADER)}
    for record in records:
        profiled = "p" + record["name"]
        record["profiling_name"] = profiled if profiled in profiling_names else None
    names = [r["name"] for r in records]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise HeaderParseError(f"shmem.h: routines declared twice: {duplicates}")
    records.sort(key=lambda r: r["name"])
    return {
        "model": "shmem",
        "sources": pinned_sources(SOURCES),
        "header_files": files,
        "records": records,
    }
