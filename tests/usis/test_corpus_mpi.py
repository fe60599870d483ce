"""The MPI corpus: coverage of apis.json plus ULFM, schema validity, the kind table, curated data."""

from __future__ import annotations

import functools
import json
import re
import zipfile
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from usis.build import find_pipeline, run_model, source_paths
from usis.classify import mpi as classify_mpi
from usis.extract import mpi as extract_mpi
from usis.sources.manifest import load_manifest
from usis.validate import validate_entries

REPOSITORY = Path(__file__).resolve().parents[2]
SCHEMA_PATH = REPOSITORY / "src" / "usis" / "schema" / "usis-api-schema.json"
DOCS_PATH = REPOSITORY / "docs" / "usis-mpi.md"
ULFM = (
    "mpi_comm_revoke",
    "mpi_comm_is_revoked",
    "mpi_comm_ack_failed",
    "mpi_comm_get_failed",
    "mpi_comm_shrink",
    "mpi_comm_ishrink",
    "mpi_comm_agree",
    "mpi_comm_iagree",
)
JUDGEMENT_REFERENCE = re.compile(r"judgements\.yaml#([a-z0-9_]+) \(judgement\)")


@functools.cache
def built_mpi() -> dict[str, Any]:
    """Checkpoints of the MPI build up to provenance (validate runs on the way and must pass)."""
    pipeline = find_pipeline("mpi")
    assert not isinstance(pipeline, str), pipeline
    paths = source_paths(pipeline, load_manifest())
    if "pympistandard" not in paths:
        pytest.skip("pympistandard's pinned apis.json is neither fetched nor installed")
    build = run_model(pipeline, paths, until="provenance", progress=lambda line: None)
    return build.checkpoints


@functools.cache
def forum_data() -> dict[str, Any]:
    path = extract_mpi.installed_apis_json()
    if path is None:
        pytest.skip("pympistandard is not installed")
    return json.loads(path.read_text(encoding="utf-8"))


def entries() -> dict[str, Any]:
    return built_mpi()["provenance"]["entries"]


def test_every_forum_symbol_and_the_ulfm_calls_have_an_entry() -> None:
    keys = set(entries())
    expected = {f"mpi:{name}" for name in forum_data()} | {f"mpi:{name}" for name in ULFM}
    assert len(forum_data()) == 567
    assert keys == expected
    assert len(keys) >= 575


def test_every_entry_validates_against_the_verbatim_schema() -> None:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(entries()), key=lambda error: list(error.path))
    assert [f"{list(error.path)}: {error.message}" for error in errors[:5]] == []
    assert validate_entries(entries()) == []


def test_extract_is_deterministic_and_sorted() -> None:
    first = extract_mpi.extract({})
    second = extract_mpi.extract({})
    assert first == second
    keys = [record["key"] for record in first["records"]]
    assert keys == sorted(keys)
    assert first["sources"] == [["pympistandard", "0.2.0", extract_mpi.WHEEL_SHA256]]


def test_extract_reads_the_wheel_and_refuses_another_apis_json(tmp_path: Path) -> None:
    installed = extract_mpi.installed_apis_json()
    assert installed is not None
    wheel = tmp_path / "pympistandard-0.2.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr(extract_mpi.APIS_JSON_MEMBER, installed.read_bytes())
    assert extract_mpi.read_apis_json(wheel) == installed.read_bytes()
    tampered = tmp_path / "tampered.whl"
    with zipfile.ZipFile(tampered, "w") as archive:
        archive.writestr(extract_mpi.APIS_JSON_MEMBER, installed.read_bytes() + b" ")
    with pytest.raises(extract_mpi.MpiSourceError, match=r"is not the pinned apis\.json"):
        extract_mpi.read_apis_json(tampered)
    with pytest.raises(extract_mpi.MpiSourceError, match="does not exist"):
        extract_mpi.read_apis_json(tmp_path / "missing.whl")


