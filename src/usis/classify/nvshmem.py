"""Classify NVSHMEM's host and device API into complete USIS entries, one per function or `{T}`
family.

The header declares every typed routine once per type; members that agree on everything but
the type become one `{T}` family entry (with a `families` record, as the OpenSHMEM classifier
writes it). Where a function may be called from follows its declarations: `_on_stream` variants
are host calls whose work runs on the GPU in stream order, `_block` / `_warp` variants are
device calls made together by a block or a warp (their own entries, with `gpu_scope`), and the
plain forms are host, device or both as the header marks them.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from usis.cheader.declarations import render_signature
from usis.curated import cite, header_since, load
from usis.entry_builder import (
    ClassifyError,
    EntryBuilder,
    Identity,
    ParameterFacts,
    Provenance,
    ToolIntegration,
    apply_since,
    binding_type,
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
    returns,
)
from usis.formal.shapes import ShapeError, curated_bindings

MODEL = "nvshmem"
PLACEHOLDER = "{T}"
API_HEADERS = ("nvshmem.h", "nvshmemx.h")
# Stands for "the sibling COUNT parameter"; `build` puts in that parameter's actual name.
COUNT_PLACEHOLDER = "<count>"


@dataclass(frozen=True)
class Operation:
    """What a function name says: the operation, its reduction operator and its variant axes."""

    key: str
    reduction: str | None
    scope: str | None  # None, "warp", "block", "warpgroup"
    on_stream: bool
    nbi: bool
    queue_pair: bool
    sized: bool
    bytes_form: bool


SCOPE_SUFFIX = re.compile(r"_(warpgroup|warp|block)$")
REDUCTION = re.compile(r"^(and|or|xor|max|min|sum|prod)_(reduce|reducescatter)$")


def operation_of(name: str) -> Operation:
    """Parse an NVSHMEM name (concrete or with `{T}`) into its operation and variant axes."""
    rest = re.sub(r"^nvshmemx?_", "", name)
    on_stream = rest.endswith("_on_stream")
    rest = rest.removesuffix("_on_stream")
    scope_match = SCOPE_SUFFIX.search(rest)
    scope = scope_match.group(1) if scope_match else None
    if scope_match:
        rest = rest[: scope_match.start()]
    queue_pair = rest.startswith("qp_")
    rest = rest.removeprefix("qp_")
    sized = bool(re.match(r"^(put|get|iput|iget)\{T\}", rest))
    rest = re.sub(r"(^|_)\{T\}_", r"\1", rest).replace(PLACEHOLDER, "")
    rest = re.sub(r"^(half|double2)_", "", rest)
    bytes_form = bool(re.match(r"^(put|get|broadcast|fcollect|alltoall)mem", rest))
    rest = re.sub(r"^(put|get|broadcast|fcollect|alltoall)mem", r"\1", rest)
    nbi = "_nbi" in rest
    rest = rest.replace("_nbi", "")
    reduction = None
    reduction_match = REDUCTION.match(rest)
    if reduction_match:
        reduction, rest = reduction_match.group(1), reduction_match.group(2)
    return Operation(rest, reduction, scope, on_stream, nbi, queue_pair, sized, bytes_form)


COLLECTIVE_TYPES = {
    # operation key -> (semantics.collective.type, root_involved, algorithm_class)
    "broadcast": ("broadcast", True, "one_to_all"),
    "fcollect": ("allgather", False, "all_to_all"),
    "alltoall": ("alltoall", False, "all_to_all"),
    "reduce": ("allreduce", False, "all_to_all"),
    # nvshmemx_double2_maxloc_reduce_block: an allreduce whose operator (maxloc) is its name.
    "maxloc_reduce": ("allreduce", False, "all_to_all"),
    "reducescatter": ("reduce_scatter", False, "all_to_all"),
    # The tile API's collectives (tile_{op}_rooted_reduce, tile_allgather).
    "rooted_reduce": ("reduce", True, "all_to_one"),
    "allgather": ("allgather", False, "all_to_all"),
}
BARRIERS = {"barrier", "barrier_all", "sync", "sync_all", "team_sync"}
WAITS = re.compile(r"^(wait_until|test)(_all|_any|_some)?(_vector)?$")
QUERIES = {
    "my_pe": ("value", "RANK"),
    "n_pes": ("value", "TEAM_SIZE"),
    "team_my_pe": ("value", "RANK"),
    "team_n_pes": ("value", "TEAM_SIZE"),
    "team_translate_pe": ("value", "RANK"),
    "ptr": ("RESULT", None),
    "mc_ptr": ("RESULT", None),
    "info_get_version": ("void", None),
    "info_get_name": ("void", None),
    "vendor_get_version_info": ("void", None),
    "init_status": ("value", None),
    "query_thread": ("void", None),
    "team_get_config": ("ERROR_CODE", None),
    "region_is_active": ("bool", None),
    "collective_launch_query_gridsize": ("ERROR_CODE", None),
}
ALLOCATIONS = {"malloc", "calloc", "align", "free"}
COLLECTIVE_MANAGEMENT = {
    "team_split_strided",
    "team_split_2d",
    "team_destroy",
    "init",
    "init_thread",
    "finalize",
    "init_attr",
    "hostlib_init_attr",
    "hostlib_finalize",
    "team_init",
    "buffer_register_symmetric",
    "buffer_unregister_symmetric",
    "buffer_register_symmetric_at_preferred_address",
}


@cache
def descriptions() -> Mapping[str, Any]:
    document: Mapping[str, Any] = load(f"{MODEL}/operations.yaml")
    return document


def atomic_operations() -> Mapping[str, Mapping[str, Any]]:
    """semantics.atomic of each atomic operation, by OpenSHMEM 1.4 name (which NVSHMEM keeps)."""
    table: Mapping[str, Mapping[str, Any]] = load("shmem/atomics.yaml")["operations"]["table"]
    return table


@cache
def team_names() -> frozenset[str]:
    """Parameter names of OpenSHMEM team handles, which NVSHMEM keeps."""
    return frozenset(load("shmem/parameters.yaml")["team_handles"]["names"])


def phrase(operation: Operation, typed: bool, bits: str | None = None) -> str:
    if operation.bytes_form:
        return "bytes"
    if operation.sized:
        # A sized routine shipped on its own (nvshmem_get128) names its width; a family, {T}.
        return f"{PLACEHOLDER if typed or bits is None else bits}-bit elements"
    return f"{PLACEHOLDER} elements" if typed else "elements"


def describe(operation: Operation, typed: bool, bits: str | None = None) -> tuple[str, str]:
    """A one-sentence description from the curated operation phrases, and its origin."""
    table = descriptions()["operations"]
    item = table.get(operation.key)
    if item is None:
        raise ClassifyError(
            f"nvshmem operation {operation.key!r} has no description in "
            "curated/nvshmem/operations.yaml; add one"
        )
    sentence = item["desc"].format(
        things=phrase(operation, typed, bits), op=operation.reduction or "", T=PLACEHOLDER
    )
    if operation.nbi:
        sentence = (
            sentence.rstrip(".")
            + ", returning before the transfer is complete (finished by a quiet)."
        )
    if operation.scope in ("block", "warp", "warpgroup"):
        sentence = (
            sentence.rstrip(".")
            + f"; every thread of the calling {operation.scope} calls it together."
        )
    if operation.on_stream:
        sentence = (
            sentence.rstrip(".") + "; issued from the host and performed in order on a CUDA stream."
        )
    if operation.queue_pair:
        sentence = sentence.rstrip(".") + ", on a chosen queue pair."
    return sentence, cite(f"{MODEL}/operations.yaml", operation.key)


REMOTE_SIDE = {
    "put": {"dest"},
    "p": {"dest"},
    "iput": {"dest"},
    "put_signal": {"dest", "sig_addr"},
    "get": {"source", "src"},
    "g": {"source", "src"},
    "iget": {"source"},
}
COUNT_NAMES = {"nelems", "nelem", "nreduce", "bytes", "count", "num_qps"}
RANK_NAMES = {"pe", "PE_root", "src_pe", "start", "PE_start"}
STREAM_NAMES = {"stream", "cstrm", "cstream"}
DATA_NAMES = {"dest", "source", "src", "fetch", "sig_addr", "ivars", "ptr"}
SCALAR_NAMES = {
    "value",
    "cond",
    "cmp_value",
    "signal",
    "dst",
    "sst",
    "stride",
    "size",
    "alignment",
    "status",
    "xrange",
    "major",
    "minor",
    "patch",
}


def parameter_facts(
    operation: Operation, declared: Mapping[str, Any], device_side: bool
) -> tuple[ParameterFacts, str]:
    name, c_type = declared["name"] or "", declared["type"]
    direction = default_direction(c_type)
    base = c_type.replace("const ", "").rstrip("*").strip()
    key = operation.key
    if name in STREAM_NAMES or base == "cudaStream_t":
        return ParameterFacts(
            "STREAM", "in", "the CUDA stream the operation is ordered on"
        ), "param-stream"
    if name in team_names() or base == "nvshmem_team_t":
        out = is_pointer(c_type) and base == "nvshmem_team_t"
        return ParameterFacts(
            "TEAM", "out" if out else "in", "the team created" if out else "the team"
        ), "param-team"
    if name in RANK_NAMES:
        return ParameterFacts(
            "RANK",
            "in",
            "the PE number" if name != "PE_root" else "the root PE",
            value_range="0 <= value < number of PEs",
        ), "param-rank"
    if name in COUNT_NAMES and not is_pointer(c_type):
        unit = "bytes" if operation.bytes_form or name == "bytes" else "elements"
        return ParameterFacts("COUNT", "in", f"the number of {unit}"), "param-count"
    if name == "PE_size":
        return ParameterFacts(
            "TEAM_SIZE", "in", "the number of PEs of the new team"
        ), "param-team-size"
    if name in SCALAR_NAMES and not is_pointer(c_type):
        # By-value operands, even when typed `{T}` (nvshmem_{T}_p's value, an atomic's cond).
        return ParameterFacts("SCALAR", "in", None), "param-scalar"
    if name == "sig_op":
        return ParameterFacts(
            "SIG_OP", "in", "the signal update operation (set or add)"
        ), "param-sig-op"
    if name in ("requested", "provided"):
        return ParameterFacts(
            "THREAD_LEVEL", direction, "a thread-support level"
        ), "param-thread-level"
    if name == "name" and "char" in c_type:
        return ParameterFacts("STRING", "out", "the library name"), "param-string"
    if name == "indices":
        return ParameterFacts(
            "INDEX_ARRAY", "out", "positions of the satisfied variables", length=COUNT_PLACEHOLDER
        ), "param-index-array"
    if name == "cmp_values":
        return ParameterFacts(
            "SCALAR", "in", "the comparison values, one per variable", length=COUNT_PLACEHOLDER
        ), "param-scalar-array"
    if name == "status" and is_pointer(c_type):
        return ParameterFacts(
            None, "in", "a mask of variables to skip", length=COUNT_PLACEHOLDER
        ), "param-status-mask"
    if name in DATA_NAMES or (PLACEHOLDER in c_type and is_pointer(c_type)):
        remote = name in REMOTE_SIDE.get(key, set())
        collective = key in COLLECTIVE_TYPES
        symmetric = (
            remote
            or collective
            or name in ("sig_addr", "ivars")
            or key in ALLOCATIONS
            or key.startswith(("wait", "test", "atomic", "signal"))
        )
        # The local side of a transfer is GPU memory, whichever side issues it.
        space = "symmetric_heap" if symmetric else "device"
        direction = {
            "dest": "out",
            "fetch": "out",
            "sig_addr": "inout",
            "source": "in",
            "src": "in",
            "ivars": "in",
        }.get(name, direction)
        if key.startswith("atomic") and name == "dest":
            direction = "inout"
        length: int | str | None = None
        if key in ("put", "get", "iput", "iget", "put_signal") or collective:
            if name in ("dest", "source", "src"):
                length = COUNT_PLACEHOLDER
            if collective and key in ("fcollect", "alltoall") and name == "dest":
                length = "*"
            if key == "reducescatter" and name in ("source", "src"):
                length = "*"
        if name == "ivars":
            length = COUNT_PLACEHOLDER
        role = {
            "dest": "the destination data object",
            "source": "the source data object",
            "src": "the source data object",
            "fetch": "where the prior value is returned",
            "sig_addr": "the symmetric signal word",
            "ivars": "the symmetric variables tested",
            "ptr": "the symmetric allocation",
        }.get(name, "a data object")
        return (
            ParameterFacts(
                "BUFFER",
                direction,
                role,
                memory_space=space,
                length=length,
                asynchronous=operation.nbi or operation.on_stream,
            ),
            "param-buffer",
        )
    if name in SCALAR_NAMES or name == "cmp":
        kind = None if name == "cmp" else "SCALAR"
        return ParameterFacts(
            kind, direction, "the comparison operator" if name == "cmp" else None
        ), "param-scalar"
    return ParameterFacts(None, direction, None), "param-other"


def classify_operation(
    operation: Operation, host: bool, device: bool
) -> tuple[str | None, dict[str, Any], dict[str, Any], str]:
    """api_group, execution, semantics and the rule id for one operation and its variant axes."""
    scope = operation.scope
    if scope in ("block", "warp", "warpgroup"):
        launch, runs_on = "gpu", "gpu"
        gpu_scope = None if scope == "warpgroup" else scope
    elif operation.on_stream:
        launch, runs_on, gpu_scope = "cpu", "gpu", None
    elif host and device:
        launch, runs_on, gpu_scope = "cpu+gpu", "cpu+gpu", "thread"
    elif device:
        launch, runs_on, gpu_scope = "gpu", "gpu", "thread"
    else:
        launch, runs_on, gpu_scope = "cpu", "cpu", None
    key = operation.key
    nbi = operation.nbi
    stream = operation.on_stream
    semantics = empty_semantics()

    def run(
        blocking: bool,
        collective: bool,
        locality: str,
        completion: str | None,
        procedure: str | None,
    ) -> dict[str, Any]:
        section = execution(
            blocking=False if stream else blocking,
            launch=launch,
            runs_on=runs_on,
            gpu_scope=gpu_scope,
            collective=collective,
            locality=locality,
            completion="stream_ordered" if stream else completion,
            procedure_class="nb-op" if stream else procedure,
        )
        if launch != "gpu":
            section["thread_safety"] = "single"
        return section

    local = "after_wait" if stream else ("after_flush" if nbi else "after_return")
    if key in ("put", "p", "iput", "put_signal"):
        semantics["one_sided"] = {
            "operation": "put",
            "epoch_type": "implicit",
            "ordering": "release_acquire" if key == "put_signal" else "none",
        }
        semantics["memory"] = memory(
            local, "after_quiet", local, symmetric_heap=True, model="relaxed"
        )
        return (
            "one_sided",
            run(not nbi, False, "both", "ic" if nbi else "c", "nb-op" if nbi else "b-op"),
            semantics,
            "rma-put",
        )
    if key in ("get", "g", "iget"):
        semantics["one_sided"] = {"operation": "get", "epoch_type": "implicit", "ordering": "none"}
        semantics["memory"] = memory(local, None, local, symmetric_heap=True, model="relaxed")
        return (
            "one_sided",
            run(not nbi, False, "both", "ic" if nbi else "c", "nb-op" if nbi else "b-op"),
            semantics,
            "rma-get",
        )
    if key in atomic_operations():
        semantics["atomic"] = dict(atomic_operations()[key])
        name, fetch = semantics["atomic"]["operation"], semantics["atomic"]["fetch"]
        remote = None if name == "fetch" else ("after_return" if fetch else "after_quiet")
        semantics["memory"] = memory(local, remote, local, symmetric_heap=True, model="relaxed")
        return (
            "one_sided",
            run(True, False, "both" if fetch else "remote", "c", "b-op"),
            semantics,
            "atomic",
        )
    if key == "signal_op":
        # The update (set or add) is chosen by a SIG_OP argument, which is not an OPERATION, so
        # semantics.atomic cannot leave its operation null (USIS-C032); no sub-object is claimed.
        semantics["memory"] = memory(
            local, "after_quiet", local, symmetric_heap=True, model="relaxed"
        )
        return "one_sided", run(True, False, "remote", "c", "b-op"), semantics, "signal-op"
    if key == "signal_fetch":
        semantics["atomic"] = {"operation": "fetch", "fetch": True, "compare": False}
        semantics["memory"] = memory(
            "after_return", None, "after_return", symmetric_heap=True, model="relaxed"
        )
        return "one_sided", run(True, False, "local", "c", "b-op"), semantics, "signal-fetch"
    if key in COLLECTIVE_TYPES:
        collective_type, root, shape = COLLECTIVE_TYPES[key]
        reduction = operation.reduction is not None or key == "maxloc_reduce"
        semantics["collective"] = {
            "type": collective_type,
            "root_involved": root,
            "in_place": reduction,
            "comm_scope": "intracommunicator",
            "algorithm_class": shape,
            # The operator is fixed by the name, never passed: no OPERATION parameter (USIS-C010).
            "reduction_op": False,
            "topology_aware": False,
        }
        semantics["memory"] = memory(
            local, "after_return", local, symmetric_heap=True, model="relaxed"
        )
        return "collective", run(True, True, "both", "c", "b-op"), semantics, "collective"
    if key in BARRIERS:
        completes = key.startswith("barrier")
        semantics["memory"] = memory(
            local, None, local, fence="both" if completes else "none", symmetric_heap=True
        )
        # A barrier is a collective call, as in OpenSHMEM and MPI.
        return "collective", run(True, True, "both", "c", "b-op"), semantics, "barrier-sync"
    if key in ("quiet", "fence", "flush", "qp_quiet", "qp_fence"):
        fence = "remote" if key.endswith("fence") else "both"
        semantics["memory"] = memory(local, None, local, fence=fence, symmetric_heap=True)
        return "synchronization", run(True, False, "both", "c", "b-op"), semantics, "fence-quiet"
    if WAITS.match(key) or key == "signal_wait_until":
        testing = key.startswith("test")
        semantics["memory"] = memory("after_return", None, "after_return", symmetric_heap=True)
        return (
            "synchronization",
            run(not testing, False, "local", "c", None if testing else "b-op"),
            semantics,
            "point-to-point-sync",
        )
    if key == "collective_wait":
        # tile_collective_wait completes the tile collectives the PE started on the team; for
        # the push algorithms it synchronizes the team, so every PE of it calls it.
        semantics["memory"] = memory(
            "after_return", None, "after_return", fence="both", symmetric_heap=True
        )
        return "synchronization", run(True, True, "both", "c", "b-op"), semantics, "tile-wait"
    if key in ALLOCATIONS:
        semantics["memory"] = memory("after_return", None, "after_return", symmetric_heap=True)
        return (
            "management",
            run(True, True, "both", None, "b-op"),
            semantics,
            "symmetric-allocation",
        )
    if key in QUERIES:
        return "query", run(True, False, "local", None, None), semantics, "query"
    if key in ("collective_launch", "collective_launch_attr"):
        # Every PE launches its part of a cooperative kernel (NVSHMEM API, "Collective kernel
        # launch": a collective call); the launch is enqueued on the stream and returns. No
        # api_group fits a kernel launch, as for the CUDA runtime's launches.
        section = execution(
            blocking=False,
            launch="cpu",
            runs_on="gpu",
            collective=True,
            locality="both",
            completion="stream_ordered",
            procedure_class="nb-op",
        )
        section["thread_safety"] = "single"
        return None, section, semantics, "collective-launch"
    collective = key in COLLECTIVE_MANAGEMENT
    return (
        "management",
        run(
            True,
            collective,
            "both" if collective else "local",
            None,
            "b-op" if collective else None,
        ),
        semantics,
        "management",
    )


def return_section(operation: Operation, c_type: str) -> dict[str, Any]:
    key = operation.key
    if c_type == "void":
        return c_return("void", kind="void")
    if key in QUERIES:
        kind, value_kind = QUERIES[key]
        if kind in ("value", "bool", "RESULT"):
            return c_return(c_type, kind=kind, value_kind=value_kind)
    if key in ("malloc", "calloc", "align", "ptr", "mc_ptr"):
        return c_return(c_type, kind="RESULT")
    if key in ("g", "signal_fetch", "signal_wait_until") or key in atomic_operations():
        return c_return(c_type, kind="value")
    if key.startswith("test") and not key.startswith(("test_any", "test_some")):
        return c_return(c_type, kind="bool")
    if WAITS.match(key):
        return c_return(c_type, kind="value")
    if c_type in ("int",):
        return c_return(c_type, kind="ERROR_CODE", successes=["0"], errors=["nonzero status"])
    return c_return(c_type, kind="value")


# ---------------------------------------------------------------------------------------------
# Families


def generalize(spelled: str, c_type: str) -> str:
    """`const int*` with member type `int` -> `const {T}*`; other types are left alone."""
    match = re.fullmatch(r"((?:const |volatile )*)(.*?)(\**)", spelled)
    if match is None or not c_type:
        return spelled
    base = re.sub(r"\b(long|short)( int)\b", r"\1", match.group(2))
    if base != re.sub(r"\b(long|short)( int)\b", r"\1", c_type):
        return spelled
    return f"{match.group(1)}{PLACEHOLDER}{match.group(3)}"


def generic_template(members: Sequence[Mapping[str, Any]]) -> tuple[str, list[str]] | None:
    """(return type, parameter types) with `{T}` where the members differ only by their type,
    or None when they differ in anything else."""
    positions = [[m["return_type"], *[p["type"] for p in m["parameters"]]] for m in members]
    if len({len(p) for p in positions}) != 1:
        return None
    template: list[str] = []
    for index in range(len(positions[0])):
        spelled = {positions[k][index] for k in range(len(members))}
        if len(spelled) == 1:
            template.append(next(iter(spelled)))
            continue
        generic = set()
        for member, types in zip(members, positions, strict=True):
            c_type = member["family_c_type"] or ""
            generic.add(generalize(types[index], c_type))
        if len(generic) != 1 or PLACEHOLDER not in next(iter(generic)):
            return None
        template.append(next(iter(generic)))
    names = {tuple(p["name"] for p in m["parameters"]) for m in members}
    if len(names) != 1:
        return None
    return template[0], template[1:]


def group_records(
    records: list[dict[str, Any]],
) -> list[tuple[str, list[dict[str, Any]], tuple[str, list[str]] | None]]:
    """(entry name, member records, template) per entry: families first grouped by key and by
    where they may be called from; a group that is not uniform stays concrete."""
    grouped: dict[tuple[str, bool, bool], list[dict[str, Any]]] = defaultdict(list)
    out: list[tuple[str, list[dict[str, Any]], tuple[str, list[str]] | None]] = []
    for record in records:
        if record["family"] is None:
            out.append((record["name"], [record], None))
            continue
        grouped[(record["family"], record["host_visible"], record["device_visible"])].append(record)
    families_seen: dict[str, int] = defaultdict(int)
    for (family, _, _), members in sorted(
        grouped.items(), key=lambda item: (item[0][0], -len(item[1]))
    ):
        template = generic_template(members) if len(members) > 1 else None
        # Sized routines (put8 ... put128) stay concrete, as in the OpenSHMEM corpus: their
        # element is a bit width, which the reference grammar's `type:` cannot spell as `{T}`.
        generic = template is not None and any(
            PLACEHOLDER in spelled for spelled in (template[0], *template[1])
        )
        if len(members) > 1 and generic and families_seen[family] == 0:
            families_seen[family] += 1
            out.append((family, members, template))
        else:
            out.extend((member["name"], [member], None) for member in members)
    return sorted(out, key=lambda item: item[0])


def family_signature(name: str, template: tuple[str, list[str]], member: Mapping[str, Any]) -> str:
    parameters = [{**p, "type": t} for p, t in zip(member["parameters"], template[1], strict=True)]
    return render_signature(name, template[0], parameters)


# ---------------------------------------------------------------------------------------------
# Entries


@cache
def formal_rules() -> list[dict[str, Any]]:
    document: Mapping[str, Any] = load(f"{MODEL}/formal.yaml")
    return list(document["assignments"])


def formal_assignment(
    operation: Operation,
    parameter_names: list[str],
    typed: bool,
    bits: str | None,
    atomic_operation: str | None = None,
) -> tuple[dict[str, Any], int] | None:
    """The first curated assignment that fits; `{atomic_operation}` becomes `op:<operation>`."""
    for index, rule in enumerate(formal_rules()):
        if operation.key not in rule["operations"] or operation.queue_pair:
            continue
        if not set(rule["requires_parameters"]) <= set(parameter_names):
            continue
        if operation.bytes_form:
            datatype = "type:byte"
        elif bits is not None:
            datatype = f"type:bits{bits}"
        else:
            datatype = "type:{T}" if typed else "type:byte"
        try:
            bindings = curated_bindings(
                rule["bindings"], datatype, atomic_operation, operation.reduction
            )
        except ShapeError as error:
            raise ClassifyError(
                f"curated/nvshmem/formal.yaml assignments[{index}] for {operation.key!r}: {error}"
            ) from error
        return {"shape_ref": rule["shape_ref"], "bindings": bindings}, index
    return None


# Parameters the header declares without a name, named as the NVSHMEM API documentation's
# prototypes name them.
UNNAMED_PARAMETERS = {
    "nvshmem_calloc": ("count", "size"),
    "nvshmem_align": ("alignment", "size"),
    "nvshmemx_barrier_all_on_stream": ("stream",),
    "nvshmemx_sync_all_on_stream": ("stream",),
}


def named_parameters(name: str, parameters: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if all(p["name"] for p in parameters):
        return parameters
    names = UNNAMED_PARAMETERS.get(name)
    if names is None or len(names) != len(parameters):
        raise ClassifyError(
            f"nvshmem:{name}: the header leaves a parameter unnamed and UNNAMED_PARAMETERS has "
            "no names for it"
        )
    return [{**p, "name": p["name"] or names[index]} for index, p in enumerate(parameters)]


def build(
    entry_name: str, members: list[dict[str, Any]], template: tuple[str, list[str]] | None
) -> tuple[dict[str, Any], Provenance, dict[str, Any] | None, dict[str, Any] | None]:
    primary = members[0]
    typed = template is not None
    # A concrete member left out of its family still names its operation through the family key.
    operation = operation_of(primary["family"] or entry_name)
    where = f"{primary['file']}:{primary['line']}"
    notes = Provenance("classify/nvshmem.py")
    host, device = primary["host_visible"], primary["device_visible"]
    api_group, section, semantics, rule_id = classify_operation(operation, host, device)
    notes.rule("/execution", rule_id)
    notes.source(
        "/execution/launch",
        f"{where} markers and declaring pass ({'host' if host else ''}{'+' if host and device else ''}{'device' if device else ''})",
    )
    notes.rule("/semantics", rule_id)
    notes.rule("/identity/api_group", rule_id)
    desc, origin = describe(operation, typed, primary["family_type"] if operation.sized else None)
    notes.curated("/identity/desc", origin)
    declared_parameters = (
        [{**p, "type": t} for p, t in zip(primary["parameters"], template[1], strict=True)]
        if template
        else primary["parameters"]
    )
    unnamed = [index for index, p in enumerate(declared_parameters) if not p["name"]]
    declared_parameters = named_parameters(entry_name, declared_parameters)
    parameters = []
    device_side = operation.scope is not None or (device and not host)
    for index, declared in enumerate(declared_parameters):
        facts, parameter_rule = parameter_facts(operation, declared, device_side)
        documented = documented_directions(f"{MODEL}/directions.yaml")(entry_name, declared["name"])
        if documented is not None:
            facts.direction = documented.direction
        parameters.append(declared_parameter(declared, facts))
        note_declared_parameter(notes, index, where, parameter_rule)
        if documented is not None:
            note_direction(notes, index, documented)
    count_name = next((p.name for p in parameters if p.kind == "COUNT"), None)
    for parameter in parameters:
        if parameter.length == COUNT_PLACEHOLDER:
            parameter.length = count_name if count_name else "*"
    for index in unnamed:
        notes.curated(
            f"/parameters/{index}/name", f"NVSHMEM 3.8 API documentation, prototype of {entry_name}"
        )
    return_type = template[0] if template else primary["return_type"]
    returned = return_section(operation, return_type)
    notes.rule("/return/kind", "return-kind")
    buffers = [p for p in parameters if p.kind == "BUFFER"]
    collective = semantics["collective"]
    if collective is not None and collective["in_place"]:
        aliasing: str | None = "in_place_only"
    elif len(buffers) >= 2:
        aliasing = "forbidden"
    elif buffers:
        aliasing = "allowed"
    else:
        aliasing = None
    dependencies = []
    if collective is not None and operation.on_stream:
        dependencies.append(
            context_dependency(
                "semantics.memory.remote_completion",
                "after_return",
                ["completion of the operation on the CUDA stream"],
                "The schema has no stream-ordered value here: the result is in place on every PE "
                "once the stream work completes there, observed by synchronizing the stream.",
            )
        )
    if template:
        signature = family_signature(entry_name, template, primary)
    else:
        signature = render_signature(primary["name"], primary["return_type"], primary["parameters"])
    header = "nvshmemx.h" if entry_name.startswith("nvshmemx_") else "nvshmem.h"
    entry = EntryBuilder(
        identity=Identity(
            MODEL,
            entry_name,
            api_group=api_group,
            desc=desc,
            type_family=sorted_types(members) if template else None,
        ),
        bindings=c_bindings(header, signature),
        execution=section,
        semantics=semantics,
        parameters=parameters,
        returns=returned,
        tool_integration=ToolIntegration(
            buffer_aliasing=aliasing, context_dependencies=dependencies
        ),
    ).build()
    if primary.get("alias_of"):
        alias = f"#define {entry_name} {primary['alias_of']}: a name programs call"
        notes.source("/identity/name", f"{primary['file']} {alias}")
        notes.source("/bindings/c/signature", f"{where} ({primary['alias_of']}), {alias}")
    else:
        notes.source("/identity/name", where)
        notes.source("/bindings/c/signature", where)
    notes.source("/bindings/c/header", f"{header} (includes {primary['file']})")
    notes.rule("/tool_integration/buffer_aliasing", "nvshmem-aliasing")
    if template:
        notes.source(
            "/identity/type_family", f"{where} and its {len(members)} per-type declarations"
        )
    bits = primary["family_type"] if operation.sized else None
    atomic = semantics["atomic"]
    assignment = formal_assignment(
        operation,
        [str(p.name) for p in parameters],
        typed,
        bits,
        atomic["operation"] if atomic else None,
    )
    apply_since(
        entry_name,
        entry,
        notes,
        since_of(entry_name),
        lambda source: cite(f"{MODEL}/versions.yaml", source),
    )
    formal = None
    if assignment is not None:
        formal = assignment[0]
        notes.curated(
            "/semantics/formal",
            cite(f"{MODEL}/formal.yaml", f"assignments[{assignment[1]}]"),
        )
    family = None
    if template:
        # The toolkit's families record: each type's name suffix and the C type `{T}` stands for
        # in type positions (for a sized family, the bit width that the description reads), and
        # a member's own version where the family's is not true of it (the family then has none).
        versions = member_versions(entry_name, members, entry["identity"]["since"])
        if versions and entry["identity"]["since"] is not None:
            # The family's version holds for the members not listed: they keep it, by name.
            shared = (entry["identity"]["since"], notes.records["/identity/since"]["from"])
            for m in members:
                versions.setdefault(str(m["family_type"]), shared)
        if versions:
            entry["identity"]["since"] = None
            notes.records.pop("/identity/since", None)
        family = {
            "types": [
                {
                    "name": m["family_type"],
                    "c_type": m["family_type"] if operation.sized else m["family_c_type"],
                    **member_version_item(versions.get(str(m["family_type"]))),
                }
                for m in members
            ]
        }
    return entry, notes, formal, family


@cache
def version_rules() -> tuple[tuple[re.Pattern[str], str, str, frozenset[str] | None], ...]:
    document: Mapping[str, Any] = load(f"{MODEL}/versions.yaml")
    return tuple(
        (
            re.compile(rule["match"]),
            rule["since"],
            rule["source"],
            frozenset(rule["types"]) if "types" in rule else None,
        )
        for rule in document["rules"]
    )


def release_types(entry_name: str) -> frozenset[str] | None:
    """The types the release of the first matching rule had (`types`), None where it says none."""
    for pattern, _, _, types in version_rules():
        if pattern.search(entry_name):
            return types
    return None


def member_version_item(version: tuple[str | None, str] | None) -> dict[str, Any]:
    """The `since` and `since_from` of one type of a families record, or nothing."""
    return {} if version is None else {"since": version[0], "since_from": version[1]}


def member_versions(
    entry_name: str, members: Sequence[Mapping[str, Any]], family_since: str | None
) -> dict[str, tuple[str | None, str]]:
    """{type name: (since, origin)} for the members of a family whose version is not the family
    entry's: a member the header history dates on its own (nvshmem_half_atomic_fetch, 3.7), or
    one whose type the release a rule names did not have (the RMA types of NVSHMEM 1.0 lack
    half and bfloat16). Empty when every member shares the family's version."""
    dated = header_since(MODEL)
    types = release_types(entry_name)
    versions: dict[str, tuple[str | None, str]] = {}
    for member in members:
        type_name = str(member["family_type"])
        if member["name"] in dated:
            versions[type_name] = dated[member["name"]]
        elif types is not None and type_name not in types and entry_name not in dated:
            versions[type_name] = (
                None,
                cite(
                    f"{MODEL}/versions.yaml",
                    f"{entry_name}: the release's type list has no {type_name}",
                ),
            )
    if all(since == family_since for since, _ in versions.values()):
        return {}
    return versions


