"""Classify the OpenSHMEM declarations into complete USIS entries, one per routine or `{T}` family.

Families are found in the header itself (the same routine declared once per type suffix), the
OpenSHMEM 1.5 routines the header lacks come from curated/shmem/spec_1_5.yaml, what each
operation does (api_group, execution, semantics, description) from curated/shmem/operations.yaml,
and every other field is set by a named rule of this module or a curated fact, recorded in the
provenance map. The assemble stage expands the `{T}` families into one entry per concrete type.
"""

from __future__ import annotations

import copy
import re
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from usis.cheader.declarations import parse_declaration, render_signature
from usis.curated import load
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
    returns,
)
from usis.formal.shapes import curated_bindings, shape_ids

MODEL = "shmem"
HEADER = "shmem.h"
SPEC_1_5 = "OpenSHMEM-1.5"

# The type suffixes of OpenSHMEM's typed routines and the C type each names (the specification's
# TYPE/TYPENAME tables, in the order the header declares them).
TYPE_TABLE: dict[str, str] = {
    "char": "char",
    "short": "short",
    "int": "int",
    "long": "long",
    "float": "float",
    "double": "double",
    "longlong": "long long",
    "schar": "signed char",
    "uchar": "unsigned char",
    "ushort": "unsigned short",
    "uint": "unsigned int",
    "ulong": "unsigned long",
    "ulonglong": "unsigned long long",
    "longdouble": "long double",
    "int8": "int8_t",
    "int16": "int16_t",
    "int32": "int32_t",
    "int64": "int64_t",
    "uint8": "uint8_t",
    "uint16": "uint16_t",
    "uint32": "uint32_t",
    "uint64": "uint64_t",
    "size": "size_t",
    "ptrdiff": "ptrdiff_t",
    "complexf": "float complex",
    "complexd": "double complex",
}
TYPED_NAME = re.compile(
    r"^(?P<prefix>shmem_(?:ctx_)?)(?P<suffix>"
    + "|".join(sorted(TYPE_TABLE, key=len, reverse=True))
    + r")_(?P<rest>\w+)$"
)
PLACEHOLDER = "{T}"
# Stand-in for `{T}` while a curated prototype goes through the C reader.
TYPE_TOKEN = "USIS_TYPE_PARAMETER"

COMPAT_OPERATIONS = {
    "start_pes": "init",
    "_my_pe": "my_pe",
    "_num_pes": "n_pes",
    "shmalloc": "malloc",
    "shmemalign": "align",
    "shrealloc": "realloc",
    "shfree": "free",
}
SIZED = re.compile(
    r"^(?P<op>put|get|iput|iget|broadcast|collect|fcollect|alltoalls|alltoall)"
    r"(?P<size>8|16|32|64|128|mem)?(?P<tail>_nbi|_signal|_signal_nbi)?$"
)

SYNC_SIZE_CONSTANT = {
    "barrier": "SHMEM_BARRIER_SYNC_SIZE",
    "sync": "SHMEM_BARRIER_SYNC_SIZE",
    "broadcast": "SHMEM_BCAST_SYNC_SIZE",
    "collect": "SHMEM_COLLECT_SYNC_SIZE",
    "fcollect": "SHMEM_COLLECT_SYNC_SIZE",
    "alltoall": "SHMEM_ALLTOALL_SYNC_SIZE",
    "alltoalls": "SHMEM_ALLTOALLS_SYNC_SIZE",
    "reduction": "SHMEM_REDUCE_SYNC_SIZE",
}

WAIT_OPERATIONS = re.compile(r"^(wait|wait_until|test)(_all|_any|_some)?(_vector)?$")


# ----------------------------------------------------------------------------------------------
# Curated data


def curated_path(name: str) -> str:
    return f"src/usis/curated/shmem/{name}"


@cache
def atomic_operations() -> dict[str, dict[str, Any]]:
    """semantics.atomic of each atomic operation key, OpenSHMEM 1.4 and pre-1.4 names."""
    document = load("shmem/atomics.yaml")
    return {**document["operations"]["table"], **document["legacy"]["table"]}


def is_atomic(operation_key: str) -> bool:
    """An atomic memory operation, blocking or its `_nbi` form."""
    return operation_key.removesuffix("_nbi") in atomic_operations()


@cache
def team_names() -> frozenset[str]:
    """Parameter names of team handles."""
    return frozenset(load("shmem/parameters.yaml")["team_handles"]["names"])


@cache
def parameter_roles() -> Mapping[str, str]:
    roles: Mapping[str, str] = load("shmem/parameters.yaml")["roles"]["table"]
    return roles


def operation_facts(key: str, routine: str) -> Mapping[str, Any]:
    """The curated record of one operation (curated/shmem/operations.yaml); `routine` names the
    routine that asks, for the error."""
    facts: Mapping[str, Any] | None = load("shmem/operations.yaml")["operations"].get(key)
    if facts is None:
        raise ClassifyError(
            f"{routine}: operation {key!r} has no record in {curated_path('operations.yaml')}; "
            "add one (source, rule, api_group, desc, execution and semantics)"
        )
    return facts


