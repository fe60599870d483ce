"""Classify the extracted MPI records into complete usis entries, by rules and curated facts.

Rules read the Forum's data and the call's name (each rule has an id that provenance cites); the facts
the source does not carry (since, deprecations, standard sections, descriptions, formal assignments,
judgements) come from `usis/curated/mpi/`.
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from usis.curated import load
from usis.entry_builder import (
    EntryBuilder,
    Identity,
    Parameter,
    Provenance,
    Relationships,
    ToolIntegration,
    binding_type,
    execution,
    memory,
    returns,
)
from usis.formal.shapes import shape_ids

MODEL = "mpi"
HEADER = "mpi.h"
F08_MODULE = "mpi_f08"


class MpiCurationError(ValueError):
    """Curated MPI data that is missing, malformed or disagrees with the source."""


# ---------------------------------------------------------------------------------------------
# Curated data


def curated(name: str) -> Any:
    """The curated file src/usis/curated/mpi/<name>.yaml, parsed."""
    return load(f"mpi/{name}.yaml")


def curated_path(name: str) -> str:
    return f"curated/mpi/{name}.yaml"


@functools.cache
def judgements() -> dict[str, dict[str, Any]]:
    """The judgement calls, by id (curated/mpi/judgements.yaml)."""
    return {item["id"]: item for item in curated("judgements")["judgements"]}


def judgement_from(judgement_id: str) -> str:
    if judgement_id not in judgements():
        raise MpiCurationError(f"judgement {judgement_id!r} is not in {curated_path('judgements')}")
    return f"{curated_path('judgements')}#{judgement_id} (judgement)"


def judge(prov: Provenance, pointer: str, judgement_id: str) -> None:
    """Cite a judgement of curated/mpi/judgements.yaml as the origin of a value."""
    prov.curated(pointer, judgement_from(judgement_id))


# ---------------------------------------------------------------------------------------------
# Name-based classification


@dataclass(frozen=True)
class NameTables:
    """The name tables of curated/mpi/names.yaml, in the forms the rules look them up in."""

    # base name -> (semantics.collective type, algorithm_class, root_involved)
    collective_bases: Mapping[str, tuple[str, str | None, bool]]
    in_place_bases: frozenset[str]
    intra_only_bases: frozenset[str]
    neighborhood_forms: Mapping[str, str]
    collective_pairs: Mapping[str, str | list[str]]
    p2p_bases: Mapping[str, str]
    # send mode -> (synchronous, buffered, ready)
    send_modes: Mapping[str, tuple[bool | None, bool | None, bool | None]]
    standard_mode_bases: frozenset[str]
    p2p_pairs: Mapping[str, str]
    partitioned: Mapping[str, str]
    # call -> (semantic class, operation)
    rma_operations: Mapping[str, tuple[str, str | None]]
    rma_request_based: Mapping[str, str]
    epoch_calls: frozenset[str]
    wait_calls: frozenset[str]
    test_calls: frozenset[str]
    status_peek_calls: frozenset[str]
    epoch_close: frozenset[str]
    epoch_flush: frozenset[str]
    epoch_open: frozenset[str]
    may_block_openers: frozenset[str]
    query_pattern: re.Pattern[str]
    local_data_calls: frozenset[str]
    local_data_prefixes: tuple[str, ...]
    conversion_pattern: re.Pattern[str]
    error_by_kind: Mapping[str, str]
    execute_once: frozenset[str]
    nonblocking_management: Mapping[str, str]
    exposed_buffer_calls: frozenset[str]
    return_kinds: Mapping[str, str]


@functools.cache
def names() -> NameTables:
    """curated/mpi/names.yaml, read once."""
    data = curated("names")
    collectives, p2p, rma = data["collectives"], data["point_to_point"], data["rma"]
    completion, epochs = data["completion"], data["epochs"]
    return NameTables(
        collective_bases={
            base: (facts["type"], facts["algorithm_class"], facts["root_involved"])
            for base, facts in collectives["bases"].items()
        },
        in_place_bases=frozenset(collectives["in_place"]),
        intra_only_bases=frozenset(collectives["intracommunicator_only"]),
        neighborhood_forms=dict(collectives["neighborhood_forms"]),
        collective_pairs=dict(collectives["paired_parameters"]),
        p2p_bases=dict(p2p["bases"]),
        send_modes={mode: tuple(flags) for mode, flags in p2p["send_modes"].items()},
        standard_mode_bases=frozenset(p2p["standard_mode"]),
        p2p_pairs=dict(p2p["paired_parameters"]),
        partitioned=dict(data["partitioned"]["calls"]),
        rma_operations={call: tuple(pair) for call, pair in rma["operations"].items()},
        rma_request_based=dict(rma["request_based"]),
        epoch_calls=frozenset(completion["epoch_calls"]),
        wait_calls=frozenset(completion["wait_calls"]),
        test_calls=frozenset(completion["test_calls"]),
        status_peek_calls=frozenset(completion["status_peek_calls"]),
        epoch_close=frozenset(epochs["close"]),
        epoch_flush=frozenset(epochs["flush"]),
        epoch_open=frozenset(epochs["open"]),
        may_block_openers=frozenset(epochs["may_block"]),
        query_pattern=re.compile("(^|_)(" + "|".join(data["queries"]["words"]) + ")($|_)"),
        local_data_calls=frozenset(data["local_data"]["calls"]),
        local_data_prefixes=tuple(data["local_data"]["prefixes"]),
        conversion_pattern=re.compile("_(" + "|".join(data["conversions"]["suffixes"]) + ")$"),
        error_by_kind=dict(data["errors"]["by_kind"]),
        execute_once=frozenset(data["execution"]["execute_once"]),
        nonblocking_management=dict(data["execution"]["nonblocking_management"]),
        exposed_buffer_calls=frozenset(data["execution"]["exposed_buffers"]),
        return_kinds=dict(data["return_kinds"]["kinds"]),
    )


@dataclass
class CallClass:
    """What the name and the Forum's attributes say about one call, before entry assembly."""

    key: str
    rest: str
    category: str
    api_group: str | None
    api_group_rule: str
    semantic_class: str | None = None
    variant: str | None = None  # "b", "nb", "p", "pp" or None
    collective_base: str | None = None
    p2p_base: str | None = None
    p2p_direction: str | None = None
    send_mode: tuple[bool | None, bool | None, bool | None] | None = None
    rma_operation: str | None = None
    rma_request_based: bool = False
    notes: list[str] = field(default_factory=list)


def strip_variant(rest: str, bases: Iterable[str]) -> tuple[str | None, str | None]:
    """(base, variant) for `rest` as a blocking, i-prefixed or _init-suffixed form of a base."""
    known = set(bases)
    if rest in known:
        return rest, "b"
    if rest.startswith("i") and rest[1:] in known:
        return rest[1:], "nb"
    if rest.endswith("_init") and rest[: -len("_init")] in known:
        return rest[: -len("_init")], "p"
    return None, None


