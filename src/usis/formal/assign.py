"""Assign stage: expands every formal assignment of a classify checkpoint into `semantics.formal`."""

from __future__ import annotations

import copy
from typing import Any

from usis.formal.expander import ExpansionError, expand, shape_refs
from usis.formal.shapes import ShapeCatalog, load_catalog


def assign(classified: dict[str, Any], catalog: ShapeCatalog | None = None) -> dict[str, Any]:
    """The checkpoint with each assignment inlined and the "formal" map consumed.

    An assignment for a key that is not an entry, or one that does not expand, is an error that
    names the key; an entry without an assignment keeps `semantics.formal` as classify left it.
    """
    catalog = catalog or load_catalog()
    result = copy.deepcopy(classified)
    assignments = result.pop("formal", {}) or {}
    entries = result["entries"]
    provenance = result.setdefault("provenance", {})
    problems = []
    for key in sorted(assignments):
        where = f"{key}: semantics.formal"
        if key not in entries:
            problems.append(f"{where}: assignment for a key that is not an entry")
            continue
        try:
            entries[key]["semantics"]["formal"] = expand(assignments[key], catalog, where)
        except ExpansionError as error:
            problems.append(str(error))
            continue
        refs = "+".join(shape_refs(assignments[key]))
        provenance.setdefault(key, {})["/semantics/formal"] = {
            "stage": "assign",
            "method": "curated",
            "from": f"curated/shapes.json#{refs}",
        }
    if problems:
        raise ExpansionError("\n".join(problems))
    return result