# ----------------------------------------------------------------------------------------------
# Routines: header declarations grouped into families, plus the curated 1.5 additions


@dataclass
class Routine:
    """One corpus entry before classification: a concrete routine or a `{T}` family."""

    name: str
    return_type: str
    parameters: list[dict[str, Any]]
    types: list[str] | None
    origin: str  # "header" or "spec-1.5"
    where: str  # header file and line, or the curated source note
    profiling_name: str | None

    @property
    def signature(self) -> str:
        return render_signature(self.name, self.return_type, self.parameters)


def substitute_type(c_type: str, concrete: str) -> str | None:
    """`const int*` with concrete `int` -> `const {T}*`; None when the type is not `concrete`."""
    match = re.fullmatch(r"(?P<quals>(?:(?:const|volatile) )*)(?P<base>.+?)(?P<stars>\**)", c_type)
    if match and match.group("base") == concrete:
        return f"{match.group('quals')}{PLACEHOLDER}{match.group('stars')}"
    return None


def generic_type(types_of: list[tuple[str, str]], where: str) -> str:
    """The family's type at one position, from each member's (type suffix, C type) there.

    The position is `{T}` when every member spells its own C type there; `int pe` stays `int`
    because the long member has `int`, not `long`, in that position.
    """
    substituted = {substitute_type(c_type, TYPE_TABLE[suffix]) for suffix, c_type in types_of}
    if len(substituted) == 1 and None not in substituted:
        return substituted.pop() or ""
    spelled = {c_type for _, c_type in types_of}
    if len(spelled) != 1:
        raise ClassifyError(
            f"{where}: members disagree on a type ({sorted(spelled)}) in a way that is not the "
            "type parameter"
        )
    return spelled.pop()


def group_families(records: list[dict[str, Any]]) -> list[Routine]:
    """Group the header's per-type declarations into `{T}` families; the rest stay concrete.

    A family is every routine whose name differs only in the type suffix. A parameter or return
    type becomes `{T}` where it is the member's own C type in every member; a test checks that
    rendering a family back with each type gives the header's declaration character for character.
    """
    by_template: dict[str, list[tuple[str, dict[str, Any]]]] = defaultdict(list)
    singles: list[dict[str, Any]] = []
    for record in records:
        match = TYPED_NAME.match(record["name"])
        if match:
            template = f"{match.group('prefix')}{PLACEHOLDER}_{match.group('rest')}"
            by_template[template].append((match.group("suffix"), record))
        else:
            singles.append(record)
    routines = [
        Routine(
            name=r["name"],
            return_type=r["return_type"],
            parameters=[dict(p) for p in r["parameters"]],
            types=None,
            origin="header",
            where=f"{r['file']}:{r['line']}",
            profiling_name=r.get("profiling_name"),
        )
        for r in singles
    ]
    for template, members in sorted(by_template.items()):
        _, first = members[0]
        if len(members) == 1:
            raise ClassifyError(
                f"{first['name']}: a typed name with a single member; add its family to TYPE_TABLE "
                "handling or declare it as a concrete routine"
            )

        arities = {len(m["parameters"]) for _, m in members}
        if len(arities) != 1:
            raise ClassifyError(f"{template}: members have different parameter counts {arities}")
        where = f"{template} (first member {first['name']}, {first['file']}:{first['line']})"
        return_type = generic_type([(suffix, m["return_type"]) for suffix, m in members], where)
        parameters = [
            {
                **param,
                "type": generic_type(
                    [(suffix, m["parameters"][i]["type"]) for suffix, m in members], where
                ),
            }
            for i, param in enumerate(first["parameters"])
        ]
        profiling = first.get("profiling_name")
        routines.append(
            Routine(
                name=template,
                return_type=return_type,
                parameters=parameters,
                types=[suffix for suffix, _ in members],
                origin="header",
                where=f"{first['file']}:{first['line']}",
                profiling_name=("p" + template) if profiling else None,
            )
        )
    return routines


def parse_curated_signature(signature: str, where: str) -> Routine:
    text = signature.replace(PLACEHOLDER, TYPE_TOKEN)
    prototype = parse_declaration(text, where)
    if prototype is None:
        raise ClassifyError(f"{where}: not a C prototype: {signature!r}")

    def back(c_type: str) -> str:
        return c_type.replace(TYPE_TOKEN, PLACEHOLDER)

    return Routine(
        name=back(prototype.name),
        return_type=back(prototype.return_type),
        parameters=[
            {"type": back(p.type), "name": p.name, "array": p.array} for p in prototype.parameters
        ],
        types=None,
        origin="spec-1.5",
        where=where,
        profiling_name=None,
    )


