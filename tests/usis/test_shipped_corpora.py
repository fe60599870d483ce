"""The shipped corpora are valid and are exactly what the build makes from the pinned sources."""

from __future__ import annotations

import json

import pytest

import usis
from usis.build import MODELS, PACKAGE_CORPUS_DIR, find_pipeline, run_model, source_paths
from usis.provenance import record_for
from usis.provenance.records import leaf_pointers
from usis.sources.manifest import load_manifest
from usis.split import corpus_file_name, provenance_file_name
from usis.split.shipped import expand_provenance
from usis.validate import RULES, validate_entries


def shipped(model: str) -> dict[str, str]:
    files = {}
    for name in (corpus_file_name(model), provenance_file_name(model)):
        path = PACKAGE_CORPUS_DIR / name
        if path.is_file():
            files[name] = path.read_text(encoding="utf-8")
    return files


def keys_of_other_models(model: str) -> set[str]:
    keys: set[str] = set()
    for other in MODELS:
        text = shipped(other).get(corpus_file_name(other)) if other != model else None
        if text:
            keys.update(json.loads(text)["entries"])
    return keys


def rebuild_skip_reason(model: str) -> str | None:
    pipeline = find_pipeline(model)
    if isinstance(pipeline, str):
        return pipeline
    paths = source_paths(pipeline, load_manifest())
    missing = [name for name in getattr(pipeline.extract, "SOURCES", ()) if name not in paths]
    if missing:
        return f"{model}: sources {missing} not fetched (run `usis fetch --model {model}`)"
    return None


@pytest.mark.slow
@pytest.mark.parametrize("model", MODELS)
def test_shipped_files_are_valid_and_what_the_build_produces(model: str) -> None:
    files = shipped(model)
    if not files:
        pytest.skip(f"no shipped corpus for {model} yet")
    document = json.loads(files[corpus_file_name(model)])
    assert document["model"] == model
    assert set(document) == {"schema_version", "model", "sources", "entries"}
    shipped_provenance = json.loads(files[provenance_file_name(model)])["provenance"]
    assert set(shipped_provenance) == set(document["entries"])
    corpus = usis.load(model)
    assert all("" in corpus.provenance_records(key) for key in corpus), "every value has a record"
    reason = rebuild_skip_reason(model)
    if reason is not None:
        # The sources are not here to rebuild from, so check the shipped entries directly.
        findings = validate_entries(document["entries"], keys_of_other_models(model))
        assert not findings, "\n".join(str(f) for f in findings[:20])
        pytest.skip(f"validated only; {reason}")
    pipeline = find_pipeline(model)
    assert not isinstance(pipeline, str)
    # The build's own validate stage checks every entry on the way.
    rebuilt = run_model(
        pipeline,
        source_paths(pipeline, load_manifest()),
        known_keys=keys_of_other_models(model),
        progress=lambda line: None,
    )
    for name, text in rebuilt.files.items():
        assert files.get(name) == text, (
            f"{name} differs from a fresh build; run `usis build --model {model}`"
        )
    # The shipped provenance stores a family member as a link plus its own records; read through
    # the API it must give back exactly the build's complete, per-value records.
    full = rebuilt.checkpoints["provenance"]["provenance"]
    assert expand_provenance(shipped_provenance) == full
    for key in provenance_sample(corpus):
        assert corpus.provenance_records(key) == full[key], key
        for pointer in [*leaf_pointers(corpus.raw(key)), *full[key]]:
            assert corpus.provenance(key, pointer) == record_for(full[key], pointer), (key, pointer)


def provenance_sample(corpus: usis.Corpus) -> list[str]:
    """Every family key and every member (each member's link is followed), and every 25th of the
    other keys."""
    in_families = {
        key for family, members in corpus.families().items() for key in (family, *members)
    }
    others = [key for key in corpus if key not in in_families]
    return sorted(in_families | set(others[::25]))


def test_equivalent_calls_agree_across_the_shipped_models() -> None:
    # The build validates one model at a time; the cross-model rule needs them all together.
    entries: dict[str, object] = {}
    for model in MODELS:
        text = shipped(model).get(corpus_file_name(model))
        if text:
            entries.update(json.loads(text)["entries"])
    if not entries:
        pytest.skip("no shipped corpus yet")
    (rule,) = [rule for rule in RULES if rule.id == "USIS-C041"]
    findings = list(rule.check(entries, frozenset(entries)))
    assert not findings, findings[:20]
