"""Classify the OpenSHMEM declarations into complete USIS entries, one per routine or `{T}` family.

Families are found in the header itself (the same routine declared once per type suffix), the
OpenSHMEM 1.5 routines the header lacks come from curated/shmem/spec_1_5.yaml, and every semantic
field is set by a named rule of this module or a curated fact, recorded in the provenance map.
Also holds `concretize`, which expands `{T}` families into one entry per concrete type.
"""

from __future__ import annotations

import copy
import json
import re
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import yaml

from usis.classify.common import ATOMIC_OPERATIONS as OPENSHMEM_ATOMICS
from usis.classify.common import TEAM_NAMES, empty_semantics, memory, null_variants
from usis.extract.shmem import parse_prototype, render_signature

MODEL = "shmem"
HEADER = "shmem.h"
SPEC_1_5 = "OpenSHMEM-1.5"
CURATED = "usis.curated.shmem"

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
    "my_pe": "my_pe",
    "_num_pes": "n_pes",
    "num_pes": "n_pes",
    "shmalloc": "malloc",
    "shmemalign": "align",
    "shrealloc": "realloc",
    "shfree": "free",
    "globalexit": "global_exit",
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

REDUCTION_OPS = ("and", "or", "xor", "max", "min", "sum", "prod")
ATOMIC_OPERATIONS = {
    **OPENSHMEM_ATOMICS,
    # Pre-1.4 names of the same operations.
    "swap": ("swap", True, False),
    "cswap": ("cswap", True, True),
    "fadd": ("fetch_add", True, False),
    "finc": ("fetch_inc", True, False),
    "add": ("add", False, False),
    "inc": ("inc", False, False),
    "fetch": ("fetch", True, False),
    "set": ("set", False, False),
}
QUERY_OPERATIONS = {
    "my_pe",
    "n_pes",
    "query_thread",
    "info_get_version",
    "info_get_name",
    "pe_accessible",
    "addr_accessible",
    "ptr",
    "team_my_pe",
    "team_n_pes",
    "team_get_config",
    "team_translate_pe",
    "ctx_get_team",
}
ALLOCATION_OPERATIONS = {"malloc", "calloc", "align", "realloc", "free", "malloc_with_hints"}
CACHE_OPERATIONS = {
    "udcflush",
    "udcflush_line",
    "set_cache_inv",
    "set_cache_line_inv",
    "clear_cache_inv",
    "clear_cache_line_inv",
}
MANAGEMENT_OPERATIONS = {
    "init",
    "init_thread",
    "finalize",
    "global_exit",
    "ctx_create",
    "ctx_destroy",
    "team_split_strided",
    "team_split_2d",
    "team_destroy",
    "team_create_ctx",
    *ALLOCATION_OPERATIONS,
    *CACHE_OPERATIONS,
}
COLLECTIVE_MANAGEMENT = {
    "init",
    "init_thread",
    "finalize",
    "team_split_strided",
    "team_split_2d",
    "team_destroy",
    *ALLOCATION_OPERATIONS,
}
WAIT_OPERATIONS = re.compile(r"^(wait|wait_until|test)(_all|_any|_some)?(_vector)?$")


class ClassifyError(ValueError):
    """A declaration or curated fact the OpenSHMEM classifier cannot place; says which and why."""


# ----------------------------------------------------------------------------------------------
# Curated data


@cache
def curated_document(name: str) -> Any:
    return yaml.safe_load(resources.files(CURATED).joinpath(name).read_text())


def curated_path(name: str) -> str:
    return f"src/usis/curated/shmem/{name}"


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
    prototype = parse_prototype(0, text, frozenset(), where)
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
    document = curated_document("spec_1_5.yaml")
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
    header = group_families(records)
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
# Provenance helpers


