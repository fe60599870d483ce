"""The consistency rules: facts about a corpus the schema cannot state, each with an id and a statement.

docs/usis.md lists every rule by id; `RULES` is the authority, and a test checks the two agree.
Each check yields `(key, path, message)`; rules run on the plain JSON of the entries, so they work on
a checkpoint, a shipped file or a hand-written fixture alike.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from usis.formal.grammar import (
    SCOPES,
    GrammarError,
    indexed_parameters,
    parameter_names,
    parse_match_key,
    parse_offset,
    parse_reference,
    parse_selector,
)
from usis.validate.findings import dotted

KEY_PATTERN = re.compile(r"^([a-z0-9]+):([A-Za-z0-9_{}]+)$")
CONSTANT_PATTERN = re.compile(r"^[A-Z][A-Z0-9_]*$")
OPERATION_LITERAL = re.compile(r"^op:[a-z_]+$")
PLACEHOLDER = re.compile(r"\{\{.*?\}\}")
EXECUTE_ONCE_NAMES = {"mpi:MPI_Init", "mpi:MPI_Init_thread", "mpi:MPI_Finalize"}
# Places an ordering edge may name besides the entry's own data_flow and event ids.
CALL_BOUNDARIES = {
    "call_entry": "the moment the call starts",
    "call_exit": "the moment the call returns",
    "prior_operations": "operations the same participant issued before this call",
    "later_operations": "operations the same participant issues after this call",
    "request_operation": "the operation a request handle stands for",
}
SEMANTIC_CLASSES = {
    "collective": ("collective",),
    "point_to_point": ("point_to_point",),
    "one_sided": ("one_sided",),
    "atomic": ("one_sided",),
}

Problem = tuple[str, str, str]
Entries = Mapping[str, Any]


@dataclass(frozen=True)
class Rule:
    """A consistency rule: its id, a one-line statement (as docs/usis.md shows it) and its check."""

    id: str
    statement: str
    check: Callable[[Entries, frozenset[str]], Iterator[Problem]]


RULES: list[Rule] = []


def rule(rule_id: str, statement: str, per_entry: bool = True) -> Callable[[Any], Any]:
    """Register a check; a per-entry check takes (key, entry, known_keys), a corpus check the map."""

    def register(function: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
        def over_corpus(entries: Entries, known: frozenset[str]) -> Iterator[Problem]:
            if not per_entry:
                yield from function(entries, known)
                return
            for key, entry in entries.items():
                if not isinstance(entry, Mapping):
                    continue
                try:
                    for path, message in function(key, entry, known):
                        yield key, path, message
                except (KeyError, TypeError, AttributeError, IndexError):
                    # A malformed entry is the schema's finding to report, not this rule's.
                    continue

        RULES.append(Rule(rule_id, statement, over_corpus))
        return function

    return register


def section(entry: Any, *names: str) -> Any:
    value: Any = entry
    for name in names:
        if not isinstance(value, Mapping):
            return None
        value = value.get(name)
    return value


def formal_of(entry: Mapping[str, Any]) -> Mapping[str, Any] | None:
    formal = section(entry, "semantics", "formal")
    return formal if isinstance(formal, Mapping) else None


def formal_rule(rule_id: str, statement: str) -> Callable[[Any], Any]:
    """Register a per-entry check of the formal block, given as `formal`; an entry whose formal
    block is null has nothing for it to check."""

    def register(function: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
        def check(key: str, entry: Mapping[str, Any], known: frozenset[str]) -> Iterator[Any]:
            formal = formal_of(entry)
            if formal is not None:
                yield from function(key, entry, formal, known)

        rule(rule_id, statement)(check)
        return function

    return register


@rule("USIS-C001", "identity.model and identity.name agree with the key `model:function_key`.")
def key_matches_identity(
    key: str, entry: Mapping[str, Any], known: frozenset[str]
) -> Iterator[Any]:
    match = KEY_PATTERN.match(key)
    if not match:
        yield "", "key is not of the form model:function_key"
        return
    model, function_key = match.groups()
    if entry["identity"]["model"] != model:
        yield "identity.model", f"{entry['identity']['model']!r} but the key says {model!r}"
    if entry["identity"]["name"].lower() != function_key.lower():
        yield "identity.name", f"{entry['identity']['name']!r} does not name {function_key!r}"


def references(entry: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    relationships = entry["relationships"]
    for variant, target in relationships["variants"].items():
        yield f"relationships.variants.{variant}", target
    yield "relationships.superseded_by", relationships["superseded_by"]
    for index, target in enumerate(relationships["supersedes"]):
        yield f"relationships.supersedes[{index}]", target


def variant_blocks(entries: Entries) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(key, relationships.variants) of every entry whose variants block is a mapping."""
    for key, entry in entries.items():
        variants = section(entry, "relationships", "variants")
        if isinstance(variants, Mapping):
            yield key, variants


def variants_of(entries: Entries, target: Any) -> Any:
    """The variants block of the entry a variant link names; None for no link."""
    return section(entries.get(target), "relationships", "variants") if target else None


