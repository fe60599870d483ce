"""The shipped provenance form: family links that keep the files small, and their resolution.

Every concrete member of a `{T}` family carries its family entry's records nearly unchanged (the
member is a copy of the family with `{T}` replaced), so the shipped file keeps, for such a member,
only a link to the family key and the records that differ; everything that reads provenance goes
through `expand_records`, which puts the family's records back under the member's own.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

FAMILY_TOKEN = "{T}"


def family_links(entries: Mapping[str, Any]) -> dict[str, str]:
    """{member key: family key} for every concrete member of a `{T}` family in `entries` (the same
    membership `Corpus.families()` reports)."""
    links: dict[str, str] = {}
    for key in sorted(entries):
        types = entries[key]["identity"].get("type_family")
        if FAMILY_TOKEN not in key or not types:
            continue
        for name in types:
            member = key.replace(FAMILY_TOKEN, name)
            if member != key and member in entries:
                links[member] = key
    return links


def compact_provenance(
    entries: Mapping[str, Any], provenance: Mapping[str, Mapping[str, Any]]
) -> dict[str, Any]:
    """The shipped form of complete provenance: {key: {"records": {pointer: record}}}, where a
    family member whose records include every pointer of its family's holds
    {"family": family key, "records": the records that differ from the family's}.

    A member lacking one of its family's pointers stays in full, unlinked: resolution only ever
    adds the family's records, so linking it would give it a record it does not have.
    """
    links = family_links(entries)
    shipped: dict[str, Any] = {}
    for key in sorted(provenance):
        records = provenance[key]
        family = links.get(key)
        inherited = provenance.get(family) if family is not None else None
        if family is not None and inherited is not None and set(inherited) <= set(records):
            own = {p: r for p, r in sorted(records.items()) if inherited.get(p) != r}
            shipped[key] = {"family": family, "records": own}
        else:
            shipped[key] = {"records": dict(sorted(records.items()))}
    return shipped


def expand_records(shipped: Mapping[str, Any], key: str) -> dict[str, Any]:
    """Every record of one key, {pointer: record}, its family's included; {} for an unknown key."""
    item = shipped.get(key)
    if item is None:
        return {}
    family = item.get("family")
    if family is None:
        return dict(item["records"])
    # Families are never linked themselves, so one step resolves a member.
    return dict(sorted({**shipped[family]["records"], **item["records"]}.items()))


def expand_provenance(shipped: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The complete provenance {key: {pointer: record}} of a shipped form, every link resolved."""
    return {key: expand_records(shipped, key) for key in sorted(shipped)}


def dump_provenance(document: Any, record_depth: int = 4) -> str:
    """A provenance file's text: sorted keys and a 2-space indent like every other file of the
    build, but each object at `record_depth` (a record, under document / provenance / key /
    records) on one line, so a record costs one line instead of five; trailing newline."""

    def render(value: Any, depth: int) -> str:
        if depth >= record_depth or not isinstance(value, Mapping) or not value:
            return json.dumps(value, sort_keys=True, ensure_ascii=False)
        inner = "  " * (depth + 1)
        items = [
            f"{inner}{json.dumps(name, ensure_ascii=False)}: {render(value[name], depth + 1)}"
            for name in sorted(value)
        ]
        return "{\n" + ",\n".join(items) + "\n" + "  " * depth + "}"

    return render(document, 0) + "\n"