def specification_routines(header_families: Mapping[str, list[str]]) -> list[Routine]:
    """The OpenSHMEM 1.5 routines of curated/shmem/spec_1_5.yaml, with sizes and ctx forms."""
    document = load("shmem/spec_1_5.yaml")
    routines: list[Routine] = []
    for index, item in enumerate(document["routines"]):
        where = f"{curated_path('spec_1_5.yaml')} routines[{index}]: {item['source']}"
        signatures = [item["signature"]]
        if "sizes" in item:
            signatures = [item["signature"].replace("{SIZE}", str(size)) for size in item["sizes"]]
        for signature in signatures:
            routine = parse_curated_signature(signature, where)
            if PLACEHOLDER in routine.name:
                if "types" in item:
                    routine.types = list(item["types"])
                elif item.get("types_like") in header_families:
                    routine.types = list(header_families[item["types_like"]])
                else:
                    raise ClassifyError(
                        f"{where}: {routine.name} needs `types` or a `types_like` naming a header "
                        f"family; known families: {sorted(header_families)[:5]}..."
                    )
                unknown = [t for t in routine.types if t not in TYPE_TABLE]
                if unknown:
                    raise ClassifyError(f"{where}: unknown type suffixes {unknown}")
            routines.append(routine)
            if item.get("with_ctx"):
                ctx_form = copy.deepcopy(routine)
                ctx_form.name = "shmem_ctx_" + routine.name.removeprefix("shmem_")
                ctx_form.parameters.insert(
                    0, {"type": "shmem_ctx_t", "name": "ctx", "array": False}
                )
                routines.append(ctx_form)
    return routines


def all_routines(records: list[dict[str, Any]]) -> list[Routine]:
    """The header's routines that OpenSHMEM defines (curated/shmem/extensions.yaml names the
    implementation's own extensions, left out) plus the 1.5 routines the header lacks."""
    excluded = load(f"{MODEL}/extensions.yaml")["excluded"]
    header = [routine for routine in group_families(records) if routine.name not in excluded]
    families = {r.name: r.types for r in header if r.types}
    additions = specification_routines({k: v for k, v in families.items() if v})
    names = {r.name for r in header}
    clashes = sorted(r.name for r in additions if r.name in names)
    if clashes:
        raise ClassifyError(
            f"{curated_path('spec_1_5.yaml')}: routines the header already declares: {clashes}"
        )
    return sorted(header + additions, key=lambda r: r.name)


# ----------------------------------------------------------------------------------------------
# Operation keys


@dataclass(frozen=True)
class Operation:
    """What a routine does, independent of its type suffix, size suffix and context argument."""

    key: str  # e.g. "put", "put_nbi", "atomic_fetch_add", "reduction", "wait_until_any"
    with_ctx: bool
    size: str | None  # "8".."128" or "mem" for sized RMA and collectives
    reduction: str | None  # and/or/.../prod for reductions
    active_set: bool  # PE_start/logPE_stride/PE_size collectives (pre-1.5)


def operation_of(routine: Routine) -> Operation:
    name = routine.name
    if name in COMPAT_OPERATIONS:
        return Operation(COMPAT_OPERATIONS[name], False, None, None, False)
    if not name.startswith("shmem_"):
        raise ClassifyError(f"{name}: not an OpenSHMEM routine name")
    base = name.removeprefix("shmem_")
    with_ctx = base.startswith("ctx_") and base not in {
        "ctx_create",
        "ctx_destroy",
        "ctx_get_team",
    }
    if with_ctx:
        base = base.removeprefix("ctx_")
    base = base.removeprefix(PLACEHOLDER + "_")
    names = {p["name"] for p in routine.parameters}
    active_set = "PE_start" in names
    reduction = re.fullmatch(r"(and|or|xor|max|min|sum|prod)_(to_all|reduce)", base)
    if reduction:
        return Operation("reduction", with_ctx, None, reduction.group(1), active_set)
    sized = SIZED.match(base)
    if sized:
        key = sized.group("op") + (sized.group("tail") or "")
        return Operation(key, with_ctx, sized.group("size"), None, active_set)
    return Operation(base, with_ctx, None, None, active_set)


# ----------------------------------------------------------------------------------------------
# Parameters


BUFFER_NAMES = {
    "target",
    "dest",
    "source",
    "addr",
    "ivars",
    "fetch",
    "sig_addr",
    "lock",
    "ptr",
    "cmp_values",
}
RANK_NAMES = {"pe", "PE_root", "PE_start", "src_pe", "start"}
COUNT_NAMES = {"len", "nelems", "nreduce", "nlong", "count"}
SCALAR_NAMES = {
    "value",
    "cond",
    "cmp_value",
    "signal",
    "logPE_stride",
    "stride",
    "tst",
    "sst",
    "dst",
    "options",
    "hints",
    "config_mask",
    "xaxis_mask",
    "yaxis_mask",
    "xrange",
    "major",
    "minor",
    "align",
    "npes",
}