def classify_call(record: Mapping[str, Any]) -> CallClass:
    """The api_group, semantic class and variant of one call, by the name rules (ids cited)."""
    key = record["key"]
    rest = key[len("mpi_") :]
    category = record["category"]
    if category != "procedure":
        return CallClass(key, rest, category, None, f"rule:api_group.{category}")
    base, variant = strip_variant(rest, names().collective_bases)
    if base is not None:
        call = CallClass(key, rest, category, "collective", "rule:api_group.collective_name")
        call.collective_base = base
        call.variant = variant
        call.semantic_class = None if base == "barrier" else "collective"
        return call
    if rest in names().partitioned:
        call = CallClass(key, rest, category, "point_to_point", "rule:api_group.partitioned")
        call.p2p_base = rest
        call.p2p_direction = names().partitioned[rest]
        call.semantic_class = "point_to_point"
        call.variant = "pp" if rest.endswith("_init") else None
        return call
    base, variant = strip_variant(rest, names().p2p_bases)
    if base is not None and not (base in ("probe", "mprobe") and variant == "p"):
        call = CallClass(key, rest, category, "point_to_point", "rule:api_group.p2p_name")
        call.p2p_base = base
        call.p2p_direction = names().p2p_bases[base]
        # A probe only inspects the matching queue: it starts no operation and leaves no request.
        call.variant = None if base in ("probe", "mprobe") else variant
        call.semantic_class = "point_to_point"
        if base in names().send_modes:
            call.send_mode = names().send_modes[base]
        return call
    if rest in names().rma_operations or rest in names().rma_request_based:
        call = CallClass(key, rest, category, "one_sided", "rule:api_group.rma_name")
        operation = names().rma_request_based.get(rest, rest)
        call.semantic_class, call.rma_operation = names().rma_operations[operation][0], operation
        call.rma_request_based = rest in names().rma_request_based
        call.variant = "nb"
        return call
    if rest in names().epoch_calls or rest in names().wait_calls or rest in names().test_calls:
        return CallClass(key, rest, category, "synchronization", "rule:api_group.completion")
    if rest.startswith("file_"):
        call = CallClass(key, rest, category, "io", "rule:api_group.file_prefix")
        if re.match(r"file_i(read|write)", rest):
            call.variant = "nb"
        elif re.match(r"file_(read|write)", rest) and not rest.endswith("_begin"):
            call.variant = "b"
        return call
    if (
        names().conversion_pattern.search(rest)
        or rest in names().local_data_calls
        or rest.startswith(names().local_data_prefixes)
    ):
        return CallClass(key, rest, category, None, "rule:api_group.local_data_or_conversion")
    if rest in names().status_peek_calls or rest in ("error_class", "error_string"):
        return CallClass(key, rest, category, "query", "rule:api_group.query_name")
    if names().query_pattern.search(rest):
        return CallClass(key, rest, category, "query", "rule:api_group.query_name")
    return CallClass(key, rest, category, "management", "rule:api_group.management_default")


# ---------------------------------------------------------------------------------------------
# Entry assembly helpers


def forum_kind_map() -> dict[str, dict[str, Any]]:
    return dict(curated("kinds")["forum_kinds"])


def kind_overrides() -> dict[tuple[str, str], str]:
    return {
        (item["function"], item["parameter"]): item["kind"]
        for item in curated("kinds")["overrides"]
    }


def map_kind(function_key: str, parameter: Mapping[str, Any], is_array: bool) -> tuple[Any, str]:
    """The schema kind for one Forum parameter and the provenance origin of that choice."""
    override = kind_overrides().get((function_key, parameter["name"]))
    if override is not None:
        return override, f"{curated_path('kinds')}#overrides {function_key}.{parameter['name']}"
    table = forum_kind_map()
    forum_kind = parameter["kind"]
    if forum_kind not in table:
        raise MpiCurationError(
            f"mpi:{function_key}: parameter {parameter['name']!r} has Forum kind {forum_kind!r}, "
            f"which {curated_path('kinds')} does not map; add it to forum_kinds"
        )
    row = table[forum_kind]
    origin = f"{curated_path('kinds')}#forum_kinds.{forum_kind}"
    by_name = row.get("by_name") or {}
    if parameter["name"] in by_name:
        return by_name[parameter["name"]], origin + ".by_name"
    if is_array and "array_kind" in row:
        return row["array_kind"], origin + ".array_kind"
    return row.get("kind"), origin


CONSTANT_LENGTH = re.compile(r"^[A-Z][A-Z0-9_]*$")


def length_and_array_type(raw_length: Any) -> tuple[Any, str | None]:
    """The schema's (length, array_type) from the Forum's length field."""
    if raw_length is None:
        return None, None
    if isinstance(raw_length, list):
        return str(raw_length[0]), "2d"
    if isinstance(raw_length, int):
        return raw_length, "fixed"
    text = str(raw_length).strip()
    if text in ("", "*"):
        return "*", "variable"
    if text.isdigit():
        return int(text), "fixed"
    if CONSTANT_LENGTH.match(text):
        return text, "fixed"
    return text, "variable"


def large_count_variant(record: Mapping[str, Any]) -> bool:
    """Whether the call has an MPI-4 large-count form (`MPI_Send_c`), the schema's meaning of
    `bindings.lis.expressible`: the Forum marks it language-independent (`lis_expressible`) and a
    parameter has a polymorphic (POLY*) kind, which is what the `_c` form widens to MPI_Count.
    `lis_expressible` alone says only that a language-independent binding is listed."""
    return bool(record["attributes"].get("lis_expressible")) and any(
        str(parameter.get("kind") or "").startswith("POLY") for parameter in record["parameters"]
    )


def parameter_bindings(record: Mapping[str, Any], parameter: Mapping[str, Any]) -> list[str]:
    """The binding variants that carry this parameter (the inverse of the Forum's suppress flags)."""
    attributes = record["attributes"]
    suppressed = set(str(parameter.get("suppress") or "").split())
    large_only = bool(parameter.get("large_only"))
    optional = bool(parameter.get("optional"))
    tokens = []
    if attributes.get("c_expressible") and "c_parameter" not in suppressed:
        tokens.append("c_large" if large_only else "c")
    if attributes.get("f90_expressible") and "f90_parameter" not in suppressed and not large_only:
        tokens.append("fortran90")
    if attributes.get("f08_expressible") and "f08_parameter" not in suppressed and not large_only:
        tokens.append("fortran08_optional" if optional else "fortran08")
    if large_count_variant(record) and "lis_parameter" not in suppressed:
        tokens.append("lis_large" if large_only else "lis")
    return tokens


NNI_KIND = re.compile(r"_NNI$")
PI_KIND = re.compile(r"_PI$")


def value_range(parameter: Mapping[str, Any]) -> str | None:
    if parameter.get("param_direction") != "in":
        return None
    name = parameter["name"]
    if NNI_KIND.search(parameter["kind"]):
        return f"{name} >= 0"
    if PI_KIND.search(parameter["kind"]):
        return f"{name} > 0"
    if parameter["kind"] == "RANK" and name == "root":
        return "0 <= root < comm_size(comm)"
    return None


def paired_with(call: CallClass, name: str, present: set[str]) -> str | None:
    """A matching call's corresponding parameter (parameter_constraints.paired_with): a send's
    buffer description pairs with the receive's, a collective's send side with its receive side.
    The matching call is the same function, so the pair is one of `present`, the call's own
    parameter names."""
    if call.collective_base is not None:
        pair = names().collective_pairs.get(name)
        candidates = [pair] if isinstance(pair, str) else pair or []
        return next((candidate for candidate in candidates if candidate in present), None)
    if (
        call.p2p_base is not None
        and call.rest not in names().partitioned
        and call.p2p_base
        not in (
            "sendrecv",
            "sendrecv_replace",
        )
    ):
        return names().p2p_pairs.get(name)
    return None


def passed_by_pointer(parameter: Mapping[str, Any]) -> bool | None:
    """The Forum's explicit pointer flag, else what the rendered C type shows (null by value)."""
    if parameter.get("pointer") is not None:
        return bool(parameter["pointer"])
    c_type = parameter.get("c_type")
    if c_type is None:
        return None
    return True if ("*" in c_type or "[" in c_type) else None


def func_type_signature(
    parameter: Mapping[str, Any], callbacks: Mapping[str, Mapping[str, Any]]
) -> str | None:
    named = str(parameter.get("func_type") or "").strip()
    if not named:
        return None
    callback = callbacks.get(named.lower())
    if callback is not None and callback.get("c_signature"):
        return str(callback["c_signature"]).removeprefix("typedef ").strip()
    return named


