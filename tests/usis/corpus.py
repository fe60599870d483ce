"""Readers of the shipped corpora and the cached sources, shared by the per-model corpus tests."""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import pytest


@cache
def shipped(model: str, kind: str) -> dict[str, Any]:
    """The shipped final-<model>-api.json (kind "final") or provenance-<model>.json, parsed (its
    family members hold links, not full records: use shipped_provenance for those)."""
    name = f"final-{model}-api.json" if kind == "final" else f"provenance-{model}.json"
    return json.loads(resources.files("usis.corpus").joinpath(name).read_text(encoding="utf-8"))


@cache
def shipped_provenance(model: str) -> dict[str, dict[str, Any]]:
    """{key: {pointer: record}} for every entry of a shipped model, read through the API, so a
    family member's records include those it shares with its family."""
    import usis

    corpus = usis.load(model)
    return {key: corpus.provenance_records(key) for key in corpus}


def pointer_value(entry: Any, pointer: str) -> Any:
    for part in pointer.strip("/").split("/"):
        entry = entry[int(part)] if isinstance(entry, list) else entry[part]
    return entry


def assert_golden(key: str, entry: Any, expected: Mapping[str, Any]) -> None:
    """Each JSON pointer of `expected` holds its value in `entry`."""
    for pointer, value in expected.items():
        assert pointer_value(entry, pointer) == value, f"{key}{pointer}"


def families(entries: Mapping[str, Any]) -> list[str]:
    """Function families: the `{T}` family entries plus every function that belongs to none."""
    family_keys = [key for key in entries if "{T}" in key]
    members = {
        key.replace("{T}", suffix)
        for key in family_keys
        for suffix in entries[key]["identity"]["type_family"]
    }
    return family_keys + [key for key in entries if "{T}" not in key and key not in members]


def cached_source(name: str) -> Path | None:
    """The unpacked source from the usis cache, or None when it has not been fetched."""
    from usis.sources.fetch import available_path
    from usis.sources.manifest import load_manifest

    return available_path(load_manifest()[name])


def cached_source_or_skip(name: str, model: str) -> Path:
    """The named source from the usis cache; the test is skipped when it has not been fetched."""
    path = cached_source(name)
    if path is None:
        pytest.skip(f"{name} is not in the usis cache (run `usis fetch --model {model}`)")
    return path