def parameter_kind(operation: Operation, name: str, c_type: str) -> tuple[str | None, str]:
    """The USIS kind of one parameter and the rule that decided it."""
    if name in {"requested", "provided"}:
        return "THREAD_LEVEL", "param-kind-thread-level"
    if name == "sig_op":
        return "SIG_OP", "param-kind-sig-op"
    if name == "PE_size" or (name == "size" and operation.key.startswith("team_split")):
        return "TEAM_SIZE", "param-kind-team-size"
    if name == "size":
        return "SCALAR", "param-kind-byte-size"
    if name in team_names():
        return "TEAM", "param-kind-team"
    if name in RANK_NAMES:
        return "RANK", "param-kind-rank"
    if name in COUNT_NAMES:
        return "COUNT", "param-kind-count"
    if name == "indices":
        return "INDEX_ARRAY", "param-kind-index-array"
    if name == "name":
        return "STRING", "param-kind-string"
    if name == "status" and operation.key == "global_exit":
        return "SCALAR", "param-kind-exit-status"
    if name in BUFFER_NAMES:
        return "BUFFER", "param-kind-buffer"
    if name in SCALAR_NAMES:
        return "SCALAR", "param-kind-scalar"
    # ctx (no context kind in the vocabulary), cmp (a comparison constant, not a reduction
    # OPERATION), pSync/pWrk (work arrays), status masks and team configs: no fitting kind.
    return None, "param-kind-none"


REMOTE_SIDE = {
    # operation key -> parameters that name the remote (symmetric) object
    "put": {"target", "dest"},
    "put_nbi": {"target", "dest"},
    "p": {"addr"},
    "iput": {"target"},
    "put_signal": {"dest", "sig_addr"},
    "put_signal_nbi": {"dest", "sig_addr"},
    "get": {"source"},
    "get_nbi": {"source"},
    "g": {"addr"},
    "iget": {"source"},
}


def parameter_direction(operation: Operation, name: str, c_type: str) -> str:
    pointer = c_type.endswith("*")
    if not pointer:
        return "in"
    if name in {"pSync", "pWrk", "lock"}:
        return "inout"
    if is_atomic(operation.key):
        if name == "fetch":
            return "out"
        if name in {"dest", "target"}:
            atomic = atomic_operations()[operation.key.removesuffix("_nbi")]["operation"]
            return "out" if atomic == "set" else "inout"
    if c_type.startswith("const") or (name in {"ivars", "sig_addr"} and "wait" in operation.key):
        return "in"
    if name in {"ivars", "ptr", "addr", "cmp_values", "status"}:
        return "in"
    return "out"


def parameter_length(
    operation: Operation, name: str, names: list[str], c_type: str
) -> tuple[str | int | None, str | None]:
    """(length, array_type) of one parameter, per the rules of its operation."""
    key = operation.key
    if name == "pSync":
        constant = SYNC_SIZE_CONSTANT["reduction" if key == "reduction" else key]
        return constant, "fixed"
    if name == "pWrk":
        return "*", "variable"
    if name == "name" and key == "info_get_name":
        return "SHMEM_MAX_NAME_LEN", "fixed"
    if name in {"ivars", "status", "indices", "cmp_values"} and "nelems" in names:
        return "nelems", "variable"
    if name in {"target", "dest", "source"} and c_type.endswith("*"):
        if key in {"iput", "iget", "collect", "alltoall", "alltoalls"}:
            # Strided, gathered or per-PE blocks: the span depends on several parameters.
            return "*", "variable"
        if key == "fcollect" and name in {"target", "dest"}:
            return "*", "variable"
        for count in ("len", "nelems", "nreduce", "nlong"):
            if count in names:
                return count, "variable"
    return None, None


