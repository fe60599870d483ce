"""The build pipeline on a fixture model: stages, checkpoints, determinism, failures, families."""

from __future__ import annotations

import copy
import importlib
import json
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.usis.factory import BCAST_ASSIGNMENT, RECV_ASSIGNMENT, entry, mini_corpus
from usis.api import Corpus
from usis.assemble import AssembleError, assemble, concretize_text
from usis.build import STAGES, BuildError, ModelPipeline, build, find_pipeline, run_model
from usis.provenance import ProvenanceError, complete_provenance, record_for
from usis.provenance.records import leaf_pointers
from usis.split.shipped import compact_provenance, dump_provenance, expand_provenance
from usis.validate import ValidationFailed, validate_entries

SOURCE = ["fixture-source", "1.0", "0" * 64]
ASSIGNMENTS = {"mpi:mpi_bcast": BCAST_ASSIGNMENT, "mpi:mpi_recv": RECV_ASSIGNMENT}


def family_entry() -> dict[str, Any]:
    generic = entry(
        "mpi",
        "MPI_Fixture_{T}_get",
        None,
        [],
        signature="{T} MPI_Fixture_{T}_get(const {T} *source)",
    )
    generic["return"]["kind"] = "value"
    generic["return"]["binding_type"]["c"] = "{T}"
    return generic


def fixture_extract(paths: dict[str, Path]) -> dict[str, Any]:
    return {"model": "mpi", "sources": [SOURCE], "records": sorted(mini_corpus())}


def fixture_classify(extracted: dict[str, Any]) -> dict[str, Any]:
    corpus = mini_corpus()
    entries = {key: copy.deepcopy(corpus[key]) for key in extracted["records"]}
    for key in ASSIGNMENTS:
        entries[key]["semantics"]["formal"] = None
    entries["mpi:mpi_type_get_extent"]["relationships"]["supersedes"] = []
    del entries["mpi:mpi_comm_rank"]["identity"]["desc"]  # assemble writes the explicit null
    entries["mpi:mpi_fixture_{T}_get"] = family_entry()
    return {
        "model": "mpi",
        "sources": extracted["sources"],
        "entries": entries,
        "formal": copy.deepcopy(ASSIGNMENTS),
        "families": {
            "mpi:mpi_fixture_{T}_get": {
                "types": ["int", {"name": "longlong", "c_type": "long long"}]
            }
        },
        "provenance": {
            "mpi:mpi_bcast": {
                "/identity/since": {"stage": "classify", "method": "curated", "from": "since.yaml"}
            }
        },
    }


def pipeline(classify: Any = fixture_classify) -> ModelPipeline:
    extract_module = ModuleType("fixture_extract")
    extract_module.SOURCES = ("fixture-source",)  # type: ignore[attr-defined]
    extract_module.extract = fixture_extract  # type: ignore[attr-defined]
    classify_module = ModuleType("fixture_classify")
    classify_module.classify = classify  # type: ignore[attr-defined]
    return ModelPipeline("mpi", extract_module, classify_module)


def silent(line: str) -> None:
    del line