@rule(
    "USIS-C002",
    "Every cross-reference is a `model:function_key` string naming an entry of the corpus.",
)
def references_resolve(key: str, entry: Mapping[str, Any], known: frozenset[str]) -> Iterator[Any]:
    for path, target in references(entry):
        if target is None:
            continue
        if not isinstance(target, str) or not KEY_PATTERN.match(target):
            yield path, f"{target!r} is not a model:function_key reference"
        elif target not in known:
            yield path, f"{target!r} is not an entry of the corpus"
        elif target == key:
            yield path, "an entry cannot refer to itself"


@rule(
    "USIS-C003",
    "Variant symmetry: a nonblocking or persistent variant points back with variants.blocking, "
    "and an entry's blocking target lists it as its nonblocking or persistent variant.",
    per_entry=False,
)
def variant_symmetry(entries: Entries, known: frozenset[str]) -> Iterator[Problem]:
    for key, variants in variant_blocks(entries):
        for kind in ("nonblocking", "persistent"):
            target = variants.get(kind)
            other = variants_of(entries, target)
            if isinstance(other, Mapping) and other.get("blocking") != key:
                yield (
                    key,
                    f"relationships.variants.{kind}",
                    f"{target} is this entry's {kind} variant but its variants.blocking is "
                    f"{other.get('blocking')!r}, expected {key!r}",
                )
        target = variants.get("blocking")
        other = variants_of(entries, target)
        if isinstance(other, Mapping) and key not in (
            other.get("nonblocking"),
            other.get("persistent"),
        ):
            yield (
                key,
                "relationships.variants.blocking",
                f"{target} is named as the blocking variant but lists neither nonblocking nor "
                f"persistent = {key!r}",
            )


@rule(
    "USIS-C004",
    "Host/GPU symmetry: an entry's variants.gpu target names it back as variants.host, and "
    "the other way round.",
    per_entry=False,
)
def host_gpu_symmetry(entries: Entries, known: frozenset[str]) -> Iterator[Problem]:
    for key, variants in variant_blocks(entries):
        for side, back in (("gpu", "host"), ("host", "gpu")):
            target = variants.get(side)
            other = variants_of(entries, target)
            if isinstance(other, Mapping) and other.get(back) != key:
                yield (
                    key,
                    f"relationships.variants.{side}",
                    f"{target} does not name this entry back as variants.{back} "
                    f"(it says {other.get(back)!r})",
                )


@rule(
    "USIS-C005",
    "`supersedes` is exactly the sorted inversion of the corpus's `superseded_by` edges.",
    per_entry=False,
)
def supersedes_is_inversion(entries: Entries, known: frozenset[str]) -> Iterator[Problem]:
    expected: dict[str, list[str]] = {key: [] for key in entries}
    for key, entry in entries.items():
        target = section(entry, "relationships", "superseded_by")
        if isinstance(target, str) and target in expected:
            expected[target].append(key)
    for key, entry in entries.items():
        actual = section(entry, "relationships", "supersedes")
        if isinstance(actual, list) and actual != sorted(expected[key]):
            yield (
                key,
                "relationships.supersedes",
                f"{actual} but the superseded_by edges give {sorted(expected[key])}",
            )


@rule("USIS-C006", "A parameter's `length` and `array_type` are null together.")
def length_with_array_type(
    key: str, entry: Mapping[str, Any], known: frozenset[str]
) -> Iterator[Any]:
    for index, parameter in enumerate(entry["parameters"]):
        if (parameter["length"] is None) != (parameter["array_type"] is None):
            yield (
                f"parameters[{index}].length",
                f"length {parameter['length']!r} with array_type {parameter['array_type']!r}; "
                "both or neither must be null",
            )


@rule(
    "USIS-C007",
    "A string `length` is a sibling parameter's name, `*`, or an UPPERCASE constant.",
)
def length_names_something(
    key: str, entry: Mapping[str, Any], known: frozenset[str]
) -> Iterator[Any]:
    names = {parameter["name"] for parameter in entry["parameters"]}
    for index, parameter in enumerate(entry["parameters"]):
        length = parameter["length"]
        if not isinstance(length, str) or length == "*" or CONSTANT_PATTERN.match(length):
            continue
        if length == parameter["name"] or length not in names:
            yield (
                f"parameters[{index}].length",
                f"{length!r} is not a sibling parameter, '*' or an UPPERCASE constant",
            )


@rule("USIS-C008", "`return.value_kind` is non-null only when `return.kind` is `value`.")
def value_kind_only_for_values(
    key: str, entry: Mapping[str, Any], known: frozenset[str]
) -> Iterator[Any]:
    returned = entry["return"]
    if returned["value_kind"] is not None and returned["kind"] != "value":
        yield (
            "return.value_kind",
            f"{returned['value_kind']!r} with return.kind {returned['kind']!r}",
        )


