"""The query API and the `usis` command on the fixture corpus."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.usis.factory import collective_semantics, entry, mini_corpus, parameter
from usis import cli
from usis.api import Corpus
from usis.split import dump_json

FIXTURE = Path(__file__).with_name("fixtures") / "mini-corpus.json"


def shmem_entries() -> dict[str, Any]:
    broadcast = entry(
        "shmem",
        "shmem_broadcastmem",
        "collective",
        [parameter("team", "TEAM")],
        header="shmem.h",
        collective=True,
    )
    broadcast["semantics"]["collective"] = collective_semantics("broadcast")
    generic = entry("shmem", "shmem_{T}_p", "one_sided", [], header="shmem.h")
    generic["identity"]["type_family"] = ["int", "long"]
    members = {
        f"shmem:shmem_{t}_p": entry("shmem", f"shmem_{t}_p", "one_sided", [], header="shmem.h")
        for t in ("int", "long")
    }
    return {"shmem:shmem_broadcastmem": broadcast, "shmem:shmem_{T}_p": generic, **members}


def fixture_corpus() -> Corpus:
    documents = {
        "mpi": {"schema_version": "0.1.0", "model": "mpi", "sources": [], "entries": mini_corpus()},
        "shmem": {
            "schema_version": "0.1.0",
            "model": "shmem",
            "sources": [],
            "entries": shmem_entries(),
        },
    }
    provenance = {
        model: {
            key: {"": {"stage": "classify", "method": "rule", "from": "fixture"}}
            for key in document["entries"]
        }
        for model, document in documents.items()
    }
    return Corpus(documents, provenance)


@pytest.fixture
def corpus(monkeypatch: pytest.MonkeyPatch) -> Corpus:
    loaded = fixture_corpus()
    monkeypatch.setattr(cli, "load", lambda model=None: loaded)
    # `usis show` reads one entry straight from a shipped file first; the fixture has none.
    monkeypatch.setattr("usis.api.shipped_entry", lambda key: None)
    return loaded


def test_lookup_gives_a_typed_entry_whose_dump_is_the_json(corpus: Corpus) -> None:
    bcast = corpus["mpi:mpi_bcast"]
    assert bcast.identity.name == "MPI_Bcast"
    assert bcast.semantics.collective is not None and bcast.semantics.collective.type == "broadcast"
    assert bcast.model_dump(mode="json") == mini_corpus()["mpi:mpi_bcast"]
    assert corpus["mpi:mpi_bcast"] is bcast, "typed entries are built once"
    with pytest.raises(KeyError, match="did you mean mpi:mpi_bcast"):
        corpus["mpi:MPI_BCAST"]


def test_find_filters(corpus: Corpus) -> None:
    assert corpus.find(model="mpi", collective=True) == [
        "mpi:mpi_allreduce",
        "mpi:mpi_bcast",
        "mpi:mpi_ibcast",
    ]
    assert corpus.find(model="mpi", collective=True, blocking=False) == ["mpi:mpi_ibcast"]
    assert corpus.find(api_group="point_to_point") == ["mpi:mpi_recv"]
    assert corpus.find(text="type_get") == ["mpi:mpi_type_get_extent"]
    assert corpus.find(family="shmem:shmem_{T}_p") == ["shmem:shmem_int_p", "shmem:shmem_long_p"]


def test_equivalents_cross_models(corpus: Corpus) -> None:
    assert corpus.equivalents("mpi:mpi_bcast") == ["shmem:shmem_broadcastmem"]
    assert corpus.equivalents("shmem:shmem_broadcastmem") == ["mpi:mpi_bcast", "mpi:mpi_ibcast"]
    assert corpus.equivalents("mpi:mpi_comm_rank") == []


def test_families(corpus: Corpus) -> None:
    assert corpus.families() == {"shmem:shmem_{T}_p": ["shmem:shmem_int_p", "shmem:shmem_long_p"]}
    assert corpus.family_of("shmem:shmem_long_p") == "shmem:shmem_{T}_p"
    assert corpus["shmem:shmem_{T}_p"].identity.type_family == ["int", "long"]


def test_provenance_lookup(corpus: Corpus) -> None:
    assert corpus.provenance("mpi:mpi_bcast", "/identity/name") == {
        "stage": "classify",
        "method": "rule",
        "from": "fixture",
    }


def test_cli_show_readable_and_json(corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["show", "mpi:mpi_bcast"]) == 0
    page = capsys.readouterr().out
    assert page.startswith("mpi:mpi_bcast  (MPI_Bcast, mpi)")
    assert "participant root (member, one): rank == param:root" in page
    assert "nonblocking -> mpi:mpi_ibcast" in page
    assert cli.main(["show", "mpi:mpi_bcast", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == mini_corpus()["mpi:mpi_bcast"]
    assert cli.main(["show", "mpi:mpi_nothing"]) == 1
    assert "no entry 'mpi:mpi_nothing'" in capsys.readouterr().err


def test_cli_find_prints_a_table(corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["find", "--model", "mpi", "--collective", "--nonblocking"]) == 0
    out = capsys.readouterr()
    lines = out.out.splitlines()
    assert lines[0].split() == ["KEY", "GROUP", "BLOCKING", "COLLECTIVE", "DESCRIPTION"]
    assert lines[2].startswith("mpi:mpi_ibcast")
    assert len(lines) == 3 and "1 entry" in out.err
    assert cli.main(["find", "extent"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 4


def test_cli_validate_clean_and_findings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["validate", str(FIXTURE)]) == 0
    shipped = tmp_path / "final-mpi-api.json"
    entries = mini_corpus()
    entries["mpi:mpi_bcast"]["parameters"][0]["array_type"] = None
    entries["mpi:mpi_recv"]["identity"]["since"] = "one"
    shipped.write_text(
        dump_json({"schema_version": "0.1.0", "model": "mpi", "sources": [], "entries": entries})
    )
    capsys.readouterr()
    assert cli.main(["validate", str(shipped)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        "mpi:mpi_bcast: parameters[0].length: length 'count' with array_type None; both or neither must be null (USIS-C006)",
        "mpi:mpi_recv: identity.since: 'one' does not match '^[A-Za-z][A-Za-z0-9]*-[0-9]+(\\\\.[0-9]+)*$' (schema)",
    ]


def test_cli_diff(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    new = mini_corpus()
    new["mpi:mpi_bcast"]["identity"]["since"] = "MPI-1.1"
    del new["mpi:mpi_init"]
    new["mpi:mpi_barrier"] = new["mpi:mpi_comm_rank"]
    (tmp_path / "new.json").write_text(dump_json(new))
    assert cli.main(["diff", str(FIXTURE), str(tmp_path / "new.json")]) == 0
    out = capsys.readouterr()
    assert out.out.splitlines() == [
        "- mpi:mpi_init",
        "+ mpi:mpi_barrier",
        '~ mpi:mpi_bcast: identity.since: "MPI-1.0" -> "MPI-1.1"',
    ]
    assert "1 added, 1 removed, 1 changed" in out.err


def test_cli_stats(corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["stats", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["models"]["mpi"]["entries"] == 8
    assert stats["models"]["mpi"]["with_formal"] == 4
    assert stats["models"]["mpi"]["provenance"]["rule"] > 0
    # mpi has no {T} family; shmem's two routines are broadcastmem and the family shmem_{T}_p.
    assert (stats["models"]["mpi"]["families"], stats["models"]["mpi"]["type_families"]) == (8, 0)
    assert (stats["models"]["shmem"]["families"], stats["models"]["shmem"]["type_families"]) == (
        2,
        1,
    )
    assert stats["total_entries"] == 12
    assert cli.main(["stats"]) == 0
    printed = capsys.readouterr().out
    assert "FAMILIES" in printed and "2 (1 {T})" in printed


def test_cli_build_stage_writes_checkpoints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.usis import test_build

    monkeypatch.setattr("usis.build.find_pipeline", lambda model: test_build.pipeline())
    assert cli.main(["build", "--model", "mpi", "--out", str(tmp_path)]) == 1
    assert "mpi: sources ['fixture-source'] not fetched" in capsys.readouterr().err
    monkeypatch.setattr(
        "usis.build.source_paths", lambda pipeline, manifest: {"fixture-source": tmp_path}
    )
    assert cli.main(["build", "--model", "mpi", "--stage", "classify", "--out", str(tmp_path)]) == 0
    assert sorted(p.name for p in (tmp_path / "mpi").iterdir()) == [
        "1-extract.json",
        "2-classify.json",
    ]
    assert cli.main(["build", "--model", "mpi", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "final-mpi-api.json").is_file() and (
        tmp_path / "provenance-mpi.json"
    ).is_file()


def test_one_entry_read_from_a_shipped_file_equals_the_parsed_file() -> None:
    from usis.api import read_shipped, shipped_entry, shipped_models

    if not shipped_models():
        pytest.skip("no shipped corpus yet")
    model = shipped_models()[0]
    entries = read_shipped(f"final-{model}-api.json")["entries"]
    for key in list(entries)[:: max(1, len(entries) // 300)]:
        assert shipped_entry(key) == entries[key], key
    assert shipped_entry(f"{model}:no_such_function") is None
    assert shipped_entry("upc:upc_barrier") is None


def test_cli_diff_of_a_file_that_is_not_a_corpus(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    listed = tmp_path / "list.json"
    listed.write_text("[1, 2]\n")
    assert cli.main(["diff", str(FIXTURE), str(listed)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith(f"usis diff: {listed}: expected a shipped corpus file")


def test_cli_diff_counts_changed_entries_not_models(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    new = mini_corpus()
    new["mpi:mpi_bcast"]["identity"]["since"] = "MPI-1.1"
    new["mpi:mpi_recv"]["identity"]["since"] = "MPI-1.1"
    new["mpi:mpi_recv"]["identity"]["desc"] = "Receives."
    (tmp_path / "new.json").write_text(dump_json(new))
    assert cli.main(["diff", str(FIXTURE), str(tmp_path / "new.json")]) == 0
    assert "0 added, 0 removed, 2 changed" in capsys.readouterr().err


def test_cli_validate_resolves_references_against_the_shipped_corpus(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from usis.api import load

    shipped = load("mpi")
    # mpi_ibcast names mpi_bcast as its blocking form, which the file does not hold.
    selection = {"mpi:mpi_ibcast": shipped.raw("mpi:mpi_ibcast")}
    path = tmp_path / "selection.json"
    path.write_text(dump_json(selection))
    assert cli.main(["validate", str(path)]) == 0, capsys.readouterr().out
    # The build stays strict: the same map alone has a dangling reference.
    from usis.validate import consistency_findings

    assert "USIS-C002" in {f.rule for f in consistency_findings(selection)}


def test_load_of_an_unknown_model_is_a_lookup_error() -> None:
    from usis.api import load

    with pytest.raises(LookupError, match="shipped: mpi"):
        load("foo")
    with pytest.raises(ValueError):
        load("foo")


def test_cli_validate_checks_a_shipped_files_wrapper(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = {
        "schema_version": "9.9.9",
        "model": "shmem",
        "sources": [["pympistandard", "0.2.0"]],
        "entries": mini_corpus(),
        "comment": "extra",
    }
    path = tmp_path / "final-mpi-api.json"
    path.write_text(dump_json(document))
    assert cli.main(["validate", str(path)]) == 1
    lines = capsys.readouterr().out.splitlines()
    wrapper = [line for line in lines if line.endswith("(USIS-W001)")]
    assert "(file): comment: unknown top-level key of a shipped file (USIS-W001)" in wrapper
    assert "(file): schema_version: '9.9.9' is not the shipped schema's '0.1.0' (USIS-W001)" in (
        wrapper
    )
    assert any(line.startswith("(file): sources[0]: ") for line in wrapper)
    assert (
        "mpi:mpi_bcast: (key): key's model prefix is not the file's model 'shmem' (USIS-W001)"
        in wrapper
    )
    assert len(wrapper) == 3 + len(document["entries"])