# ---------------------------------------------------------------------------------------------
# ULFM records (curated, same shape as extracted records)


def ulfm_records() -> list[dict[str, Any]]:
    """The ULFM calls of curated/mpi/ulfm.yaml as records shaped like the extracted ones."""
    data = curated("ulfm")
    records = []
    for call in data["calls"]:
        parameters = []
        for position, item in enumerate(call["parameters"]):
            parameters.append(
                {
                    "name": item["name"],
                    "kind": item["kind"],
                    "param_direction": item["param_direction"],
                    "lis_direction": item["param_direction"],
                    "desc": item["desc"],
                    "array_type": "",
                    "asynchronous": False,
                    "constant": False,
                    "func_type": "",
                    "large_only": False,
                    "length": None,
                    "optional": False,
                    "pointer": None,
                    "root_only": False,
                    "suppress": "",
                    "position": position,
                    "c_type": item["c_type"],
                    "c_large_type": None,
                    "f90_type": item["f90_type"],
                    "f08_type": item["f08_type"],
                }
            )
        parameters.append(
            {
                "name": "ierror",
                "kind": "ERROR_CODE",
                "param_direction": "out",
                "lis_direction": "out",
                "desc": "",
                "array_type": "",
                "asynchronous": False,
                "constant": False,
                "func_type": "",
                "large_only": False,
                "length": None,
                "optional": True,
                "pointer": None,
                "root_only": False,
                "suppress": "c_parameter lis_parameter",
                "position": len(parameters),
                "c_type": None,
                "c_large_type": None,
                "f90_type": "INTEGER",
                "f08_type": "INTEGER",
            }
        )
        records.append(
            {
                "key": call["name"].lower(),
                "name": call["name"],
                "name_f90": None,
                "category": "procedure",
                "attributes": {
                    "c_expressible": True,
                    "callback": False,
                    "deprecated": False,
                    "execute_once": False,
                    "f08_abstract_interface": False,
                    "f08_expressible": True,
                    "f90_expressible": True,
                    "f90_index_overload": None,
                    "f90_use_colons": False,
                    "lis_expressible": False,
                    "not_with_mpif": False,
                    "predefined_function": None,
                },
                "return_kind": "ERROR_CODE",
                "c_signature": call["c_signature"],
                "c_large_signature": None,
                "c_return_type": "int",
                "f90_name": call["f90_name"],
                "f08_name": call["f08_name"],
                "parameters": parameters,
                "curated_from": curated_path("ulfm"),
            }
        )
    return records


# ---------------------------------------------------------------------------------------------
# Curated lookups


@functools.cache
def since_table() -> dict[str, tuple[str | None, str]]:
    table: dict[str, tuple[str | None, str]] = {}
    for group in curated("since")["versions"]:
        for call in group["calls"]:
            if call in table:
                raise MpiCurationError(f"{curated_path('since')}: {call} is listed twice")
            table[call] = (group["version"], group["source"])
    return table


@functools.cache
def deprecation_table() -> dict[str, dict[str, Any]]:
    return {item["call"]: item for item in curated("deprecations")["deprecated"]}


@functools.cache
def classification() -> dict[str, Any]:
    return dict(curated("classification"))


@functools.cache
def descriptions() -> dict[str, Any]:
    return dict(curated("descriptions"))


def collective_management_calls() -> set[str]:
    return set(classification()["collective_calls"]["calls"])


# ---------------------------------------------------------------------------------------------
# Standard references


def standard_refs(call: CallClass) -> tuple[list[str], str]:
    """Citations into MPI-4.1 for a call, from the curated section table, and where they came from."""
    sections = classification()["standard_sections"]
    origin = f"{curated_path('classification')}#standard_sections"
    by_call = sections["by_call"]
    if call.key in by_call:
        return list(by_call[call.key]), origin + ".by_call"
    refs: list[str] = []
    if call.collective_base is not None:
        refs.append(sections["collective"][call.collective_base])
        if call.variant == "nb":
            refs.append(
                sections[
                    "neighborhood_nonblocking"
                    if call.rest.startswith("ineighbor")
                    else "collective_nonblocking"
                ]
            )
        elif call.variant == "p":
            refs.append(
                sections[
                    "neighborhood_persistent"
                    if call.rest.startswith("neighbor")
                    else "collective_persistent"
                ]
            )
        return refs, origin + ".collective"
    if call.p2p_base is not None:
        if call.rest in names().partitioned:
            return [sections["partitioned"]], origin + ".partitioned"
        refs.append(sections["p2p"][call.p2p_base])
        if call.variant == "nb":
            refs.append(sections["p2p_nonblocking"])
        elif call.variant == "p":
            refs.append(sections["p2p_persistent"])
        return refs, origin + ".p2p"
    if call.rma_operation is not None:
        refs.append(sections["rma"][call.rma_operation])
        if call.rma_request_based:
            refs.append(sections["rma_request_based"])
        return refs, origin + ".rma"
    for prefix, ref in sections["by_prefix"].items():
        if call.rest.startswith(prefix):
            return [ref], origin + f".by_prefix.{prefix}"
    return [], origin + " (no section recorded)"


# ---------------------------------------------------------------------------------------------
# Descriptions


FILE_ACCESS_NAME = re.compile(
    r"^file_(?P<nb>i)?(?P<verb>read|write)(?P<at>_at)?(?P<mode>_all|_ordered|_shared)?(?P<split>_begin|_end)?$"
)


def describe_file_access(found: re.Match[str]) -> str:
    """A sentence for an MPI_File read/write variant from the parts of its name."""
    reading = found["verb"] == "read"
    noun = "read from" if reading else "write to"
    if found["at"]:
        where = "at an explicit offset"
    elif found["mode"] in ("_ordered", "_shared"):
        where = "at the shared file pointer"
    else:
        where = "at the individual file pointer"
    how = {
        "_all": ", collectively over the file's group",
        "_ordered": ", collectively and in rank order",
    }.get(found["mode"] or "", "")
    if found["split"] == "_begin":
        return f"Begins a split-collective {noun} a file {where}{how}."
    if found["split"] == "_end":
        return f"Completes a split-collective {noun} a file {where} and returns its status."
    if found["nb"]:
        return f"Starts a nonblocking {noun} a file {where}{how}, returning a request."
    verb = "Reads data from" if reading else "Writes data to"
    return f"{verb} a file {where}{how}."


def capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


def describe(call: CallClass, record: Mapping[str, Any]) -> tuple[str, str]:
    """One sentence in our own words for the call, and where it came from."""
    table = descriptions()
    sentences = table.get("calls") or {}
    if call.key in sentences:
        return sentences[call.key], f"{curated_path('descriptions')}#calls"
    words = {**table["handle_words"], **(table.get("words") or {})}
    if call.collective_base is not None:
        phrase = table["collective_phrases"][call.collective_base]
        prefix = {
            "b": "",
            "nb": "Starts a nonblocking operation that ",
            "p": "Creates a persistent request for an operation that ",
        }[call.variant or "b"]
        sentence = (prefix + phrase) if prefix else capitalised(phrase)
        return sentence + ".", "rule:description.collective"
    if call.p2p_base is not None and call.rest not in names().partitioned:
        phrase = table["point_to_point_phrases"][call.p2p_base]
        if call.variant == "nb":
            return f"Starts a nonblocking operation that {phrase}.", "rule:description.p2p"
        if call.variant == "p":
            return (
                f"Creates a persistent request for an operation that {phrase}.",
                "rule:description.p2p",
            )
        return capitalised(phrase) + ".", "rule:description.p2p"
    if call.rma_operation is not None:
        phrase = table["rma_phrases"][call.rma_operation]
        if call.rma_request_based:
            return (
                f"Request-based form that {phrase}, returning a request for local completion.",
                "rule:description.rma",
            )
        return capitalised(phrase) + ".", "rule:description.rma"
    file_access = FILE_ACCESS_NAME.match(call.rest)
    if file_access is not None:
        return describe_file_access(file_access), "rule:description.file_access"
    match = names().conversion_pattern.search(call.rest)
    if match is not None:
        handle = table["handle_words"].get(call.rest[: match.start()], call.rest[: match.start()])
        wording = table["conversion_sentences"][match.group(1)].format(handle=handle)
        return wording, "rule:description.conversion"
    for pattern, template in table["patterns"]:
        found = re.fullmatch(pattern, call.rest)
        if found:
            words = {
                name: words.get(value, value.replace("_", " "))
                for name, value in found.groupdict().items()
                if value is not None
            }
            return template.format(**words), f"{curated_path('descriptions')}#patterns {pattern}"
    raise MpiCurationError(
        f"mpi:{call.key}: no description; add it to {curated_path('descriptions')} calls or patterns"
    )