def build_parameters(
    routine: Routine, operation: Operation, notes: Provenance, key: str
) -> list[Parameter]:
    names = [p["name"] for p in routine.parameters]
    parameters = []
    for index, param in enumerate(routine.parameters):
        name, c_type = param["name"], param["type"]
        if name is None:
            raise ClassifyError(f"{key}: parameter {index} has no name in the declaration")
        kind, kind_rule = parameter_kind(operation, name, c_type)
        direction = parameter_direction(operation, name, c_type)
        length, array_type = parameter_length(operation, name, names, c_type)
        pointer = c_type.endswith("*") or bool(param.get("array"))
        if param.get("array") and length is None:
            length, array_type = "*", "variable"
        remote = name in REMOTE_SIDE.get(operation.key, set())
        symmetric = remote or (
            kind in {"BUFFER"}
            and (
                is_atomic(operation.key)
                or operation.key in {"broadcast", "collect", "fcollect", "alltoall", "alltoalls"}
                or operation.key == "reduction"
                or WAIT_OPERATIONS.match(operation.key)
                or operation.key
                in {"signal_fetch", "signal_wait_until", "set_lock", "clear_lock", "test_lock"}
                or operation.key in {"free", "realloc", "ptr", "addr_accessible"}
            )
            and name != "fetch"
        )
        if name in {"pSync", "pWrk"}:
            symmetric = True
        if (pointer and kind == "BUFFER") or name in {"pSync", "pWrk"}:
            memory_space: str | None = "symmetric_heap" if symmetric else "host"
        else:
            memory_space = None
        asynchronous = bool(
            operation.key.endswith("_nbi") and pointer and kind == "BUFFER" and name != "sig_addr"
        )
        value_range = None
        if kind == "RANK" and name == "pe":
            value_range = "0 <= pe < shmem_n_pes()"
        elif name == "PE_root" and operation.active_set:
            value_range = "0 <= PE_root < PE_size"
        elif name == "PE_root":
            value_range = "0 <= PE_root < shmem_team_n_pes(team)"
        elif name == "logPE_stride":
            value_range = "logPE_stride >= 0"
        parameters.append(
            Parameter(
                name=name,
                kind=kind,
                direction=direction,
                desc=parameter_description(operation, name, kind),
                binding_type=binding_type(c_type + ("[]" if param.get("array") else "")),
                asynchronous=asynchronous,
                constant=c_type.startswith("const"),
                pointer=True if pointer else None,
                array_type=array_type,
                length=length,
                root_only=name == "source" and operation.key == "broadcast",
                value_range=value_range,
                memory_space=memory_space,
            )
        )
        # Read from the declaration, recorded by this stage.
        pointer_base = f"/parameters/{index}"
        notes.note(f"{pointer_base}/name", "source", routine.where)
        notes.note(f"{pointer_base}/binding_type/c", "source", routine.where)
        notes.note(f"{pointer_base}/constant", "source", routine.where)
        notes.rule(f"{pointer_base}/kind", kind_rule)
        notes.rule(f"{pointer_base}/direction", "param-direction")
        notes.rule(f"{pointer_base}/length", "param-length")
        notes.rule(f"{pointer_base}/memory_space", "param-memory-space")
        notes.rule(f"{pointer_base}/desc", "param-description")
    return parameters


def parameter_description(operation: Operation, name: str, kind: str | None) -> str | None:
    if operation.key == "global_exit" and name == "status":
        return "the exit status returned to the environment"
    if operation.key in {"p", "g"} and name == "addr":
        return "the symmetric data object on the target PE"
    role = parameter_roles().get(name)
    return role[0].upper() + role[1:] + "." if role else None


# ----------------------------------------------------------------------------------------------
# Sections


@dataclass
class Classified:
    api_group: str | None
    execution: dict[str, Any]
    semantics: dict[str, Any]
    description: str
    rule: str


def type_phrase(routine: Routine, operation: Operation) -> str:
    if routine.types:
        return f"{PLACEHOLDER} elements"
    if operation.size == "mem":
        return "bytes"
    if operation.size:
        return f"{operation.size}-bit elements"
    return "elements"


def classify_operation(routine: Routine, operation: Operation) -> Classified:
    """Execution, semantics, api_group and description of one routine, from the curated record of
    its operation (curated/shmem/operations.yaml) and, for an atomic, curated/shmem/atomics.yaml."""
    facts = operation_facts(operation.key, routine.name)
    semantics = {**empty_semantics(), **copy.deepcopy(facts.get("semantics", {}))}
    if facts["rule"] == "atomic":
        semantics["atomic"] = dict(atomic_operations()[operation.key.removesuffix("_nbi")])
    description = facts["desc"].format(
        things=type_phrase(routine, operation),
        on_ctx=" on a communication context" if operation.with_ctx else "",
        over="an active set of PEs" if operation.active_set else "a team",
        op=operation.reduction,
    )
    section = execution(launch="cpu", runs_on="cpu", thread_safety="single", **facts["execution"])
    return Classified(facts["api_group"], section, semantics, description, facts["rule"])


def return_section(routine: Routine, operation: Operation) -> tuple[dict[str, Any], str]:
    c_type = routine.return_type
    key = operation.key

    def result(
        kind: str, value_kind: str | None, successes: list[str], rule: str
    ) -> tuple[dict[str, Any], str]:
        return returns(kind, binding_type(c_type), value_kind=value_kind, successes=successes), rule

    if c_type == "void":
        return result("void", None, [], "return-void")
    if key in {"my_pe", "team_my_pe", "team_translate_pe"}:
        return result("value", "RANK", [], "return-rank")
    if key in {"n_pes", "team_n_pes"}:
        return result("value", "TEAM_SIZE", [], "return-team-size")
    if key in {"pe_accessible", "addr_accessible", "test_lock"} or (
        key.startswith("test") and c_type == "int"
    ):
        return result("bool", None, ["0", "1"], "return-predicate")
    if c_type.endswith("*"):
        return result("RESULT", None, [], "return-address")
    if c_type == "int":
        # Status returns of 1.4/1.5 routines: zero on success, nonzero otherwise; the
        # specification names no error classes.
        return result("ERROR_CODE", None, ["0"], "return-status")
    return result("value", None, [], "return-datum")


