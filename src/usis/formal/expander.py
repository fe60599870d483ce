"""The expander: turns a formal assignment `{shape_ref, bindings, extra?}` into an inlined formal block.

Rules: a string that is exactly `{{slot}}` takes the bound value with its type; a slot inside text is
substituted as text; an unbound required slot is an error (an unbound optional slot is null where it
stands alone and an error inside text); `shape_ref` may list several shapes, merged in order; `extra`
is deep-merged last. The result is checked against the schema's $defs/formal.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

from usis.formal.grammar import (
    GrammarError,
    parse_offset,
    parse_reference,
    parse_selector,
)
from usis.formal.shapes import PLACEHOLDER, Shape, ShapeCatalog, Slot, load_catalog, placeholders
from usis.schema import definition_validator

OPERATION_LITERAL = re.compile(r"^op:[a-z_]+$")
WHOLE_PLACEHOLDER = re.compile(r"^\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}$")


class ExpansionError(ValueError):
    """An assignment that cannot be expanded; the message says where, what and what would fit."""


def check_binding(slot: Slot, value: Any) -> None:
    """Raise ValueError when a bound value does not fit its slot's kind."""
    kind = slot.kind
    if kind == "literal_slot":
        return
    if kind == "extent_slot":
        if value is None:
            return
        if not isinstance(value, Mapping) or set(value) != {"count_ref", "datatype_ref"}:
            raise ValueError(
                "an extent is {'count_ref': <offset expression>, 'datatype_ref': "
                "<param: reference or type: literal>} or null"
            )
        parse_offset(str(value["count_ref"]))
        parse_reference(str(value["datatype_ref"]))
        return
    if not isinstance(value, str):
        raise ValueError(f"a {kind} takes a string, found {type(value).__name__}")
    if kind == "selector_slot":
        parse_selector(value)
    elif kind == "index_slot":
        parse_offset(value)
    elif kind in ("buffer_slot", "handle_slot") or (
        kind == "operation_slot" and not OPERATION_LITERAL.match(value)
    ):
        parse_reference(value)


def substitute(value: Any, shape: Shape, bindings: Mapping[str, Any]) -> Any:
    """One template value with every placeholder replaced by its binding."""
    if isinstance(value, Mapping):
        return {name: substitute(item, shape, bindings) for name, item in value.items()}
    if isinstance(value, list):
        return [substitute(item, shape, bindings) for item in value]
    if not isinstance(value, str):
        return value
    whole = WHOLE_PLACEHOLDER.match(value)
    if whole:
        name = whole.group(1)
        if name in bindings:
            return copy.deepcopy(bindings[name])
        slot = shape.slot(name)
        if slot is not None and slot.optional:
            return None
        raise ExpansionError(f"slot {name!r} is not bound")

    def text_of(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in bindings:
            raise ExpansionError(f"slot {name!r} is not bound (it appears inside {value!r})")
        bound = bindings[name]
        if not isinstance(bound, str):
            raise ExpansionError(
                f"slot {name!r} appears inside text {value!r} but is bound to a "
                f"{type(bound).__name__}; only a string can be substituted into text"
            )
        return bound

    return PLACEHOLDER.sub(text_of, value)


def overlay(base: Any, fragment: Any) -> Any:
    """Combine two expanded shapes: objects merge, lists concatenate, a null never erases."""
    if fragment is None:
        return base
    if isinstance(base, dict) and isinstance(fragment, dict):
        merged = dict(base)
        for name, item in fragment.items():
            merged[name] = overlay(base[name], item) if name in base else item
        return merged
    if isinstance(base, list) and isinstance(fragment, list):
        return base + [item for item in fragment if item not in base]
    return fragment


def deep_merge(base: Any, patch: Any) -> Any:
    """Apply an `extra` patch: objects merge key by key and patch values win (null included);
    lists of objects with ids merge by id (a new id appends); other lists concatenate."""
    if isinstance(base, dict) and isinstance(patch, Mapping):
        merged = dict(base)
        for name, item in patch.items():
            merged[name] = deep_merge(base[name], item) if name in base else copy.deepcopy(item)
        return merged
    if isinstance(base, list) and isinstance(patch, list):
        if all(isinstance(item, Mapping) and "id" in item for item in [*base, *patch]):
            merged_list = list(base)
            positions = {item["id"]: index for index, item in enumerate(base)}
            for item in patch:
                if item["id"] in positions:
                    index = positions[item["id"]]
                    merged_list[index] = deep_merge(merged_list[index], item)
                else:
                    merged_list.append(copy.deepcopy(item))
            return merged_list
        return base + [copy.deepcopy(item) for item in patch if item not in base]
    return copy.deepcopy(patch)


def shape_refs(assignment: Mapping[str, Any]) -> list[str]:
    refs = assignment.get("shape_ref")
    if isinstance(refs, str):
        return [refs]
    if isinstance(refs, list) and refs and all(isinstance(ref, str) for ref in refs):
        return list(refs)
    raise ExpansionError(f"shape_ref must be a shape id or a non-empty list of ids, found {refs!r}")


def expand(
    assignment: Mapping[str, Any], catalog: ShapeCatalog | None = None, where: str = "formal"
) -> dict[str, Any]:
    """The inlined semantics.formal block for one assignment; raises ExpansionError with `where`."""
    catalog = catalog or load_catalog()
    unknown_keys = set(assignment) - {"shape_ref", "bindings", "extra"}
    if unknown_keys:
        raise ExpansionError(
            f"{where}: unknown keys {sorted(unknown_keys)}; an assignment has shape_ref, "
            "bindings and optionally extra"
        )
    try:
        refs = shape_refs(assignment)
        shapes = [catalog[ref] for ref in refs]
    except (KeyError, ExpansionError) as error:
        raise ExpansionError(f"{where}: {error.args[0]}") from None
    bindings = assignment.get("bindings", {})
    if not isinstance(bindings, Mapping):
        raise ExpansionError(f"{where}: bindings must be an object, found {bindings!r}")
    slots_by_name = {slot.name: slot for shape in shapes for slot in shape.slots}
    for name, value in bindings.items():
        if name not in slots_by_name:
            raise ExpansionError(
                f"{where}: binding {name!r} is not a slot of {refs}; slots: {sorted(slots_by_name)}"
            )
        try:
            check_binding(slots_by_name[name], value)
        except (ValueError, GrammarError) as error:
            raise ExpansionError(
                f"{where}: bindings.{name} ({slots_by_name[name].kind}): {error}"
            ) from None
    expanded: Any = None
    for shape in shapes:
        try:
            part = substitute(shape.template, shape, bindings)
        except ExpansionError as error:
            raise ExpansionError(f"{where}: shape {shape.id}: {error}") from None
        expanded = part if expanded is None else overlay(expanded, part)
    if "extra" in assignment:
        expanded = deep_merge(expanded, assignment["extra"])
    leftover = sorted(set(placeholders(expanded)))
    if leftover:
        raise ExpansionError(f"{where}: placeholders survive expansion: {leftover}")
    errors = sorted(
        definition_validator("formal").iter_errors(expanded), key=lambda e: list(e.path)
    )
    if errors:
        path = "/".join(str(part) for part in errors[0].absolute_path)
        raise ExpansionError(
            f"{where}: expanded block is not a valid formal: {path}: {errors[0].message}"
        )
    result: dict[str, Any] = expanded
    return result