# ---------------------------------------------------------------------------------------------
# Possible errors (MPI error classes, MPI-4.1 §9.4)


def tool_errors(call: CallClass) -> list[str]:
    """The MPI_T_ERR_* classes an MPI_T call can return (curated/mpi/tool_errors.yaml)."""
    table = load("mpi/tool_errors.yaml")
    errors = set(table["always"])
    for family in table["families"]:
        if re.search(family["match"], call.key):
            if family.get("replaces_always"):
                errors -= set(table["always"])
            errors |= set(family["errors"])
    return sorted(errors)


def possible_errors(call: CallClass, parameters: list[Parameter]) -> list[str]:
    if call.key.startswith("mpi_t_"):
        return tool_errors(call)
    errors = {"MPI_ERR_OTHER", "MPI_ERR_INTERN", "MPI_ERR_ARG"}
    for parameter in parameters:
        if parameter.direction == "out":
            continue
        code = names().error_by_kind.get(str(parameter.kind))
        if code:
            errors.add(code)
        if parameter.kind == "RANK":
            errors.add("MPI_ERR_ROOT" if parameter.name == "root" else "MPI_ERR_RANK")
    if call.api_group == "one_sided":
        errors |= {"MPI_ERR_RMA_SYNC", "MPI_ERR_RMA_RANGE", "MPI_ERR_DISP"}
    if call.p2p_direction in ("receive", "send_receive") and call.p2p_base in (
        "recv",
        "sendrecv",
        "sendrecv_replace",
        "mrecv",
    ):
        errors.add("MPI_ERR_TRUNCATE")
    if call.api_group == "io":
        errors |= {"MPI_ERR_IO", "MPI_ERR_ACCESS"}
    if call.rest in names().wait_calls | names().test_calls and call.rest.endswith(("all", "some")):
        errors.add("MPI_ERR_IN_STATUS")
    return sorted(errors)


# ---------------------------------------------------------------------------------------------
# Execution


COLLECTIVE_FILE_ACCESS = re.compile(r"^file_i?(read|write)(_at)?_(all|ordered)(_begin|_end)?$")
SPLIT_BEGIN = re.compile(r"^file_(read|write)(_at)?_(all|ordered)_begin$")
SPLIT_END = re.compile(r"^file_(read|write)(_at)?_(all|ordered)_end$")


def is_collective(call: CallClass) -> tuple[bool, str]:
    if call.collective_base is not None:
        return True, "rule:collective.data_collective_name"
    if COLLECTIVE_FILE_ACCESS.match(call.rest):
        return True, "rule:collective.file_collective_access"
    if call.key in collective_management_calls():
        return True, f"{curated_path('classification')}#collective_calls"
    return False, "rule:collective.default_local"


def operation_variant(call: CallClass, collective: bool) -> str | None:
    """The MPI-4 procedure class of an operation (b/nb/p/pp), or None for non-operations."""
    if SPLIT_END.match(call.rest):
        # Checked first: the name also reads as a blocking file access, but a split-collective
        # *_end completes the operation its *_begin started, as MPI_Wait does.
        return None
    if call.variant is not None:
        return call.variant
    if call.rest in names().nonblocking_management:
        return "nb"
    if call.rest in names().nonblocking_management.values():
        return "b"
    if SPLIT_BEGIN.match(call.rest):
        return "nb"
    if (
        collective
        and call.category == "procedure"
        and call.key not in names().execute_once
        and call.api_group != "synchronization"
    ):
        return "b"
    return None


def execution_section(call: CallClass, collective: bool, prov: Provenance) -> dict[str, Any]:
    variant = operation_variant(call, collective)
    rest = call.rest
    stages: list[str] | None
    completion: str | None
    procedure_class = {"b": "b-op", "nb": "nb-op", "p": "p-op", "pp": "pp-op"}.get(variant or "")
    rule_id = "rule:execution.procedure_class"
    if variant == "b":
        stages, completion, blocking = ["i", "s", "c", "f"], "c", True
    elif variant == "nb":
        stages, completion, blocking = ["i", "s"], "ic", False
    elif variant in ("p", "pp"):
        stages, completion, blocking = ["i"], "ic", False
    elif rest in ("start", "startall") or rest in ("pready", "pready_range", "pready_list"):
        stages, completion, blocking = ["s"], "ic", False
        rule_id = "rule:execution.start_stage"
    elif rest in names().wait_calls:
        stages, completion, blocking = ["c", "f"], "c", True
        rule_id = "rule:execution.wait"
    elif rest in names().test_calls:
        stages, completion, blocking = ["c", "f"], "c", False
        rule_id = "rule:execution.test"
    elif rest == "request_free":
        stages, completion, blocking = ["f"], "f", True
        rule_id = "rule:execution.request_free"
    elif SPLIT_END.match(rest):
        stages, completion, blocking = ["c", "f"], "c", True
        rule_id = "rule:execution.split_collective_end"
    elif rest in names().epoch_close or rest in names().epoch_flush:
        stages, completion = ["c"], "c"
        blocking = rest != "win_test"
        rule_id = "rule:execution.rma_completion"
    else:
        stages, completion = None, None
        blocking = not (
            rest in ("iprobe", "improbe", "win_post", "parrived")
            or rest in names().status_peek_calls
        )
        if rest in names().may_block_openers:
            blocking = False
        rule_id = "rule:execution.local_or_non_operation"
    for pointer in ("/execution/stages", "/execution/completion", "/execution/procedure_class"):
        prov.rule(pointer, rule_id)
    prov.rule("/execution/blocking", rule_id)
    if (
        call.semantic_class is None
        and variant is None
        and rule_id == "rule:execution.local_or_non_operation"
    ):
        prov.rule("/execution/blocking", "rule:execution.returns_when_done")
    if rest in ("wait", "waitall", "waitany", "waitsome", "test", "testall", "testany", "testsome"):
        judge(prov, "/execution/stages", "wait_test_stages")
    if variant in ("p", "pp"):
        judge(prov, "/execution/blocking", "persistent_init_nonblocking")
    if SPLIT_BEGIN.match(rest):
        judge(prov, "/execution/procedure_class", "split_collective_begin")
    prov.rule(
        "/execution/execute_once", "rule:execution.execute_once (usis-api-schema.json execute_once)"
    )
    prov.rule("/execution/collective", "rule:collective")
    thread_safety = None if call.category == "callback" else "single"
    judge(prov, "/execution/thread_safety", "thread_safety_single")
    for pointer in ("/execution/launch", "/execution/runs_on", "/execution/gpu_scope"):
        prov.rule(
            pointer, "rule:execution.host_api (usis-api-schema.json launch: MPI is host-side)"
        )
    locality = "local"
    if collective or call.semantic_class is not None or call.p2p_base is not None:
        locality = "both"
    if (
        rest in names().epoch_close
        or rest in names().epoch_flush
        or rest in names().epoch_open
        or rest in ("abort", "comm_revoke")
    ):
        locality = "both"
    if rest == "win_sync":
        locality = "local"
    prov.rule("/execution/locality", "rule:execution.locality")
    if call.api_group == "io":
        judge(prov, "/execution/locality", "io_locality")
    return execution(
        blocking=blocking,
        execute_once=call.key in names().execute_once,
        collective=collective,
        thread_safety=thread_safety,
        launch="cpu",
        runs_on="cpu",
        stages=stages,
        locality=locality,
        completion=completion,
        procedure_class=procedure_class,
    )