def build_entry(
    routine: Routine,
    version: dict[str, Any],
    notes: Provenance,
) -> tuple[dict[str, Any], Operation, Classified]:
    operation = operation_of(routine)
    classified = classify_operation(routine, operation)
    key = f"{MODEL}:{routine.name}"
    parameters = build_parameters(routine, operation, notes, key)
    returned, return_rule = return_section(routine, operation)
    buffers = [p for p in parameters if p.kind == "BUFFER" and p.pointer]
    if not buffers:
        aliasing = None
    elif operation.key == "reduction":
        aliasing = "in_place_only"
    elif len(buffers) == 1:
        aliasing = "allowed"
    else:
        aliasing = "forbidden"
    dependencies = []
    if operation.with_ctx or operation.key in {"ctx_destroy", "ctx_get_team"}:
        dependencies.append(
            context_dependency(
                "execution.thread_safety",
                "single",
                ["the options the context was created with"],
                "A context created with SHMEM_CTX_PRIVATE may be used only by the thread "
                "that created it, and one created with SHMEM_CTX_SERIALIZED only by one "
                "thread at a time; otherwise the library's provided thread level applies.",
            )
        )
    if operation.key == "ptr":
        dependencies.append(
            context_dependency(
                "return.kind",
                "RESULT",
                ["whether the target PE's memory is reachable by load/store"],
                "The address is null when the target PE is not directly addressable.",
            )
        )
    entry = EntryBuilder(
        identity=Identity(
            MODEL,
            routine.name,
            api_group=classified.api_group,
            since=version["since"],
            deprecated_in=version["deprecated_in"],
            standard_refs=version["standard_refs"],
            desc=classified.description,
            type_family=list(routine.types) if routine.types else None,
        ),
        bindings=c_bindings(HEADER, routine.signature),
        execution=classified.execution,
        semantics=classified.semantics,
        parameters=parameters,
        returns=returned,
        tool_integration=ToolIntegration(
            profiling_name=routine.profiling_name,
            invariants=invariants(operation, [str(p.name) for p in parameters]),
            buffer_aliasing=aliasing,
            context_dependencies=dependencies,
        ),
        relationships=Relationships(superseded_by=version["superseded_by"]),
    ).build()
    # Values read from the declaration (or the curated 1.5 prototype), recorded by this stage.
    notes.note("/identity/name", "source", routine.where)
    notes.note("/bindings/c/signature", "source", routine.where)
    notes.note("/return/binding_type/c", "source", routine.where)
    notes.rule("/return/kind", return_rule)
    notes.rule("/identity/api_group", classified.rule)
    notes.rule("/identity/desc", classified.rule)
    notes.rule("/execution", classified.rule)
    notes.rule("/semantics", classified.rule)
    notes.rule("/tool_integration/buffer_aliasing", "buffer-aliasing")
    if routine.types:
        notes.note("/identity/type_family", "source", routine.where)
    if routine.profiling_name:
        notes.note("/tool_integration/profiling_name", "source", "pshmem.h")
    for field, pointer in (
        ("since", "/identity/since"),
        ("deprecated_in", "/identity/deprecated_in"),
        ("superseded_by", "/relationships/superseded_by"),
    ):
        notes.curated(pointer, version["from"][field])
    notes.curated("/identity/standard_refs", version["refs_from"])
    judgements(entry, operation, aliasing, notes)
    return entry, operation, classified


def invariants(operation: Operation, names: list[str]) -> list[str]:
    """Preconditions the specification states, in the reference grammar."""
    found = []
    if "pe" in names:
        found.append("param:pe >= 0")
    if "PE_size" in names:
        found.append("param:PE_size > 0")
    if "logPE_stride" in names:
        found.append("param:logPE_stride >= 0")
    if "PE_root" in names and "PE_size" in names:
        found.append("param:PE_root < param:PE_size")
    return found


