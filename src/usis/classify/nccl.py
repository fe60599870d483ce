"""Classify NCCL's host functions into complete USIS entries.

Each function's category and description come from curated/nccl/functions.yaml; the category
fixes execution (stream-ordered completion, `launch` cpu / `runs_on` gpu for operations on a
stream), the collective pattern and NCCL's in-place rule (curated/nccl/collectives.yaml), and the
context dependencies for blocking inside ncclGroupStart/End and on non-blocking communicators.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from usis.cheader.declarations import render_signature
from usis.curated import cite, load
from usis.entry_builder import (
    ClassifyError,
    EntryBuilder,
    Identity,
    ParameterFacts,
    Provenance,
    ToolIntegration,
    apply_since,
    c_bindings,
    c_return,
    context_dependency,
    declared_parameter,
    default_direction,
    documented_directions,
    empty_semantics,
    execution,
    is_pointer,
    memory,
    note_declared_parameter,
    note_direction,
)

MODEL = "nccl"
HEADER = "nccl.h"
# The device API's host calls are declared in nccl_device/host.h, which programs include through
# nccl_device.h.
DEVICE_HOST_HEADER = "nccl_device/host.h"
DEVICE_INCLUDE = "nccl_device.h"

STREAM_CATEGORIES = {"collective", "p2p", "one_sided_put", "signal", "signal_wait"}
# Categories whose calls take a communicator that may be non-blocking (ncclConfig_t.blocking = 0)
# and that may be issued inside a group.
COMMUNICATOR_CATEGORIES = STREAM_CATEGORIES | {
    "comm_create",
    "comm_derive",
    "comm_finalize",
    "window_register",
    "window_deregister",
    "register",
    "deregister",
}

GROUP_DEPENDENCY = context_dependency(
    "execution.blocking",
    False,
    ["communicator config.blocking (ncclConfig_t)", "ncclGroupStart/ncclGroupEnd nesting"],
    "Inside a group the call only records the operation and returns; ncclGroupEnd launches it. "
    "Outside a group, on a blocking communicator the host may wait for connection setup before "
    "the operation is enqueued; on a non-blocking communicator the call may return ncclInProgress "
    "and the caller polls ncclCommGetAsyncError. In no case does the host wait for the operation "
    "to complete: completion is ordered on the stream.",
)
CREATE_DEPENDENCY = context_dependency(
    "execution.blocking",
    True,
    ["communicator config.blocking (ncclConfig_t)", "ncclGroupStart/ncclGroupEnd nesting"],
    "With the default (blocking) configuration the call returns once the communicator is ready. "
    "With config.blocking = 0 it may return ncclInProgress while initialization continues, and the "
    "caller polls ncclCommGetAsyncError; inside a group the work completes at ncclGroupEnd.",
)
GROUP_END_DEPENDENCY = context_dependency(
    "execution.blocking",
    False,
    ["communicator config.blocking (ncclConfig_t) of the grouped operations"],
    "With blocking communicators ncclGroupEnd returns once every grouped operation has been "
    "enqueued on its stream; with non-blocking ones it may return ncclInProgress. The operations "
    "themselves complete in stream order.",
)
REMOTE_COMPLETION_DEPENDENCY = context_dependency(
    "semantics.memory.remote_completion",
    "after_return",
    ["completion of the operation on the caller's and the peers' CUDA streams"],
    "The schema has no stream-ordered value here: the data is in place at the peers once the "
    "operation completes on their streams, which each rank observes by synchronizing its own "
    "stream or event, not when the host call returns.",
)


@cache
def function_table() -> Mapping[str, Any]:
    document: Mapping[str, Any] = load(f"{MODEL}/functions.yaml")
    return document


@cache
def collective_table() -> Mapping[str, Any]:
    document: Mapping[str, Any] = load(f"{MODEL}/collectives.yaml")
    return document["types"]


@cache
def formal_table() -> Mapping[str, Any]:
    document: Mapping[str, Any] = load(f"{MODEL}/formal.yaml")
    return document["assignments"]


TYPE_KINDS = {
    "ncclComm_t": "COMMUNICATOR",
    "ncclDataType_t": "DATATYPE",
    "ncclRedOp_t": "OPERATION",
    "cudaStream_t": "STREAM",
    "ncclUniqueId": "ID",
    "ncclWindow_t": "WINDOW",
    "ncclResult_t": "ERROR_CODE",
}
BUFFER_NAMES = {"sendbuff", "recvbuff", "buff", "localbuff", "ptr"}
COUNT_NAMES = {"count", "sendcount", "recvcount", "ndev", "nId", "excludeRanksCount", "nDesc"}
RANK_NAMES = {"root", "peer", "rank", "myrank"}
TEAM_SIZE_NAMES = {"nranks", "nRanks"}
STRING_NAMES = {"key", "value", "table"}


def parameter_facts(
    function: str, category: str, declared: Mapping[str, Any], record: Mapping[str, Any]
) -> ParameterFacts:
    """Kind, direction, memory space and description of one NCCL parameter."""
    name, c_type = declared["name"] or "", declared["type"]
    base = c_type.replace("const ", "").rstrip("*").strip()
    direction = default_direction(c_type)
    on_stream = category in STREAM_CATEGORIES
    if base in TYPE_KINDS:
        kind = TYPE_KINDS[base]
        if kind == "ID" and is_pointer(c_type) and name == "commIds":
            return ParameterFacts(kind, "in", "the unique ids shared by the ranks", length="nId")
        descriptions = {
            "COMMUNICATOR": "the communicator created"
            if direction == "out"
            else "the communicator",
            "DATATYPE": "the element type of the buffers",
            "OPERATION": "the reduction operator"
            if direction == "in"
            else "the reduction operator created",
            "STREAM": "the CUDA stream the operation is ordered on",
            "ID": "the unique id shared by every rank of the clique",
            "WINDOW": "the registered window",
            "ERROR_CODE": "a result code",
        }
        length = "ndev" if function == "ncclCommInitAll" and name == "comm" else None
        return ParameterFacts(
            kind,
            direction,
            descriptions[kind],
            length=length,
            not_null=True if kind == "COMMUNICATOR" and direction == "out" else None,
        )
    if name in BUFFER_NAMES and base == "void":
        role = {
            "sendbuff": "the data this rank contributes",
            "recvbuff": "where this rank's result is written",
            "buff": "the data, sent from the root and received everywhere else",
            "localbuff": "the local data written to the peer's window",
            "ptr": "the allocation",
        }[name]
        count = next(
            (
                p["name"]
                for p in record["parameters"]
                if p["name"] in ("count", "sendcount", "recvcount")
            ),
            None,
        )
        direction = {"sendbuff": "in", "localbuff": "in", "recvbuff": "out", "buff": "inout"}.get(
            name, "out" if c_type == "void**" else "in"
        )
        if function == "ncclMemAlloc" and name == "ptr":
            return ParameterFacts("BUFFER", "out", role, memory_space="device", not_null=True)
        if function == "ncclMemFree":
            return ParameterFacts("BUFFER", "in", "the allocation to free", memory_space="device")
        length = count if on_stream else None
        if function.startswith(("ncclAllGather",)) and name == "recvbuff":
            length = "*"
            role += " (nranks*sendcount elements, rank i's contribution at offset i*sendcount)"
        if function.startswith(("ncclReduceScatter",)) and name == "sendbuff":
            length = "*"
            role += " (nranks*recvcount elements)"
        if function.startswith(("ncclAlltoAll", "ncclGather", "ncclScatter")):
            bigger = {
                "ncclAlltoAll": ("sendbuff", "recvbuff"),
                "ncclGather": ("recvbuff",),
                "ncclScatter": ("sendbuff",),
            }
            if name in next(v for k, v in bigger.items() if function.startswith(k)):
                length = "*"
                role += " (nranks*count elements)"
        root_only = (
            function.startswith(("ncclReduce", "ncclGather"))
            and name == "recvbuff"
            and not function.startswith("ncclReduceScatter")
        ) or (function.startswith(("ncclBroadcast", "ncclScatter")) and name == "sendbuff")
        return ParameterFacts(
            "BUFFER",
            direction,
            role,
            memory_space="device",
            length=length,
            asynchronous=on_stream,
            root_only=root_only,
        )
    if name in ("buff",) and function.endswith("Register"):
        return ParameterFacts(
            "BUFFER", "in", "the buffer to register", memory_space="device", length="size"
        )
    # The schema names ncclCommCount's 'count' as a TEAM_SIZE, not a buffer's COUNT.
    if name in TEAM_SIZE_NAMES or (function == "ncclCommCount" and name == "count"):
        return ParameterFacts("TEAM_SIZE", direction, "the number of ranks")
    if name in COUNT_NAMES:
        return ParameterFacts(
            "COUNT", "in", "the number of elements" if "count" in name else "the number of entries"
        )
    if name in RANK_NAMES and base == "int":
        value_range = (
            "0 <= value < nranks of the communicator" if name in ("root", "peer") else None
        )
        described = {
            "root": "the root rank",
            "peer": "the peer rank",
            "rank": "this rank's position",
            "myrank": "this rank's position",
        }[name]
        return ParameterFacts("RANK", direction, described, value_range=value_range)
    if name in TEAM_SIZE_NAMES or (function == "ncclCommCount" and name == "count"):
        return ParameterFacts("TEAM_SIZE", direction, "the number of ranks")
    if function == "ncclCommCuDevice" and name == "device":
        return ParameterFacts("DEVICE", "out", "the CUDA device of the communicator")
    if name == "devlist":
        return ParameterFacts(None, "in", "the CUDA devices, one per communicator", length="ndev")
    if name == "excludeRanksList":
        return ParameterFacts(None, "in", "the ranks to leave out", length="excludeRanksCount")
    if name == "signalDescs":
        return ParameterFacts(None, "in", "the signals to wait for", length="nDesc")
    if name in STRING_NAMES and "char" in c_type:
        return ParameterFacts("STRING", direction, "a parameter name or value")
    if not is_pointer(c_type) and base in ("int", "size_t", "unsigned int", "uint64_t"):
        return ParameterFacts("SCALAR", "in", None)
    if is_pointer(c_type) and base in (
        "int",
        "uint64_t",
        "int8_t",
        "int16_t",
        "int32_t",
        "int64_t",
        "uint8_t",
        "uint16_t",
        "uint32_t",
    ):
        return ParameterFacts("SCALAR", direction, None)
    return ParameterFacts(None, direction, None)


def collective_semantics(collective_type: str, has_op: bool, in_place: bool) -> dict[str, Any]:
    facts = collective_table()[collective_type]
    return {
        "type": collective_type,
        "root_involved": facts["root"],
        "in_place": in_place,
        "comm_scope": "intracommunicator",
        "algorithm_class": facts["algorithm_class"],
        "reduction_op": has_op,
        "topology_aware": False,
    }


def classify_record(
    record: Mapping[str, Any], result_codes: list[str], in_place_conditions: Mapping[str, str]
) -> tuple[dict[str, Any], Provenance, dict[str, Any] | None]:
    name = record["name"]
    device_api = record.get("file") == DEVICE_HOST_HEADER
    where = f"{DEVICE_HOST_HEADER if device_api else HEADER}:{record['line']}"
    curated = function_table()["functions"].get(name)
    if curated is None:
        raise ClassifyError(
            f"nccl:{name}: not in curated/nccl/functions.yaml; every function of {HEADER} needs "
            "a category and a description there"
        )
    category = curated["category"]
    source = function_table()["source"]
    origin = cite(f"{MODEL}/functions.yaml", f"{name} ({source})")
    notes = Provenance("classify/nccl.py")
    semantics = empty_semantics()
    dependencies: list[dict[str, Any]] = []
    has_op = any(p["type"] == "ncclRedOp_t" for p in record["parameters"])
    api_group: str | None
    aliasing: str | None = None
    on_stream = category in STREAM_CATEGORIES
    if on_stream:
        section = execution(
            blocking=False,
            launch="cpu",
            runs_on="gpu",
            collective=category == "collective",
            locality="both",
            completion="stream_ordered",
            procedure_class="nb-op",
        )
        dependencies.append(GROUP_DEPENDENCY)
        notes.rule("/execution", "stream-ordered-operation")
    elif category in ("comm_create", "comm_derive", "window_register"):
        section = execution(
            blocking=True,
            launch="cpu",
            runs_on="cpu",
            collective=True,
            locality="both",
            procedure_class="b-op",
        )
        dependencies.append(CREATE_DEPENDENCY)
        notes.rule("/execution", "collective-setup")
    elif category == "group_end":
        section = execution(
            blocking=False,
            launch="cpu",
            runs_on="gpu",
            locality="local",
            completion="stream_ordered",
            procedure_class="nb-op",
        )
        dependencies.append(GROUP_END_DEPENDENCY)
        notes.rule("/execution", "group-end")
    else:
        blocking = category not in ("group_start",)
        section = execution(
            blocking=blocking,
            launch="cpu",
            runs_on="cpu",
            locality="local",
            procedure_class="b-op" if blocking else None,
        )
        if category in ("comm_finalize", "register", "deregister", "window_deregister"):
            dependencies.append(CREATE_DEPENDENCY)
        notes.rule("/execution", "host-call")
    if category == "collective":
        collective_type = curated["type"]
        two_buffers = name != "ncclBcast"
        # The *Config forms move data as their plain forms and share their in-place rule.
        documented_by = name.removesuffix("Config")
        condition = in_place_conditions.get(documented_by)
        in_place = condition is not None and two_buffers
        semantics["collective"] = collective_semantics(collective_type, has_op, in_place)
        notes.curated("/semantics/collective", cite(f"{MODEL}/collectives.yaml", collective_type))
        if condition is not None:
            notes.source(
                "/semantics/collective/in_place",
                f"{HEADER} comment above {documented_by}: in-place if {condition}",
            )
            dependencies.append(
                context_dependency(
                    "semantics.collective.in_place",
                    True,
                    [condition],
                    f"{HEADER} documents the in-place form: the operation happens in place "
                    f"when {condition} (offsets in elements of the datatype).",
                )
            )
        api_group = "collective"
        aliasing = "in_place_only" if in_place else ("forbidden" if two_buffers else "allowed")
    elif category == "p2p":
        direction = curated["direction"]
        semantics["point_to_point"] = {
            "direction": direction,
            "synchronous": None,
            "buffered": None,
            "ready": False if direction == "send" else None,
        }
        if direction == "send":
            dependencies.append(
                context_dependency(
                    "semantics.point_to_point.synchronous",
                    None,
                    ["the NCCL implementation and protocol chosen for the message size"],
                    "NCCL does not document whether a send completes before its receive has "
                    "started; a matching ncclRecv must be posted (in a group when both sides "
                    "would otherwise wait on each other).",
                )
            )
        api_group = "point_to_point"
        aliasing = "allowed"
    elif category == "one_sided_put":
        semantics["one_sided"] = {
            "operation": "put",
            "epoch_type": "implicit",
            "ordering": "release_acquire",
        }
        api_group = "one_sided"
        aliasing = "allowed"
    elif category in ("signal", "signal_wait", "group_start", "group_end"):
        api_group = "synchronization" if category.startswith("signal") else None
    elif category.startswith("query"):
        api_group = "query"
    else:
        api_group = "management"
    if on_stream and category != "signal_wait":
        remote = None if category == "signal" else "after_return"
        semantics["memory"] = memory("after_wait", remote, "after_wait")
        if remote is not None:
            dependencies.append(REMOTE_COMPLETION_DEPENDENCY)
        notes.rule("/semantics/memory", "stream-ordered-memory")
    notes.curated("/identity/api_group", origin)
    notes.curated("/identity/desc", origin)
    parameters = []
    for index, declared in enumerate(record["parameters"]):
        facts = parameter_facts(name, category, declared, record)
        documented = documented_directions(f"{MODEL}/directions.yaml")(name, declared["name"])
        if documented is not None:
            facts.direction = documented.direction
        parameters.append(declared_parameter(declared, facts))
        note_declared_parameter(notes, index, where, "nccl-parameter")
        if documented is not None:
            note_direction(notes, index, documented)
    if category in ("register",):
        aliasing = "allowed"
    if aliasing is None and any(p.kind == "BUFFER" for p in parameters):
        aliasing = "allowed"
    return_type = record["return_type"]
    if return_type == "ncclResult_t":
        successes = ["ncclSuccess"]
        if category in COMMUNICATOR_CATEGORIES or category == "group_end":
            successes.append("ncclInProgress")
        errors = [code for code in result_codes if code not in successes and code != "ncclSuccess"]
        returned = c_return(return_type, kind="ERROR_CODE", errors=errors, successes=successes)
        notes.source("/return/possible_errors", f"{HEADER} enum ncclResult_t")
    elif return_type == "const char*":
        returned = c_return(return_type, kind="value", value_kind="STRING")
    elif return_type == "void":
        returned = c_return(return_type, kind="void")
    else:
        # The device API's team queries: a team (ncclTeam_t) or a rank in another team.
        returned = c_return(
            return_type, kind="value", value_kind="RANK" if "RankTo" in name else None
        )
    notes.rule("/return/kind", "return-kind")
    entry = EntryBuilder(
        identity=Identity(MODEL, name, api_group=api_group, desc=curated["desc"]),
        bindings=c_bindings(
            DEVICE_INCLUDE if device_api else HEADER,
            render_signature(name, record["return_type"], record["parameters"]),
        ),
        execution=section,
        semantics=semantics,
        parameters=parameters,
        returns=returned,
        tool_integration=ToolIntegration(
            profiling_name=record.get("profiling_name"),
            buffer_aliasing=aliasing,
            context_dependencies=dependencies,
        ),
    ).build()
    if record.get("deprecated"):
        notes.source(
            "/identity/deprecated_in", f"{where} deprecated attribute (version not stated)"
        )
    apply_versions(name, entry, notes, bool(record.get("deprecated_comment")))
    notes.source("/identity/name", where)
    notes.source("/bindings/c/signature", where)
    notes.source("/tool_integration/profiling_name", f"{where} p{name}")
    notes.rule("/tool_integration/buffer_aliasing", "nccl-in-place-rule")
    if dependencies:
        notes.rule("/tool_integration/context_dependencies", "nccl-blocking-context")
    assignment = formal_table().get(name)
    if assignment is not None:
        notes.curated("/semantics/formal", cite(f"{MODEL}/formal.yaml", name))
    return entry, notes, dict(assignment) if assignment is not None else None


@cache
def version_table() -> Mapping[str, Any]:
    document: Mapping[str, Any] = load(f"{MODEL}/versions.yaml")
    return document


@cache
def since_versions() -> Mapping[str, tuple[str, str]]:
    """Function -> (identity.since, source note) from curated/nccl/versions.yaml."""
    found: dict[str, tuple[str, str]] = {}
    for version, item in version_table()["since"].items():
        for function in item["functions"]:
            if function in found:
                raise ClassifyError(f"curated/nccl/versions.yaml lists {function} twice")
            found[function] = (f"NCCL-{version}", item["source"])
    return found


def apply_versions(
    name: str, entry: dict[str, Any], notes: Provenance, deprecated_comment: bool
) -> None:
    """identity.since and the deprecation of one function from curated/nccl/versions.yaml; a
    header comment saying "(deprecated)" must have its curated deprecation."""
    apply_since(
        name,
        entry,
        notes,
        since_versions().get(name),
        lambda source: cite(f"{MODEL}/versions.yaml", f"{name} ({source})"),
    )
    deprecation = version_table()["deprecated"].get(name)
    if deprecated_comment and deprecation is None:
        raise ClassifyError(
            f"nccl:{name}: {HEADER} marks it (deprecated) but curated/nccl/versions.yaml has "
            "no deprecation for it"
        )
    if deprecation is not None:
        origin = cite(f"{MODEL}/versions.yaml", f"{name} ({deprecation['source']})")
        entry["identity"]["deprecated_in"] = f"NCCL-{deprecation['deprecated_in']}"
        entry["relationships"]["superseded_by"] = f"{MODEL}:{deprecation['superseded_by']}"
        notes.curated("/identity/deprecated_in", origin)
        notes.curated("/relationships/superseded_by", origin)


def classify(extracted: dict[str, Any]) -> dict[str, Any]:
    """Turn the extracted nccl.h declarations into complete entries with provenance."""
    if extracted.get("model") != MODEL:
        raise ClassifyError(f"classify.nccl: expected model 'nccl', got {extracted.get('model')!r}")
    entries: dict[str, dict[str, Any]] = {}
    provenance: dict[str, dict[str, dict[str, str]]] = {}
    formal: dict[str, dict[str, Any]] = {}
    conditions = {
        record["name"]: record["in_place_condition"]
        for record in extracted["records"]
        if record.get("in_place_condition")
    }
    for record in extracted["records"]:
        key = f"{MODEL}:{record['name']}"
        entry, notes, assignment = classify_record(record, extracted["result_codes"], conditions)
        entries[key] = entry
        provenance[key] = notes.sorted_records()
        if assignment is not None:
            formal[key] = assignment
    declared = {record["name"] for record in extracted["records"]}
    stale = sorted(set(function_table()["functions"]) - declared)
    if stale:
        raise ClassifyError(f"curated/nccl/functions.yaml names functions {HEADER} lacks: {stale}")
    unknown_formal = sorted(set(formal_table()) - declared)
    if unknown_formal:
        raise ClassifyError(
            f"curated/nccl/formal.yaml names functions {HEADER} lacks: {unknown_formal}"
        )
    return {
        "model": MODEL,
        "sources": extracted["sources"],
        "entries": dict(sorted(entries.items())),
        "formal": dict(sorted(formal.items())),
        "provenance": dict(sorted(provenance.items())),
    }