# ---------------------------------------------------------------------------------------------
# Semantics


def semantics_collective(
    call: CallClass, parameters: list[Parameter], prov: Provenance
) -> dict[str, Any] | None:
    if call.semantic_class != "collective" or call.collective_base is None:
        if call.collective_base == "barrier":
            judge(prov, "/semantics/collective", "barrier_no_collective_type")
        return None
    base = call.collective_base
    collective_type, algorithm, root = names().collective_bases[base]
    prov.rule("/semantics/collective/type", "rule:collective.type_by_name")
    prov.rule("/semantics/collective/algorithm_class", "rule:collective.algorithm_by_name")
    prov.rule("/semantics/collective/root_involved", "rule:collective.root_by_name")
    prov.curated(
        "/semantics/collective/in_place",
        "MPI-4.1 chapter 6: MPI_IN_PLACE is defined for this call (rule:collective.in_place)",
    )
    prov.curated(
        "/semantics/collective/comm_scope",
        "MPI-4.1 §6.2: intercommunicator support (rule:collective.comm_scope)",
    )
    prov.rule("/semantics/collective/reduction_op", "rule:collective.has_operation_parameter")
    prov.rule("/semantics/collective/topology_aware", "rule:collective.neighborhood_name")
    return {
        "type": collective_type,
        "root_involved": root,
        "in_place": base in names().in_place_bases,
        "comm_scope": "intracommunicator" if base in names().intra_only_bases else "both",
        "algorithm_class": algorithm,
        "reduction_op": any(p.kind == "OPERATION" for p in parameters),
        "topology_aware": base.startswith("neighbor_"),
    }


def semantics_p2p(call: CallClass, prov: Provenance) -> dict[str, Any] | None:
    if call.semantic_class != "point_to_point":
        return None
    prov.rule("/semantics/point_to_point", "rule:p2p.direction_and_mode_by_name")
    if call.send_mode is not None:
        synchronous, buffered, ready = call.send_mode
    else:
        synchronous = buffered = ready = None
    return {
        "direction": call.p2p_direction,
        "synchronous": synchronous,
        "buffered": buffered,
        "ready": ready,
    }


def semantics_one_sided(call: CallClass, prov: Provenance) -> dict[str, Any] | None:
    if call.semantic_class != "one_sided" or call.rma_operation is None:
        return None
    operation = names().rma_operations[call.rma_operation][1]
    prov.rule("/semantics/one_sided/operation", "rule:rma.operation_by_name")
    judge(prov, "/semantics/one_sided/epoch_type", "rma_epoch_default")
    ordering = "none" if call.rma_operation in ("put", "get") else "relaxed"
    judge(prov, "/semantics/one_sided/ordering", "rma_accumulate_ordering")
    return {
        "operation": operation,
        "epoch_type": "lock" if call.rma_request_based else "fence",
        "ordering": ordering,
    }


def semantics_atomic(call: CallClass, prov: Provenance) -> dict[str, Any] | None:
    if call.semantic_class != "atomic" or call.rma_operation is None:
        return None
    prov.rule(
        "/semantics/atomic", "rule:rma.atomic_by_name (usis-api-schema.json semantics_atomic)"
    )
    if call.rma_operation == "compare_and_swap":
        return {"operation": "cswap", "fetch": True, "compare": True}
    return {"operation": None, "fetch": True, "compare": False}


def semantics_memory(
    call: CallClass, variant: str | None, parameters: list[Parameter], prov: Provenance
) -> dict[str, Any] | None:
    rest = call.rest
    has_buffer = any(p.kind == "BUFFER" for p in parameters)
    pointer = "/semantics/memory"
    if rest in names().wait_calls:
        prov.rule(pointer, "rule:memory.wait_completes_locally")
        return memory("after_return", None, "after_return", "local")
    if rest in names().test_calls:
        prov.rule(pointer, "rule:memory.test_completes_locally")
        return memory("after_test", None, "after_test", "local")
    if rest in (
        "win_fence",
        "win_unlock",
        "win_unlock_all",
        "win_flush",
        "win_flush_all",
        "win_wait",
    ):
        prov.rule(pointer, "rule:memory.rma_completes_both_sides (MPI-4.1 §12.5)")
        return memory("after_return", "after_return", "after_return", "both")
    if rest == "win_test":
        prov.rule(pointer, "rule:memory.rma_completes_both_sides (MPI-4.1 §12.5.2)")
        return memory("after_test", "after_return", "after_test", "both")
    if rest in ("win_complete", "win_flush_local", "win_flush_local_all"):
        prov.rule(pointer, "rule:memory.rma_completes_origin (MPI-4.1 §12.5.2, §12.5.4)")
        return memory("after_return", None, "after_return", "local")
    if rest == "win_sync":
        prov.rule(pointer, "rule:memory.win_sync (MPI-4.1 §12.5.4)")
        return memory("after_return", None, "after_return", "local")
    if not has_buffer:
        prov.rule(pointer, "rule:memory.no_buffer")
        return None
    nonblocking = variant in ("nb", "p", "pp")
    local = "after_wait" if nonblocking else "after_return"
    if call.rma_operation is not None:
        local = "after_wait" if call.rma_request_based else "after_flush"
        remote = None if call.rma_operation == "get" else "after_fence"
        judge(prov, pointer + "/remote_completion", "rma_remote_after_fence")
        prov.rule(pointer + "/local_completion", "rule:memory.rma_local (MPI-4.1 §12.3)")
        return memory(local, remote, local)
    if call.collective_base is not None or call.p2p_base is not None:
        sends = call.p2p_direction in ("send", "send_receive") or call.collective_base is not None
        remote = "after_return" if sends else None
        if sends:
            judge(prov, pointer + "/remote_completion", "remote_completion_two_sided")
        prov.rule(pointer + "/local_completion", "rule:memory.local_by_variant")
        return memory(local, remote, local)
    if call.api_group == "io":
        if SPLIT_BEGIN.match(rest):
            judge(prov, pointer, "split_collective_begin")
            return memory("after_wait", None, "after_wait")
        prov.rule(pointer, "rule:memory.io_local (file storage is no remote process)")
        return memory(local, None, local)
    if rest in names().exposed_buffer_calls:
        prov.curated(
            pointer, "MPI-4.1 §3.6 and §12.2: the buffer belongs to MPI until detached or freed"
        )
        return memory("after_return", None, "never")
    prov.rule(pointer, "rule:memory.local_buffer_call")
    return memory("after_return", None, "after_return")


# ---------------------------------------------------------------------------------------------
# Parameters and return


