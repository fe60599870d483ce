"""Provenance records: which stage set a value and how (source, rule or curated), and where from.

Records are keyed by JSON pointer into an entry; a value's record is the one at its longest pointer
prefix, so the record at "" (which every shipped entry has) covers whatever nothing deeper covers.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

STAGES = ("extract", "classify", "assign", "assemble")
METHODS = ("source", "rule", "curated")


class ProvenanceError(ValueError):
    """A provenance record of the wrong form, or one that points at no value."""


def pointer_parts(pointer: str) -> list[str]:
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise ProvenanceError(f"{pointer!r} is not a JSON pointer (it must start with '/')")
    return [part.replace("~1", "/").replace("~0", "~") for part in pointer[1:].split("/")]


def resolve_pointer(document: Any, pointer: str) -> Any:
    """The value at a JSON pointer; raises KeyError when there is none."""
    value = document
    for part in pointer_parts(pointer):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            raise KeyError(pointer)
    return value


def leaf_pointers(value: Any, pointer: str = "") -> Iterator[str]:
    """The pointer of every scalar (and every empty container) inside a value."""
    if isinstance(value, Mapping) and value:
        for name, item in value.items():
            yield from leaf_pointers(
                item, f"{pointer}/{str(name).replace('~', '~0').replace('/', '~1')}"
            )
    elif isinstance(value, list) and value:
        for index, item in enumerate(value):
            yield from leaf_pointers(item, f"{pointer}/{index}")
    else:
        yield pointer


def record_for(records: Mapping[str, Any], pointer: str) -> dict[str, str] | None:
    """The record governing the value at `pointer`: the one at its longest prefix."""
    parts = pointer_parts(pointer)
    for length in range(len(parts), -1, -1):
        prefix = "".join(
            f"/{part.replace('~', '~0').replace('/', '~1')}" for part in parts[:length]
        )
        if prefix in records:
            found: dict[str, str] = records[prefix]
            return found
    return None


def check_record(record: Any, where: str) -> None:
    if not isinstance(record, Mapping) or set(record) != {"stage", "method", "from"}:
        raise ProvenanceError(f"{where}: a record is {{stage, method, from}}, found {record!r}")
    if record["stage"] not in STAGES:
        raise ProvenanceError(f"{where}: stage {record['stage']!r}; expected one of {STAGES}")
    if record["method"] not in METHODS:
        raise ProvenanceError(f"{where}: method {record['method']!r}; expected one of {METHODS}")
    if not isinstance(record["from"], str) or not record["from"]:
        raise ProvenanceError(f"{where}: 'from' must say where the value came from")


def complete_provenance(assembled: Mapping[str, Any]) -> dict[str, Any]:
    """Every entry's records, checked, with the classify stage's default record at "" where classify
    left the root unannotated; a record pointing at no value is an error."""
    model = assembled["model"]
    default = {"stage": "classify", "method": "rule", "from": f"usis.classify.{model}"}
    given = assembled.get("provenance", {})
    unknown = sorted(set(given) - set(assembled["entries"]))
    if unknown:
        raise ProvenanceError(f"provenance for keys that are not entries: {unknown[:5]}")
    complete: dict[str, Any] = {}
    for key, entry in assembled["entries"].items():
        records = dict(given.get(key, {}))
        for pointer, record in records.items():
            where = f"{key}: provenance {pointer!r}"
            check_record(record, where)
            try:
                resolve_pointer(entry, pointer)
            except KeyError:
                raise ProvenanceError(f"{where}: no value at this pointer") from None
        records.setdefault("", default)
        complete[key] = dict(sorted(records.items()))
    return complete


def provenance_stage(assembled: dict[str, Any]) -> dict[str, Any]:
    """The checkpoint with complete provenance (every value governed by a record)."""
    return {**assembled, "provenance": complete_provenance(assembled)}


def method_mix(entries: Mapping[str, Any], provenance: Mapping[str, Any]) -> dict[str, int]:
    """How many leaf values each method set, over all entries."""
    counts = dict.fromkeys(METHODS, 0)
    for key, entry in entries.items():
        records = provenance.get(key, {})
        for pointer in leaf_pointers(entry):
            record = record_for(records, pointer)
            if record is not None:
                counts[record["method"]] += 1
    return counts
