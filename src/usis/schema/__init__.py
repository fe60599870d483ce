"""The verbatim USIS schema shipped as package data, with a cached Draft 2020-12 validator."""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

SCHEMA_FILE = "usis-api-schema.json"


def schema_text() -> str:
    """The schema file exactly as shipped (a byte copy of the specification's schema)."""
    return resources.files(__package__).joinpath(SCHEMA_FILE).read_text(encoding="utf-8")


@cache
def load_schema() -> dict[str, Any]:
    """The parsed schema; treat it as read-only."""
    schema: dict[str, Any] = json.loads(schema_text())
    return schema


def schema_version() -> str:
    """The schema's version, read from its $id (…/USIS/v0.1.0/… -> '0.1.0'), as every shipped
    file records it."""
    match = re.search(r"/v(\d+(?:\.\d+)*)/", load_schema()["$id"])
    return match.group(1) if match else "unknown"


@cache
def corpus_validator() -> Draft202012Validator:
    """A validator for a whole `{key: entry}` map, the instance shape the schema describes."""
    from jsonschema import Draft202012Validator  # imported here: `usis show` never needs it

    schema = load_schema()
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


@cache
def definition_validator(definition: str) -> Draft202012Validator:
    """A validator for one of the schema's $defs (e.g. 'entry', 'formal', 'shape_template')."""
    from jsonschema import Draft202012Validator

    schema = load_schema()
    if definition not in schema["$defs"]:
        raise KeyError(f"usis schema has no $defs/{definition}; known: {sorted(schema['$defs'])}")
    wrapper = {"$defs": schema["$defs"], "$ref": f"#/$defs/{definition}"}
    return Draft202012Validator(wrapper)