def build_parameters(
    record: Mapping[str, Any],
    callbacks: Mapping[str, Mapping[str, Any]],
    call: CallClass,
    prov: Provenance,
) -> list[Parameter]:
    function_key = record["key"]
    present = {raw["name"] for raw in record["parameters"]}
    origin = record.get("curated_from") or "apis.json"
    parameters = []
    for index, raw in enumerate(record["parameters"]):
        pointer = f"/parameters/{index}"
        length, array_type = length_and_array_type(raw.get("length"))
        kind, kind_origin = map_kind(function_key, raw, length is not None)
        desc = str(raw.get("desc") or "").strip() or None
        parameter = Parameter(
            name=raw["name"],
            kind=kind,
            direction=raw["param_direction"],
            desc=desc,
            binding_type=binding_type(
                raw.get("c_type"),
                fortran90=raw.get("f90_type"),
                fortran08=raw.get("f08_type"),
                lis=raw.get("c_large_type") if large_count_variant(record) else None,
            ),
            asynchronous=bool(raw.get("asynchronous")),
            constant=bool(raw.get("constant")),
            pointer=passed_by_pointer(raw),
            array_type=array_type,
            func_type=func_type_signature(raw, callbacks),
            length=length,
            parameter_bindings=parameter_bindings(record, raw),
            root_only=bool(raw.get("root_only")),
            value_range=value_range(raw),
            paired_with=paired_with(call, raw["name"], present),
            memory_space="host" if kind == "BUFFER" else None,
        )
        for name in (
            "name",
            "direction",
            "desc",
            "binding_type",
            "asynchronous",
            "constant",
            "pointer",
            "array_type",
            "length",
            "func_type",
            "root_only",
        ):
            prov.source(f"{pointer}/{name}", f"{origin}: {function_key}.parameters[{index}]")
        prov.curated(f"{pointer}/kind", kind_origin)
        if raw.get("pointer") is None:
            prov.rule(f"{pointer}/pointer", "rule:pointer.from_c_rendering")
        prov.rule(f"{pointer}/parameter_bindings", "rule:parameter_bindings.from_suppress_flags")
        prov.rule(f"{pointer}/constraints", "rule:constraints.from_forum_kind (NNI/PI kinds)")
        prov.rule(f"{pointer}/constraints/paired_with", "rule:constraints.paired_with")
        judge(prov, f"{pointer}/memory_space", "memory_space_host")
        parameters.append(parameter)
    return parameters


def build_return(
    call: CallClass, record: Mapping[str, Any], parameters: list[Parameter], prov: Provenance
) -> dict[str, Any]:
    kind = names().return_kinds.get(record["return_kind"], "value")
    prov.rule("/return/kind", f"rule:return.kind_from_forum_return_kind ({record['return_kind']})")
    prov.rule(
        "/return/value_kind",
        "rule:return.value_kind_null (times, addresses and handle conversions have no fitting kind)",
    )
    c_type = record.get("c_return_type") if record["attributes"].get("c_expressible") else None
    errors = possible_errors(call, parameters) if kind == "ERROR_CODE" else []
    if call.key.startswith("mpi_t_"):
        prov.curated(
            "/return/possible_errors", "curated/mpi/tool_errors.yaml: MPI-4.1 §15.3.10, Table 15.6"
        )
    else:
        prov.rule(
            "/return/possible_errors",
            "rule:return.error_classes_from_parameter_kinds (MPI-4.1 §9.4)",
        )
    prov.rule("/return/possible_successes", "rule:return.mpi_success")
    prov.source("/return/binding_type", "apis.json return_kind rendered by pympistandard")
    # Fortran reports an MPI error through the ierror argument, and the few value-returning
    # procedures are C-only or render their Fortran result type only inside the function text,
    # so the Fortran result types stay null.
    return returns(
        kind,
        binding_type(c_type, lis=c_type if large_count_variant(record) else None),
        errors=errors,
        successes=["MPI_SUCCESS"] if kind == "ERROR_CODE" else [],
    )


# ---------------------------------------------------------------------------------------------
# Tool integration


def context_dependencies(call: CallClass, semantics: Mapping[str, Any]) -> list[dict[str, Any]]:
    dependencies: list[dict[str, Any]] = []
    if call.p2p_base in names().standard_mode_bases and call.rest not in names().partitioned:
        for name in ("synchronous", "buffered", "ready"):
            dependencies.append(
                {
                    "field": f"semantics.point_to_point.{name}",
                    "default_value": None,
                    "depends_on": [
                        "message size against the implementation's eager threshold",
                        "buffer space the implementation has available",
                    ],
                    "note": "A standard-mode send may buffer the message and return, or wait for the "
                    "matching receive as a synchronous send would; the implementation decides per message.",
                }
            )
    memory = semantics.get("memory")
    if (
        memory
        and memory["remote_completion"] == "after_return"
        and (call.p2p_base is not None or call.collective_base is not None)
    ):
        dependencies.append(
            {
                "field": "semantics.memory.remote_completion",
                "default_value": "after_return",
                "depends_on": ["completion of the matching call at the partner processes"],
                "note": "Data reach a partner's buffer when that partner's own matching receive or "
                "collective call completes; this call's return does not by itself guarantee it.",
            }
        )
    if call.rma_operation is not None:
        dependencies.append(
            {
                "field": "semantics.one_sided.epoch_type"
                if call.semantic_class == "one_sided"
                else "semantics.memory.local_completion",
                "default_value": ("lock" if call.rma_request_based else "fence")
                if call.semantic_class == "one_sided"
                else "after_flush",
                "depends_on": [
                    "the synchronization the caller opened on the window: fence, post-start-complete-wait, lock/unlock or lock_all/unlock_all"
                ],
                "note": "An RMA operation is valid in any access epoch; which one governs it is fixed by "
                "the surrounding synchronization calls, not by this call.",
            }
        )
        if memory and memory["remote_completion"] == "after_fence":
            dependencies.append(
                {
                    "field": "semantics.memory.remote_completion",
                    "default_value": "after_fence",
                    "depends_on": [
                        "the call that closes the epoch: MPI_Win_fence, MPI_Win_complete, MPI_Win_unlock(_all) or MPI_Win_flush(_all)"
                    ],
                    "note": "The update is complete at the target when the epoch is closed or flushed.",
                }
            )
        if call.rma_operation not in ("put", "get"):
            dependencies.append(
                {
                    "field": "semantics.one_sided.ordering"
                    if call.semantic_class == "one_sided"
                    else "semantics.memory.memory_model",
                    "default_value": "relaxed" if call.semantic_class == "one_sided" else None,
                    "depends_on": [
                        "the window's accumulate_ordering info key (default rar,raw,war,waw)"
                    ],
                    "note": "Accumulate-family operations from one origin to one target location are "
                    "ordered as accumulate_ordering says; put and get are never ordered.",
                }
            )
    if call.rest in names().may_block_openers:
        dependencies.append(
            {
                "field": "execution.blocking",
                "default_value": False,
                "depends_on": [
                    "the MPI implementation",
                    "whether the matching exposure epoch or lock is available",
                ],
                "note": "The standard allows this call to block until the target side is ready, and "
                "does not require it to.",
            }
        )
    if call.rest in names().wait_calls | names().test_calls:
        dependencies.append(
            {
                "field": "execution.stages",
                "default_value": "c,f",
                "depends_on": ["whether the completed request is persistent"],
                "note": "Completing a nonpersistent request also frees it (stages c and f); a persistent "
                "request only becomes inactive (stage c).",
            }
        )
    return dependencies


def invariants(parameters: list[Parameter]) -> list[str]:
    found = []
    for parameter in parameters:
        value = parameter.value_range
        if value is None or parameter.array_type is not None:
            continue
        name = parameter.name
        if value == f"{name} >= 0":
            found.append(f"param:{name} >= 0")
        elif value == f"{name} > 0":
            found.append(f"param:{name} > 0")
    return found


