"""The build cache: generated C compiled once into a content-addressed directory and loaded by ctypes.

A library's key hashes its source text, the compiler (its path and version banner) and the flags,
so a changed program, compiler or flag builds anew and nothing else does. Sizes are run-time
arguments of every kernel, so a new problem size never rebuilds. A build writes into a private
temporary directory and renames the finished library into place, so concurrent builders never load a
half-written file.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shlex
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

# -fno-trapping-math lets GCC if-convert (and so vectorise) the branch-free float selects of the
# widening routines; rounding does not change (no -ffast-math, no flush-to-zero).
# --param vect-max-version-for-alias-checks=0: GCC 12's vectorizer versions a loop on a runtime
# alias check that it gets wrong for a reversed index (a shuffle's `1 - i1` over extent 2 came out
# shifted by one element, tests/relayout/test_convert_programs.py); relayout's buffers never alias,
# so no loop needs that versioning and the guard costs nothing on the kernels that matter.
DEFAULT_FLAGS = (
    "-O3", "-fopenmp", "-fPIC", "-shared", "-std=gnu11", "-fno-trapping-math",
    "--param", "vect-max-version-for-alias-checks=0",
)  # fmt: skip
NATIVE_FLAG = "-march=native"


class BuildError(RuntimeError):
    """A generated kernel that did not compile: the message carries the compiler's complaint."""


@dataclass(frozen=True)
class Toolchain:
    """A C compiler and its flags (`extra` are appended, e.g. sanitizers)."""

    cc: str = "gcc"
    flags: tuple[str, ...] = DEFAULT_FLAGS
    native: bool = True
    extra: tuple[str, ...] = field(default=())
    # Where its libraries are cached (None: cache_directory()); not part of a library's key.
    cache_dir: Path | None = None

    @classmethod
    def from_environment(
        cls,
        cc: str | None = None,
        cflags: str | list[str] | tuple[str, ...] | None = None,
        native: bool | None = None,
        extra: tuple[str, ...] = (),
        cache_dir: Path | None = None,
    ) -> Toolchain:
        """Arguments first, then RELAYOUT_CC / RELAYOUT_CFLAGS / RELAYOUT_NATIVE=0, then defaults."""
        chosen_cc = cc or os.environ.get("RELAYOUT_CC") or "gcc"
        if cflags is None:
            cflags = os.environ.get("RELAYOUT_CFLAGS")
        flags = (
            DEFAULT_FLAGS
            if cflags is None
            else tuple(shlex.split(cflags) if isinstance(cflags, str) else cflags)
        )
        if native is None:
            native = os.environ.get("RELAYOUT_NATIVE", "1") != "0"
        return cls(chosen_cc, flags, native, tuple(extra), cache_dir)

    def command(self, source: Path, output: Path, *, with_native: bool) -> list[str]:
        native = [NATIVE_FLAG] if with_native and NATIVE_FLAG not in self.flags else []
        return [self.cc, *self.flags, *native, *self.extra, str(source), "-o", str(output), "-lm"]


def cache_directory() -> Path:
    """$RELAYOUT_CACHE_DIR, else ~/.cache/relayout."""
    configured = os.environ.get("RELAYOUT_CACHE_DIR")
    return Path(configured) if configured else Path.home() / ".cache" / "relayout"


@cache
def compiler_banner(cc: str) -> str:
    """The compiler's resolved path and first version line: part of every key."""
    path = shutil.which(cc)
    if path is None:
        raise BuildError(f"C compiler {cc!r} not found on PATH (set RELAYOUT_CC to another)")
    try:
        version = subprocess.run(
            [path, "--version"], capture_output=True, text=True, check=False, timeout=60
        ).stdout.splitlines()
    except OSError as error:
        raise BuildError(f"C compiler {cc!r} does not run: {error}") from error
    return f"{path}\n{version[0] if version else ''}"


def library_key(source: str, toolchain: Toolchain) -> str:
    text = "\0".join(
        [
            source,
            compiler_banner(toolchain.cc),
            " ".join(toolchain.flags),
            str(toolchain.native),
            " ".join(toolchain.extra),
        ]
    )
    return hashlib.sha256(text.encode()).hexdigest()


_build_lock = threading.Lock()


def build_library(source: str, toolchain: Toolchain | None = None) -> Path:
    """The shared library compiled from `source`, built now only if the cache lacks it."""
    toolchain = toolchain or Toolchain.from_environment()
    key = library_key(source, toolchain)
    final = (toolchain.cache_dir or cache_directory()) / key[:2] / f"{key}.so"
    if final.exists():
        return final
    with _build_lock:
        if final.exists():
            return final
        final.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=f".{key[:12]}-", dir=final.parent) as scratch:
            source_path = Path(scratch) / "kernels.c"
            source_path.write_text(source)
            output = Path(scratch) / "kernels.so"
            attempts = [True, False] if toolchain.native else [False]
            complaint = ""
            for with_native in attempts:
                command = toolchain.command(source_path, output, with_native=with_native)
                result = subprocess.run(
                    command, capture_output=True, text=True, check=False, timeout=600
                )
                if result.returncode == 0:
                    break
                complaint = f"$ {shlex.join(command)}\n{result.stderr[-4000:]}"
            else:
                raise BuildError(f"generated kernels did not compile:\n{complaint}")
            # Keep the source beside the library: what a reader needs to debug a kernel.
            shutil.copyfile(source_path, final.with_suffix(".c"))
            os.replace(output, final)
    return final


_loaded: dict[Path, ctypes.CDLL] = {}


def load_library(source: str, toolchain: Toolchain | None = None) -> ctypes.CDLL:
    """`source` built (or found in the cache) and loaded, once per process."""
    path = build_library(source, toolchain)
    with _build_lock:
        if path not in _loaded:
            _loaded[path] = ctypes.CDLL(str(path))
        return _loaded[path]