def test_every_forum_kind_is_mapped_or_deliberately_null() -> None:
    table = classify_mpi.curated("kinds")["forum_kinds"]
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    vocabulary = set(schema["$defs"]["parameter_kind"]["enum"])
    present = {
        parameter["kind"] for record in forum_data().values() for parameter in record["parameters"]
    }
    ulfm = {
        parameter["kind"]
        for call in classify_mpi.curated("ulfm")["calls"]
        for parameter in call["parameters"]
    }
    assert sorted((present | ulfm) - set(table)) == []
    for forum_kind, row in table.items():
        values = [row.get("kind"), row.get("array_kind", row.get("kind"))]
        values += list((row.get("by_name") or {}).values())
        assert set(values) <= vocabulary, forum_kind
        if None in values:
            assert row.get("null_reason"), f"{forum_kind}: a null mapping needs its null_reason"
    assert sorted(set(table) - present - ulfm) == [], "kinds.yaml maps kinds the source lacks"


def test_team_size_only_by_per_function_override() -> None:
    team_size = sorted(
        f"{key}.{parameter['name']}"
        for key, entry in entries().items()
        for parameter in entry["parameters"]
        if parameter["kind"] == "TEAM_SIZE"
    )
    assert team_size == [
        "mpi:mpi_comm_remote_size.size",
        "mpi:mpi_comm_size.size",
        "mpi:mpi_group_size.size",
    ]


def test_since_covers_every_entry_once_and_names_no_stranger() -> None:
    table = classify_mpi.since_table()
    corpus = {key.removeprefix("mpi:") for key in entries()}
    assert set(table) == corpus
    pattern = re.compile(r"^MPI-[0-9]+(\.[0-9]+)*$")
    for key, entry in entries().items():
        since = entry["identity"]["since"]
        if key.removeprefix("mpi:") in ULFM:
            assert since is None
        else:
            assert since is not None and pattern.match(since), key


def test_deprecations_name_existing_successors() -> None:
    corpus = entries()
    deprecated = classify_mpi.curated("deprecations")["deprecated"]
    assert len(deprecated) >= 15
    for item in deprecated:
        entry = corpus[f"mpi:{item['call']}"]
        assert entry["identity"]["deprecated_in"] == item["deprecated_in"]
        assert item["source"].startswith("MPI-4.1 §16")
        if item["superseded_by"]:
            successor = corpus[f"mpi:{item['superseded_by']}"]
            assert f"mpi:{item['call']}" in successor["relationships"]["supersedes"]


@pytest.mark.parametrize(
    "group", ["collective", "point_to_point", "one_sided", "io", "synchronization"]
)
def test_standard_refs_for_every_communication_call(group: str) -> None:
    chosen = [key for key, entry in entries().items() if entry["identity"]["api_group"] == group]
    assert chosen
    for key in chosen:
        refs = entries()[key]["identity"]["standard_refs"]
        assert refs, key
        assert all(re.match(r"^(MPI-[45]\.[01] §[0-9.]+ |ULFM)", ref) for ref in refs), refs


def test_descriptions_are_one_sentence_each() -> None:
    for key, entry in entries().items():
        desc = entry["identity"]["desc"]
        assert desc and desc[0].isupper() and desc.endswith("."), key
        assert "\n" not in desc and len(desc) < 200, key
        assert desc.count(". ") == 0, f"{key}: more than one sentence: {desc}"


def test_judgements_are_marked_in_provenance_and_listed_in_the_docs() -> None:
    known = classify_mpi.judgements()
    provenance = built_mpi()["classify"]["provenance"]
    cited = {
        match.group(1)
        for records in provenance.values()
        for record in records.values()
        for match in [JUDGEMENT_REFERENCE.search(record["from"])]
        if match and record["method"] == "curated"
    }
    assert cited == set(known)
    docs = DOCS_PATH.read_text(encoding="utf-8")
    for judgement_id in known:
        assert f"`{judgement_id}`" in docs, f"docs/usis-mpi.md does not list {judgement_id}"


def test_classify_provenance_points_at_existing_values() -> None:
    checkpoint = built_mpi()["classify"]
    for key, records in checkpoint["provenance"].items():
        entry = checkpoint["entries"][key]
        for pointer, record in records.items():
            assert record["method"] in ("source", "rule", "curated")
            assert record["stage"] in ("extract", "classify")
            value: Any = entry
            for part in pointer.strip("/").split("/"):
                value = value[int(part)] if isinstance(value, list) else value[part]


def test_every_value_has_provenance_after_the_build() -> None:
    final = built_mpi()["provenance"]
    records = final["provenance"]["mpi:mpi_bcast"]
    assert "/identity/since" in records
    assert records["/identity/since"]["method"] == "curated"
    assert records["/parameters/0/kind"]["from"].startswith("curated/mpi/kinds.yaml")


