"""Extract every host API function of NCCL's nccl.h (from the nvidia-nccl-cu12 wheel), each with
its profiling twin `pncclX` when the header declares one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from usis.cheader.declarations import CPrototype, find_include_dir, read_prototypes
from usis.cheader.preprocessor import Preprocessor
from usis.cheader.tokens import HeaderParseError, strip_comments
from usis.sources.fetch import sha256_file
from usis.sources.manifest import pins

SOURCES: tuple[str, ...] = ("nvidia-nccl-cu12",)


NCCL_INCLUDE_DIR = "nvidia/nccl/include"
NCCL_HEADER = "nccl.h"
# A C compiler on Linux with a CUDA 12 runtime, the configuration the wheel targets.
NCCL_DEFINES = {"CUDART_VERSION": "12090", "NCCL_OS_LINUX": "1"}
NCCL_MARKERS = frozenset({"NCCL_API"})


def result_codes(text: str) -> list[str]:
    """The enumerators of `ncclResult_t`, in declaration order (without the count sentinel)."""
    match = re.search(r"typedef\s+enum\s*\{([^}]*)\}\s*ncclResult_t\s*;", strip_comments(text))
    if match is None:
        raise HeaderParseError(f"{NCCL_HEADER}: no `typedef enum {{...}} ncclResult_t;` found")
    names = re.findall(r"(\w+)\s*=", match.group(1))
    return [name for name in names if name != "ncclNumResults"]


def parameter_types(prototype: CPrototype) -> list[tuple[str, str | None, bool]]:
    """What a profiling twin must share with the function it profiles: every parameter's type,
    name and array-ness."""
    return [(p.type, p.name, p.array) for p in prototype.parameters]


def extract(paths: Mapping[str, Path]) -> dict[str, Any]:
    """Read nccl.h from the unpacked nvidia-nccl-cu12 wheel."""
    root = Path(paths["nvidia-nccl-cu12"])
    include = find_include_dir(root, NCCL_INCLUDE_DIR, NCCL_HEADER)
    preprocessor = Preprocessor(
        include_root=include, defines=NCCL_DEFINES, protected=NCCL_MARKERS, emit=[NCCL_HEADER]
    )
    prototypes = read_prototypes(
        preprocessor, NCCL_HEADER, markers=NCCL_MARKERS, name_pattern=r"p?nccl\w+"
    )
    public = {p.name: p for p in prototypes if p.name.startswith("nccl") and not p.has_body}
    profiling = {p.name: p for p in prototypes if p.name.startswith("pnccl")}
    records = []
    for name, prototype in sorted(public.items()):
        record = prototype.as_dict()
        twin = profiling.get("p" + name)
        if twin is not None and parameter_types(twin) != parameter_types(prototype):
            raise HeaderParseError(
                f"{NCCL_HEADER}:{twin.line}: profiling twin p{name} has a different parameter "
                "list from the function it profiles"
            )
        record["profiling_name"] = twin.name if twin is not None else None
        records.append(record)
    orphans = sorted(set(profiling) - {"p" + name for name in public})
    if orphans:
        raise HeaderParseError(f"{NCCL_HEADER}: profiling names without a function: {orphans}")
    version = ".".join(
        preprocessor.table.macros[part].body[0].text
        for part in ("NCCL_MAJOR", "NCCL_MINOR", "NCCL_PATCH")
    )
    return {
        "model": "nccl",
        "result_codes": result_codes((include / NCCL_HEADER).read_text(encoding="utf-8")),
        "sources": pins(SOURCES),
        "header_files": [[NCCL_HEADER, sha256_file(include / NCCL_HEADER)]],
        "header_version": version,
        "records": records,
    }
