"""The one reader of curated data (usis.curated): every curated file parses through it, names its
sources, and a missing file is an error that names it."""

from __future__ import annotations

from pathlib import Path

import pytest

from usis.curated import CuratedDataError, cite, load

CURATED = Path(__file__).resolve().parents[2] / "src" / "usis" / "curated"
FILES = sorted(
    path.relative_to(CURATED).as_posix()
    for pattern in ("*.json", "*/*.yaml", "*/*.json")
    for path in CURATED.glob(pattern)
)


def test_the_scan_finds_the_curated_files() -> None:
    assert {"shapes.json", "mpi/names.yaml", "shmem/operations.yaml", "cuda/groups.yaml"} <= set(
        FILES
    )


@pytest.mark.parametrize("path", FILES)
def test_every_curated_file_parses_and_names_its_sources(path: str) -> None:
    document = load(path)
    assert isinstance(document, dict) and document, path
    facts = [value for value in document.values() if value]
    if path.endswith(".yaml") and facts:
        assert "source" in (CURATED / path).read_text(encoding="utf-8").lower(), path


def test_a_file_is_parsed_once_and_shared() -> None:
    assert load("mpi/since.yaml") is load("mpi/since.yaml")


def test_a_missing_file_is_an_error_naming_it() -> None:
    with pytest.raises(CuratedDataError, match=r"src/usis/curated/mpi/nothing\.yaml"):
        load("mpi/nothing.yaml")


def test_a_fact_is_cited_by_its_file_and_item() -> None:
    assert cite("cuda/groups.yaml", "errors") == "curated/cuda/groups.yaml: errors"