def since_of(entry_name: str) -> tuple[str, str] | None:
    """(identity.since, source note) of the first rule of curated/nvshmem/versions.yaml that
    matches the entry name, or None where no release is pinned."""
    for pattern, since, source, _ in version_rules():
        if pattern.search(entry_name):
            return since, f"{entry_name} ({source})"
    return None


def sorted_types(members: Sequence[Mapping[str, Any]]) -> list[str]:
    return [m["family_type"] for m in members]


def link_variants(entries: dict[str, dict[str, Any]], notes: dict[str, Provenance]) -> None:
    """nonblocking/blocking pairs (`_nbi`) and host/gpu counterparts (`_on_stream` vs device)."""
    for key, entry in entries.items():
        variants = entry["relationships"]["variants"]
        name = key.split(":", 1)[1]
        launch = entry["execution"]["launch"]
        if "_nbi" not in name:
            for candidate in (
                re.sub(
                    r"(put|get|putmem|getmem|put\{T\}|get\{T\})(_signal)?(?=_|$)",
                    r"\1\2_nbi",
                    name,
                    count=1,
                ),
            ):
                if candidate != name and f"{MODEL}:{candidate}" in entries:
                    variants["nonblocking"] = f"{MODEL}:{candidate}"
                    entries[f"{MODEL}:{candidate}"]["relationships"]["variants"]["blocking"] = key
                    notes[key].rule("/relationships/variants/nonblocking", "nbi-pair")
                    notes[f"{MODEL}:{candidate}"].rule(
                        "/relationships/variants/blocking", "nbi-pair"
                    )
        # Host/GPU counterparts are one-to-one (USIS-C004): a device-only thread-scope routine
        # and the host's on-stream form of the same operation. A cpu+gpu entry covers both
        # itself (USIS-C030), and block/warp forms have no single host counterpart.
        if launch == "gpu" and entry["execution"]["gpu_scope"] == "thread":
            host_name = re.sub(r"^nvshmem_", "nvshmemx_", name) + "_on_stream"
            host_entry = entries.get(f"{MODEL}:{host_name}")
            if host_entry is not None and host_entry["execution"]["launch"] == "cpu":
                variants["host"] = f"{MODEL}:{host_name}"
                host_entry["relationships"]["variants"]["gpu"] = key
                notes[key].rule("/relationships/variants/host", "host-gpu-pair")
                notes[f"{MODEL}:{host_name}"].rule("/relationships/variants/gpu", "host-gpu-pair")


