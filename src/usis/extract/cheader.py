"""The pieces of C header reading that every extract shares, whichever prototype reader it uses:
comment stripping, backslash continuations, #if/#elif/#else/#endif nesting, declarator rendering,
and the digests and pins that an extract records about the headers it read.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from usis.sources.manifest import load_manifest


class HeaderParseError(ValueError):
    """Header text the reader cannot make sense of; the message names the file and line."""


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def pinned_sources(names: Iterable[str]) -> list[list[str]]:
    """[name, version, sha256] of each named source, as the manifest pins it."""
    manifest = load_manifest()
    missing = [name for name in names if name not in manifest]
    if missing:
        raise KeyError(f"sources {missing} are not in src/usis/sources/manifest.json")
    return [manifest[name].pin() for name in names]


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


def render_declarator(c_type: str, name: str | None) -> str:
    """`int*` + `x` -> `int *x`; `int*` alone -> `int *`; C's own spacing for declarators."""
    base = c_type.rstrip("*")
    stars = c_type[len(base) :]
    if not name:
        return f"{base}{' ' + stars if stars else ''}".strip()
    return f"{base} {stars}{name}"
