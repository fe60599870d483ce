"""Extract the host and device API of NVSHMEM (nvshmem.h, nvshmemx.h and the headers they include,
from the nvidia-nvshmem-cu12 wheel), with each function's type-generic family.

The header is read twice: once as a host C compiler sees it and once as nvcc's device pass sees it
(`__CUDA_ARCH__` defined), since the device definitions live in `#ifdef __CUDA_ARCH__` sections.
Where a function appears tells where it may be called from.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from usis.cheader.declarations import (
    find_include_dir,
    read_prototypes,
    read_template_prototypes,
    render_signature,
)
from usis.cheader.preprocessor import Preprocessor
from usis.cheader.tokens import render
from usis.sources.fetch import sha256_file
from usis.sources.manifest import pins

SOURCES: tuple[str, ...] = ("nvidia-nvshmem-cu12",)


NVSHMEM_INCLUDE_DIR = "nvidia/nvshmem/include"
ENTRY_HEADERS = ("nvshmem.h", "nvshmemx.h")
# The API headers whose declarations make the corpus; the others only contribute macros.
API_HEADERS = (
    "host/nvshmem_api.h",
    "host/nvshmem_coll_api.h",
    "host/nvshmemx_api.h",
    "host/nvshmemx_coll_api.h",
    "device/nvshmem_defines.h",
    "device/nvshmem_coll_defines.cuh",
    "device/nvshmemx_defines.h",
    "device/nvshmemx_coll_defines.cuh",
    "device/nvshmemx_collective_launch_apis.h",
)
# Kept as tokens so that the reader sees where a function may run, whatever the pass.
NVSHMEM_MARKERS = frozenset(
    {
        "__host__",
        "__device__",
        "__global__",
        "NVSHMEMI_HOSTDEVICE_PREFIX",
        "NVSHMEMI_DEVICE_PREFIX",
        "__forceinline__",
        "__noinline__",
        "NVSHMEMI_STATIC",
    }
)
HOST_PASS_DEFINES: dict[str, str] = {}
# nvcc's device pass: C++, and a current architecture so that every device API is visible.
DEVICE_PASS_DEFINES = {
    "__CUDACC__": "1",
    "__CUDA_ARCH__": "900",
    "__cplusplus": "201703L",
    "__NVCC__": "1",
}
NAME_PATTERN = r"nvshmemx?_\w+"
# Functions that exist only as implementation hooks for the public wrappers.
INTERNAL_NAME = re.compile(r"^nvshmemi_")

TYPE_TABLE_MACRO = re.compile(r"^NVSHMEMI_REPT_FOR_\w*TYPES$")
SIZED_FAMILY = re.compile(
    r"^(?P<head>\w*?(?:put|get|iput|iget))(?P<bits>8|16|32|64|128)(?P<tail>(?:_\w+)?)$"
)


def type_tables(preprocessor: Preprocessor) -> dict[str, list[tuple[str, str]]]:
    """The header's own `NVSHMEMI_REPT_FOR_*_TYPES` lists: (type name in API names, C type)."""
    tables: dict[str, list[tuple[str, str]]] = {}
    for name, macro in preprocessor.table.macros.items():
        if not TYPE_TABLE_MACRO.match(name) or macro.parameters is None:
            continue
        text = render(macro.body)
        pairs = re.findall(r"\w+\s*\(\s*(\w+)\s*,\s*([^,()]+?)\s*\)", text)
        if pairs:
            tables[name] = [(type_name, " ".join(c_type.split())) for type_name, c_type in pairs]
    return tables


def family_of(name: str, signature: str, type_names: Mapping[str, str]) -> tuple[str, str] | None:
    """(family key with `{T}`, type name) when `name` is one member of a type-generic family."""
    sized = SIZED_FAMILY.match(name)
    if sized:
        return f"{sized.group('head')}{{T}}{sized.group('tail')}", sized.group("bits")
    pieces = name.split("_")
    # Longest type names first: `longlong` before `long`, `uint64` before `uint`.
    for position in range(1, len(pieces)):
        type_name = pieces[position]
        c_type = type_names.get(type_name)
        if c_type is None:
            continue
        if re.search(r"(?<![\w])" + re.escape(c_type) + r"(?![\w])", signature):
            family = "_".join([*pieces[:position], "{T}", *pieces[position + 1 :]])
            return family, type_name
    return None