# ---------------------------------------------------------------------------------------------
# The tile API

TILE_OPERATION = re.compile(
    r"^tile_(?:(?P<op>sum|max|min)_(?P<reduce>reduce|rooted_reduce)|(?P<key>allgather|broadcast|put|get|collective_wait))$"
)


@cache
def tile_facts() -> Mapping[str, Any]:
    document: Mapping[str, Any] = load(f"{MODEL}/tile.yaml")
    return document


def tile_operation(name: str) -> Operation:
    """The operation and scope of a tile template's name (`tile_sum_reduce_block`)."""
    scope_match = SCOPE_SUFFIX.search(name)
    base = name[: scope_match.start()] if scope_match else name
    match = TILE_OPERATION.match(base)
    if match is None:
        raise ClassifyError(
            f"nvshmem:{name}: a tile template the classifier does not know; add its operation "
            "to classify/nvshmem.py and curated/nvshmem/tile.yaml"
        )
    key = match.group("reduce") or match.group("key")
    return Operation(
        key=key,
        reduction=match.group("op"),
        scope=scope_match.group(1) if scope_match else None,
        on_stream=False,
        nbi=key in ("put", "get"),
        queue_pair=False,
        sized=False,
        bytes_form=False,
    )


def tile_parameter(operation: Operation, declared: Mapping[str, Any]) -> ParameterFacts:
    """What a tile template's argument is: a tensor (src, dst), a tile coordinate tuple, the
    team, a PE, or the flag the definitions require to be zero."""
    name = declared["name"]
    collective = operation.key in COLLECTIVE_TYPES
    if name in ("src", "dst"):
        remote = (operation.key == "put" and name == "dst") or (
            operation.key == "get" and name == "src"
        )
        return ParameterFacts(
            "BUFFER",
            "in" if name == "src" else "out",
            "the source tensor" if name == "src" else "the destination tensor",
            memory_space="symmetric_heap" if remote or collective else "device",
            asynchronous=True,
        )
    if name == "start_coord":
        return ParameterFacts("INDEX_ARRAY", "in", "the coordinates where the tile starts")
    if name == "boundary":
        return ParameterFacts("INDEX_ARRAY", "in", "the coordinates that bound the tile")
    if name == "team":
        return ParameterFacts("TEAM", "in", "the team")
    if name == "pe":
        return ParameterFacts(
            "RANK", "in", "the PE number", value_range="0 <= value < number of PEs"
        )
    if name == "root":
        return ParameterFacts(
            "RANK",
            "in",
            "the PE of the team that performs the two-shot algorithm's reduction",
            value_range="a PE of team, or -1 (what the overload without root passes)",
        )
    if name == "flag":
        return ParameterFacts(
            None,
            "in",
            "reserved",
            value_range="0 (a nonzero flag returns NVSHMEMX_ERROR_INVALID_VALUE)",
        )
    return ParameterFacts(None, "in", None)


