"""Classify the OpenMP runtime routines into complete USIS entries.

The C signature comes from the headers (libgomp's where gcc declares the routine, else libomp's),
parameter names, versions and descriptions from curated/openmp/routines.yaml, and the semantic
fields from the rule of the routine's curated group. Which implementations declare a routine is
recorded as a context dependency of its C binding and in provenance.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from typing import Any

from usis.cheader.declarations import parse_declaration, render_signature
from usis.curated import cite, load
from usis.entry_builder import (
    ClassifyError,
    EntryBuilder,
    Identity,
    Parameter,
    Provenance,
    Relationships,
    ToolIntegration,
    binding_type,
    c_bindings,
    context_dependency,
    empty_semantics,
    execution,
    memory,
    returns,
)

MODEL = "openmp"
HEADER = "omp.h"
ROUTINES_FILE = "src/usis/curated/openmp/routines.yaml"
# The implementation whose declaration is the entry's signature when both declare a routine:
# gcc's, the compiler this project builds with.
PREFERRED_IMPLEMENTATIONS = ("libgomp", "libomp", "libomp-21")
IMPLEMENTATION_HEADERS = {
    "libgomp": "gcc 12 libgomp omp.h (Debian libgcc-12-dev)",
    "libomp": "LLVM 16 libomp omp.h (Debian libomp-16-dev)",
    "libomp-21": "LLVM 21 libomp omp.h (PyPI cmeel-libomp 21.1.8)",
}

GROUP_API = {
    "icv_set": "management",
    "query": "query",
    "device_query": "query",
    "display": "query",
    "interop": "query",
    "lock_init": "management",
    "lock_destroy": "management",
    "lock_acquire": "synchronization",
    "lock_release": "synchronization",
    "lock_test": "synchronization",
    "event": "synchronization",
    "device_memory": "management",
    "allocator": "management",
    "allocation": "management",
    "runtime_control": "management",
    # A copy between address ranges is neither a message nor RMA into another process's memory:
    # no api_group of the vocabulary fits (like mpi_pack-style local data movement).
    "device_copy": None,
    "device_copy_async": None,
    # A fill writes a byte value over an address range: local data movement as a copy is.
    "device_fill": None,
    "device_fill_async": None,
}
COPY_GROUPS = {"device_copy", "device_copy_async", "device_fill", "device_fill_async"}
ASYNC_GROUPS = {"device_copy_async", "device_fill_async"}
# The address ranges each kind of data movement writes or reads, and the device number that says
# whose memory each is.
MOVED_RANGES = {
    "device_copy": {"dst": "dst_device_num", "src": "src_device_num"},
    "device_fill": {"ptr": "device_num"},
}

VALUE_KINDS = {
    "omp_get_thread_num": "RANK",
    "omp_get_ancestor_thread_num": "RANK",
    "omp_get_num_threads": "TEAM_SIZE",
    "omp_get_team_size": "TEAM_SIZE",
    "omp_get_device_num": "DEVICE",
    "omp_get_default_device": "DEVICE",
    "omp_get_initial_device": "DEVICE",
    "omp_get_device_from_uid": "DEVICE",
    "omp_get_uid_from_device": "STRING",
}

PARAMETER_KINDS = {
    "uid": "STRING",
    "device_num": "DEVICE",
    "dst_device_num": "DEVICE",
    "src_device_num": "DEVICE",
    "dst": "BUFFER",
    "src": "BUFFER",
    "ptr": "BUFFER",
    "host_ptr": "BUFFER",
    "device_ptr": "BUFFER",
    "length": "SCALAR",
    "val": "SCALAR",
    "count": "SCALAR",
    "ndevs": "COUNT",
    "dev": "DEVICE",
    "num_resources": "COUNT",
    "size": "SCALAR",
    "dst_offset": "SCALAR",
    "src_offset": "SCALAR",
    "device_offset": "SCALAR",
    "element_size": "SCALAR",
    "num_dims": "SCALAR",
    "volume": "INDEX_ARRAY",
    "dst_offsets": "INDEX_ARRAY",
    "src_offsets": "INDEX_ARRAY",
    "dst_dimensions": "INDEX_ARRAY",
    "src_dimensions": "INDEX_ARRAY",
    "alignment": "SCALAR",
    "nmemb": "COUNT",
    "ntraits": "COUNT",
    "depobj_count": "COUNT",
    "num_threads": "SCALAR",
    "num_teams": "SCALAR",
    "thread_limit": "SCALAR",
    "max_levels": "SCALAR",
    "level": "SCALAR",
    "chunk_size": "SCALAR",
    "place_num": "SCALAR",
    "dynamic_threads": "BOOL",
    "nested": "BOOL",
    "hint": "SCALAR",
    "format": "STRING",
    "buffer": "STRING",
    "ret_code": "ERROR_CODE",
    "modifier": "SCALAR",
    "arg": "OPAQUE_STATE",
}
# Everything else (lock, kind, allocator, memspace, traits, event, interop, property_id, ids,
# place_nums, depobj_list, command, verbose) has no fitting kind: a handle type, an enumeration
# or an array that is neither data nor index positions.

ARRAY_LENGTHS = {
    "volume": "num_dims",
    "dst_offsets": "num_dims",
    "src_offsets": "num_dims",
    "dst_dimensions": "num_dims",
    "src_dimensions": "num_dims",
    "traits": "ntraits",
    "depobj_list": "depobj_count",
    "buffer": "size",
    "ids": "*",
    "place_nums": "*",
    "devs": "ndevs",
    "resources": "num_resources",
}

PARAMETER_ROLES = {
    "num_threads": "The number of threads to use.",
    "dynamic_threads": "Whether dynamic adjustment is enabled (nonzero) or disabled.",
    "nested": "Whether nested parallelism is enabled (nonzero) or disabled.",
    "max_levels": "The maximum number of nested active parallel regions.",
    "kind": "The schedule kind or resource kind selector.",
    "chunk_size": "The chunk size of the schedule.",
    "level": "The nesting level asked about.",
    "lock": "The lock variable.",
    "hint": "The synchronization hint.",
    "uid": "The unique identifier string of a device.",
    "device_num": "The device number.",
    "dst_device_num": "The device number of the destination.",
    "src_device_num": "The device number of the source.",
    "size": "A size in bytes.",
    "device_ptr": "A device address.",
    "host_ptr": "A host address.",
    "ptr": "An address.",
    "dst": "The destination address.",
    "src": "The source address.",
    "length": "The number of bytes to copy.",
    "dst_offset": "The byte offset into the destination.",
    "src_offset": "The byte offset into the source.",
    "device_offset": "The byte offset into the device memory.",
    "element_size": "The size in bytes of one array element.",
    "num_dims": "The number of array dimensions.",
    "volume": "The extent of the copied subvolume in each dimension.",
    "dst_offsets": "The subvolume's offset in each dimension of the destination.",
    "src_offsets": "The subvolume's offset in each dimension of the source.",
    "dst_dimensions": "The destination array's extent in each dimension.",
    "src_dimensions": "The source array's extent in each dimension.",
    "depobj_count": "The number of dependence objects.",
    "depobj_list": "The dependence objects the copy task waits for.",
    "place_num": "The place number.",
    "ids": "Receives the processor ids.",
    "place_nums": "Receives the place numbers.",
    "format": "The affinity format string.",
    "buffer": "Receives the formatted string.",
    "event": "The event handle.",
    "command": "The tool command.",
    "modifier": "A command-specific modifier.",
    "arg": "A command-specific argument passed to the tool untouched.",
    "memspace": "The memory space the allocator takes memory from.",
    "ntraits": "The number of traits.",
    "traits": "The allocator traits.",
    "allocator": "The allocator handle.",
    "free_allocator": "The allocator the old memory came from.",
    "alignment": "The alignment in bytes.",
    "nmemb": "The number of array elements.",
    "num_teams": "The number of teams.",
    "thread_limit": "The maximum number of threads per team.",
    "verbose": "Whether to print implementation-specific variables too.",
    "interop": "The interop object.",
    "property_id": "The property asked about.",
    "ret_code": "Receives the return code of the query.",
    "val": "The byte value to write.",
    "count": "The number of bytes to fill.",
    "ndevs": "The number of devices listed.",
    "devs": "The device numbers.",
    "dev": "The device number.",
    "num_resources": "The number of resources listed.",
    "resources": "The resource numbers of the memory space to keep.",
}


@cache
def curated_routines() -> dict[str, dict[str, Any]]:
    routines: dict[str, dict[str, Any]] = load("openmp/routines.yaml")["routines"]
    return routines


def memory_for(group: str) -> dict[str, Any] | None:
    if group in {"lock_acquire", "lock_release", "lock_test"}:
        # Lock routines imply a flush: release on unset, acquire on a successful set/test.
        return memory("after_return", None, "after_return", model="release_acquire")
    if group in COPY_GROUPS - ASYNC_GROUPS:
        return memory("after_return", None, "after_return")
    if group in ASYNC_GROUPS:
        return memory("after_wait", None, "after_wait")
    return None


def choose_declaration(record: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    for implementation in PREFERRED_IMPLEMENTATIONS:
        if implementation in record["declared_by"]:
            return implementation, record["declared_by"][implementation]
    raise ClassifyError(f"{record['name']}: no declaration in any known implementation")


def build_parameters(
    name: str,
    declaration: dict[str, Any],
    curated: dict[str, Any],
    group: str,
    notes: Provenance,
    where: str,
) -> list[Parameter]:
    declared = declaration["parameters"]
    names = curated["params"]
    if len(names) != len(declared):
        raise ClassifyError(
            f"openmp:{name}: {ROUTINES_FILE} lists {len(names)} parameter names {names} but "
            f"{where} declares {len(declared)} parameters"
        )
    parameters = []
    for index, (param, param_name) in enumerate(zip(declared, names, strict=True)):
        c_type = param["type"] + ("[]" if param["array"] else "")
        pointer = param["type"].endswith("*") or param["array"]
        kind = PARAMETER_KINDS.get(param_name)
        if param_name in {"kind", "size"} and group == "query" and pointer:
            kind = None
        if pointer and kind in {"SCALAR", "DEVICE", "COUNT"}:
            # omp_get_schedule's chunk_size and similar out-parameters are written, not read.
            direction = "out"
        elif (
            pointer
            and not param["type"].startswith("const")
            and param_name
            in {
                "dst",
                "ids",
                "place_nums",
                "buffer",
                "ret_code",
                "kind",
            }
        ):
            direction = "out"
        elif param_name == "ptr" and group in COPY_GROUPS:
            # The range a fill writes.
            direction = "out"
        elif param_name == "lock":
            direction = "inout"
        else:
            direction = "in"
        length: str | None = None
        array_type: str | None = None
        if param_name in ARRAY_LENGTHS and pointer:
            length = ARRAY_LENGTHS[param_name]
            array_type = "variable"
        elif param_name in {"dst", "src", "ptr"} and group in COPY_GROUPS:
            length = "count" if param_name == "ptr" else "*"
            array_type = "variable"
        memory_space = None
        if kind == "BUFFER":
            # Whether an address is host or device memory depends on the device number passed.
            if param_name in {"dst", "src"} or (param_name == "ptr" and group in COPY_GROUPS):
                memory_space = "either"
            elif param_name == "device_ptr":
                memory_space = "device"
            else:
                memory_space = "host"
        parameters.append(
            Parameter(
                name=param_name,
                kind=kind,
                direction=direction,
                desc=PARAMETER_ROLES.get(param_name),
                binding_type=binding_type(c_type),
                asynchronous=group in ASYNC_GROUPS and kind == "BUFFER",
                constant=param["type"].startswith("const"),
                pointer=True if pointer else None,
                array_type=array_type,
                length=length,
                value_range="0 <= level <= omp_get_level()" if param_name == "level" else None,
                memory_space=memory_space,
            )
        )
        base = f"/parameters/{index}"
        notes.curated(f"{base}/name", f"{ROUTINES_FILE} {name}.params[{index}]")
        # Read from the declaration, recorded by this stage.
        notes.note(f"{base}/binding_type/c", "source", where)
        notes.note(f"{base}/constant", "source", where)
        notes.rule(f"{base}/kind", "param-kind")
        notes.rule(f"{base}/direction", "param-direction")
        if memory_space == "either":
            notes.judgement(
                f"{base}/memory_space",
                "host or device memory according to the device number passed",
            )
    return parameters


def return_section(
    name: str, declaration: dict[str, Any], curated: dict[str, Any]
) -> dict[str, Any]:
    c_type = declaration["return_type"]
    declared_kind = curated.get("returns")
    if c_type == "void":
        kind = "void"
    elif declared_kind == "bool":
        kind = "bool"
    elif declared_kind == "status":
        kind = "ERROR_CODE"
    elif declared_kind == "result":
        kind = "RESULT"
    else:
        kind = "value"
    return returns(
        kind,
        binding_type(c_type),
        value_kind=VALUE_KINDS.get(name) if kind == "value" else None,
        successes=["0"] if kind == "ERROR_CODE" else [],
    )


def deprecation_markers(record: dict[str, Any]) -> list[tuple[str, str]]:
    """(where, OpenMP version) of each header deprecation marker on the routine's declaration,
    e.g. libgomp's __GOMP_DEPRECATED_5_0."""
    found = []
    for implementation, declaration in sorted(record["declared_by"].items()):
        for attribute in declaration.get("attributes", []):
            match = re.search(r"DEPRECATED_(\d+)_(\d+)", attribute)
            if match:
                found.append(
                    (
                        f"{implementation} omp.h:{declaration['line']} {attribute}",
                        f"OpenMP-{match.group(1)}.{match.group(2)}",
                    )
                )
    return found