def tool_integration(
    call: CallClass,
    record: Mapping[str, Any],
    semantics: Mapping[str, Any],
    parameters: list[Parameter],
    prov: Provenance,
) -> ToolIntegration:
    profiling = f"P{record['name']}" if call.category == "procedure" else None
    prov.rule("/tool_integration/profiling_name", "rule:profiling.pmpi_prefix (MPI-4.1 §15.2)")
    has_buffer = any(p.kind == "BUFFER" for p in parameters)
    collective = semantics.get("collective")
    if not has_buffer:
        aliasing = None
    elif collective and collective["in_place"]:
        aliasing = "in_place_only"
    else:
        aliasing = "forbidden"
    prov.curated(
        "/tool_integration/buffer_aliasing",
        "MPI-4.1 chapter 2 (Terms and Conventions), aliased arguments: output arguments may not alias other arguments unless MPI_IN_PLACE is defined (rule:aliasing)",
    )
    prov.rule("/tool_integration/invariants", "rule:invariants.from_forum_nni_kinds")
    prov.rule("/tool_integration/context_dependencies", "rule:context_dependencies")
    return ToolIntegration(
        profiling_name=profiling,
        invariants=invariants(parameters),
        buffer_aliasing=aliasing,
        context_dependencies=context_dependencies(call, semantics),
    )


# ---------------------------------------------------------------------------------------------
# Relationships


def nonblocking_name(rest: str) -> list[str]:
    """Candidate names of the nonblocking counterpart of a blocking call."""
    candidates = [f"i{rest}"]
    if rest.startswith("file_"):
        candidates.append("file_i" + rest[len("file_") :])
    inverse = {blocking: nb for nb, blocking in names().nonblocking_management.items()}
    if rest in inverse:
        candidates.insert(0, inverse[rest])
    return candidates


def variant_links(keys: set[str]) -> dict[str, dict[str, str | None]]:
    """variants.{nonblocking,blocking,persistent,neighborhood} for every key, by the name rules."""
    links: dict[str, dict[str, str | None]] = {
        key: {"nonblocking": None, "blocking": None, "persistent": None, "neighborhood": None}
        for key in keys
    }
    for key in sorted(keys):
        rest = key[len("mpi_") :]
        for candidate in nonblocking_name(rest):
            target = f"mpi_{candidate}"
            if target in keys and target != key and links[target]["blocking"] is None:
                if rest.startswith("i") and rest[1:] and f"mpi_{rest[1:]}" in keys:
                    break  # this entry is itself a nonblocking variant
                links[key]["nonblocking"] = target
                links[target]["blocking"] = key
                break
        persistent = f"mpi_{rest}_init"
        if persistent in keys and (
            rest in names().collective_bases or rest in ("send", "bsend", "ssend", "rsend", "recv")
        ):
            links[key]["persistent"] = persistent
            links[persistent]["blocking"] = key
    for plain, neighbor in names().neighborhood_forms.items():
        for prefix, suffix in (("", ""), ("i", ""), ("", "_init")):
            left = f"mpi_{prefix}{plain}{suffix}"
            right = f"mpi_{prefix}{neighbor}{suffix}"
            if left in keys and right in keys:
                links[left]["neighborhood"] = right
                links[right]["neighborhood"] = left
    return links


# ---------------------------------------------------------------------------------------------
# Formal assignments


def lifecycle_assignment(parameters: list[Parameter], collective: bool) -> dict[str, Any] | None:
    """A handle-creating call's lifecycle shape, by rule: a new datatype derived from `oldtype`
    (local), or a new communicator derived from the input communicator (collective)."""
    by_name = {parameter.name: parameter for parameter in parameters}
    newtype = by_name.get("newtype")
    if newtype is not None and newtype.kind == "DATATYPE" and newtype.direction == "out":
        bindings: dict[str, Any] = {"handle": "param:newtype", "handle_kind": "DATATYPE"}
        if "oldtype" in by_name:
            bindings["parent"] = "param:oldtype"
        return {"shape_ref": "lifecycle.local_create", "bindings": bindings}
    created = [p for p in parameters if p.kind == "COMMUNICATOR" and p.direction == "out"]
    parents = [p for p in parameters if p.kind == "COMMUNICATOR" and p.direction == "in"]
    if collective and len(created) == 1 and parents and "request" not in by_name:
        return {
            "shape_ref": "lifecycle.collective_create",
            "bindings": {
                "handle": f"param:{created[0].name}",
                "handle_kind": "COMMUNICATOR",
                "parent": f"param:{parents[0].name}",
            },
        }
    return None


def formal_assignment(
    call: CallClass, variant: str | None, parameters: list[Parameter], collective: bool
) -> tuple[dict[str, Any] | None, str]:
    """The {shape_ref, bindings} assignment for a call from curated/mpi/formal.yaml, or None."""
    table = curated("formal")
    origin = curated_path("formal")
    parameter_names = {parameter.name for parameter in parameters}
    base_assignment = None
    if call.key in table["calls"]:
        return copy.deepcopy(table["calls"][call.key]), f"{origin}#calls.{call.key}"
    # The Fortran-kind constructors return predefined datatypes, which have no lifecycle.
    predefined = call.rest.startswith("type_create_f90_")
    lifecycle = None if predefined else lifecycle_assignment(parameters, collective)
    if lifecycle is not None:
        return lifecycle, "rule:formal.handle_constructor (new handle derived from an input handle)"
    if call.collective_base is not None:
        base_assignment = table["collective"].get(call.collective_base)
        where = f"{origin}#collective.{call.collective_base}"
    elif call.p2p_base is not None and call.rest not in names().partitioned:
        base_assignment = table["p2p"].get(call.p2p_base)
        where = f"{origin}#p2p.{call.p2p_base}"
    elif call.rma_operation is not None:
        base_assignment = table["rma"].get(call.rma_operation)
        where = f"{origin}#rma.{call.rma_operation}"
    if base_assignment is None:
        return None, "no shape fits"
    assignment = copy.deepcopy(base_assignment)
    request_shape = table["request_shapes"].get(variant or "")
    if request_shape is not None and "request" in parameter_names:
        refs = assignment["shape_ref"]
        assignment["shape_ref"] = [*(refs if isinstance(refs, list) else [refs]), request_shape]
        assignment["bindings"] = {**assignment["bindings"], "request": "param:request"}
    return assignment, where


# ---------------------------------------------------------------------------------------------
# Entries


def identity(call: CallClass, record: Mapping[str, Any], prov: Provenance) -> Identity:
    since, since_source = since_table().get(call.key, (None, ""))
    if call.key not in since_table():
        raise MpiCurationError(
            f"mpi:{call.key}: no `since` in {curated_path('since')}; add the call to its version"
        )
    deprecation = deprecation_table().get(call.key)
    refs, refs_origin = standard_refs(call)
    desc, desc_origin = describe(call, record)
    prov.source(
        "/identity/name", "apis.json name" if "curated_from" not in record else curated_path("ulfm")
    )
    prov.rule("/identity/model", "rule:identity.model")
    prov.rule("/identity/api_group", call.api_group_rule)
    if call.api_group is None or call.rest in ("start", "startall", "request_free", "cancel"):
        judge(prov, "/identity/api_group", "api_group_choices")
    prov.curated("/identity/since", f"{curated_path('since')}: {since_source}")
    if since is None:
        judge(prov, "/identity/since", "ulfm_since_null")
    prov.curated(
        "/identity/deprecated_in",
        f"{curated_path('deprecations')}: {deprecation['source']}"
        if deprecation
        else f"{curated_path('deprecations')} (not listed: not deprecated)",
    )
    prov.curated("/identity/standard_refs", refs_origin)
    prov.note(
        "/identity/desc", "curated" if desc_origin.startswith("curated") else "rule", desc_origin
    )
    prov.rule(
        "/identity/type_family", "rule:identity.no_type_family (MPI calls take a datatype argument)"
    )
    return Identity(
        MODEL,
        record["name"],
        api_group=call.api_group,
        since=since,
        deprecated_in=deprecation["deprecated_in"] if deprecation else None,
        standard_refs=refs,
        desc=desc,
    )


