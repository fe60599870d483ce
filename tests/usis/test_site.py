"""The explorer's files as written (without a browser): the index holds every entry with what
the list, search and filters need; the chunks hold each entry and every provenance record once;
nothing is fetched (file:// refuses it); the diff between two corpora; usis site / serve."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from usis.api import Corpus, load, read_shipped
from usis.cli import main
from usis.site import (
    CHUNK_ENTRIES,
    FLAGS,
    SiteError,
    chunked,
    diff_document,
    old_corpus,
    write_site,
)

SMALL_MODELS = ("openmp", "nccl")


def small_corpus() -> Corpus:
    return Corpus({m: read_shipped(f"final-{m}-api.json") for m in SMALL_MODELS})


def loaded(path: Path, call: str) -> list[Any]:
    """The arguments of the one USIS.<call>(...) a data file makes."""
    text = path.read_text(encoding="utf-8")
    prefix = f"USIS.{call}("
    assert text.startswith(prefix) and text.endswith(");\n"), path
    arguments: list[Any] = json.loads(f"[{text[len(prefix) : -3]}]")
    return arguments


@pytest.fixture(scope="module")
def small_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    write_site(out, small_corpus())
    return out


def test_the_index_lists_every_entry_with_its_flags_and_chunk(small_site: Path) -> None:
    corpus = small_corpus()
    (index,) = loaded(small_site / "data" / "index.js", "index")
    at = {name: position for position, name in enumerate(index["columns"])}
    rows = {row[at["key"]]: row for row in index["rows"]}
    assert sorted(rows) == corpus.keys()
    assert index["flags"] == list(FLAGS)
    for key, row in rows.items():
        entry = corpus.raw(key)
        flags = row[at["flags"]]
        assert bool(flags & 1) == (entry["execution"]["blocking"] is True)
        assert bool(flags & 2) == (entry["execution"]["collective"] is True)
        assert bool(flags & 4) == (entry["identity"]["deprecated_in"] is not None)
        assert bool(flags & 8) == (entry["semantics"]["formal"] is not None)
        assert row[at["params"]].split() == [p["name"] for p in entry["parameters"]]
        chunk = index["chunks"][row[at["chunk"]]]
        assert chunk.startswith(entry["identity"]["model"] + "-")
        op = row[at["op"]]
        operation = corpus.operation_of(key)
        assert (op == -1) == (operation is None)
        if operation is not None:
            assert tuple(index["operations"][op]) == operation


def test_the_index_operations_give_the_corpus_equivalents(small_site: Path) -> None:
    corpus = small_corpus()
    (index,) = loaded(small_site / "data" / "index.js", "index")
    at = {name: position for position, name in enumerate(index["columns"])}
    for key in ("nccl:ncclAllReduce", "nccl:ncclBroadcast", "openmp:omp_get_num_threads"):
        op = next(row[at["op"]] for row in index["rows"] if row[at["key"]] == key)
        model = key.split(":")[0]
        same = [
            row[at["key"]]
            for row in index["rows"]
            if op >= 0 and row[at["op"]] == op and not row[at["key"]].startswith(model + ":")
        ]
        assert same == corpus.equivalents(key)


def test_chunks_hold_each_entry_and_every_provenance_record(small_site: Path) -> None:
    corpus = small_corpus()
    seen = []
    for position, (name, keys) in enumerate(chunked(corpus)):
        assert len(keys) <= CHUNK_ENTRIES
        number, document = loaded(small_site / "data" / f"{name}.js", "chunk")
        assert number == position
        assert list(document["entries"]) == keys
        for key in keys:
            assert document["entries"][key] == corpus.raw(key)
            flat = document["provenance"][key]
            records = {
                document["pointers"][flat[i]]: dict(
                    zip(("stage", "method", "from"), document["records"][flat[i + 1]], strict=True)
                )
                for i in range(0, len(flat), 2)
            }
            assert records == corpus.provenance_records(key)
        seen += keys
    assert seen == corpus.keys()


def test_the_page_fetches_nothing_and_loads_its_data_as_scripts(small_site: Path) -> None:
    for name in ("site.js", "formal.js", "index.html"):
        text = (small_site / name).read_text(encoding="utf-8")
        assert "fetch(" not in text and "XMLHttpRequest" not in text, name
    page = (small_site / "index.html").read_text(encoding="utf-8")
    assert '<script src="data/index.js"></script>' in page
    assert "data/diff.js" not in page


def test_the_schema_file_keeps_the_schemas_order_and_descriptions(small_site: Path) -> None:
    (schema,) = loaded(small_site / "data" / "schema.js", "schema")
    assert list(schema["entry"]["props"]) == [
        "identity", "bindings", "execution", "semantics", "parameters", "return",
        "tool_integration", "relationships",
    ]  # fmt: skip
    assert schema["entry"]["props"]["identity"]["ref"] == "identity"
    assert schema["semantics"]["props"]["formal"]["ref"] == "formal"
    assert schema["identity"]["props"]["deprecated_in"]["desc"].startswith("Version this function")


def test_a_diff_names_added_removed_and_changed_fields() -> None:
    new = small_corpus().entries
    old = json.loads(json.dumps(new))
    del old["nccl:ncclAllReduce"]
    old["openmp:zz_removed"] = old["openmp:omp_get_num_threads"]
    old["openmp:omp_get_num_threads"] = json.loads(json.dumps(old["openmp:omp_get_num_threads"]))
    old["openmp:omp_get_num_threads"]["identity"]["desc"] = "before"
    document = diff_document(old, new, "an older corpus")
    assert document["added"] == ["nccl:ncclAllReduce"]
    assert document["removed"] == ["openmp:zz_removed"]
    assert document["changed"] == {
        "openmp:omp_get_num_threads": [
            ["identity.desc", "before", new["openmp:omp_get_num_threads"]["identity"]["desc"]]
        ]
    }


def test_an_old_corpus_is_a_directory_or_a_git_revision(tmp_path: Path) -> None:
    folder = tmp_path / "old"
    folder.mkdir()
    with pytest.raises(SiteError, match="holds no final-<model>-api"):
        old_corpus(str(folder))
    (folder / "final-nccl-api.json").write_text("{not json")
    with pytest.raises(SiteError, match="not JSON"):
        old_corpus(str(folder))
    shutil.copy(
        Path(__file__).parents[2] / "src/usis/corpus/final-nccl-api.json",
        folder / "final-nccl-api.json",
    )
    entries, label = old_corpus(str(folder))
    assert sorted(entries) == load("nccl").keys() and label == str(folder)
    with pytest.raises(SiteError, match="neither a directory"):
        old_corpus("no-such-revision-of-usis")
    with pytest.raises(SiteError, match="does not start with '-'"):
        old_corpus("--output=/tmp/x")


def test_a_git_revision_reads_the_shipped_corpus_of_that_commit() -> None:
    root = Path(__file__).parents[2]
    if not (root / ".git").exists():
        pytest.skip("not a git checkout: no revision to read")
    entries, label = old_corpus("HEAD", root)
    assert label == "revision HEAD"
    assert "mpi:mpi_bcast" in entries and "nccl:ncclAllReduce" in entries


def test_usis_site_refuses_a_bad_diff_source(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["site", str(tmp_path / "out"), "--diff", str(tmp_path / "missing")]) == 2
    assert "usis site: --diff" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_usis_serve_serves_a_written_site(small_site: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "usis.cli", "serve", "--dir", str(small_site), "--port", str(port)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert server.stdout is not None
        assert server.stdout.readline().startswith(f"usis serve: http://127.0.0.1:{port}/")
        deadline = time.monotonic() + 10
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/data/index.js") as answer:
                    assert answer.read().startswith(b"USIS.index(")
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_usis_serve_refuses_a_directory_without_a_site(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", "--dir", str(tmp_path)]) == 2
    assert "no index.html" in capsys.readouterr().err