def judgements(
    entry: dict[str, Any], operation: Operation, aliasing: str | None, notes: Provenance
) -> None:
    """Mark the values the specification does not settle as judgements, with the reason."""
    memory_section = entry["semantics"]["memory"]
    key = operation.key
    if memory_section and key.endswith("_nbi"):
        notes.judgement(
            "/semantics/memory/local_completion",
            "a nonblocking OpenSHMEM call's buffers are released by shmem_quiet, the model's "
            "flush, so after_flush is the closest value of the vocabulary",
        )
        notes.judgement(
            "/execution/completion",
            "an _nbi call leaves no request handle but is incomplete on return; ic is the "
            "closest value",
        )
    if entry["semantics"]["one_sided"]:
        notes.judgement(
            "/semantics/one_sided/epoch_type",
            "OpenSHMEM has no access epochs; every RMA call is implicitly inside one",
        )
        if key.startswith("put_signal"):
            notes.judgement(
                "/semantics/one_sided/ordering",
                "the signal update is delivered after the data, a release-like ordering",
            )
    if entry["semantics"]["collective"] and key == "reduction":
        notes.judgement(
            "/semantics/collective/reduction_op",
            "false: the operator is fixed by the routine name, not passed as a parameter, and "
            "the field asks for an operator parameter",
        )
    if aliasing in {"allowed", "forbidden"}:
        notes.judgement(
            "/tool_integration/buffer_aliasing",
            "the specification states no aliasing rule for this routine; a single-buffer call "
            "is recorded as allowed and a multi-buffer call as forbidden",
        )
    if memory_section:
        notes.judgement(
            "/semantics/memory/memory_model",
            "OpenSHMEM's memory model is weak: ordering comes only from fence, quiet, "
            "barriers and locks, recorded as relaxed (locks release_acquire)",
        )
    if entry["execution"]["thread_safety"] == "single":
        notes.judgement(
            "/execution/thread_safety",
            "every routine may be called at SHMEM_THREAD_SINGLE, the lowest level",
        )


# ----------------------------------------------------------------------------------------------
# Versions, references, relationships


@cache
def version_rules() -> list[tuple[re.Pattern[str], dict[str, Any], int]]:
    document = load("shmem/versions.yaml")
    return [
        (re.compile(rule["match"]), rule, index) for index, rule in enumerate(document["rules"])
    ]


def version_of(
    routine: Routine, operation: Operation, names: frozenset[str] = frozenset()
) -> dict[str, Any]:
    if routine.origin == "spec-1.5":
        return {
            "since": SPEC_1_5,
            "deprecated_in": None,
            "superseded_by": None,
            "from": dict.fromkeys(("since", "deprecated_in", "superseded_by"), routine.where),
            # The section the curated source names, whole (a table caption has commas too).
            "standard_refs": [f"{SPEC_1_5} {routine.where.removeprefix('OpenSHMEM 1.5, ')}"],
            "refs_from": routine.where,
        }
    for pattern, rule, index in version_rules():
        if not pattern.search(routine.name):
            continue
        origin = f"{curated_path('versions.yaml')} rules[{index}]: {rule['source']}"
        judged = rule.get("judgement", {})
        unknown = sorted(set(judged) - {"since", "deprecated_in", "superseded_by"})
        if unknown:
            raise ClassifyError(
                f"{curated_path('versions.yaml')} rules[{index}]: judgement names {unknown}; "
                "expected since, deprecated_in or superseded_by"
            )
        origins = {
            field: f"judgement: {judged[field]} ({origin})" if field in judged else origin
            for field in ("since", "deprecated_in", "superseded_by")
        }
        replacement = rule.get("superseded_by")
        if isinstance(replacement, dict):
            replacement = next(
                (
                    target
                    for word, target in replacement.items()
                    if routine.name == word or routine.name.endswith("_" + word)
                ),
                None,
            )
        if isinstance(replacement, str) and "{op}" in replacement:
            replacement = replacement.replace("{op}", operation.reduction or "")
        return {
            "since": rule.get("since"),
            "deprecated_in": rule.get("deprecated_in"),
            "superseded_by": f"{MODEL}:{replacement}" if replacement else None,
            "from": origins,
            "standard_refs": standard_refs(routine, operation, rule, names),
            "refs_from": f"classify/shmem.py rule standard-refs (routine name as the specification spells it, {rule['source']})",
        }
    raise ClassifyError(
        f"{routine.name}: no rule of {curated_path('versions.yaml')} matches; add one saying "
        "when the routine appeared"
    )


def standard_refs(
    routine: Routine,
    operation: Operation,
    rule: Mapping[str, Any],
    names: frozenset[str] = frozenset(),
) -> list[str]:
    """Cite the specification that defines the routine, by the routine's upper-case name;
    `names` are the names of every routine, to tell a ctx form from a ctx routine."""
    since = rule.get("since")
    if since is None:
        return []
    # The specification spells a typed routine shmem_TYPENAME_op and documents a ctx form with
    # its plain routine; shmem_ctx_create and the like have no plain routine and keep their name.
    spelled = routine.name.replace(PLACEHOLDER, "TYPENAME")
    plain = "shmem_" + routine.name.removeprefix("shmem_ctx_")
    if routine.name.startswith("shmem_ctx_") and plain in names:
        spelled = plain.replace(PLACEHOLDER, "TYPENAME")
    citation = since if rule.get("deprecated_in") else "OpenSHMEM-1.5"
    return [f"{citation} {spelled}"]


