"""Validate stage: the schema (jsonschema, Draft 2020-12) and the consistency rules beyond it."""

from usis.validate.corpus import (
    ValidationFailed,
    consistency_findings,
    entries_of,
    schema_findings,
    validate_entries,
    wrapper_findings,
)
from usis.validate.findings import Finding
from usis.validate.rules import RULES, Rule

__all__ = [
    "RULES",
    "Finding",
    "Rule",
    "ValidationFailed",
    "consistency_findings",
    "entries_of",
    "schema_findings",
    "validate_entries",
    "wrapper_findings",
]