DEVICE_MARKERS = frozenset(
    {"__device__", "NVSHMEMI_DEVICE_PREFIX", "NVSHMEMI_HOSTDEVICE_PREFIX", "__global__"}
)


def same_type(c_type: str) -> str:
    """A spelling for comparing C types: `long long int` and `long long` are one type."""
    return re.sub(r"\b(long|short)( int)\b", r"\1", c_type)


def host_callable(markers: list[str]) -> bool:
    """A declaration seen by the host compiler that is not marked device-only."""
    return (
        "__host__" in markers
        or "NVSHMEMI_HOSTDEVICE_PREFIX" in markers
        or not (set(markers) & DEVICE_MARKERS)
    )


def device_callable(markers: list[str]) -> bool:
    """A declaration the device pass compiles for the GPU."""
    return bool(set(markers) & DEVICE_MARKERS)


# The tile API: C++ function templates in namespace nvshmemx, declared for the device pass.
TILE_HEADER = "device/tile/nvshmemx_tile_api.hpp"
TILE_NAMESPACE = "nvshmemx"
TILE_NAME_PATTERN = r"tile_\w+"


def tile_records(include: Path) -> list[dict[str, Any]]:
    """Every function template of the tile API, once per name: the overload with the most
    parameters describes it, and `overloads` lists each overload's parameter names (the
    allreduce templates have one with and one without `root`). Empty for a version without the
    tile header."""
    if not (include / TILE_HEADER).is_file():
        return []
    preprocessor = Preprocessor(
        include_root=include,
        defines=DEVICE_PASS_DEFINES,
        protected=NVSHMEM_MARKERS,
        emit=[TILE_HEADER],
    )
    found: dict[str, list[tuple[str, Any]]] = {}
    for template, prototype in read_template_prototypes(
        preprocessor, ENTRY_HEADERS, markers=NVSHMEM_MARKERS, name_pattern=TILE_NAME_PATTERN
    ):
        found.setdefault(prototype.name, []).append((template, prototype))
    records = []
    for name, overloads in sorted(found.items()):
        template, primary = max(overloads, key=lambda pair: len(pair[1].parameters))
        record = {
            key: value
            for key, value in primary.as_dict().items()
            if key in ("name", "return_type", "parameters", "markers", "file", "line")
        }
        record["qualified_name"] = f"{TILE_NAMESPACE}::{name}"
        record["template"] = template
        record["overloads"] = sorted(
            [[str(p.name) for p in prototype.parameters] for _, prototype in overloads],
            key=len,
        )
        records.append(record)
    return records


def declared_names(root: Path) -> set[str]:
    """Every routine an unpacked nvidia-nvshmem-cu12 wheel of any version declares, and the key
    (`nvshmem_{T}_put`) of every type-generic family its routines belong to."""
    records = extract({SOURCES[0]: root})["records"]
    tiles = tile_records(find_include_dir(root, NVSHMEM_INCLUDE_DIR, ENTRY_HEADERS[0]))
    return (
        {record["name"] for record in records}
        | {record["family"] for record in records if record["family"]}
        | {record["name"] for record in tiles}
    )