def test_formal_assignments_name_existing_shapes() -> None:
    formal = built_mpi()["classify"]["formal"]
    assert classify_mpi.missing_shapes(formal) == {}
    with_formal = {key for key, entry in entries().items() if entry["semantics"]["formal"]}
    for base in classify_mpi.names().collective_bases:
        assert f"mpi:mpi_{base}" in with_formal, base
    for key in ("mpi:mpi_send", "mpi:mpi_recv", "mpi:mpi_put", "mpi:mpi_wait", "mpi:mpi_win_fence"):
        assert key in with_formal


def test_every_curated_fact_carries_a_source_note() -> None:
    curated = classify_mpi.curated
    assert all(group["source"] for group in curated("since")["versions"])
    assert all(item["source"] for item in curated("deprecations")["deprecated"])
    assert all(item["source"] for item in curated("kinds")["overrides"])
    assert curated("kinds")["source"]
    assert curated("classification")["collective_calls"]["source"]
    assert curated("classification")["standard_sections"]["source"]
    assert curated("ulfm")["source"] and curated("formal")["source"]
    assert curated("descriptions")["source"]
    assert all(table["source"] for table in curated("names").values())
    assert all(item["decision"] and item["fields"] for item in curated("judgements")["judgements"])


def test_variant_links_follow_the_names() -> None:
    corpus = entries()
    assert corpus["mpi:mpi_bcast"]["relationships"]["variants"]["nonblocking"] == "mpi:mpi_ibcast"
    assert (
        corpus["mpi:mpi_comm_dup"]["relationships"]["variants"]["nonblocking"]
        == "mpi:mpi_comm_idup"
    )
    assert (
        corpus["mpi:mpi_file_read_at_all"]["relationships"]["variants"]["nonblocking"]
        == "mpi:mpi_file_iread_at_all"
    )
    assert corpus["mpi:mpi_iprobe"]["relationships"]["variants"]["blocking"] == "mpi:mpi_probe"
    # An i-prefixed blocking name that is not a nonblocking form keeps no blocking link.
    assert corpus["mpi:mpi_initialized"]["relationships"]["variants"]["blocking"] is None


NOT_OPERATIONS = {
    "probe",
    "iprobe",
    "mprobe",
    "improbe",
    "pready",
    "pready_range",
    "pready_list",
    "parrived",
    "start",
    "startall",
}
ENVIRONMENT = {"init", "init_thread", "finalize"}


def performs_an_operation(key: str, entry: dict[str, Any]) -> bool:
    """docs/usis-mpi.md's procedure_class rule, restated from an entry's other fields."""
    name = key.removeprefix("mpi:mpi_")
    group, execution = entry["identity"]["api_group"], entry["execution"]
    variants = entry["relationships"]["variants"]
    if name in NOT_OPERATIONS or name in ENVIRONMENT or name.endswith("_end"):
        return False
    if group in ("point_to_point", "one_sided", "collective"):
        return True
    if group == "io" and re.fullmatch(r"file_i?(read|write)\w*", name):
        return True
    if variants["blocking"] or variants["nonblocking"]:
        return True
    return bool(execution["collective"]) and group != "synchronization"


def test_procedure_class_is_set_exactly_for_operations() -> None:
    shipped = json.loads(
        (REPOSITORY / "src" / "usis" / "corpus" / "final-mpi-api.json").read_text(encoding="utf-8")
    )["entries"]
    for corpus in (entries(), shipped):
        wrong = {
            key: entry["execution"]["procedure_class"]
            for key, entry in corpus.items()
            if performs_an_operation(key, entry)
            != (entry["execution"]["procedure_class"] is not None)
        }
        assert wrong == {}
    end = shipped["mpi:mpi_file_read_all_end"]["execution"]
    assert (end["procedure_class"], end["stages"]) == (None, ["c", "f"])
    for key in ("mpi:mpi_wait", "mpi:mpi_win_fence", "mpi:mpi_init"):
        assert shipped[key]["execution"]["procedure_class"] is None, key
    for key in ("mpi:mpi_comm_split", "mpi:mpi_file_read", "mpi:mpi_barrier"):
        assert shipped[key]["execution"]["procedure_class"] == "b-op", key
    assert (
        "**procedure_class** is the MPI-4.1 §2.4.2 class of an *operation*"
        in DOCS_PATH.read_text(encoding="utf-8")
    )