@dataclass
class Notes:
    """Provenance records of one entry, keyed by JSON pointer."""

    records: dict[str, dict[str, str]]

    def add(self, pointer: str, method: str, origin: str) -> None:
        self.records[pointer] = {"stage": "classify", "method": method, "from": origin}

    def rule(self, pointer: str, rule_id: str) -> None:
        self.add(pointer, "rule", f"classify/shmem.py rule {rule_id}")

    def judgement(self, pointer: str, reason: str) -> None:
        self.add(pointer, "rule", f"judgement: {reason}")


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
    if name in TEAM_NAMES:
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
    if operation.key in ATOMIC_OPERATIONS or operation.key.removesuffix("_nbi") in (
        ATOMIC_OPERATIONS
    ):
        if name == "fetch":
            return "out"
        if name in {"dest", "target"}:
            atomic = ATOMIC_OPERATIONS[operation.key.removesuffix("_nbi")][0]
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
    routine: Routine, operation: Operation, notes: Notes, key: str
) -> list[dict[str, Any]]:
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
                operation.key in ATOMIC_OPERATIONS
                or operation.key.removesuffix("_nbi") in ATOMIC_OPERATIONS
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
            {
                "name": name,
                "kind": kind,
                "direction": direction,
                "desc": parameter_description(operation, name, kind),
                "binding_type": {
                    "c": c_type + ("[]" if param.get("array") else ""),
                    "fortran90": None,
                    "fortran08": None,
                    "lis": None,
                    "cpp": None,
                },
                "asynchronous": asynchronous,
                "constant": c_type.startswith("const"),
                "pointer": True if pointer else None,
                "array_type": array_type,
                "func_type": None,
                "length": length,
                "parameter_bindings": ["c"],
                "root_only": name == "source" and operation.key == "broadcast",
                "constraints": {"not_null": None, "value_range": value_range, "paired_with": None},
                "memory_space": memory_space,
            }
        )
        pointer_base = f"/parameters/{index}"
        notes.add(f"{pointer_base}/name", "source", routine.where)
        notes.add(f"{pointer_base}/binding_type/c", "source", routine.where)
        notes.add(f"{pointer_base}/constant", "source", routine.where)
        notes.rule(f"{pointer_base}/kind", kind_rule)
        notes.rule(f"{pointer_base}/direction", "param-direction")
        notes.rule(f"{pointer_base}/length", "param-length")
        notes.rule(f"{pointer_base}/memory_space", "param-memory-space")
        notes.rule(f"{pointer_base}/desc", "param-description")
    return parameters


PARAMETER_ROLES = {
    "target": "the data object written by the call",
    "dest": "the data object written by the call",
    "source": "the data object read by the call",
    "addr": "the symmetric data object accessed on the target PE",
    "value": "the operand value",
    "cond": "the value compared with the target before the swap",
    "pe": "the PE number of the target PE",
    "len": "the number of elements to transfer",
    "nelems": "the number of elements",
    "nreduce": "the number of elements reduced",
    "nlong": "the number of elements transferred",
    "tst": "the stride between consecutive target elements",
    "sst": "the stride between consecutive source elements",
    "dst": "the stride between consecutive destination elements",
    "PE_root": "the PE whose data is broadcast",
    "PE_start": "the lowest PE number of the active set",
    "logPE_stride": "the log2 of the stride between PEs of the active set",
    "PE_size": "the number of PEs in the active set",
    "pSync": "a symmetric work array of synchronization flags",
    "pWrk": "a symmetric work array for the reduction",
    "ctx": "the communication context the operation is issued on",
    "team": "the team the operation runs over",
    "ivars": "the symmetric variables waited on",
    "cmp": "the comparison operator (SHMEM_CMP_*)",
    "cmp_value": "the value the variables are compared with",
    "cmp_values": "the values the variables are compared with, one per variable",
    "status": "a mask that excludes variables from the test (nonzero: excluded)",
    "indices": "receives the indices of the variables that satisfied the comparison",
    "sig_addr": "the symmetric signal object",
    "signal": "the value used to update the signal object",
    "sig_op": "the signal update operation (SHMEM_SIGNAL_SET or SHMEM_SIGNAL_ADD)",
    "fetch": "receives the prior value of the target object",
    "lock": "the symmetric lock variable",
    "requested": "the thread support level requested",
    "provided": "receives the thread support level provided",
    "size": "the size in bytes",
    "count": "the number of elements",
    "align": "the alignment in bytes",
    "ptr": "a symmetric address",
    "options": "the context options (SHMEM_CTX_*)",
    "hints": "allocation hints (SHMEM_MALLOC_*)",
    "major": "receives the major version of the specification",
    "minor": "receives the minor version of the specification",
    "name": "receives the vendor-defined name string",
    "npes": "ignored; kept for compatibility",
    "parent_team": "the team split",
    "start": "the lowest PE number of the subset of the parent team",
    "stride": "the stride between PE numbers of the subset",
    "config": "the team configuration",
    "config_mask": "which members of config are set",
    "new_team": "receives the new team handle",
    "xrange": "the number of PEs along the x dimension",
    "xaxis_config": "the configuration of the x-axis teams",
    "xaxis_mask": "which members of xaxis_config are set",
    "xaxis_team": "receives the x-axis team",
    "yaxis_config": "the configuration of the y-axis teams",
    "yaxis_mask": "which members of yaxis_config are set",
    "yaxis_team": "receives the y-axis team",
    "src_team": "the team src_pe is numbered in",
    "src_pe": "a PE number in src_team",
    "dest_team": "the team to translate the PE number into",
}