def specified_record(name: str, curated: Mapping[str, Any]) -> dict[str, Any]:
    """The record of a routine no pinned omp.h declares, from the C prototype the OpenMP
    specification gives in the routine's own section (`prototype`, `prototype_source`)."""
    where = f"{ROUTINES_FILE} {name}.prototype"
    prototype = parse_declaration(curated["prototype"].strip().removesuffix(";"), where)
    if prototype is None or prototype.name != name:
        raise ClassifyError(f"openmp:{name}: {where} is not a C prototype of {name}")
    declaration = prototype.as_declaration()
    del declaration["name"]
    return {"name": name, "declared_by": {}, "specified": declaration}


def build_entry(record: dict[str, Any], notes: Provenance) -> dict[str, Any]:
    name = record["name"]
    curated = curated_routines().get(name)
    if curated is None:
        raise ClassifyError(
            f"openmp:{name}: declared by {sorted(record['declared_by'])} but missing from "
            f"{ROUTINES_FILE}; add its since, params, group and desc"
        )
    group = curated["group"]
    if group not in GROUP_API:
        raise ClassifyError(f"openmp:{name}: unknown group {group!r}; known: {sorted(GROUP_API)}")
    if record["declared_by"]:
        implementation, declaration = choose_declaration(record)
        where = f"{implementation} omp.h:{declaration['line']}"
    else:
        declaration = record["specified"]
        where = f"{curated['prototype_source']} C prototype"
    parameters = build_parameters(name, declaration, curated, group, notes, where)
    signature = render_signature(
        name,
        declaration["return_type"],
        [
            {"type": p["type"], "name": n, "array": p["array"]}
            for p, n in zip(declaration["parameters"], curated["params"], strict=True)
        ],
    )
    on_device = bool(curated["device"])
    asynchronous = group in ASYNC_GROUPS
    copies = group in COPY_GROUPS
    blocking = not asynchronous and group != "lock_test"
    declared_by = sorted(record["declared_by"])
    missing = sorted(set(IMPLEMENTATION_HEADERS) - set(declared_by))
    if declared_by:
        declared_note = (
            "Declared by "
            + " and by ".join(
                f"{IMPLEMENTATION_HEADERS[i]} as "
                + render_signature(
                    name,
                    record["declared_by"][i]["return_type"],
                    record["declared_by"][i]["parameters"],
                )
                for i in declared_by
            )
            + (
                "; "
                + " and ".join(missing)
                + (" does not" if len(missing) == 1 else " do not")
                + " declare it."
                if missing
                else "."
            )
        )
    else:
        declared_note = (
            "No pinned omp.h declares it ("
            + ", ".join(IMPLEMENTATION_HEADERS.values())
            + f"); the prototype is the specification's ({curated['prototype_source']})."
        )
    dependencies = [
        context_dependency(
            "bindings.c",
            signature,
            ["the OpenMP implementation whose omp.h the program includes"],
            declared_note,
        )
    ]
    if copies:
        for side, device in MOVED_RANGES[group.removesuffix("_async")].items():
            dependencies.append(
                context_dependency(
                    f"param:{side}.memory_space",
                    "either",
                    [device],
                    f"{side} is host memory when {device} is "
                    "omp_get_initial_device() and that device's memory otherwise.",
                )
            )
    deprecated_in = curated.get("deprecated_in")
    relationships = Relationships(
        superseded_by=f"{MODEL}:{curated['superseded_by']}"
        if curated.get("superseded_by")
        else None
    )
    if asynchronous:
        relationships.variants["blocking"] = f"{MODEL}:{name.removesuffix('_async')}"
        notes.rule("/relationships/variants/blocking", "async-variant")
    entry = EntryBuilder(
        identity=Identity(
            MODEL,
            name,
            api_group=GROUP_API[group],
            since=curated["since"],
            deprecated_in=deprecated_in,
            standard_refs=[f"{curated['since']} {name}"],
            desc=curated["desc"],
        ),
        bindings=c_bindings(HEADER, signature),
        execution=execution(
            blocking=blocking,
            launch="cpu+gpu" if on_device else "cpu",
            runs_on="cpu+gpu" if on_device or copies else "cpu",
            gpu_scope="thread" if on_device else None,
            locality="local",
            completion=("ic" if asynchronous else "c") if copies else None,
            procedure_class=("nb-op" if asynchronous else "b-op") if copies else None,
        ),
        semantics={**empty_semantics(), "memory": memory_for(group)},
        parameters=parameters,
        returns=return_section(name, declaration, curated),
        tool_integration=ToolIntegration(
            buffer_aliasing=(
                "forbidden"
                if copies
                else ("allowed" if any(p.kind == "BUFFER" for p in parameters) else None)
            ),
            context_dependencies=dependencies,
        ),
        relationships=relationships,
    ).build()
    curated_from = f"{ROUTINES_FILE} {name}"
    for pointer in ("/identity/since", "/identity/deprecated_in", "/identity/desc"):
        notes.curated(pointer, f"{curated_from} ({pointer.rsplit('/', 1)[-1]})")
    for marker_where, version in deprecation_markers(record):
        # The header's own deprecation marker confirms the curated version.
        if deprecated_in != version:
            raise ClassifyError(
                f"openmp:{name}: {marker_where} marks it deprecated in {version} but "
                f"{ROUTINES_FILE} says deprecated_in {deprecated_in}"
            )
        notes.note("/identity/deprecated_in", "source", marker_where)
    notes.curated("/relationships/superseded_by", f"{curated_from} (superseded_by)")
    notes.rule(
        "/identity/standard_refs",
        "standard-refs: the introducing specification's routine section",
    )
    notes.rule("/identity/api_group", f"group {group}")
    notes.rule("/execution", f"group {group}")
    notes.rule("/semantics", f"group {group}")
    if declared_by:
        # Read from the declarations, recorded by this stage.
        notes.note("/bindings/c/signature", "source", where)
        notes.note(
            "/tool_integration/context_dependencies/0",
            "source",
            "; ".join(f"{i} omp.h:{record['declared_by'][i]['line']}" for i in declared_by),
        )
    else:
        notes.curated("/bindings/c/signature", f"{curated_from} (prototype: {where})")
        notes.curated("/tool_integration/context_dependencies/0", f"{curated_from} (prototype)")
        for index in range(len(parameters)):
            notes.curated(f"/parameters/{index}/binding_type/c", f"{curated_from} (prototype)")
            notes.curated(f"/parameters/{index}/constant", f"{curated_from} (prototype)")
    notes.curated(
        "/execution/launch",
        "judgement: whether a target region may call the routine, read from its description in "
        "the specification; ICV setters and device-memory routines are recorded host-only "
        f"({curated_from} device)",
    )
    notes.judgement(
        "/execution/thread_safety",
        "OpenMP routines do not use MPI's thread-level taxonomy; every routine may be called "
        "from any OpenMP thread, so no minimum level applies",
    )
    if on_device:
        notes.judgement(
            "/execution/gpu_scope",
            "a device-callable OpenMP routine is called by each thread on its own",
        )
    if copies:
        notes.judgement(
            "/execution/runs_on",
            "the copy is performed by the host runtime or the device's copy engine",
        )
        notes.judgement(
            "/identity/api_group",
            "a copy between address ranges fits none of the api_group values",
        )
    if asynchronous:
        notes.judgement(
            "/semantics/memory/local_completion",
            "the copy is a deferred task; its buffers are released when the task completes "
            "(taskwait or a dependence), the vocabulary's after_wait",
        )
    if group in {"lock_acquire", "lock_release", "lock_test"}:
        notes.judgement(
            "/semantics/memory/memory_model",
            "lock routines imply a flush with release (unset) and acquire (set, successful "
            "test) semantics",
        )
    return entry