def drop_partial_replacements(
    entries: dict[str, dict[str, Any]], notes: dict[str, Provenance]
) -> None:
    """A family may name a replacement family only if that family has every one of its types.

    Concretization points each member at the same type's replacement; one member without a
    counterpart would name a key the corpus lacks, so the family records no replacement and
    provenance says why (the and/or/xor active-set reductions: their signed types have no
    1.5 bitwise reduction).
    """
    members = {
        family.replace(PLACEHOLDER, suffix)
        for family, entry in entries.items()
        for suffix in entry["identity"]["type_family"] or []
    }
    for key, entry in entries.items():
        target = entry["relationships"]["superseded_by"]
        if target is None:
            continue
        if target not in entries and target not in members:
            raise ClassifyError(f"{key}: superseded_by {target} is not in the corpus")
        own = set(entry["identity"]["type_family"] or [])
        theirs = (
            set(entries[target]["identity"]["type_family"] or []) if target in entries else set()
        )
        missing = sorted(own - theirs)
        if own and missing:
            entry["relationships"]["superseded_by"] = None
            notes[key].judgement(
                "/relationships/superseded_by",
                f"{target} lacks the types {missing}, so no per-type replacement can be named "
                "for the whole family",
            )


def link_variants(entries: dict[str, dict[str, Any]], notes: dict[str, Provenance]) -> None:
    """Point each blocking call at its _nbi form and back, where both are in the corpus."""
    for key, entry in entries.items():
        name = entry["identity"]["name"]
        candidates = []
        if re.search(r"_(signal|atomic_\w+)$|_(put|get)(\d+|mem)?$", name):
            candidates.append(name + "_nbi")
        match = re.match(r"^(shmem_(?:ctx_)?(?:\{T\}_)?)(put|get)(\d+|mem)?$", name)
        if match:
            candidates.append(f"{match.group(1)}{match.group(2)}{match.group(3) or ''}_nbi")
        for candidate in candidates:
            other = f"{MODEL}:{candidate}"
            if other in entries and other != key:
                entry["relationships"]["variants"]["nonblocking"] = other
                entries[other]["relationships"]["variants"]["blocking"] = key
                notes[key].rule("/relationships/variants/nonblocking", "variant-nbi")
                notes[other].rule("/relationships/variants/blocking", "variant-nbi")
                break


# ----------------------------------------------------------------------------------------------
# Formal assignments


@cache
def formal_rules() -> list[dict[str, Any]]:
    return list(load("shmem/formal.yaml")["assignments"])


def formal_assignment(
    routine: Routine, operation: Operation, entry: dict[str, Any]
) -> tuple[dict[str, Any] | None, str | None]:
    """The shape assignment of curated/shmem/formal.yaml that fits this routine, if any."""
    names = {p["name"] for p in routine.parameters}
    atomic = entry["semantics"]["atomic"]
    for index, rule in enumerate(formal_rules()):
        if operation.key not in rule["operations"]:
            continue
        if rule.get("requires_parameters") and not set(rule["requires_parameters"]) <= names:
            continue
        if rule["shape_ref"] not in shape_ids():
            return None, None
        datatype = (
            f"type:{PLACEHOLDER}"
            if routine.types
            else ("type:byte" if operation.size in (None, "mem") else f"type:bits{operation.size}")
        )
        bindings = curated_bindings(
            rule["bindings"],
            datatype,
            atomic_operation=atomic["operation"] if atomic else "replace",
            reduction=operation.reduction,
        )
        return {"shape_ref": rule["shape_ref"], "bindings": bindings}, (
            f"{curated_path('formal.yaml')} assignments[{index}]"
        )
    return None, None


# ----------------------------------------------------------------------------------------------
# The stage


def classify(extracted: dict[str, Any]) -> dict[str, Any]:
    """Turn the extracted OpenSHMEM declarations into complete entries with provenance."""
    if extracted.get("model") != MODEL:
        raise ClassifyError(
            f"classify.shmem: expected model 'shmem', got {extracted.get('model')!r}"
        )
    routines = all_routines(extracted["records"])
    entries: dict[str, dict[str, Any]] = {}
    notes: dict[str, Provenance] = {}
    formal: dict[str, dict[str, Any]] = {}
    families: dict[str, dict[str, Any]] = {}
    names = frozenset(routine.name for routine in routines)
    for routine in routines:
        key = f"{MODEL}:{routine.name}"
        entry_notes = Provenance("classify/shmem.py")
        operation = operation_of(routine)
        version = version_of(routine, operation, names)
        entry, operation, _ = build_entry(routine, version, entry_notes)
        entries[key] = entry
        notes[key] = entry_notes
        assignment, origin = formal_assignment(routine, operation, entry)
        if assignment is not None and origin is not None:
            formal[key] = assignment
            entry_notes.curated("/semantics/formal", origin)
        if routine.types:
            families[key] = {
                "types": [
                    {"name": suffix, "c_type": TYPE_TABLE[suffix]} for suffix in routine.types
                ]
            }
    link_variants(entries, notes)
    drop_partial_replacements(entries, notes)
    return {
        "model": MODEL,
        "sources": extracted["sources"],
        "entries": entries,
        "formal": formal,
        "families": families,
        "provenance": {key: n.sorted_records() for key, n in sorted(notes.items())},
    }
