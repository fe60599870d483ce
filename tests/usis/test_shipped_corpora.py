"""The shipped corpora are valid and are exactly what the build makes from the pinned sources."""

from __future__ import annotations

import json

import pytest

from usis.build import MODELS, PACKAGE_CORPUS_DIR, find_pipeline, run_model, source_paths
from usis.sources.manifest import load_manifest
from usis.split import corpus_file_name, provenance_file_name
from usis.validate import validate_entries


def shipped(model: str) -> dict[str, str]:
    files = {}
    for name in (corpus_file_name(model), provenance_file_name(model)):
        path = PACKAGE_CORPUS_DIR / name
        if path.is_file():
            files[name] = path.read_text(encoding="utf-8")
    return files


def all_shipped_keys() -> set[str]:
    keys: set[str] = set()
    for model in MODELS:
        text = shipped(model).get(corpus_file_name(model))
        if text:
            keys.update(json.loads(text)["entries"])
    return keys


@pytest.mark.parametrize("model", MODELS)
def test_every_shipped_entry_validates(model: str) -> None:
    files = shipped(model)
    if not files:
        pytest.skip(f"no shipped corpus for {model} yet")
    document = json.loads(files[corpus_file_name(model)])
    assert document["model"] == model
    assert set(document) == {"schema_version", "model", "sources", "entries"}
    findings = validate_entries(document["entries"], all_shipped_keys())
    assert not findings, "\n".join(str(f) for f in findings[:20])
    provenance = json.loads(files[provenance_file_name(model)])["provenance"]
    assert set(provenance) == set(document["entries"])


@pytest.mark.parametrize("model", MODELS)
def test_shipped_files_are_what_the_build_produces(model: str) -> None:
    files = shipped(model)
    if not files:
        pytest.skip(f"no shipped corpus for {model} yet")
    pipeline = find_pipeline(model)
    if isinstance(pipeline, str):
        pytest.skip(pipeline)
    paths = source_paths(pipeline, load_manifest())
    missing = [name for name in getattr(pipeline.extract, "SOURCES", ()) if name not in paths]
    if missing:
        pytest.skip(f"{model}: sources {missing} not fetched (run `usis fetch --model {model}`)")
    rebuilt = run_model(
        pipeline,
        paths,
        known_keys=all_shipped_keys() - set(json.loads(files[corpus_file_name(model)])["entries"]),
        progress=lambda line: None,
    )
    for name, text in rebuilt.files.items():
        assert files.get(name) == text, (
            f"{name} differs from a fresh build; run `usis build --model {model}`"
        )