def parameter_description(operation: Operation, name: str, kind: str | None) -> str | None:
    if operation.key == "global_exit" and name == "status":
        return "the exit status returned to the environment"
    if operation.key in {"p", "g"} and name == "addr":
        return "the symmetric data object on the target PE"
    role = PARAMETER_ROLES.get(name)
    return role[0].upper() + role[1:] + "." if role else None


# ----------------------------------------------------------------------------------------------
# Sections


def heap_memory(
    local: str,
    remote: str | None,
    reuse: str,
    fence: str = "none",
    model: str | None = "relaxed",
) -> dict[str, Any]:
    """semantics.memory of a routine on the symmetric heap; relaxed unless said otherwise."""
    return memory(local, remote, reuse, fence, symmetric_heap=True, model=model)


COLLECTIVE_TYPES = {
    "broadcast": ("broadcast", True, "one_to_all"),
    "collect": ("allgather", False, "all_to_all"),
    "fcollect": ("allgather", False, "all_to_all"),
    "alltoall": ("alltoall", False, "all_to_all"),
    "alltoalls": ("alltoall", False, "all_to_all"),
    "reduction": ("allreduce", False, "all_to_all"),
}


@dataclass
class Classified:
    api_group: str | None
    execution: dict[str, Any]
    semantics: dict[str, Any]
    description: str
    rule: str


def execution(
    *,
    blocking: bool,
    collective: bool,
    locality: str | None,
    completion: str | None,
    procedure_class: str | None,
) -> dict[str, Any]:
    return {
        "blocking": blocking,
        "execute_once": False,
        "collective": collective,
        "thread_safety": "single",
        "launch": "cpu",
        "runs_on": "cpu",
        "gpu_scope": None,
        "stages": None,
        "locality": locality,
        "completion": completion,
        "procedure_class": procedure_class,
    }


def one_sided_execution(nbi: bool, locality: str) -> dict[str, Any]:
    """execution of a put, get or atomic; the `_nbi` form returns before it completes."""
    return execution(
        blocking=not nbi,
        collective=False,
        locality=locality,
        completion="ic" if nbi else "c",
        procedure_class="nb-op" if nbi else "b-op",
    )


def type_phrase(routine: Routine, operation: Operation) -> str:
    if routine.types:
        return f"{PLACEHOLDER} elements"
    if operation.size == "mem":
        return "bytes"
    if operation.size:
        return f"{operation.size}-bit elements"
    return "elements"


