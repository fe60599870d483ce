"""Validation of a set of entries: the schema first, then every consistency rule, as Findings."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from usis.schema import corpus_validator, schema_version
from usis.validate.findings import SCHEMA_RULE, Finding, dotted
from usis.validate.rules import RULES

SHIPPED_KEYS = {"schema_version", "model", "sources", "entries"}
WRAPPER_RULE = "USIS-W001"
WRAPPER_STATEMENT = (
    "A shipped file's wrapper has exactly `schema_version` (the schema version the package ships),"
    " `model` (every key's model prefix), `sources` (a list of [name, version, sha256]) and"
    " `entries`."
)


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


def wrapper_findings(document: Any) -> list[Finding]:
    """Findings of a shipped file's wrapper (rule USIS-W001); none for a bare `{key: entry}` map."""
    if not (isinstance(document, Mapping) and set(document) >= SHIPPED_KEYS):
        return []
    where = "(file)"
    findings = [
        Finding(where, str(name), "unknown top-level key of a shipped file", WRAPPER_RULE)
        for name in sorted(set(document) - SHIPPED_KEYS)
    ]
    shipped_version = schema_version()
    if document["schema_version"] != shipped_version:
        message = f"{document['schema_version']!r} is not the shipped schema's {shipped_version!r}"
        findings.append(Finding(where, "schema_version", message, WRAPPER_RULE))
    model = document["model"]
    if not isinstance(model, str):
        findings.append(Finding(where, "model", f"{model!r} is not a model name", WRAPPER_RULE))
    elif isinstance(document["entries"], Mapping):
        for key in sorted(document["entries"]):
            if str(key).split(":", 1)[0] != model:
                message = f"key's model prefix is not the file's model {model!r}"
                findings.append(Finding(str(key), "(key)", message, WRAPPER_RULE))
    sources = document["sources"]
    if not isinstance(sources, list):
        message = "must be a list of [name, version, sha256]"
        findings.append(Finding(where, "sources", message, WRAPPER_RULE))
    else:
        for index, source in enumerate(sources):
            if not (
                isinstance(source, list)
                and len(source) == 3
                and all(isinstance(part, str) for part in source)
                and re.fullmatch(r"[0-9a-f]{64}", source[2])
            ):
                message = f"{source!r} is not [name, version, sha256]"
                findings.append(Finding(where, f"sources[{index}]", message, WRAPPER_RULE))
    return sorted(findings)


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
