"""Extract every host API function of NCCL's nccl.h (from the nvidia-nccl-cu12 wheel), each with
its profiling twin `pncclX` when the header declares one, and the host calls of NCCL's device API
that nccl_device/host.h declares.
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
# The device API's host calls: `NCCL_EXTERN_C ncclResult_t ncclDevCommCreate(...)` (the marker is
# `extern "C"` for C++ and empty for C).
DEVICE_HOST_HEADER = "nccl_device/host.h"
DEVICE_HOST_MARKERS = frozenset({"NCCL_EXTERN_C"})


def result_codes(text: str) -> list[str]:
    """The enumerators of `ncclResult_t`, in declaration order (without the count sentinel)."""
    match = re.search(r"typedef\s+enum\s*\{([^}]*)\}\s*ncclResult_t\s*;", strip_comments(text))
    if match is None:
        raise HeaderParseError(f"{NCCL_HEADER}: no `typedef enum {{...}} ncclResult_t;` found")
    names = re.findall(r"(\w+)\s*=", match.group(1))
    return [name for name in names if name != "ncclNumResults"]


IN_PLACE_SENTENCE = re.compile(r"In-place operations? will happen if ([^.]*)\.")


def comment_facts(text: str) -> list[tuple[int, dict[str, Any]]]:
    """(last line, facts) for every `/* ... */` comment of the header: the in-place condition it
    documents (`recvbuff == sendbuff + rank * recvcount`) and whether it says `(deprecated)`."""
    facts = []
    for match in re.finditer(r"/\*(.*?)\*/", text, flags=re.S):
        body = " ".join(re.sub(r"^\s*\*+", " ", match.group(1), flags=re.M).split())
        condition = IN_PLACE_SENTENCE.search(body)
        facts.append(
            (
                text.count("\n", 0, match.end()) + 1,
                {
                    "in_place_condition": condition.group(1).strip() if condition else None,
                    "deprecated_comment": "(deprecated)" in body,
                },
            )
        )
    return facts


def comment_above(comments: list[tuple[int, dict[str, Any]]], line: int) -> dict[str, Any]:
    """The facts of the last comment that ends before `line` (a function's own comment: the
    header puts one above each function and its profiling twin)."""
    above = [facts for end, facts in comments if end < line]
    return above[-1] if above else {"in_place_condition": None, "deprecated_comment": False}


def parameter_types(prototype: CPrototype) -> list[tuple[str, str | None, bool]]:
    """What a profiling twin must share with the function it profiles: every parameter's type,
    name and array-ness."""
    return [(p.type, p.name, p.array) for p in prototype.parameters]


def device_host_records(include: Path, declared: set[str]) -> list[dict[str, Any]]:
    """The host calls of nccl_device/host.h for a C compilation on Linux (its Windows-only calls
    are left out, as the preprocessor leaves them), each with its comment facts."""
    path = include / DEVICE_HOST_HEADER
    if not path.is_file():
        raise HeaderParseError(
            f"{DEVICE_HOST_HEADER} not found under {include}; fetch nvidia-nccl-cu12 again "
            "(`usis fetch --model nccl`): the pin unpacks the nccl_device/ headers"
        )
    preprocessor = Preprocessor(
        include_root=include,
        defines=NCCL_DEFINES,
        protected=DEVICE_HOST_MARKERS,
        emit=[DEVICE_HOST_HEADER],
    )
    comments = comment_facts(path.read_text(encoding="utf-8"))
    records = []
    for prototype in read_prototypes(
        preprocessor, DEVICE_HOST_HEADER, markers=DEVICE_HOST_MARKERS, name_pattern=r"nccl\w+"
    ):
        if prototype.has_body:
            continue
        if prototype.name in declared:
            raise HeaderParseError(
                f"{DEVICE_HOST_HEADER}:{prototype.line}: {prototype.name} is declared in "
                f"{NCCL_HEADER} too"
            )
        record = prototype.as_dict()
        record.update(comment_above(comments, prototype.line))
        record["profiling_name"] = None
        records.append(record)
    return sorted(records, key=lambda record: record["name"])


def declared_names(root: Path) -> set[str]:
    """Every function an unpacked nvidia-nccl-cu12 wheel of any version declares: nccl.h's host
    API and the host calls of the device API, wherever under nccl_device/ the version declares
    them (2.28 to 2.31 spread them over its headers, 2.32 gathers them in nccl_device/host.h).
    Only the headers that hold the `NCCL_EXTERN_C` marker are read."""
    include = find_include_dir(root, NCCL_INCLUDE_DIR, NCCL_HEADER)
    preprocessor = Preprocessor(
        include_root=include, defines=NCCL_DEFINES, protected=NCCL_MARKERS, emit=[NCCL_HEADER]
    )
    names = {
        prototype.name
        for prototype in read_prototypes(
            preprocessor, NCCL_HEADER, markers=NCCL_MARKERS, name_pattern=r"nccl\w+"
        )
        if not prototype.has_body
    }
    for path in sorted((include / "nccl_device").rglob("*.h")):
        if "NCCL_EXTERN_C" not in path.read_text(encoding="utf-8", errors="replace"):
            continue
        header = path.relative_to(include).as_posix()
        device = Preprocessor(
            include_root=include, defines=NCCL_DEFINES, protected=DEVICE_HOST_MARKERS, emit=[header]
        )
        names.update(
            prototype.name
            for prototype in read_prototypes(
                device, header, markers=DEVICE_HOST_MARKERS, name_pattern=r"nccl\w+"
            )
            if not prototype.has_body
        )
    return names


def extract(paths: Mapping[str, Path]) -> dict[str, Any]:
    """Read nccl.h and nccl_device/host.h from the unpacked nvidia-nccl-cu12 wheel."""
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
    text = (include / NCCL_HEADER).read_text(encoding="utf-8")
    comments = comment_facts(text)
    records = []
    for name, prototype in sorted(public.items()):
        record = prototype.as_dict()
        record.update(comment_above(comments, prototype.line))
        twin = profiling.get("p" + name)
        if twin is not None and parameter_types(twin) != parameter_types(prototype):
            raise HeaderParseError(
                f"{NCCL_HEADER}:{twin.line}: profiling twin p{name} has a different parameter "
                "list from the function it profiles"
            )
        record["profiling_name"] = twin.name if twin is not None else None
        records.append(record)
    records.extend(device_host_records(include, {record["name"] for record in records}))
    orphans = sorted(set(profiling) - {"p" + name for name in public})
    if orphans:
        raise HeaderParseError(f"{NCCL_HEADER}: profiling names without a function: {orphans}")
    version = ".".join(
        preprocessor.table.macros[part].body[0].text
        for part in ("NCCL_MAJOR", "NCCL_MINOR", "NCCL_PATCH")
    )
    return {
        "model": "nccl",
        "result_codes": result_codes(text),
        "sources": pins(SOURCES),
        "header_files": [
            [NCCL_HEADER, sha256_file(include / NCCL_HEADER)],
            [DEVICE_HOST_HEADER, sha256_file(include / DEVICE_HOST_HEADER)],
        ],
        "header_version": version,
        "records": records,
    }