def build_tile(record: Mapping[str, Any]) -> tuple[dict[str, Any], Provenance]:
    """The entry of one tile template, keyed by its unqualified name (`nvshmem:tile_put`): C++
    only (no C binding can state a template), its qualified name in bindings.cpp, the call's
    arguments as its parameters, nonblocking as every algorithm its header defines."""
    name = record["name"]
    where = f"{record['file']}:{record['line']}"
    operation = tile_operation(name)
    facts = tile_facts()["operations"][operation.key]
    origin = cite(f"{MODEL}/tile.yaml", f"{operation.key} ({facts['source']})")
    notes = Provenance("classify/nvshmem.py")
    api_group, section, semantics, rule_id = classify_operation(operation, False, True)
    notes.rule("/execution", rule_id)
    notes.source("/execution/launch", f"{where} markers ({', '.join(record['markers'])})")
    notes.rule("/semantics", rule_id)
    notes.rule("/identity/api_group", rule_id)
    dependencies = []
    collective = semantics["collective"]
    if collective is not None:
        # Started here, completed by tile_collective_wait: every algorithm is an _NBI one.
        section.update(blocking=False, completion="ic", procedure_class="nb-op")
        semantics["memory"].update(local_completion="after_wait", buffer_reuse="after_wait")
        collective["in_place"] = False
        notes.curated("/execution", origin)
        notes.curated("/semantics/memory", origin)
        dependencies.append(
            context_dependency(
                "semantics.memory.remote_completion",
                "after_return",
                ["the matching tile_collective_wait on each PE"],
                "The result is in place on every PE once the tile_collective_wait that completes "
                "the collective has returned there; the schema has no value for that.",
            )
        )
    if operation.key == "broadcast" and collective is not None:
        notes.curated("/semantics/collective/root_involved", origin)
    parameters = []
    for index, declared in enumerate(record["parameters"]):
        parameter = declared_parameter(declared, tile_parameter(operation, declared))
        parameter.binding_type = binding_type(None, cpp=declared["type"])
        parameter.parameter_bindings = ["cpp"]
        parameter.pointer = None
        parameters.append(parameter)
        note_declared_parameter(notes, index, where, "tile-parameter")
    if len(record["overloads"]) > 1:
        notes.source(
            "/parameters",
            f"{where}: the overload with the most parameters of "
            + "; ".join("(" + ", ".join(names) + ")" for names in record["overloads"]),
        )
    codes = tile_facts()["returns"]
    returned = returns(
        "ERROR_CODE",
        binding_type(None, cpp=record["return_type"]),
        errors=codes["errors"],
        successes=codes["successes"],
    )
    notes.curated("/return", cite(f"{MODEL}/tile.yaml", f"returns ({codes['source']})"))
    desc = facts["desc"].format(op=operation.reduction or "")
    if operation.scope is not None:
        desc += f"; every thread of the calling {operation.scope} calls it together"
    algorithm_type = record["template"].rpartition(",")[2].strip().removesuffix(" algo")
    desc += f"; its template argument algo, a {algorithm_type}, picks the algorithm."
    notes.curated("/identity/desc", origin)
    buffers = [p for p in parameters if p.kind == "BUFFER"]
    entry = EntryBuilder(
        identity=Identity(MODEL, name, api_group=api_group, desc=desc),
        bindings={
            "c": {"expressible": False, "header": "nvshmemx.h", "signature": None},
            "fortran90": None,
            "fortran08": None,
            "lis": None,
            "cpp": {"expressible": True, "class_method": record["qualified_name"]},
        },
        execution=section,
        semantics=semantics,
        parameters=parameters,
        returns=returned,
        tool_integration=ToolIntegration(
            buffer_aliasing="forbidden" if len(buffers) >= 2 else None,
            context_dependencies=dependencies,
        ),
    ).build()
    notes.source("/identity/name", where)
    notes.source(
        "/bindings",
        f"{where}: template <{record['template']}> in namespace nvshmemx, a C++ function "
        "template that no C declaration can state",
    )
    notes.source("/bindings/c/header", f"nvshmemx.h (includes {record['file']})")
    notes.rule("/tool_integration/buffer_aliasing", "nvshmem-aliasing")
    apply_since(name, entry, notes, None, str)
    return entry, notes