@rule(
    "USIS-C009",
    "At most one of semantics.collective/point_to_point/one_sided/atomic is non-null, and it "
    "matches identity.api_group (atomic goes with one_sided).",
)
def one_semantic_class(key: str, entry: Mapping[str, Any], known: frozenset[str]) -> Iterator[Any]:
    present = [name for name in SEMANTIC_CLASSES if entry["semantics"][name] is not None]
    if len(present) > 1:
        yield "semantics", f"{present} are all non-null; at most one may be"
        return
    group = entry["identity"]["api_group"]
    for name in present:
        if group not in SEMANTIC_CLASSES[name]:
            yield (
                f"semantics.{name}",
                f"non-null but identity.api_group is {group!r}, expected one of "
                f"{list(SEMANTIC_CLASSES[name])}",
            )


@rule(
    "USIS-C010",
    "`semantics.collective.reduction_op` is true exactly when a parameter has kind OPERATION.",
)
def reduction_op_has_operator(
    key: str, entry: Mapping[str, Any], known: frozenset[str]
) -> Iterator[Any]:
    collective = entry["semantics"]["collective"]
    if collective is None:
        return
    has_operator = any(parameter["kind"] == "OPERATION" for parameter in entry["parameters"])
    if collective["reduction_op"] != has_operator:
        yield (
            "semantics.collective.reduction_op",
            f"{collective['reduction_op']} but {'a' if has_operator else 'no'} parameter has "
            "kind OPERATION",
        )


@rule(
    "USIS-C011",
    "`tool_integration.buffer_aliasing` is `in_place_only` exactly when "
    "`semantics.collective.in_place` is true.",
)
def aliasing_mirrors_in_place(
    key: str, entry: Mapping[str, Any], known: frozenset[str]
) -> Iterator[Any]:
    collective = entry["semantics"]["collective"]
    in_place = bool(collective and collective["in_place"])
    aliasing = entry["tool_integration"]["buffer_aliasing"]
    if in_place != (aliasing == "in_place_only"):
        yield (
            "tool_integration.buffer_aliasing",
            f"{aliasing!r} while semantics.collective.in_place is "
            f"{collective['in_place'] if collective else None}",
        )


@rule(
    "USIS-C012",
    "A parameter whose `memory_space` is `either` has a context_dependencies entry for "
    "`param:<name>.memory_space`.",
)
def either_memory_has_context(
    key: str, entry: Mapping[str, Any], known: frozenset[str]
) -> Iterator[Any]:
    fields = {
        dependency["field"] for dependency in entry["tool_integration"]["context_dependencies"]
    }
    for index, parameter in enumerate(entry["parameters"]):
        wanted = f"param:{parameter['name']}.memory_space"
        if parameter["memory_space"] == "either" and wanted not in fields:
            yield (
                f"parameters[{index}].memory_space",
                f"'either' without a {wanted!r} context dependency",
            )


@rule(
    "USIS-C013",
    "`execution.execute_once` is true for MPI_Init, MPI_Init_thread and MPI_Finalize and for "
    "nothing else.",
)
def execute_once_only_for_init(
    key: str, entry: Mapping[str, Any], known: frozenset[str]
) -> Iterator[Any]:
    named = f"{entry['identity']['model']}:{entry['identity']['name']}"
    once = entry["execution"]["execute_once"]
    if once and named not in EXECUTE_ONCE_NAMES:
        yield "execution.execute_once", f"true, but only {sorted(EXECUTE_ONCE_NAMES)} may say so"
    if not once and named in EXECUTE_ONCE_NAMES:
        yield "execution.execute_once", f"false, but {named} may be called only once"


@rule("USIS-C014", "`bindings.c.signature` is null exactly when `bindings.c.expressible` is false.")
def signature_when_expressible(
    key: str, entry: Mapping[str, Any], known: frozenset[str]
) -> Iterator[Any]:
    binding = entry["bindings"]["c"]
    if binding is not None and (binding["signature"] is None) == binding["expressible"]:
        yield (
            "bindings.c.signature",
            f"{'null' if binding['signature'] is None else 'a prototype'} with expressible "
            f"{binding['expressible']}",
        )


@formal_rule(
    "USIS-C015",
    "A collective call's formal block (when non-null) has a `many` participant and a "
    "collective_rendezvous matching rule.",
)
def collective_formal_rendezvous(
    key: str, entry: Mapping[str, Any], formal: Mapping[str, Any], known: frozenset[str]
) -> Iterator[Any]:
    if entry["identity"]["api_group"] != "collective":
        return
    if not any(p["cardinality"] == "many" for p in formal["participants"]):
        yield (
            "semantics.formal.participants",
            "a collective needs a participant of cardinality many",
        )
    matching = formal["sync"]["matching"]
    if not matching or matching.get("kind") != "collective_rendezvous":
        yield (
            "semantics.formal.sync.matching",
            f"{matching!r}; a collective matches by collective_rendezvous",
        )


@formal_rule(
    "USIS-C016", "Every `matched` data_flow source names a sync event of the same entry (`via`)."
)
def matched_via_event(
    key: str, entry: Mapping[str, Any], formal: Mapping[str, Any], known: frozenset[str]
) -> Iterator[Any]:
    events = {event["id"] for event in formal["sync"]["events"]}
    for index, access in enumerate(formal["data_flow"]):
        source = access.get("source")
        if (
            isinstance(source, Mapping)
            and source.get("kind") == "matched"
            and source["via"] not in events
        ):
            yield (
                f"semantics.formal.data_flow[{index}].source.via",
                f"{source['via']!r} is not a sync event id; events: {sorted(events)}",
            )


