"""Split stage: renders the shipped corpus file and provenance file of one model, byte-deterministically."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from usis.schema import schema_version
from usis.split.shipped import compact_provenance, dump_provenance


def dump_json(value: Any) -> str:
    """The one JSON rendering every checkpoint and shipped file uses: sorted keys, 2-space indent,
    trailing newline."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def corpus_file_name(model: str) -> str:
    return f"final-{model}-api.json"


def provenance_file_name(model: str) -> str:
    return f"provenance-{model}.json"


def split(checkpoint: dict[str, Any]) -> dict[str, str]:
    """{file name: text} for the model's shipped corpus and provenance files."""
    model = checkpoint["model"]
    corpus = {
        "schema_version": schema_version(),
        "model": model,
        "sources": [list(source) for source in checkpoint["sources"]],
        "entries": checkpoint["entries"],
    }
    provenance = {
        "schema_version": schema_version(),
        "model": model,
        # Family members link to their family's records instead of repeating them.
        "provenance": compact_provenance(checkpoint["entries"], checkpoint["provenance"]),
    }
    return {
        corpus_file_name(model): dump_json(corpus),
        provenance_file_name(model): dump_provenance(provenance),
    }


def write_files(files: dict[str, str], folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name in sorted(files):
        path = folder / name
        path.write_text(files[name], encoding="utf-8")
        written.append(path)
    return written
