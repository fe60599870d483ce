"""Assemble stage: supersedes inversion, `{T}` family concretization and explicit nulls, as pure functions."""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

from usis.schema import load_schema

FAMILY_TOKEN = "{T}"
IDENTIFIER_CHAR = re.compile(r"[A-Za-z0-9_]")


class AssembleError(ValueError):
    """A checkpoint assemble cannot turn into entries; the message names the key."""


def family_types(record: Mapping[str, Any], family_key: str) -> list[tuple[str, str]]:
    """(name suffix, C type) pairs of a families record: `types` lists plain names (the C type is
    the name) or {"name", "c_type"} objects."""
    pairs = []
    for item in record.get("types", []):
        if isinstance(item, str):
            pairs.append((item, item))
        elif isinstance(item, Mapping) and "name" in item:
            pairs.append((str(item["name"]), str(item.get("c_type", item["name"]))))
        else:
            raise AssembleError(
                f"families[{family_key}]: type {item!r}; expected a name or {{name, c_type}}"
            )
    if not pairs:
        raise AssembleError(f"families[{family_key}]: no types")
    return pairs


def member_versions(
    record: Mapping[str, Any], family_key: str
) -> dict[str, tuple[str | None, dict[str, str]]]:
    """{name suffix: (identity.since, its provenance record)} for the types of a families record
    that carry their own `since` (with `since_from`, the origin): the members whose version
    differs from the family entry's, which then holds none."""
    found: dict[str, tuple[str | None, dict[str, str]]] = {}
    for item in record.get("types", []):
        if isinstance(item, Mapping) and "since" in item:
            if "since_from" not in item:
                raise AssembleError(
                    f"families[{family_key}]: type {item['name']!r} has no since_from"
                )
            found[str(item["name"])] = (
                item["since"],
                {"stage": "classify", "method": "curated", "from": str(item["since_from"])},
            )
    return found


def concretize_text(text: str, suffix: str, c_type: str) -> str:
    """Replace each `{T}`: inside an identifier (`shmem_{T}_put`) or after `type:` by the name
    suffix, elsewhere (a C type position such as `const {T} *src`) by the C type."""
    out, position = [], 0
    while True:
        found = text.find(FAMILY_TOKEN, position)
        if found < 0:
            out.append(text[position:])
            return "".join(out)
        out.append(text[position:found])
        before = text[found - 1] if found else ""
        after_index = found + len(FAMILY_TOKEN)
        after = text[after_index] if after_index < len(text) else ""
        in_identifier = bool(IDENTIFIER_CHAR.match(before) or IDENTIFIER_CHAR.match(after))
        out.append(suffix if in_identifier or text[:found].endswith("type:") else c_type)
        position = after_index


def concretize_value(value: Any, suffix: str, c_type: str) -> Any:
    if isinstance(value, str):
        return concretize_text(value, suffix, c_type)
    if isinstance(value, Mapping):
        return {name: concretize_value(item, suffix, c_type) for name, item in value.items()}
    if isinstance(value, list):
        return [concretize_value(item, suffix, c_type) for item in value]
    return value


def concretize_families(
    entries: dict[str, Any], families: Mapping[str, Any], provenance: dict[str, Any]
) -> None:
    """Add one concrete entry per type of each `{T}` family (the family entry stays, with its
    type_family set to the names); member provenance copies the family's."""
    for family_key in sorted(families):
        if family_key not in entries:
            raise AssembleError(f"families[{family_key}]: no entry has this key")
        if FAMILY_TOKEN not in family_key:
            raise AssembleError(f"families[{family_key}]: a family key holds {FAMILY_TOKEN}")
        family = entries[family_key]
        pairs = family_types(families[family_key], family_key)
        family["identity"]["type_family"] = [suffix for suffix, _ in pairs]
        versions = member_versions(families[family_key], family_key)
        for suffix, c_type in pairs:
            member_key = concretize_text(family_key, suffix, c_type)
            if member_key in entries:
                raise AssembleError(f"families[{family_key}]: member {member_key} already exists")
            member = concretize_value(copy.deepcopy(family), suffix, c_type)
            member["identity"]["type_family"] = None
            entries[member_key] = member
            records = copy.deepcopy(provenance.get(family_key, {}))
            if suffix in versions:
                # A type the family gained in a later release than its other types.
                member["identity"]["since"], records["/identity/since"] = versions[suffix]
            records["/identity/name"] = {
                "stage": "assemble",
                "method": "rule",
                "from": f"{family_key} with {{T}} = {suffix} ({c_type})",
            }
            records["/identity/type_family"] = {
                "stage": "assemble",
                "method": "rule",
                "from": "a concrete member of a family is generic over nothing",
            }
            provenance[member_key] = records
        provenance.setdefault(family_key, {})["/identity/type_family"] = {
            "stage": "assemble",
            "method": "rule",
            "from": f"families[{family_key}].types",
        }


