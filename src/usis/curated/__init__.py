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