def classify_operation(routine: Routine, operation: Operation) -> Classified:
    """Execution, semantics, api_group and description of one routine, by operation rules."""
    key = operation.key
    nbi = key.endswith("_nbi")
    semantics = empty_semantics()
    things = type_phrase(routine, operation)
    on_ctx = " on a communication context" if operation.with_ctx else ""

    # Remote memory access.
    if key in {"put", "put_nbi", "p", "iput", "put_signal", "put_signal_nbi"}:
        signal = key.startswith("put_signal")
        semantics["one_sided"] = {
            "operation": "put",
            "epoch_type": "implicit",
            "ordering": "release_acquire" if signal else "none",
        }
        semantics["memory"] = heap_memory(
            "after_flush" if nbi else "after_return",
            "after_quiet",
            "after_flush" if nbi else "after_return",
        )
        description = {
            "put": f"Copies contiguous {things} from a local buffer to a symmetric object on another PE{on_ctx}.",
            "put_nbi": f"Starts copying contiguous {things} from a local buffer to a symmetric object on another PE{on_ctx}, returning before the source may be reused.",
            "p": f"Writes a single value to a symmetric object on another PE{on_ctx}.",
            "iput": f"Copies strided {things} from a local buffer to a symmetric object on another PE{on_ctx}.",
            "put_signal": f"Copies contiguous {things} to a symmetric object on another PE{on_ctx} and then updates a signal object there.",
            "put_signal_nbi": f"Starts copying contiguous {things} to a symmetric object on another PE{on_ctx} followed by a signal update, without waiting for the source to be reusable.",
        }[key]
        return Classified(
            "one_sided",
            one_sided_execution(nbi, "both"),
            semantics,
            description,
            "rma-put",
        )
    if key in {"get", "get_nbi", "g", "iget"}:
        semantics["one_sided"] = {"operation": "get", "epoch_type": "implicit", "ordering": "none"}
        semantics["memory"] = heap_memory(
            "after_flush" if nbi else "after_return",
            None,
            "after_flush" if nbi else "after_return",
        )
        description = {
            "get": f"Copies contiguous {things} from a symmetric object on another PE into a local buffer{on_ctx}.",
            "get_nbi": f"Starts copying contiguous {things} from a symmetric object on another PE into a local buffer{on_ctx}; the data arrives by the next quiet.",
            "g": f"Reads and returns a single value from a symmetric object on another PE{on_ctx}.",
            "iget": f"Copies strided {things} from a symmetric object on another PE into a local buffer{on_ctx}.",
        }[key]
        return Classified(
            "one_sided",
            one_sided_execution(nbi, "both"),
            semantics,
            description,
            "rma-get",
        )

    # Atomic memory operations.
    atomic_key = key.removesuffix("_nbi")
    if atomic_key in ATOMIC_OPERATIONS:
        operation_name, fetch, compare = ATOMIC_OPERATIONS[atomic_key]
        semantics["atomic"] = {"operation": operation_name, "fetch": fetch, "compare": compare}
        reads_only = operation_name == "fetch"
        if reads_only:
            remote = None
        elif fetch and not nbi:
            # The prior value comes back only once the update has happened at the target.
            remote = "after_return"
        else:
            remote = "after_quiet"
        semantics["memory"] = heap_memory(
            "after_flush" if nbi else "after_return",
            remote,
            "after_flush" if nbi else "after_return",
        )
        target = f"a symmetric object on another PE{on_ctx}"
        action = {
            "fetch": f"Atomically reads {target}",
            "set": f"Atomically writes a value to {target}",
            "swap": f"Atomically writes a value to {target}",
            "cswap": f"Atomically writes a value to {target} if the object equals a comparison value",
            "fetch_add": f"Atomically adds a value to {target}",
            "add": f"Atomically adds a value to {target}",
            "fetch_inc": f"Atomically increments {target}",
            "inc": f"Atomically increments {target}",
            "and": f"Atomically applies a bitwise AND with a value to {target}",
            "fetch_and": f"Atomically applies a bitwise AND with a value to {target}",
            "or": f"Atomically applies a bitwise OR with a value to {target}",
            "fetch_or": f"Atomically applies a bitwise OR with a value to {target}",
            "xor": f"Atomically applies a bitwise XOR with a value to {target}",
            "fetch_xor": f"Atomically applies a bitwise XOR with a value to {target}",
        }[operation_name]
        if not fetch:
            description = action + "."
        elif nbi:
            description = (
                action + ", delivering its prior value to a local buffer by the next quiet."
            )
        elif reads_only:
            description = action + " and returns its value."
        else:
            description = action + " and returns its prior value."
        return Classified(
            "one_sided",
            one_sided_execution(nbi, "both" if fetch else "remote"),
            semantics,
            description,
            "atomic",
        )
    if key == "signal_fetch":
        semantics["atomic"] = {"operation": "fetch", "fetch": True, "compare": False}
        semantics["memory"] = heap_memory("after_return", None, "after_return")
        return Classified(
            "one_sided",
            execution(
                blocking=True,
                collective=False,
                locality="local",
                completion="c",
                procedure_class="b-op",
            ),
            semantics,
            "Atomically reads and returns the value of a local signal object.",
            "signal-fetch",
        )

    # Point-to-point synchronization.
    wait = WAIT_OPERATIONS.match(key)
    if wait or key == "signal_wait_until":
        testing = key.startswith("test")
        semantics["memory"] = heap_memory("after_return", None, "after_return", model=None)
        if key == "signal_wait_until":
            description = (
                "Waits until a local signal object satisfies a comparison and returns its value."
            )
        else:
            scope = {
                None: "a symmetric variable",
                "_all": "every variable of a set",
                "_any": "any one variable of a set",
                "_some": "at least one variable of a set",
            }[wait.group(2) if wait else None]
            against = " against per-variable values" if wait and wait.group(3) else ""
            if testing:
                description = (
                    f"Tests without blocking whether {scope} satisfies a comparison{against}."
                )
            elif key == "wait":
                description = "Waits until a symmetric variable differs from a given value."
            else:
                description = f"Waits until {scope} satisfies a comparison{against}."
        return Classified(
            "synchronization",
            execution(
                blocking=not testing,
                collective=False,
                locality="local",
                completion="c",
                procedure_class="b-op" if not testing else None,
            ),
            semantics,
            description,
            "point-to-point-sync",
        )

    # Ordering and completion.
    if key in {"fence", "quiet"}:
        semantics["memory"] = heap_memory(
            "after_return",
            None,
            "after_return",
            fence="remote" if key == "fence" else "both",
            model=None,
        )
        description = (
            f"Orders the puts, atomics and stores issued before it{on_ctx} ahead of those issued after it, per target PE."
            if key == "fence"
            else f"Waits until every put, atomic and nonblocking get issued before it{on_ctx} is complete everywhere."
        )
        return Classified(
            "synchronization",
            execution(
                blocking=True,
                collective=False,
                locality="both",
                completion="c",
                procedure_class="b-op",
            ),
            semantics,
            description,
            "fence-quiet",
        )
    if key in {"barrier", "barrier_all", "sync", "sync_all", "team_sync"}:
        completes = key.startswith("barrier")
        semantics["memory"] = heap_memory(
            "after_return",
            None,
            "after_return",
            fence="both" if completes else "none",
            model=None,
        )
        who = {
            "barrier": "the PEs of an active set",
            "barrier_all": "all PEs",
            "sync": "the PEs of an active set",
            "sync_all": "all PEs",
            "team_sync": "the PEs of a team",
        }[key]
        description = (
            f"Completes all outstanding updates and then blocks until {who} have reached the barrier."
            if completes
            else f"Blocks until {who} have reached the same synchronization point, without completing outstanding updates."
        )
        return Classified(
            "collective",
            execution(
                blocking=True,
                collective=True,
                locality="both",
                completion="c",
                procedure_class="b-op",
            ),
            semantics,
            description,
            "barrier-sync",
        )

    # Collectives.
    if key in COLLECTIVE_TYPES:
        collective_type, root, shape = COLLECTIVE_TYPES[key]
        is_reduction = key == "reduction"
        semantics["collective"] = {
            "type": collective_type,
            "root_involved": root,
            "in_place": is_reduction,
            "comm_scope": "intracommunicator",
            "algorithm_class": shape,
            # The schema asks for a reduction operator PARAMETER; OpenSHMEM fixes the operator
            # in the routine name (semantics.collective.type and the desc say which).
            "reduction_op": False,
            "topology_aware": False,
        }
        semantics["memory"] = heap_memory("after_return", "after_return", "after_return")
        over = "an active set of PEs" if operation.active_set else "a team"
        description = {
            "broadcast": f"Copies {things} from the root PE to every other PE of {over}.",
            "collect": f"Concatenates blocks of {things} of varying size from every PE of {over} on all of them.",
            "fcollect": f"Concatenates equal-size blocks of {things} from every PE of {over} on all of them.",
            "alltoall": f"Exchanges a block of {things} between every pair of PEs of {over}.",
            "alltoalls": f"Exchanges strided blocks of {things} between every pair of PEs of {over}.",
            "reduction": f"Combines {things} from every PE of {over} elementwise with {operation.reduction}, leaving the result on all of them.",
        }[key]
        return Classified(
            "collective",
            execution(
                blocking=True,
                collective=True,
                locality="both",
                completion="c",
                procedure_class="b-op",
            ),
            semantics,
            description,
            "collective",
        )

    # Locks.
    if key in {"set_lock", "clear_lock", "test_lock"}:
        semantics["memory"] = heap_memory(
            "after_return",
            "after_return" if key == "clear_lock" else None,
            "after_return",
            fence="both" if key == "clear_lock" else "none",
            model="release_acquire",
        )
        description = {
            "set_lock": "Acquires a distributed mutual-exclusion lock, waiting until it is free.",
            "clear_lock": "Completes outstanding updates and releases a distributed lock.",
            "test_lock": "Tries once to acquire a distributed lock and reports whether it succeeded.",
        }[key]
        return Classified(
            "synchronization",
            execution(
                blocking=key != "test_lock",
                collective=False,
                locality="both",
                completion="c",
                procedure_class="b-op" if key != "test_lock" else None,
            ),
            semantics,
            description,
            "lock",
        )

    # Queries and management.
    if key in QUERY_OPERATIONS:
        description = {
            "my_pe": "Returns the PE number of the calling PE.",
            "n_pes": "Returns the number of PEs running the program.",
            "query_thread": "Reports the thread support level the library provides.",
            "info_get_version": "Reports the major and minor version of the OpenSHMEM specification implemented.",
            "info_get_name": "Reports the vendor-defined name of the library.",
            "pe_accessible": "Tells whether a PE can be reached by OpenSHMEM communication.",
            "addr_accessible": "Tells whether an address is symmetric and reachable on a given PE.",
            "ptr": "Returns a local address through which a symmetric object on another PE can be loaded and stored directly, or null.",
            "team_my_pe": "Returns the number of the calling PE within a team.",
            "team_n_pes": "Returns the number of PEs in a team.",
            "team_get_config": "Reads the configuration a team was created with.",
            "team_translate_pe": "Translates a PE number of one team into the number of the same PE in another team.",
            "ctx_get_team": "Returns the team a communication context belongs to.",
        }[key]
        return Classified(
            "query",
            execution(
                blocking=True,
                collective=False,
                locality="local",
                completion=None,
                procedure_class=None,
            ),
            semantics,
            description,
            "query",
        )
    if key in MANAGEMENT_OPERATIONS:
        collective = key in COLLECTIVE_MANAGEMENT
        frees = key in {"finalize", "free", "ctx_destroy", "team_destroy"}
        description = {
            "init": "Initializes the OpenSHMEM library for the calling PE.",
            "init_thread": "Initializes the OpenSHMEM library with a requested level of thread support.",
            "finalize": "Releases the library's resources after completing outstanding communication.",
            "global_exit": "Ends the program on every PE with the given exit status.",
            "ctx_create": "Creates a communication context with the given options.",
            "ctx_destroy": "Completes a communication context's operations and frees it.",
            "team_split_strided": "Creates a team from a strided subset of a parent team's PEs.",
            "team_split_2d": "Splits a team into the rows and columns of a two-dimensional grid.",
            "team_destroy": "Frees a team and the contexts created from it.",
            "team_create_ctx": "Creates a communication context bound to a team.",
            "malloc": "Allocates a block of the symmetric heap on every PE.",
            "malloc_with_hints": "Allocates a block of the symmetric heap on every PE, with usage hints.",
            "calloc": "Allocates a zero-filled array on the symmetric heap of every PE.",
            "align": "Allocates an aligned block of the symmetric heap on every PE.",
            "realloc": "Resizes a symmetric heap block on every PE, keeping its contents.",
            "free": "Returns a symmetric heap block on every PE.",
            "udcflush": "Made the whole data cache coherent on systems that needed it; has no effect today.",
            "udcflush_line": "Made one cache line coherent on systems that needed it; has no effect today.",
            "set_cache_inv": "Enabled automatic cache coherence on systems that needed it; has no effect today.",
            "set_cache_line_inv": "Enabled cache coherence for one line on systems that needed it; has no effect today.",
            "clear_cache_inv": "Disabled automatic cache coherence on systems that needed it; has no effect today.",
            "clear_cache_line_inv": "Disabled cache coherence for one line on systems that needed it; has no effect today.",
        }[key]
        return Classified(
            "management",
            execution(
                blocking=True,
                collective=collective,
                locality="local",
                completion="f" if frees else None,
                procedure_class=None,
            ),
            semantics,
            description,
            "management",
        )
    raise ClassifyError(
        f"{routine.name}: no classification rule for operation {key!r}; add one to "
        "classify_operation in classify/shmem.py"
    )