def invert_supersession(entries: dict[str, Any], provenance: dict[str, Any]) -> None:
    """Set every entry's `supersedes` to the sorted keys whose `superseded_by` names it."""
    replaced: dict[str, list[str]] = {key: [] for key in entries}
    for key, entry in entries.items():
        target = entry["relationships"]["superseded_by"]
        if target is not None:
            if target not in replaced:
                raise AssembleError(
                    f"{key}: relationships.superseded_by: {target!r} is not an entry of the corpus"
                )
            replaced[target].append(key)
    for key, entry in entries.items():
        entry["relationships"]["supersedes"] = sorted(replaced[key])
        provenance.setdefault(key, {})["/relationships/supersedes"] = {
            "stage": "assemble",
            "method": "rule",
            "from": "inversion of relationships.superseded_by",
        }


def resolve(node: Mapping[str, Any], definitions: Mapping[str, Any]) -> Mapping[str, Any]:
    while "$ref" in node:
        node = definitions[node["$ref"].rsplit("/", 1)[-1]]
    return node


def object_schema(
    node: Mapping[str, Any], definitions: Mapping[str, Any]
) -> Mapping[str, Any] | None:
    node = resolve(node, definitions)
    if "properties" in node:
        return node
    for option in node.get("anyOf", []):
        found = object_schema(option, definitions)
        if found is not None:
            return found
    return None


def accepts_null(node: Mapping[str, Any], definitions: Mapping[str, Any]) -> bool:
    node = resolve(node, definitions)
    types = node.get("type")
    if types == "null" or (isinstance(types, list) and "null" in types):
        return True
    return any(
        accepts_null(option, definitions) for option in node.get("anyOf", node.get("oneOf", []))
    )


def fill_nulls(
    value: Any,
    node: Mapping[str, Any],
    definitions: Mapping[str, Any],
    path: str,
    filled: list[str],
) -> None:
    schema = object_schema(node, definitions)
    if isinstance(value, dict) and schema is not None:
        for name, child in schema["properties"].items():
            pointer = f"{path}/{name}"
            if (
                name not in value
                and name in schema.get("required", [])
                and accepts_null(child, definitions)
            ):
                value[name] = None
                filled.append(pointer)
            elif name in value:
                fill_nulls(value[name], child, definitions, pointer, filled)
    elif isinstance(value, list):
        items = resolve(node, definitions).get("items")
        if isinstance(items, Mapping):
            for index, item in enumerate(value):
                fill_nulls(item, items, definitions, f"{path}/{index}", filled)


def explicit_nulls(entries: dict[str, Any], provenance: dict[str, Any]) -> None:
    """Write null for every required, nullable field an entry leaves out."""
    schema = load_schema()
    definitions = schema["$defs"]
    for key, entry in entries.items():
        filled: list[str] = []
        fill_nulls(entry, definitions["entry"], definitions, "", filled)
        for pointer in filled:
            provenance.setdefault(key, {})[pointer] = {
                "stage": "assemble",
                "method": "rule",
                "from": "explicit null for a required field the entry left out",
            }


def assemble(assigned: dict[str, Any]) -> dict[str, Any]:
    """The assembled checkpoint: {"model", "sources", "entries", "provenance"}, keys sorted."""
    result = copy.deepcopy(assigned)
    entries: dict[str, Any] = result["entries"]
    provenance: dict[str, Any] = result.setdefault("provenance", {})
    concretize_families(entries, result.pop("families", {}) or {}, provenance)
    explicit_nulls(entries, provenance)
    invert_supersession(entries, provenance)
    result["entries"] = dict(sorted(entries.items()))
    result["provenance"] = {key: provenance[key] for key in sorted(provenance) if key in entries}
    return result
