"""Extract every routine prototype from Open MPI's OpenSHMEM headers (Debian's libopenmpi-dev):
shmem.h, the shmem-compat.h it includes, and pshmem.h for each routine's profiling name."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from usis.cheader.declarations import CPrototype, read_prototypes
from usis.cheader.preprocessor import Preprocessor
from usis.cheader.tokens import HeaderParseError
from usis.sources.fetch import sha256_file
from usis.sources.manifest import pins

SOURCES: tuple[str, ...] = ("libopenmpi-dev",)

# Where the Debian package puts the header, relative to the unpacked package root.
SHMEM_INCLUDE_DIR = "usr/lib/x86_64-linux-gnu/openmpi/include"
SHMEM_HEADERS = ("shmem.h", "shmem-compat.h")
# The profiling interface: every pshmem_X declared here makes pshmem_X the profiling name of X.
PROFILING_HEADER = "pshmem.h"

# Tokens that decorate a prototype without changing the C signature (visibility, storage class).
DECORATION_TOKENS = frozenset({"OSHMEM_DECLSPEC", "extern"})
# A C11 compiler, not C++, as the corpus describes the C binding: the header's own
# `OSHMEM_COMPLEX_TYPE(t)` then reads `t complex`.
SHMEM_DEFINES = {"__STDC_VERSION__": "201112"}


def read_shmem_header(include: Path, header: str) -> list[CPrototype]:
    """The routines one of Open MPI's OpenSHMEM headers declares, as a C11 compiler sees them."""
    preprocessor = Preprocessor(
        include_root=include, defines=SHMEM_DEFINES, protected=DECORATION_TOKENS, emit=[header]
    )
    prototypes = read_prototypes(
        preprocessor, header, markers=DECORATION_TOKENS, name_pattern=r"[A-Za-z_]\w*"
    )
    # Function definitions (the header's static inline helpers) are no part of the API.
    return [prototype for prototype in prototypes if not prototype.has_body]


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
        files.append([header, sha256_file(path)])
        for prototype in read_shmem_header(include, header):
            record = prototype.as_declaration()
            record["file"] = header
            records.append(record)
    profiling_path = include / PROFILING_HEADER
    profiling_names: set[str] = set()
    if profiling_path.is_file():
        files.append([PROFILING_HEADER, sha256_file(profiling_path)])
        profiling_names = {p.name for p in read_shmem_header(include, PROFILING_HEADER)}
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
        "sources": pins(SOURCES),
        "header_files": files,
        "records": records,
    }