def extract(paths: Mapping[str, Path]) -> dict[str, Any]:
    """Read the NVSHMEM host and device API from the unpacked nvidia-nvshmem-cu12 wheel."""
    root = Path(paths["nvidia-nvshmem-cu12"])
    include = find_include_dir(root, NVSHMEM_INCLUDE_DIR, ENTRY_HEADERS[0])
    occurrences: dict[str, list[dict[str, Any]]] = {}
    tables: dict[str, list[tuple[str, str]]] = {}
    # Names a header #defines to a declared routine (`#define nvshmem_sync nvshmem_team_sync`):
    # the routine again under the name a program may call.
    aliases: dict[str, str] = {}
    version = ""
    for pass_name, defines in (("host", HOST_PASS_DEFINES), ("device", DEVICE_PASS_DEFINES)):
        seen_in_pass: set[tuple[str, str, int]] = set()
        preprocessor = Preprocessor(
            include_root=include, defines=defines, protected=NVSHMEM_MARKERS, emit=API_HEADERS
        )
        for prototype in read_prototypes(
            preprocessor, ENTRY_HEADERS, markers=NVSHMEM_MARKERS, name_pattern=NAME_PATTERN
        ):
            if INTERNAL_NAME.match(prototype.name):
                continue
            place = (prototype.name, prototype.file, prototype.line)
            if place in seen_in_pass:
                continue
            seen_in_pass.add(place)
            occurrences.setdefault(prototype.name, []).append(
                {"pass": pass_name, **prototype.as_dict()}
            )
        tables.update(type_tables(preprocessor))
        for alias, target in preprocessor.table.function_aliases(occurrences).items():
            aliases.setdefault(alias, target)
        macros = preprocessor.table.macros
        if "NVSHMEM_VENDOR_MAJOR_VERSION" in macros:
            version = ".".join(
                render(macros[f"NVSHMEM_VENDOR_{part}_VERSION"].body)
                for part in ("MAJOR", "MINOR", "PATCH")
            )
    type_names: dict[str, str] = {}
    for pairs in tables.values():
        for type_name, c_type in pairs:
            type_names.setdefault(type_name, c_type)
    for alias, target in aliases.items():
        occurrences.setdefault(alias, occurrences[target])
    records = []
    for name, found in sorted(occurrences.items()):
        host_visible = any(o["pass"] == "host" and host_callable(o["markers"]) for o in found)
        device_visible = any(o["pass"] == "device" and device_callable(o["markers"]) for o in found)
        # A host-callable function is described by its host declaration; a device-only one by
        # the definition the device pass compiles (which is what a kernel actually calls).
        if host_visible:
            primary = next(o for o in found if o["pass"] == "host" and host_callable(o["markers"]))
        else:
            primary = next(
                (o for o in found if o["pass"] == "device" and o["has_body"]),
                next((o for o in found if o["pass"] == "device"), found[0]),
            )
        # Parameter names may differ between a declaration and its definition; types may not,
        # but a few device-only declarations in the host headers disagree with their
        # definitions, so a disagreement is recorded for classify rather than fatal.
        conflicts = sorted(
            {
                f"{o['file']}:{o['line']}"
                for o in found
                if [same_type(p["type"]) for p in o["parameters"]]
                != [same_type(p["type"]) for p in primary["parameters"]]
            }
        )
        record = {key: primary[key] for key in ("name", "return_type", "parameters", "deprecated")}
        record["file"], record["line"] = primary["file"], primary["line"]
        record["occurrences"] = sorted(
            [o["pass"], o["file"], o["line"], sorted(o["markers"]), o["has_body"]] for o in found
        )
        record["host_visible"] = host_visible
        record["device_visible"] = device_visible
        record["conflicting_declarations"] = conflicts
        family = family_of(
            name,
            render_signature(name, primary["return_type"], primary["parameters"]),
            type_names,
        )
        record["family"] = family[0] if family else None
        record["family_type"] = family[1] if family else None
        record["family_c_type"] = type_names.get(family[1]) if family else None
        record["name"], record["alias_of"] = name, aliases.get(name)
        records.append(record)
    return {
        "model": "nvshmem",
        "sources": pins(SOURCES),
        "header_files": sorted(
            [header, sha256_file(include / header)]
            for header in (*ENTRY_HEADERS, *API_HEADERS, TILE_HEADER)
            if (include / header).is_file()
        ),
        "header_version": version,
        "type_tables": {
            name: [list(pair) for pair in pairs] for name, pairs in sorted(tables.items())
        },
        "records": records,
        "tile_records": tile_records(include),
    }