def return_section(routine: Routine, operation: Operation) -> tuple[dict[str, Any], str]:
    c_type = routine.return_type
    binding = {"c": c_type, "fortran90": None, "fortran08": None, "lis": None, "cpp": None}
    key = operation.key

    def result(kind: str, value_kind: str | None, successes: list[str], rule: str):
        return (
            {
                "kind": kind,
                "value_kind": value_kind,
                "binding_type": binding,
                "possible_errors": [],
                "possible_successes": successes,
            },
            rule,
        )

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
    notes: Notes,
) -> tuple[dict[str, Any], Operation, Classified]:
    operation = operation_of(routine)
    classified = classify_operation(routine, operation)
    key = f"{MODEL}:{routine.name}"
    parameters = build_parameters(routine, operation, notes, key)
    returned, return_rule = return_section(routine, operation)
    buffers = [p for p in parameters if p["kind"] == "BUFFER" and p["pointer"]]
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
            {
                "field": "execution.thread_safety",
                "default_value": "single",
                "depends_on": ["the options the context was created with"],
                "note": (
                    "A context created with SHMEM_CTX_PRIVATE may be used only by the thread "
                    "that created it, and one created with SHMEM_CTX_SERIALIZED only by one "
                    "thread at a time; otherwise the library's provided thread level applies."
                ),
            }
        )
    if operation.key == "ptr":
        dependencies.append(
            {
                "field": "return.kind",
                "default_value": "RESULT",
                "depends_on": ["whether the target PE's memory is reachable by load/store"],
                "note": "The address is null when the target PE is not directly addressable.",
            }
        )
    identity = {
        "model": MODEL,
        "name": routine.name,
        "api_group": classified.api_group,
        "since": version["since"],
        "deprecated_in": version["deprecated_in"],
        "standard_refs": version["standard_refs"],
        "desc": classified.description,
        "type_family": list(routine.types) if routine.types else None,
    }
    entry: dict[str, Any] = {
        "identity": identity,
        "bindings": {
            "c": {"expressible": True, "header": HEADER, "signature": routine.signature},
            "fortran90": None,
            "fortran08": None,
            "lis": None,
            "cpp": None,
        },
        "execution": classified.execution,
        "semantics": classified.semantics,
        "parameters": parameters,
        "return": returned,
        "tool_integration": {
            "profiling_name": routine.profiling_name,
            "invariants": invariants(operation, [p["name"] for p in parameters]),
            "buffer_aliasing": aliasing,
            "context_dependencies": dependencies,
        },
        "relationships": {
            "variants": null_variants(),
            "superseded_by": version["superseded_by"],
            "supersedes": [],
        },
    }
    notes.add("/identity/name", "source", routine.where)
    notes.add("/bindings/c/signature", "source", routine.where)
    notes.add("/return/binding_type/c", "source", routine.where)
    notes.rule("/return/kind", return_rule)
    notes.rule("/identity/api_group", classified.rule)
    notes.rule("/identity/desc", classified.rule)
    notes.rule("/execution", classified.rule)
    notes.rule("/semantics", classified.rule)
    notes.rule("/tool_integration/buffer_aliasing", "buffer-aliasing")
    if routine.types:
        notes.add("/identity/type_family", "source", routine.where)
    if routine.profiling_name:
        notes.add("/tool_integration/profiling_name", "source", "pshmem.h")
    for field, pointer in (
        ("since", "/identity/since"),
        ("deprecated_in", "/identity/deprecated_in"),
        ("superseded_by", "/relationships/superseded_by"),
    ):
        notes.add(pointer, "curated", version["from"][field])
    notes.add("/identity/standard_refs", "curated", version["refs_from"])
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
    entry: dict[str, Any], operation: Operation, aliasing: str | None, notes: Notes
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
    document = curated_document("versions.yaml")
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
            "standard_refs": [f"{SPEC_1_5} {routine.where.rsplit(', ', 1)[-1]}"],
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