def classify(extracted: dict[str, Any]) -> dict[str, Any]:
    """Turn the extracted NVSHMEM declarations into complete entries with provenance."""
    if extracted.get("model") != MODEL:
        raise ClassifyError(
            f"classify.nvshmem: expected model 'nvshmem', got {extracted.get('model')!r}"
        )
    entries: dict[str, dict[str, Any]] = {}
    notes: dict[str, Provenance] = {}
    formal: dict[str, dict[str, Any]] = {}
    families: dict[str, dict[str, Any]] = {}
    for entry_name, members, template in group_records(extracted["records"]):
        key = f"{MODEL}:{entry_name}"
        if key in entries:
            raise ClassifyError(f"{key}: two groups of declarations produce the same entry")
        entry, entry_notes, assignment, family = build(entry_name, members, template)
        entries[key] = entry
        notes[key] = entry_notes
        if assignment is not None:
            formal[key] = assignment
        if family is not None:
            families[key] = family
    for record in extracted.get("tile_records", []):
        key = f"{MODEL}:{record['name']}"
        if key in entries:
            raise ClassifyError(f"{key}: a tile template has the name of a C routine")
        entries[key], notes[key] = build_tile(record)
    link_variants(entries, notes)
    return {
        "model": MODEL,
        "sources": extracted["sources"],
        "entries": dict(sorted(entries.items())),
        "formal": dict(sorted(formal.items())),
        "families": dict(sorted(families.items())),
        "provenance": {key: n.sorted_records() for key, n in sorted(notes.items())},
    }