def index_overload(forum_value: Any) -> bool | None:
    """apis.json gives the overloaded Fortran interface's text where one exists; the schema a flag."""
    if forum_value is None or isinstance(forum_value, bool):
        return forum_value
    return bool(str(forum_value).strip()) or None


def bindings(record: Mapping[str, Any], prov: Provenance) -> dict[str, Any]:
    attributes = record["attributes"]
    origin = record.get("curated_from") or "apis.json attributes rendered by pympistandard"
    c_expressible = bool(attributes.get("c_expressible"))
    name = record["name"]
    prov.source("/bindings", origin)
    prov.curated("/bindings/cpp", "MPI-3.0 removed the C++ bindings (MPI-4.1 §17.2)")
    prov.rule("/bindings/c/header", "rule:bindings.header_mpi_h")
    prov.rule(
        "/bindings/lis/expressible",
        "rule:bindings.lis_is_a_large_count_form (lis_expressible and a POLY* parameter)",
    )
    prov.rule("/bindings/fortran08/module", "rule:bindings.module_mpi_f08")
    return {
        "c": {
            "expressible": c_expressible,
            "header": HEADER,
            "signature": record.get("c_signature") if c_expressible else None,
        },
        "fortran90": {
            "name": record.get("f90_name") or record.get("name_f90") or name.upper(),
            "expressible": bool(attributes.get("f90_expressible")),
            "use_colons": bool(attributes.get("f90_use_colons")),
            "index_overload": index_overload(attributes.get("f90_index_overload")),
            "not_with_mpif": bool(attributes.get("not_with_mpif")),
        },
        "fortran08": {
            "name": record.get("f08_name") or name,
            "expressible": bool(attributes.get("f08_expressible")),
            "abstract_interface": bool(attributes.get("f08_abstract_interface")),
            "module": F08_MODULE,
        },
        "lis": {"expressible": large_count_variant(record)},
        "cpp": None,
    }


def build_entry(
    record: Mapping[str, Any],
    callbacks: Mapping[str, Mapping[str, Any]],
    links: Mapping[str, Mapping[str, str | None]],
) -> tuple[dict[str, Any], dict[str, Any] | None, dict[str, Any]]:
    """(entry, formal assignment or None, provenance) for one record."""
    prov = Provenance()
    call = classify_call(record)
    collective, collective_rule = is_collective(call)
    parameters = build_parameters(record, callbacks, call, prov)
    section = execution_section(call, collective, prov)
    prov.rule("/execution/collective", collective_rule)
    if call.key in ("mpi_init", "mpi_init_thread"):
        judge(prov, "/execution/collective", "init_not_collective")
    variant = operation_variant(call, collective)
    semantics_section: dict[str, Any] = {
        "collective": semantics_collective(call, parameters, prov),
        "point_to_point": semantics_p2p(call, prov),
        "one_sided": semantics_one_sided(call, prov),
        "atomic": semantics_atomic(call, prov),
        "memory": None,
        "formal": None,
    }
    semantics_section["memory"] = semantics_memory(call, variant, parameters, prov)
    deprecation = deprecation_table().get(call.key)
    superseded_by = (
        f"mpi:{deprecation['superseded_by']}"
        if deprecation and deprecation["superseded_by"]
        else None
    )
    prov.curated(
        "/relationships/superseded_by",
        f"{curated_path('deprecations')}" + (f": {deprecation['source']}" if deprecation else ""),
    )
    prov.rule(
        "/relationships/variants",
        "rule:variants.by_name (i-prefix, _init suffix, neighbor_ prefix)",
    )
    prov.rule("/relationships/supersedes", "rule:supersedes.inversion_of_superseded_by")
    own_links = links.get(call.key, {})
    relationships = Relationships(superseded_by=superseded_by)
    for variant_kind in ("nonblocking", "blocking", "persistent", "neighborhood"):
        relationships.variants[variant_kind] = prefixed(own_links.get(variant_kind))
    # Built in this order: a later section's provenance may refine an earlier one's.
    entry_identity = identity(call, record, prov)
    entry_bindings = bindings(record, prov)
    returned = build_return(call, record, parameters, prov)
    tools = tool_integration(call, record, semantics_section, parameters, prov)
    entry = EntryBuilder(
        identity=entry_identity,
        bindings=entry_bindings,
        execution=section,
        semantics=semantics_section,
        parameters=parameters,
        returns=returned,
        tool_integration=tools,
        relationships=relationships,
    ).build()
    assignment, formal_origin = formal_assignment(call, variant, parameters, collective)
    prov.curated("/semantics/formal", formal_origin)
    return entry, assignment, prov.records


def prefixed(function_key: str | None) -> str | None:
    return f"{MODEL}:{function_key}" if function_key else None


def invert_supersession(entries: dict[str, dict[str, Any]]) -> None:
    """Fill relationships.supersedes as the sorted inversion of superseded_by (as assemble does)."""
    inverse: dict[str, list[str]] = {key: [] for key in entries}
    for key, entry in entries.items():
        target = entry["relationships"]["superseded_by"]
        if target is not None:
            if target not in inverse:
                raise MpiCurationError(
                    f"{key}: superseded_by {target!r} is not an entry of the corpus"
                )
            inverse[target].append(key)
    for key, entry in entries.items():
        entry["relationships"]["supersedes"] = sorted(inverse[key])


def missing_shapes(formal: Mapping[str, Mapping[str, Any]]) -> dict[str, list[str]]:
    """Shape ids the MPI assignments name that curated/shapes.json lacks, with the keys needing them."""
    available = shape_ids()
    missing: dict[str, list[str]] = {}
    for key, assignment in formal.items():
        refs = assignment["shape_ref"]
        for ref in refs if isinstance(refs, list) else [refs]:
            if ref not in available:
                missing.setdefault(ref, []).append(key)
    return missing


def classify(extracted: Mapping[str, Any]) -> dict[str, Any]:
    """Complete MPI entries (formal left null and described in "formal") with their provenance."""
    if extracted.get("model") != MODEL:
        raise MpiCurationError(
            f"classify.mpi: extracted model is {extracted.get('model')!r}, expected 'mpi'"
        )
    records = list(extracted["records"]) + ulfm_records()
    keys = [record["key"] for record in records]
    duplicates = sorted({key for key in keys if keys.count(key) > 1})
    if duplicates:
        raise MpiCurationError(f"classify.mpi: duplicate records {duplicates}")
    callbacks = {record["key"]: record for record in records if record["category"] == "callback"}
    links = variant_links(set(keys))
    entries: dict[str, dict[str, Any]] = {}
    formal: dict[str, dict[str, Any]] = {}
    provenance: dict[str, dict[str, Any]] = {}
    for record in sorted(records, key=lambda item: item["key"]):
        entry, assignment, records_of_entry = build_entry(record, callbacks, links)
        key = f"{MODEL}:{record['key']}"
        entries[key] = entry
        provenance[key] = records_of_entry
        if assignment is not None:
            formal[key] = assignment
    invert_supersession(entries)
    available = shape_ids()
    formal = {
        key: assignment
        for key, assignment in formal.items()
        if all(
            ref in available
            for ref in (
                assignment["shape_ref"]
                if isinstance(assignment["shape_ref"], list)
                else [assignment["shape_ref"]]
            )
        )
    }
    return {
        "model": MODEL,
        "sources": extracted["sources"],
        "entries": entries,
        "formal": formal,
        "provenance": provenance,
    }
