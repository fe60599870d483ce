"""Extract the OpenMP runtime routines from gcc's libgomp omp.h and LLVM's libomp omp.h (LLVM 16
from Debian, LLVM 21 from the cmeel-libomp wheel for the OpenMP 6.0 routines).

One record per routine of the union, holding each implementation's own declaration (return
type, parameter types and names, line) so that classify can say which implementation declares it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from usis.cheader.declarations import read_prototypes
from usis.cheader.preprocessor import Preprocessor
from usis.cheader.tokens import HeaderParseError
from usis.sources.fetch import sha256_file
from usis.sources.manifest import pins

SOURCES: tuple[str, ...] = ("libgcc-12-dev", "libomp-16-dev", "cmeel-libomp")

# Where each package puts omp.h, relative to the unpacked package root, and the name the corpus
# uses for the implementation.
HEADER_PATHS: dict[str, tuple[str, str]] = {
    "libgcc-12-dev": ("libgomp", "usr/lib/gcc/x86_64-linux-gnu/12/include/omp.h"),
    "libomp-16-dev": ("libomp", "usr/lib/llvm-16/lib/clang/16/include/omp.h"),
    "cmeel-libomp": ("libomp-21", "cmeel.prefix/include/omp.h"),
}

# Decoration that changes nothing in the C signature: storage class, calling convention,
# exception and deprecation markers, default-argument macros.
DECORATION_TOKENS = frozenset(
    {
        "extern",
        "__GOMP_NOTHROW",
        "__GOMP_DEPRECATED_5_0",
        "__GOMP_DEPRECATED_5_1",
        "__GOMP_DEFAULT_NULL_ALLOCATOR",
        "__KAI_KMPC_CONVENTION",
        "__KMP_IMP",
    }
)
# A C (not C++) host compilation: the declarations a C program including omp.h sees; gcc's header
# spells size_t with the compiler's builtin macro.
DEFINES: dict[str, str] = {"__STDC_VERSION__": "201710", "__SIZE_TYPE__": "size_t"}
# OpenMP runtime routines are the omp_ names; kmp_*/llvm_* are implementation extensions. They
# are read as a program spells them: LLVM's omp.h #defines four of them to its ompc_ entry points.
ROUTINE_PATTERN = r"omp_\w*"


def header_path(root: Path, source: str) -> Path:
    relative = HEADER_PATHS[source][1]
    for candidate in (root / relative, root):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(
        f"{source}: omp.h not found at {root / relative}; expected the unpacked package or the "
        "header file itself"
    )


def extract(paths: Mapping[str, Path]) -> dict[str, Any]:
    """One record per omp_ routine declared by either header, with each header's declaration."""
    routines: dict[str, dict[str, Any]] = {}
    files = []
    for source in SOURCES:
        implementation = HEADER_PATHS[source][0]
        path = header_path(Path(paths[source]), source)
        files.append([source, "omp.h", sha256_file(path)])
        preprocessor = Preprocessor(
            include_root=path.parent,
            defines=DEFINES,
            protected=DECORATION_TOKENS,
            protected_pattern=ROUTINE_PATTERN,
            emit=[path.name],
        )
        seen: set[str] = set()
        for prototype in read_prototypes(
            preprocessor, path.name, markers=DECORATION_TOKENS, name_pattern=ROUTINE_PATTERN
        ):
            if prototype.has_body:
                continue
            if prototype.name in seen:
                raise HeaderParseError(
                    f"{implementation} omp.h:{prototype.line}: {prototype.name} declared twice "
                    "for a C compilation"
                )
            seen.add(prototype.name)
            record = routines.setdefault(
                prototype.name, {"name": prototype.name, "declared_by": {}}
            )
            declaration = prototype.as_declaration()
            del declaration["name"]
            record["declared_by"][implementation] = declaration
    return {
        "model": "openmp",
        "sources": pins(SOURCES),
        "header_files": files,
        "records": [routines[name] for name in sorted(routines)],
    }