@cache
def formal_assignments() -> dict[str, Any]:
    assignments: dict[str, Any] = load("openmp/formal.yaml").get("assignments") or {}
    return assignments


def classify(extracted: dict[str, Any]) -> dict[str, Any]:
    """Turn the extracted OpenMP routines into complete entries with provenance."""
    if extracted.get("model") != MODEL:
        raise ClassifyError(
            f"classify.openmp: expected model 'openmp', got {extracted.get('model')!r}"
        )
    entries: dict[str, dict[str, Any]] = {}
    provenance: dict[str, dict[str, Any]] = {}
    formal: dict[str, Any] = {}
    declared = {record["name"] for record in extracted["records"]}
    specified = {
        name: specified_record(name, routine)
        for name, routine in curated_routines().items()
        if "prototype" in routine
    }
    redundant = sorted(set(specified) & declared)
    if redundant:
        raise ClassifyError(
            f"{ROUTINES_FILE}: a pinned omp.h now declares {redundant}; drop their prototype"
        )
    unknown = sorted(set(curated_routines()) - declared - set(specified))
    if unknown:
        raise ClassifyError(
            f"{ROUTINES_FILE}: routines no header declares: {unknown}; remove them or check the "
            "header versions"
        )
    for record in [*extracted["records"], *specified.values()]:
        key = f"{MODEL}:{record['name']}"
        notes = Provenance("classify/openmp.py")
        entries[key] = build_entry(record, notes)
        if record["name"] in formal_assignments():
            formal[key] = formal_assignments()[record["name"]]
            notes.curated("/semantics/formal", cite("openmp/formal.yaml", record["name"]))
        provenance[key] = notes.sorted_records()
    for key, entry in entries.items():
        blocking_form = entry["relationships"]["variants"]["blocking"]
        if blocking_form is not None:
            if blocking_form not in entries:
                raise ClassifyError(f"{key}: blocking form {blocking_form} is not in the corpus")
            entries[blocking_form]["relationships"]["variants"]["nonblocking"] = key
            provenance[blocking_form]["/relationships/variants/nonblocking"] = {
                "stage": "classify",
                "method": "rule",
                "from": "classify/openmp.py rule async-variant",
            }
        target = entry["relationships"]["superseded_by"]
        if target and target not in entries:
            raise ClassifyError(f"{key}: superseded_by {target} is not in the corpus")
    return {
        "model": MODEL,
        "sources": extracted["sources"],
        "entries": entries,
        "formal": formal,
        "provenance": provenance,
    }
