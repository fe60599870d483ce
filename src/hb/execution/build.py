"""Builds a submission's source into a shared library in the sandbox, with a content-addressed
cache: the same source, flags and libraries on the same compiler build once."""

from __future__ import annotations

import functools
import hashlib
import os
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from hb import languages, precision
from hb.execution import sandbox

LIBRARY_NAME = "libsubmission.so"
HEADER_NAME = "hb_types.h"


@dataclass
class BuildResult:
    """A built library, or the reason it did not build."""

    ok: bool
    library: Path | None
    cached: bool
    build_ns: int
    reason: str | None = None
    log: str = ""


@functools.cache
def compiler_identity(compiler: str) -> str:
    """The compiler's version line: part of the cache key, so an upgrade rebuilds."""
    try:
        out = subprocess.run(
            [compiler, "--version"], capture_output=True, text=True, check=False, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"{compiler}: unavailable ({error})"
    return out.stdout.splitlines()[0] if out.stdout else compiler


def build_flags(language_name: str, libraries: list[str]) -> list[str]:
    """The compiler's arguments: the language's flags (the same for a submission and for the
    catalog's baseline, which is built as a C submission), the C prelude
    where the language includes it, the output and source, then the libraries. A python build is
    a syntax check of the source."""
    lang = languages.language(language_name)
    if lang.delivery == "python":
        return [*lang.flags, lang.source_name]
    flags = list(languages.compile_flags(lang))
    link: list[str] = []
    for name in libraries:
        link += list(lang.catalog[name].link_flags)
    prelude = ["-include", HEADER_NAME] if lang.prelude else []
    return [*flags, *prelude, *link_placeholder(lang), *link, "-lm"]


def link_placeholder(lang: languages.Language) -> list[str]:
    # The source name goes before the libraries so that the linker resolves them.
    return ["-o", LIBRARY_NAME, lang.source_name]


def library_name(language_name: str) -> str:
    """The file a build leaves in the cache: the shared library, or a python delivery's source."""
    lang = languages.language(language_name)
    return lang.source_name if lang.delivery == "python" else LIBRARY_NAME


def cache_key(source: str, language_name: str, libraries: list[str]) -> str:
    lang = languages.language(language_name)
    digest = hashlib.sha256()
    for part in (
        source,
        precision.C_PRELUDE,
        compiler_identity(languages.compiler_path(language_name) or lang.compiler),
        "\0".join(build_flags(language_name, libraries)),
    ):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()


def build(
    source: str,
    language_name: str,
    libraries: list[str],
    cache_dir: Path,
    limits: sandbox.Limits,
) -> BuildResult:
    """Build `source` with its language's flags into a cached shared library."""
    started = time.perf_counter_ns()
    refusal = sandbox.catalog_refusal(language_name, libraries)
    if refusal is not None:
        return BuildResult(False, None, False, 0, reason=refusal)
    lang = languages.language(language_name)
    key = cache_key(source, language_name, libraries)
    output = library_name(language_name)
    target = cache_dir / key[:2] / key / output
    if target.is_file():
        return BuildResult(True, target, True, time.perf_counter_ns() - started)
    cache_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    # The box sees only its own run directory: the cache (which later grades, and the judge's
    # own relayout libraries, would load) is written by the judge from the box's output.
    try:
        result, kept = sandbox.run_sandboxed(
            [languages.compiler_path(language_name) or lang.compiler,
             *build_flags(language_name, libraries)],
            cache_dir.parent / "boxes",
            limits,
            files={lang.source_name: source, HEADER_NAME: precision.C_PRELUDE},
            keep=[] if lang.delivery == "python" else [LIBRARY_NAME],
            read_only=languages.cuda_read_only() if lang.device else (),
        )  # fmt: skip
    except sandbox.SandboxUnavailable as error:
        return BuildResult(False, None, False, time.perf_counter_ns() - started, reason=str(error))
    failure = result.failure("the build")
    if lang.delivery == "python" and failure is None:
        # The judge keeps the source it was given, not anything the box wrote.
        kept[output] = source.encode()
    if failure is not None or output not in kept:
        log = (result.stderr or result.stdout).strip()
        return BuildResult(
            False, None, False, time.perf_counter_ns() - started,
            reason=f"build failed: {failure or 'no library produced'}", log=log[-4000:],
        )  # fmt: skip
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    staged = target.parent / f".{uuid.uuid4().hex}.so"
    staged.write_bytes(kept[output])
    os.chmod(staged, 0o500)
    os.replace(staged, target)  # atomic: a concurrent build of the same key is harmless
    return BuildResult(
        True, target, False, time.perf_counter_ns() - started, log=result.stderr[-4000:]
    )


@dataclass
class SyntaxCheck:
    """A source compiled with the judge's flags and -fsyntax-only: whether it compiles, and the
    compiler's diagnostics."""

    ok: bool
    diagnostics: str
    command: str


def syntax_check(
    source: str, language_name: str, libraries: list[str], boxes_dir: Path, limits: sandbox.Limits
) -> SyntaxCheck:
    """Compile `source` in a box with the flags a grade builds it with plus -fsyntax-only (a python
    delivery: its build, which is a syntax check); nothing is kept. A library outside the
    language's catalog is refused as a build refuses it."""
    refusal = sandbox.catalog_refusal(language_name, libraries)
    if refusal is not None:
        return SyntaxCheck(False, refusal, "")
    lang = languages.language(language_name)
    flags = build_flags(language_name, libraries)
    # nvcc has no -fsyntax-only: a cuda source's check is its whole build (nothing is kept).
    if lang.delivery == "library":
        flags.append("-fsyntax-only")
    argv = [languages.compiler_path(language_name) or lang.compiler, *flags]
    try:
        files = {lang.source_name: source, HEADER_NAME: precision.C_PRELUDE}
        read_only = languages.cuda_read_only() if lang.device else ()
        result, _ = sandbox.run_sandboxed(argv, boxes_dir, limits, files=files, read_only=read_only)
    except sandbox.SandboxUnavailable as error:
        return SyntaxCheck(False, str(error), " ".join(argv))
    failure = result.failure("the syntax check", detail=False)
    diagnostics = (result.stderr or result.stdout).strip()[-8000:]
    if result.timed_out or result.oom_killed or result.signal_name is not None:
        diagnostics = f"{failure}\n{diagnostics}".strip()
    return SyntaxCheck(failure is None, diagnostics, " ".join([lang.compiler, *flags]))
