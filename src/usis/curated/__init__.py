"""Hand-authored data (the shape catalog shapes.json and per-model facts under <model>/, a source
note each) and the one reader of it: every curated file is parsed here, once, by its path."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

import yaml


class CuratedDataError(ValueError):
    """A curated file that is missing or cannot be parsed; the message names the file."""


def relative_path(path: str) -> str:
    """How provenance and error messages name a curated file: `curated/mpi/since.yaml`."""
    return f"curated/{path}"


def cite(path: str, item: str) -> str:
    """The provenance origin of one fact of a curated file: `curated/mpi/since.yaml: <item>`."""
    return f"{relative_path(path)}: {item}"


@cache
def load(path: str) -> Any:
    """The curated file at `path` under src/usis/curated/ (`mpi/since.yaml`, `shapes.json`),
    parsed as YAML or, for a `.json` name, as JSON. The parsed document is shared by every caller,
    so callers copy before they change it."""
    resource = resources.files(__package__).joinpath(*path.split("/"))
    if not resource.is_file():
        raise CuratedDataError(f"src/usis/{relative_path(path)}: no such curated file")
    text = resource.read_text(encoding="utf-8")
    try:
        return json.loads(text) if path.endswith(".json") else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as error:
        raise CuratedDataError(f"src/usis/{relative_path(path)}: {error}") from error


# Where `usis history` writes a model's header history (see usis.history).
HEADER_HISTORY = "{model}/header_history.yaml"


def version_key(version: str) -> tuple[int, ...]:
    """A release number as a tuple that sorts as releases do: `2.28.7` -> (2, 28, 7)."""
    return tuple(int(part) for part in version.split("."))


def header_since(model: str) -> dict[str, tuple[str, str]]:
    """Function -> (identity.since, provenance origin) from the model's header history."""
    path = HEADER_HISTORY.format(model=model)
    document = load(path)
    return {
        name: (
            fact["since"],
            cite(path, f"{name} first declared by {fact['first']}, not by {fact['before']}"),
        )
        for name, fact in document["since"].items()
    }


def check_release_since(model: str, name: str, since: str) -> str | None:
    """Why a version taken from release notes contradicts the model's header history (the
    history dates the function otherwise, or its earliest wheel already declares a function
    said to be newer), or None when the two agree."""
    document = load(HEADER_HISTORY.format(model=model))
    dated = document["since"].get(name)
    if dated is not None:
        return None if dated["since"] == since else f"the header history dates it {dated}"
    if name in document["undated"]:
        return None
    earliest = document["earliest"]
    if release_key(since) > release_key(earliest):
        return f"the earliest wheel of its header history, {earliest}, already declares it"
    return None


def release_key(since: str) -> tuple[int, ...]:
    """The release number of a since value (`NCCL-2.18` -> (2, 18)), padded so that a minor
    release sorts before its patches."""
    return version_key(since.rpartition("-")[2]) + (0,) * 3