def test_full_run_produces_valid_shipped_files() -> None:
    result = run_model(pipeline(), {}, progress=silent)
    corpus = json.loads(result.files["final-mpi-api.json"])
    assert set(corpus) == {"schema_version", "model", "sources", "entries"}
    assert corpus["schema_version"] == "0.1.0"
    assert corpus["sources"] == [SOURCE]
    assert validate_entries(corpus["entries"]) == []
    entries = corpus["entries"]
    assert entries["mpi:mpi_type_get_extent"]["relationships"]["supersedes"] == [
        "mpi:mpi_type_extent"
    ]
    assert entries["mpi:mpi_comm_rank"]["identity"]["desc"] is None
    assert (
        entries["mpi:mpi_bcast"]["semantics"]["formal"]
        == mini_corpus()["mpi:mpi_bcast"]["semantics"]["formal"]
    )
    text = result.files["final-mpi-api.json"]
    assert (
        text.endswith("}\n")
        and text == json.dumps(corpus, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    )


def test_families_are_concretized() -> None:
    entries = json.loads(run_model(pipeline(), {}, progress=silent).files["final-mpi-api.json"])[
        "entries"
    ]
    generic = entries["mpi:mpi_fixture_{T}_get"]
    assert generic["identity"]["type_family"] == ["int", "longlong"]
    member = entries["mpi:mpi_fixture_longlong_get"]
    assert member["identity"]["name"] == "MPI_Fixture_longlong_get"
    assert member["identity"]["type_family"] is None
    assert (
        member["bindings"]["c"]["signature"]
        == "long long MPI_Fixture_longlong_get(const long long *source)"
    )
    assert member["return"]["binding_type"]["c"] == "long long"
    assert "mpi:mpi_fixture_int_get" in entries


def test_concretize_text_rule() -> None:
    assert concretize_text("shmem_{T}_put", "longlong", "long long") == "shmem_longlong_put"
    assert (
        concretize_text("void f(const {T} *d)", "longlong", "long long")
        == "void f(const long long *d)"
    )
    assert concretize_text("type:{T}", "longlong", "long long") == "type:longlong"


def test_every_value_has_provenance() -> None:
    result = run_model(pipeline(), {}, progress=silent)
    provenance = expand_provenance(json.loads(result.files["provenance-mpi.json"])["provenance"])
    entries = result.checkpoints["provenance"]["entries"]
    assert set(provenance) == set(entries)
    assert all("" in records for records in provenance.values())
    assert record_for(provenance["mpi:mpi_bcast"], "/identity/since")["method"] == "curated"
    assert (
        record_for(provenance["mpi:mpi_bcast"], "/semantics/formal/participants/0/id")["stage"]
        == "assign"
    )
    assert record_for(provenance["mpi:mpi_comm_rank"], "/identity/desc")["stage"] == "assemble"
    assert record_for(provenance["mpi:mpi_fixture_int_get"], "/identity/name")["from"].startswith(
        "mpi:mpi_fixture_{T}_get"
    )
    assert record_for(provenance["mpi:mpi_init"], "/execution/blocking") == {
        "stage": "classify",
        "method": "rule",
        "from": "usis.classify.mpi",
    }


def test_a_family_member_ships_a_link_and_only_its_own_records() -> None:
    result = run_model(pipeline(), {}, progress=silent)
    shipped = json.loads(result.files["provenance-mpi.json"])["provenance"]
    full = result.checkpoints["provenance"]["provenance"]
    member = shipped["mpi:mpi_fixture_int_get"]
    assert member["family"] == "mpi:mpi_fixture_{T}_get"
    assert set(member["records"]) == {"/identity/name", "/identity/type_family"}
    assert "family" not in shipped["mpi:mpi_fixture_{T}_get"]
    assert expand_provenance(shipped) == full


def test_provenance_read_through_the_api_resolves_family_links(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    result = run_model(pipeline(), {}, progress=silent)
    monkeypatch.setattr("usis.api.read_shipped", lambda name: json.loads(result.files[name]))
    corpus = Corpus({"mpi": json.loads(result.files["final-mpi-api.json"])})
    full = result.checkpoints["provenance"]["provenance"]
    assert any("family" in item for item in corpus.provenance_documents["mpi"].values())
    for key, value in result.checkpoints["provenance"]["entries"].items():
        assert corpus.provenance_records(key) == full[key], key
        for pointer in [*leaf_pointers(value), *full[key]]:
            assert corpus.provenance(key, pointer) == record_for(full[key], pointer), (key, pointer)


def test_a_member_missing_a_family_record_ships_unlinked() -> None:
    record = {"stage": "classify", "method": "rule", "from": "r"}
    entries = {
        "shmem:f_{T}": {"identity": {"type_family": ["int", "long"]}},
        "shmem:f_int": {"identity": {"type_family": None}},
        "shmem:f_long": {"identity": {"type_family": None}},
    }
    provenance = {
        "shmem:f_{T}": {"": record, "/identity": record},
        "shmem:f_int": {"": record, "/identity": record, "/identity/type_family": record},
        "shmem:f_long": {"": record},
    }
    shipped = compact_provenance(entries, provenance)
    assert shipped["shmem:f_int"] == {
        "family": "shmem:f_{T}",
        "records": {"/identity/type_family": record},
    }
    assert shipped["shmem:f_long"] == {"records": {"": record}}
    assert expand_provenance(shipped) == provenance


def test_a_provenance_file_holds_one_record_per_line() -> None:
    text = run_model(pipeline(), {}, progress=silent).files["provenance-mpi.json"]
    document = json.loads(text)
    assert text == dump_provenance(document)
    records = [line for line in text.splitlines() if '"stage": ' in line]
    assert len(records) == sum(len(item["records"]) for item in document["provenance"].values())
    for line in records:
        assert json.loads("{" + line.strip().rstrip(",") + "}")


def test_provenance_pointing_nowhere_is_an_error() -> None:
    checkpoint = {
        "model": "mpi",
        "entries": {"mpi:x": {"identity": {}}},
        "provenance": {
            "mpi:x": {"/identity/colour": {"stage": "classify", "method": "rule", "from": "r"}}
        },
    }
    with pytest.raises(ProvenanceError, match="no value at this pointer"):
        complete_provenance(checkpoint)
    checkpoint["provenance"] = {
        "mpi:x": {"/identity": {"stage": "guess", "method": "rule", "from": "r"}}
    }
    with pytest.raises(ProvenanceError, match="stage 'guess'"):
        complete_provenance(checkpoint)


def test_the_build_is_byte_identical_run_to_run() -> None:
    first = run_model(pipeline(), {}, progress=silent).files
    second = run_model(pipeline(), {}, progress=silent).files
    assert first == second


def test_stop_after_a_stage_writes_inspectable_checkpoints(tmp_path: Path) -> None:
    lines: list[str] = []
    result = run_model(
        pipeline(), {}, until="assign", checkpoint_dir=tmp_path, progress=lines.append
    )
    written = sorted(path.name for path in (tmp_path / "mpi").iterdir())
    assert written == ["1-extract.json", "2-classify.json", "3-assign.json"]
    assigned = json.loads((tmp_path / "mpi" / "3-assign.json").read_text())
    assert assigned == result.checkpoints["assign"]
    assert "formal" not in assigned
    assert result.files == {}
    assert any(line.startswith("mpi: classify done,") for line in lines)


def test_stages_are_named_in_order() -> None:
    assert STAGES == (
        "extract",
        "classify",
        "assign",
        "assemble",
        "validate",
        "provenance",
        "split",
    )
    with pytest.raises(BuildError, match="unknown stage"):
        run_model(pipeline(), {}, until="polish", progress=silent)


def test_a_finding_fails_the_build_with_every_finding_listed() -> None:
    def bad_classify(extracted: dict[str, Any]) -> dict[str, Any]:
        classified = fixture_classify(extracted)
        classified["entries"]["mpi:mpi_init"]["execution"]["execute_once"] = False
        classified["entries"]["mpi:mpi_bcast"]["parameters"][0]["array_type"] = None
        return classified

    with pytest.raises(ValidationFailed) as failure:
        run_model(pipeline(bad_classify), {}, progress=silent)
    lines = str(failure.value).splitlines()
    assert (
        "mpi:mpi_bcast: parameters[0].length: length 'count' with array_type None; both or neither must be null (USIS-C006)"
        in lines
    )
    assert any(line.startswith("mpi:mpi_init: execution.execute_once:") for line in lines)


def test_an_unbound_slot_fails_the_build() -> None:
    def unbound(extracted: dict[str, Any]) -> dict[str, Any]:
        classified = fixture_classify(extracted)
        del classified["formal"]["mpi:mpi_bcast"]["bindings"]["root"]
        return classified

    with pytest.raises(
        BuildError,
        match=re.escape(
            "mpi:mpi_bcast: semantics.formal: shape collective.broadcast: slot 'root' is not bound"
        ),
    ):
        run_model(pipeline(unbound), {}, progress=silent)


def test_assemble_refuses_a_supersession_to_nowhere() -> None:
    checkpoint = fixture_classify(fixture_extract({}))
    del checkpoint["formal"]
    checkpoint["entries"]["mpi:mpi_type_extent"]["relationships"]["superseded_by"] = "mpi:mpi_gone"
    with pytest.raises(
        AssembleError, match=re.escape("mpi:mpi_type_extent: relationships.superseded_by")
    ):
        assemble(checkpoint)


def test_a_model_without_modules_is_skipped_with_a_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_import = importlib.import_module

    def missing(name: str) -> ModuleType:
        if name.startswith(("usis.extract.", "usis.classify.")):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return real_import(name)

    monkeypatch.setattr("usis.build.importlib.import_module", missing)
    assert find_pipeline("cuda") == "cuda: skipped, usis.extract.cuda does not exist yet"
    lines: list[str] = []
    assert build(None, out_dir=tmp_path, progress=lines.append) == {}
    assert len(lines) == 6 and all("does not exist yet" in line for line in lines)
    with pytest.raises(BuildError, match=re.escape("usis.extract.cuda does not exist yet")):
        build(["cuda"], out_dir=tmp_path, progress=silent)
    with pytest.raises(BuildError, match="unknown models"):
        build(["upc"], out_dir=tmp_path, progress=silent)


@settings(max_examples=80)
@given(st.lists(st.integers(min_value=-1, max_value=7), min_size=1, max_size=8))
def test_supersedes_inversion_satisfies_its_rule(targets: list[int]) -> None:
    keys = [f"mpi:mpi_f{index}" for index in range(len(targets))]
    entries: dict[str, Any] = {}
    for key, target in zip(keys, targets, strict=True):
        made = entry("mpi", key.split(":")[1].upper(), None, [])
        if 0 <= target < len(keys) and keys[target] != key:
            made["relationships"]["superseded_by"] = keys[target]
            made["identity"]["deprecated_in"] = "MPI-2.0"
        entries[key] = made
    assembled = assemble({"model": "mpi", "sources": [], "entries": entries, "provenance": {}})
    findings = [f for f in validate_entries(assembled["entries"]) if f.rule == "USIS-C005"]
    assert findings == []
    edges = sum(1 for e in entries.values() if e["relationships"]["superseded_by"])
    inverted = sum(len(e["relationships"]["supersedes"]) for e in assembled["entries"].values())
    assert edges == inverted


@settings(max_examples=80)
@given(
    st.text(alphabet="ab_{T} *()", max_size=30),
    st.sampled_from([("int", "int"), ("longlong", "long long"), ("uint64", "uint64_t")]),
)
def test_concretized_text_holds_no_family_token(text: str, pair: tuple[str, str]) -> None:
    assert "{T}" not in concretize_text(text, *pair)


def test_a_family_type_with_its_own_version_gives_its_member_that_version() -> None:
    def classify(extracted: dict[str, Any]) -> dict[str, Any]:
        result = fixture_classify(extracted)
        result["families"]["mpi:mpi_fixture_{T}_get"]["types"][1].update(
            since="MPI-4.1", since_from="a later release added long long"
        )
        return result

    built = run_model(pipeline(classify), {}, progress=silent).files
    entries = json.loads(built["final-mpi-api.json"])["entries"]
    assert entries["mpi:mpi_fixture_longlong_get"]["identity"]["since"] == "MPI-4.1"
    # The other member keeps the family entry's version.
    family_since = entries["mpi:mpi_fixture_{T}_get"]["identity"]["since"]
    assert entries["mpi:mpi_fixture_int_get"]["identity"]["since"] == family_since
    records = expand_provenance(json.loads(built["provenance-mpi.json"])["provenance"])
    assert records["mpi:mpi_fixture_longlong_get"]["/identity/since"]["from"] == (
        "a later release added long long"
    )


def test_a_family_type_version_without_its_origin_fails_assemble() -> None:
    def classify(extracted: dict[str, Any]) -> dict[str, Any]:
        result = fixture_classify(extracted)
        result["families"]["mpi:mpi_fixture_{T}_get"]["types"][1]["since"] = "MPI-4.1"
        return result

    with pytest.raises(BuildError, match="no since_from"):
        run_model(pipeline(classify), {}, progress=silent)
