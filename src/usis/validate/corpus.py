"""Validation of a set of entries: the schema first, then every consistency rule, as Findings."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from usis.schema import corpus_validator
from usis.validate.findings import SCHEMA_RULE, Finding, dotted
from usis.validate.rules import RULES

SHIPPED_KEYS = {"schema_version", "model", "sources", "entries"}


class ValidationFailed(ValueError):
    """Raised by the build when entries have findings; `findings` lists them all."""

    def __init__(self, findings: list[Finding]) -> None:
        self.findings = findings
        lines = "\n".join(str(finding) for finding in findings[:50])
        more = f"\n... and {len(findings) - 50} more" if len(findings) > 50 else ""
        super().__init__(f"{len(findings)} validation finding(s):\n{lines}{more}")


def schema_findings(entries: Mapping[str, Any]) -> list[Finding]:
    """Every place the `{key: entry}` map breaks the verbatim schema (Draft 2020-12)."""
    findings = []
    for error in corpus_validator().iter_errors(entries):
        # For anyOf/oneOf ("X is not valid under any of the given schemas") the sub-error that
        # reached deepest into the instance says what is actually wrong, and where.
        while error.context:
            error = max(error.context, key=lambda sub: len(sub.absolute_path))
        path = list(error.absolute_path)
        if path:
            key, rest = str(path[0]), path[1:]
        else:
            key, rest = "(corpus)", []
        message = error.message if len(error.message) < 300 else error.message[:297] + "..."
        findings.append(Finding(key, dotted(rest), message, SCHEMA_RULE))
    return sorted(set(findings))


def consistency_findings(
    entries: Mapping[str, Any], known_keys: Iterable[str] = ()
) -> list[Finding]:
    """Every consistency-rule violation; `known_keys` adds entries of other corpora that
    cross-references may name."""
    known = frozenset(entries) | frozenset(known_keys)
    findings = [
        Finding(key, path, message, rule.id)
        for rule in RULES
        for key, path, message in rule.check(entries, known)
    ]
    return sorted(set(findings))


def validate_entries(entries: Mapping[str, Any], known_keys: Iterable[str] = ()) -> list[Finding]:
    """Schema findings and consistency findings together, sorted by key then path."""
    return sorted(set(schema_findings(entries)) | set(consistency_findings(entries, known_keys)))


def entries_of(document: Any) -> Mapping[str, Any]:
    """The entries of a shipped file (`{"schema_version", "model", "sources", "entries"}`) or of a
    bare `{key: entry}` map."""
    if isinstance(document, Mapping) and set(document) >= SHIPPED_KEYS:
        entries = document["entries"]
        if not isinstance(entries, Mapping):
            raise ValueError("'entries' of a shipped corpus file must be an object of entries")
        return entries
    if isinstance(document, Mapping):
        return document
    raise ValueError(
        f"expected a shipped corpus file or a {{key: entry}} map, found {type(document).__name__}"
    )