def strings_with_paths(value: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield dotted(path), value
    elif isinstance(value, Mapping):
        for name, item in value.items():
            yield from strings_with_paths(item, (*path, name))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from strings_with_paths(item, (*path, index))


@rule("USIS-C017", "No `{{...}}` template placeholder survives anywhere in an entry.")
def no_placeholders(key: str, entry: Mapping[str, Any], known: frozenset[str]) -> Iterator[Any]:
    for path, text in strings_with_paths(entry):
        if PLACEHOLDER.search(text):
            yield path, f"unexpanded placeholder in {text!r}"


def formal_expressions(
    formal: Mapping[str, Any],
) -> Iterator[tuple[str, str, Callable[[str], Any]]]:
    """(path, text, parser) for every reference-grammar string of a formal block."""
    base = "semantics.formal"
    for index, participant in enumerate(formal["participants"]):
        yield f"{base}.participants[{index}].selector", participant["selector"], parse_selector
    for index, access in enumerate(formal["data_flow"]):
        where = f"{base}.data_flow[{index}]"
        if access.get("buffer") is not None:
            yield f"{where}.buffer", access["buffer"], parse_reference
        if access.get("offset") is not None:
            yield f"{where}.offset", access["offset"], parse_offset
        extent = access.get("extent")
        if isinstance(extent, Mapping):
            if "count_ref" in extent:
                yield f"{where}.extent.count_ref", extent["count_ref"], parse_offset
            if "datatype_ref" in extent:
                yield f"{where}.extent.datatype_ref", extent["datatype_ref"], parse_reference
        operation = access.get("operation_ref")
        if operation is not None and not OPERATION_LITERAL.match(operation):
            yield f"{where}.operation_ref", operation, parse_reference
        source = access.get("source")
        if isinstance(source, Mapping):
            for name in ("offset", "placement_offset"):
                if source.get(name) is not None:
                    yield f"{where}.source.{name}", source[name], parse_offset
        for position, condition in enumerate(access.get("valid_during") or []):
            if "bound_to" in condition:
                yield (
                    f"{where}.valid_during[{position}].bound_to",
                    condition["bound_to"],
                    parse_reference,
                )
    for index, event in enumerate(formal["sync"]["events"]):
        for name in ("bound_to", "group_ref"):
            if event.get(name) is not None:
                yield f"{base}.sync.events[{index}].{name}", event[name], parse_reference
    matching = formal["sync"]["matching"]
    if isinstance(matching, Mapping):
        for index, match_key in enumerate(matching.get("match_keys", [])):
            yield f"{base}.sync.matching.match_keys[{index}]", match_key, parse_match_key
    for index, handle in enumerate(formal["handle_lifecycle"]):
        yield f"{base}.handle_lifecycle[{index}].handle", handle["handle"], parse_reference
        if handle.get("derived_from") is not None:
            yield (
                f"{base}.handle_lifecycle[{index}].derived_from",
                handle["derived_from"],
                parse_reference,
            )


@formal_rule(
    "USIS-C018",
    "Every selector, offset, match key and reference of the formal layer parses in the "
    "reference grammar.",
)
def formal_grammar_parses(
    key: str, entry: Mapping[str, Any], formal: Mapping[str, Any], known: frozenset[str]
) -> Iterator[Any]:
    for path, text, parser in formal_expressions(formal):
        try:
            parser(text)
        except GrammarError as error:
            yield path, str(error)


@formal_rule(
    "USIS-C019",
    "Every `param:` reference of the formal layer names a parameter of the entry.",
)
def formal_params_exist(
    key: str, entry: Mapping[str, Any], formal: Mapping[str, Any], known: frozenset[str]
) -> Iterator[Any]:
    names = {parameter["name"] for parameter in entry["parameters"]}
    for path, text, parser in formal_expressions(formal):
        try:
            missing = parameter_names(parser(text)) - names
        except GrammarError:
            continue
        if missing:
            yield path, f"{text!r} refers to {sorted(missing)}, not parameters of this entry"


@formal_rule(
    "USIS-C020",
    "Every aggregation scope (reduce inputs, gathered sources) is one of the registered scopes.",
)
def scopes_registered(
    key: str, entry: Mapping[str, Any], formal: Mapping[str, Any], known: frozenset[str]
) -> Iterator[Any]:
    for index, access in enumerate(formal["data_flow"]):
        where = f"semantics.formal.data_flow[{index}]"
        for position, contribution in enumerate(access.get("inputs") or []):
            if contribution.get("scope") not in SCOPES:
                yield (
                    f"{where}.inputs[{position}].scope",
                    f"{contribution.get('scope')!r} is not one of {sorted(SCOPES)}",
                )
        source = access.get("source")
        if (
            isinstance(source, Mapping)
            and source.get("kind") == "gathered"
            and source["scope"] not in SCOPES
        ):
            yield f"{where}.source.scope", f"{source['scope']!r} is not one of {sorted(SCOPES)}"


@formal_rule(
    "USIS-C021",
    "Formal ids are unique and resolve: data_flow and event participants, source and input "
    "refs, and ordering endpoints (a data_flow id, an event id or a call boundary).",
)
def formal_ids_resolve(
    key: str, entry: Mapping[str, Any], formal: Mapping[str, Any], known: frozenset[str]
) -> Iterator[Any]:
    base = "semantics.formal"
    participants = [participant["id"] for participant in formal["participants"]]
    flows = [access["id"] for access in formal["data_flow"]]
    events = [event["id"] for event in formal["sync"]["events"]]
    for label, ids in (("participant", participants), ("data_flow", flows), ("event", events)):
        duplicates = sorted({item for item in ids if ids.count(item) > 1})
        if duplicates:
            yield base, f"duplicate {label} ids {duplicates}"
    for index, access in enumerate(formal["data_flow"]):
        where = f"{base}.data_flow[{index}]"
        owner = access.get("participant")
        if owner is not None and owner not in participants:
            yield f"{where}.participant", f"{owner!r} is not a participant id; ids: {participants}"
        source = access.get("source")
        if isinstance(source, Mapping) and "ref" in source and source["ref"] not in flows:
            yield f"{where}.source.ref", f"{source['ref']!r} is not a data_flow id"
        for position, contribution in enumerate(access.get("inputs") or []):
            if contribution.get("ref") not in flows:
                yield (
                    f"{where}.inputs[{position}].ref",
                    f"{contribution.get('ref')!r} is not a data_flow id",
                )
    for index, event in enumerate(formal["sync"]["events"]):
        if event["participant"] not in participants:
            yield (
                f"{base}.sync.events[{index}].participant",
                f"{event['participant']!r} is not a participant id",
            )
    endpoints = set(flows) | set(events) | set(CALL_BOUNDARIES)
    for index, edge in enumerate(formal["sync"]["ordering"]):
        for end in ("before", "after"):
            if edge[end] not in endpoints:
                yield (
                    f"{base}.sync.ordering[{index}].{end}",
                    f"{edge[end]!r} is neither a data_flow id, an event id nor one of "
                    f"{sorted(CALL_BOUNDARIES)}",
                )


@formal_rule(
    "USIS-C022",
    "A data_flow `reduce` node has inputs and an operation_ref and no participant; every other "
    "access has a participant and no inputs or operation_ref.",
)
def reduce_nodes_well_formed(
    key: str, entry: Mapping[str, Any], formal: Mapping[str, Any], known: frozenset[str]
) -> Iterator[Any]:
    for index, access in enumerate(formal["data_flow"]):
        where = f"semantics.formal.data_flow[{index}]"
        if access["op"] == "reduce":
            if not access.get("inputs") or access.get("operation_ref") is None:
                yield where, "a reduce node needs inputs and an operation_ref"
            if access.get("participant") is not None:
                yield f"{where}.participant", "a reduce node belongs to no single participant"
        else:
            if access.get("participant") is None:
                yield f"{where}.participant", f"a {access['op']} access needs a participant"
            if access.get("inputs") or access.get("operation_ref") is not None:
                yield (
                    where,
                    f"only a reduce node has inputs or an operation_ref, not a {access['op']}",
                )


@rule(
    "USIS-C023",
    "A `{T}` in a key or identity.name appears exactly when identity.type_family is non-null.",
)
def family_placeholder(key: str, entry: Mapping[str, Any], known: frozenset[str]) -> Iterator[Any]:
    generic = "{T}" in key or "{T}" in entry["identity"]["name"]
    family = entry["identity"]["type_family"]
    if generic and not family:
        yield "identity.type_family", "the key or name holds {T} but type_family is empty"
    if family and not generic:
        yield "identity.type_family", f"{family} but neither the key nor the name holds {{T}}"
    if "{" in key.replace("{T}", ""):
        yield "", "the only placeholder a key may hold is {T}"


@rule(
    "USIS-C024",
    "A type family's members exist: for each type of a `{T}` entry's type_family, the key with "
    "`{T}` replaced by the type is an entry of the corpus.",
)
def family_members_exist(
    key: str, entry: Mapping[str, Any], known: frozenset[str]
) -> Iterator[Any]:
    for index, type_name in enumerate(entry["identity"]["type_family"] or []):
        member = key.replace("{T}", type_name)
        if "{T}" in key and member not in known:
            yield (
                f"identity.type_family[{index}]",
                f"member {member!r} is not an entry of the corpus",
            )


@formal_rule(
    "USIS-C025",
    "Each participant's `cardinality` fits its selector: `self` is one participant; a "
    "membership (`in`) or neighbourhood selector is many.",
)
def cardinality_fits_selector(
    key: str, entry: Mapping[str, Any], formal: Mapping[str, Any], known: frozenset[str]
) -> Iterator[Any]:
    for index, participant in enumerate(formal["participants"]):
        selector = participant["selector"].strip()
        many_selector = " in " in f" {selector} " or selector.startswith("is_neighbor(")
        if selector == "self" and participant["cardinality"] != "one":
            yield (
                f"semantics.formal.participants[{index}].cardinality",
                "'self' selects one participant",
            )
        if many_selector and participant["cardinality"] != "many":
            yield (
                f"semantics.formal.participants[{index}].cardinality",
                f"{selector!r} selects a set of participants; cardinality must be many",
            )


@formal_rule(
    "USIS-C026",
    "A passive_target participant does not call the function, and every other role does.",
)
def passive_targets_do_not_call(
    key: str, entry: Mapping[str, Any], formal: Mapping[str, Any], known: frozenset[str]
) -> Iterator[Any]:
    for index, participant in enumerate(formal["participants"]):
        passive = participant["role_kind"] == "passive_target"
        if participant["calls_function"] == passive:
            yield (
                f"semantics.formal.participants[{index}].calls_function",
                f"{participant['calls_function']} for role_kind {participant['role_kind']!r}",
            )


@rule(
    "USIS-C027",
    "Deprecation and supersession agree: an entry with `superseded_by` has `deprecated_in`.",
)
def superseded_is_deprecated(
    key: str, entry: Mapping[str, Any], known: frozenset[str]
) -> Iterator[Any]:
    if (
        entry["relationships"]["superseded_by"] is not None
        and entry["identity"]["deprecated_in"] is None
    ):
        yield (
            "identity.deprecated_in",
            "null although relationships.superseded_by names a replacement",
        )


@rule(
    "USIS-C028",
    "Parameter names are unique within an entry.",
)
def parameter_names_unique(
    key: str, entry: Mapping[str, Any], known: frozenset[str]
) -> Iterator[Any]:
    names = [parameter["name"] for parameter in entry["parameters"]]
    for index, name in enumerate(names):
        if names.index(name) != index:
            yield (
                f"parameters[{index}].name",
                f"{name!r} is already parameters[{names.index(name)}]",
            )


@rule(
    "USIS-C029",
    "A receive (`point_to_point.direction` receive) has null synchronous, buffered and ready: "
    "those describe send modes.",
)
def receive_has_no_send_mode(
    key: str, entry: Mapping[str, Any], known: frozenset[str]
) -> Iterator[Any]:
    p2p = entry["semantics"]["point_to_point"]
    if p2p is not None and p2p["direction"] == "receive":
        for mode in ("synchronous", "buffered", "ready"):
            if p2p[mode] is not None:
                yield f"semantics.point_to_point.{mode}", f"{p2p[mode]} on a receive; must be null"


@rule(
    "USIS-C030",
    "An entry whose `execution.launch` is `cpu+gpu` covers GPU launch itself: variants.gpu is null.",
)
def dual_launch_has_no_gpu_variant(
    key: str, entry: Mapping[str, Any], known: frozenset[str]
) -> Iterator[Any]:
    gpu = entry["relationships"]["variants"]["gpu"]
    if entry["execution"]["launch"] == "cpu+gpu" and gpu is not None:
        yield "relationships.variants.gpu", f"{gpu!r} although launch is cpu+gpu"


@rule(
    "USIS-C031",
    "`execution.gpu_scope` is non-null only for a GPU-callable entry (launch gpu or cpu+gpu).",
)
def gpu_scope_only_for_gpu_calls(
    key: str, entry: Mapping[str, Any], known: frozenset[str]
) -> Iterator[Any]:
    execution = entry["execution"]
    if execution["gpu_scope"] is not None and execution["launch"] not in ("gpu", "cpu+gpu"):
        yield (
            "execution.gpu_scope",
            f"{execution['gpu_scope']!r} with launch {execution['launch']!r}",
        )


@rule(
    "USIS-C032",
    "`semantics.atomic.operation` is null only when a parameter of kind OPERATION supplies it.",
)
def runtime_atomic_has_operator(
    key: str, entry: Mapping[str, Any], known: frozenset[str]
) -> Iterator[Any]:
    atomic = entry["semantics"]["atomic"]
    has_operator = any(parameter["kind"] == "OPERATION" for parameter in entry["parameters"])
    if atomic is not None and atomic["operation"] is None and not has_operator:
        yield "semantics.atomic.operation", "null, but no parameter of kind OPERATION supplies it"


@rule(
    "USIS-C033",
    "`tool_integration.buffer_aliasing` is null exactly when the entry has no BUFFER parameter.",
)
def aliasing_null_without_buffers(
    key: str, entry: Mapping[str, Any], known: frozenset[str]
) -> Iterator[Any]:
    has_buffer = any(parameter["kind"] == "BUFFER" for parameter in entry["parameters"])
    aliasing = entry["tool_integration"]["buffer_aliasing"]
    if (aliasing is None) == has_buffer:
        yield (
            "tool_integration.buffer_aliasing",
            f"{aliasing!r} with {'a' if has_buffer else 'no'} BUFFER parameter",
        )


@rule(
    "USIS-C034",
    "Only a parameter of kind BUFFER, or of null kind (a work array such as pSync), has a "
    "`memory_space`.",
)
def memory_space_only_on_buffers(
    key: str, entry: Mapping[str, Any], known: frozenset[str]
) -> Iterator[Any]:
    for index, parameter in enumerate(entry["parameters"]):
        if parameter["memory_space"] is not None and parameter["kind"] not in ("BUFFER", None):
            yield (
                f"parameters[{index}].memory_space",
                f"{parameter['memory_space']!r} on a {parameter['kind']} parameter",
            )


@rule(
    "USIS-C035",
    "Each context_dependencies `field` names a field of the entry (`execution.blocking`) or a "
    "parameter's field (`param:<name>.<field>`).",
)
def context_fields_exist(
    key: str, entry: Mapping[str, Any], known: frozenset[str]
) -> Iterator[Any]:
    parameters = {parameter["name"]: parameter for parameter in entry["parameters"]}
    for index, dependency in enumerate(entry["tool_integration"]["context_dependencies"]):
        field = dependency["field"]
        where = f"tool_integration.context_dependencies[{index}].field"
        if field.startswith("param:"):
            name, _, rest = field.removeprefix("param:").partition(".")
            if name not in parameters:
                yield where, f"{field!r} names no parameter of this entry"
            elif rest and rest.split(".")[0] not in parameters[name]:
                yield where, f"{field!r}: parameters have no field {rest.split('.')[0]!r}"
            continue
        value: Any = entry
        for part in field.split("."):
            if not isinstance(value, Mapping) or part not in value:
                yield where, f"{field!r} names no field of the entry"
                break
            value = value[part]


@rule(
    "USIS-C036",
    "`semantics.collective.topology_aware` is true only for MPI's neighborhood collectives.",
)
def topology_aware_only_for_neighborhoods(
    key: str, entry: Mapping[str, Any], known: frozenset[str]
) -> Iterator[Any]:
    collective = entry["semantics"]["collective"]
    neighborhood = (
        entry["identity"]["model"] == "mpi" and "neighbor" in entry["identity"]["name"].lower()
    )
    if collective is not None and collective["topology_aware"] and not neighborhood:
        yield (
            "semantics.collective.topology_aware",
            "true, but this is not an MPI neighborhood collective",
        )


@rule(
    "USIS-C037",
    "An entry with `semantics.collective` is called by every member: `execution.collective` is true.",
)
def collective_semantics_are_collective(
    key: str, entry: Mapping[str, Any], known: frozenset[str]
) -> Iterator[Any]:
    if entry["semantics"]["collective"] is not None and not entry["execution"]["collective"]:
        yield "execution.collective", "false although semantics.collective describes a collective"


@formal_rule(
    "USIS-C038",
    "A handle_lifecycle entry on `return_value` belongs to a call whose `return.kind` is RESULT.",
)
def returned_handles_are_results(
    key: str, entry: Mapping[str, Any], formal: Mapping[str, Any], known: frozenset[str]
) -> Iterator[Any]:
    for index, handle in enumerate(formal["handle_lifecycle"]):
        if handle["handle"] == "return_value" and entry["return"]["kind"] != "RESULT":
            yield (
                f"semantics.formal.handle_lifecycle[{index}].handle",
                f"'return_value' but return.kind is {entry['return']['kind']!r}",
            )


@rule(
    "USIS-C039",
    "`execution.procedure_class` agrees with `execution.blocking`: b-op blocks, nb-op does not.",
)
def procedure_class_matches_blocking(
    key: str, entry: Mapping[str, Any], known: frozenset[str]
) -> Iterator[Any]:
    execution = entry["execution"]
    expected = {"b-op": True, "nb-op": False}.get(execution["procedure_class"])
    if expected is not None and execution["blocking"] != expected:
        yield (
            "execution.blocking",
            f"{execution['blocking']} for procedure_class {execution['procedure_class']!r}",
        )


@rule(
    "USIS-C040",
    "Every `tool_integration.invariants` item is a selector of the reference grammar whose "
    "`param:` references name parameters of the entry.",
)
def invariants_parse(key: str, entry: Mapping[str, Any], known: frozenset[str]) -> Iterator[Any]:
    names = {parameter["name"] for parameter in entry["parameters"]}
    for index, invariant in enumerate(entry["tool_integration"]["invariants"]):
        where = f"tool_integration.invariants[{index}]"
        try:
            missing = parameter_names(parse_selector(invariant)) - names
        except GrammarError as error:
            yield where, str(error)
            continue
        if missing:
            yield where, f"{invariant!r} refers to {sorted(missing)}, not parameters of this entry"


def collective_traits(entry: Mapping[str, Any]) -> tuple[Any, Any, Any]:
    return (
        entry["identity"]["api_group"],
        entry["execution"]["locality"],
        entry["execution"]["collective"],
    )


def equivalence_class(key: str, entry: Mapping[str, Any]) -> str | None:
    """What makes calls of different models equivalent: the same collective type, or an
    OpenSHMEM routine and its NVSHMEM twin (`shmem:shmem_barrier_all`, `nvshmem:nvshmem_barrier_all`)."""
    collective = section(entry, "semantics", "collective")
    if isinstance(collective, Mapping) and isinstance(collective.get("type"), str):
        return f"collective {collective['type']}"
    if key.startswith("shmem:shmem_"):
        return f"OpenSHMEM routine {key.removeprefix('shmem:')}"
    if key.startswith("nvshmem:nvshmem_"):
        return f"OpenSHMEM routine {key.removeprefix('nvshmem:nv')}"
    return None


@rule(
    "USIS-C041",
    "Equivalent calls across models (the same `semantics.collective.type`, or an OpenSHMEM routine "
    "and its NVSHMEM twin) agree on identity.api_group, execution.locality and "
    "execution.collective.",
    per_entry=False,
)
def equivalents_agree(entries: Entries, known: frozenset[str]) -> Iterator[Problem]:
    # The first entry (in key order) of an equivalence class sets the reference traits.
    reference: dict[str, tuple[str, tuple[Any, Any, Any]]] = {}
    for key in sorted(entries):
        entry = entries[key]
        try:
            equivalence = equivalence_class(key, entry)
            traits = collective_traits(entry)
        except (KeyError, TypeError):
            continue
        if equivalence is None:
            continue
        first = reference.setdefault(equivalence, (key, traits))
        if first[0].split(":")[0] == key.split(":")[0] or first[1] == traits:
            continue
        fields = ("identity.api_group", "execution.locality", "execution.collective")
        for field_name, mine, theirs in zip(fields, traits, first[1], strict=True):
            if mine != theirs:
                yield (
                    key,
                    field_name,
                    f"{mine!r}, but the equivalent {first[0]} ({equivalence}) has {theirs!r}",
                )


@rule(
    "USIS-C042",
    "`semantics.collective.in_place` follows the documented condition: it is true only for a call "
    "with two BUFFER parameters, and an entry that records an in-place condition (a "
    "context_dependencies item on `semantics.collective.in_place`) has it true.",
)
def in_place_follows_condition(
    key: str, entry: Mapping[str, Any], known: frozenset[str]
) -> Iterator[Any]:
    collective = entry["semantics"]["collective"]
    buffers = [p for p in entry["parameters"] if p["kind"] == "BUFFER"]
    stated = any(
        dependency["field"] == "semantics.collective.in_place"
        for dependency in entry["tool_integration"]["context_dependencies"]
    )
    in_place = collective is not None and collective["in_place"]
    if in_place and len(buffers) < 2:
        yield "semantics.collective.in_place", "true for a call with fewer than two buffers"
    if stated and not in_place:
        yield (
            "semantics.collective.in_place",
            "false although the entry records its documented in-place condition",
        )


@rule(
    "USIS-C043",
    "A parameter's `constraints.paired_with` names a parameter of the entry.",
)
def paired_with_exists(key: str, entry: Mapping[str, Any], known: frozenset[str]) -> Iterator[Any]:
    names = {parameter["name"] for parameter in entry["parameters"]}
    for index, parameter in enumerate(entry["parameters"]):
        paired = parameter["constraints"]["paired_with"]
        if paired is not None and paired not in names:
            yield f"parameters[{index}].constraints.paired_with", f"{paired!r} is not a parameter"


@rule(
    "USIS-C044",
    "Every X with an XAsync entry of the same model is its blocking variant: X's "
    "variants.nonblocking is XAsync and XAsync's variants.blocking is X.",
    per_entry=False,
)
def async_pairs_linked(entries: Entries, known: frozenset[str]) -> Iterator[Problem]:
    for key in sorted(entries):
        if not key.endswith("Async") or key.removesuffix("Async") not in entries:
            continue
        plain = key.removesuffix("Async")
        asynchronous, synchronous = entries[key], entries[plain]
        try:
            if synchronous["relationships"]["variants"]["nonblocking"] != key:
                yield plain, "relationships.variants.nonblocking", f"should be {key!r}"
            if asynchronous["relationships"]["variants"]["blocking"] != plain:
                yield key, "relationships.variants.blocking", f"should be {plain!r}"
        except (KeyError, TypeError):
            continue


PENDING_COMPLETIONS = ("ic", "stream_ordered")


@rule(
    "USIS-C045",
    "`nb-op` only where work is left pending: an entry whose procedure_class is nb-op has "
    "`execution.completion` ic (a request) or stream_ordered.",
)
def nonblocking_leaves_work(
    key: str, entry: Mapping[str, Any], known: frozenset[str]
) -> Iterator[Any]:
    execution = entry["execution"]
    if execution["procedure_class"] == "nb-op" and execution["completion"] not in (
        PENDING_COMPLETIONS
    ):
        yield (
            "execution.procedure_class",
            f"nb-op, but completion is {execution['completion']!r}: nothing is left pending",
        )


@formal_rule(
    "USIS-C046",
    "A formal block's offsets and extents use only parameters the entry has, and index only "
    "its array parameters (those with a `length`).",
)
def formal_offsets_fit_parameters(
    key: str, entry: Mapping[str, Any], formal: Mapping[str, Any], known: frozenset[str]
) -> Iterator[Any]:
    arrays = {p["name"] for p in entry["parameters"] if p["length"] is not None}
    names = {p["name"] for p in entry["parameters"]}
    for path, text, parser in formal_expressions(formal):
        if parser is not parse_offset:
            continue
        try:
            tree = parser(text)
        except GrammarError:
            continue
        scalars = sorted((indexed_parameters(tree) & names) - arrays)
        if scalars:
            yield path, f"{text!r} indexes {scalars}, which are not array parameters"