def drop_partial_replacements(entries: dict[str, dict[str, Any]], notes: dict[str, Notes]) -> None:
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
            notes[key].add(
                "/relationships/superseded_by",
                "rule",
                f"judgement: {target} lacks the types {missing}, so no per-type replacement "
                "can be named for the whole family",
            )


def link_variants(entries: dict[str, dict[str, Any]], notes: dict[str, Notes]) -> None:
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
def shape_ids() -> frozenset[str]:
    """Shape ids of the toolkit's catalog, so that only assignments it can expand are made."""
    try:
        text = resources.files("usis.curated").joinpath("shapes.json").read_text()
    except (FileNotFoundError, ModuleNotFoundError):
        return frozenset()
    return frozenset(shape["id"] for shape in json.loads(text)["shapes"])


@cache
def formal_rules() -> list[dict[str, Any]]:
    return list(curated_document("formal.yaml")["assignments"])


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
        bindings: dict[str, Any] = {}
        for slot, value in rule["bindings"].items():
            if isinstance(value, dict):
                bindings[slot] = {
                    "count_ref": value["count_ref"],
                    "datatype_ref": datatype,
                }
            elif value == "{atomic_operation}":
                bindings[slot] = f"op:{atomic['operation']}" if atomic else "op:replace"
            elif value == "{reduction}":
                bindings[slot] = f"op:{operation.reduction}"
            else:
                bindings[slot] = value.replace("{datatype}", datatype)
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
    notes: dict[str, Notes] = {}
    formal: dict[str, dict[str, Any]] = {}
    families: dict[str, dict[str, Any]] = {}
    names = frozenset(routine.name for routine in routines)
    for routine in routines:
        key = f"{MODEL}:{routine.name}"
        entry_notes = Notes({})
        operation = operation_of(routine)
        version = version_of(routine, operation, names)
        entry, operation, _ = build_entry(routine, version, entry_notes)
        entries[key] = entry
        notes[key] = entry_notes
        assignment, origin = formal_assignment(routine, operation, entry)
        if assignment is not None and origin is not None:
            formal[key] = assignment
            entry_notes.add("/semantics/formal", "curated", origin)
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
        "provenance": {key: dict(sorted(n.records.items())) for key, n in sorted(notes.items())},
    }
