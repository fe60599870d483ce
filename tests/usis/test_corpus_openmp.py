"""The shipped OpenMP corpus: counts, schema validity, hand-checked entries, which implementation
declares what, and (when the headers are in the cache) a rebuild equal to the shipped file."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.usis.corpus import cached_source_or_skip, shipped, shipped_provenance
from usis.classify import openmp as classify_openmp
from usis.entry_builder import Provenance
from usis.extract import openmp as extract_openmp

DOCS = Path(__file__).resolve().parents[2] / "docs" / "usis-openmp-shmem.md"


def entries() -> dict[str, Any]:
    return shipped("openmp", "final")["entries"]


def test_at_least_90_routines_with_their_version() -> None:
    assert len(entries()) >= 90
    assert all(key.startswith("openmp:omp_") for key in entries())
    for key, entry in entries().items():
        assert re.fullmatch(r"OpenMP-\d\.\d", entry["identity"]["since"] or ""), key
        assert entry["identity"]["desc"], key


def test_every_entry_validates_against_the_verbatim_schema() -> None:
    schema = json.loads(resources.files("usis.schema").joinpath("usis-api-schema.json").read_text())
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(entries()))
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors[:10]]


def declared_by(key: str) -> str:
    dependency = entries()[key]["tool_integration"]["context_dependencies"][0]
    assert dependency["field"] == "bindings.c"
    return dependency["note"]


def test_each_entry_says_which_implementation_declares_it() -> None:
    both = declared_by("openmp:omp_get_thread_num")
    assert "libgomp" in both and "libomp" in both and "does not declare" not in both
    only_llvm = declared_by("openmp:omp_target_memcpy_async")
    assert "LLVM 16 libomp" in only_llvm and "libgomp does not declare it" in only_llvm
    llvm_only = [k for k in entries() if "libgomp does not declare" in declared_by(k)]
    assert len(llvm_only) == 13
    # The OpenMP 6.0 routines only LLVM 21's omp.h declares.
    newest = [k for k in entries() if "libgomp and libomp do not declare" in declared_by(k)]
    assert len(newest) == 14
    assert "openmp:omp_target_memset" in newest


def fields(key: str) -> dict[str, Any]:
    entry = entries()[key]
    return {
        "api_group": entry["identity"]["api_group"],
        "since": entry["identity"]["since"],
        "blocking": entry["execution"]["blocking"],
        "launch": entry["execution"]["launch"],
        "return": (entry["return"]["kind"], entry["return"]["value_kind"]),
        "memory_model": (entry["semantics"]["memory"] or {}).get("memory_model"),
        "signature": entry["bindings"]["c"]["signature"],
        "params": [(p["name"], p["kind"], p["direction"]) for p in entry["parameters"]],
    }


# Hand-checked against the OpenMP specification's routine sections and both headers.
GOLDEN: dict[str, dict[str, Any]] = {
    "openmp:omp_get_thread_num": {
        "api_group": "query",
        "since": "OpenMP-1.0",
        "launch": "cpu+gpu",
        "return": ("value", "RANK"),
        "signature": "int omp_get_thread_num(void)",
    },
    "openmp:omp_get_num_threads": {"return": ("value", "TEAM_SIZE")},
    "openmp:omp_get_max_threads": {"return": ("value", None)},
    "openmp:omp_get_device_num": {"since": "OpenMP-5.0", "return": ("value", "DEVICE")},
    "openmp:omp_set_lock": {
        "api_group": "synchronization",
        "blocking": True,
        "memory_model": "release_acquire",
        "params": [("lock", None, "inout")],
        "signature": "void omp_set_lock(omp_lock_t *lock)",
    },
    "openmp:omp_test_lock": {"blocking": False, "return": ("bool", None)},
    "openmp:omp_init_nest_lock_with_hint": {
        "api_group": "management",
        "since": "OpenMP-4.5",
        "signature": "void omp_init_nest_lock_with_hint(omp_nest_lock_t *lock, omp_sync_hint_t hint)",
    },
    "openmp:omp_target_memcpy": {
        "api_group": None,
        "since": "OpenMP-4.5",
        "blocking": True,
        "launch": "cpu",
        "return": ("ERROR_CODE", None),
        "signature": "int omp_target_memcpy(void *dst, const void *src, size_t length, "
        "size_t dst_offset, size_t src_offset, int dst_device_num, int src_device_num)",
        "params": [
            ("dst", "BUFFER", "out"),
            ("src", "BUFFER", "in"),
            ("length", "SCALAR", "in"),
            ("dst_offset", "SCALAR", "in"),
            ("src_offset", "SCALAR", "in"),
            ("dst_device_num", "DEVICE", "in"),
            ("src_device_num", "DEVICE", "in"),
        ],
    },
    "openmp:omp_target_memcpy_async": {"since": "OpenMP-5.1", "blocking": False},
    "openmp:omp_target_alloc": {"api_group": "management", "return": ("RESULT", None)},
}


@pytest.mark.parametrize("key", sorted(GOLDEN))
def test_golden_entry(key: str) -> None:
    actual = fields(key)
    assert {name: actual[name] for name in GOLDEN[key]} == GOLDEN[key]


def test_device_copies_say_where_their_buffers_live() -> None:
    copy = entries()["openmp:omp_target_memcpy_rect"]
    spaces = {p["name"]: p["memory_space"] for p in copy["parameters"]}
    assert spaces["dst"] == spaces["src"] == "either"
    dependent = {d["field"] for d in copy["tool_integration"]["context_dependencies"]}
    assert {"param:dst.memory_space", "param:src.memory_space"} <= dependent
    lengths = {p["name"]: p["length"] for p in copy["parameters"]}
    assert lengths["volume"] == "num_dims"
    variants = copy["relationships"]["variants"]
    assert variants["nonblocking"] == "openmp:omp_target_memcpy_rect_async"
    async_form = entries()["openmp:omp_target_memcpy_rect_async"]["relationships"]["variants"]
    assert async_form["blocking"] == "openmp:omp_target_memcpy_rect"


def test_deprecated_nesting_routines_point_at_their_replacements() -> None:
    nested = entries()["openmp:omp_set_nested"]
    assert nested["identity"]["deprecated_in"] == "OpenMP-5.0"
    assert nested["relationships"]["superseded_by"] == "openmp:omp_set_max_active_levels"
    replacement = entries()["openmp:omp_set_max_active_levels"]["relationships"]
    assert replacement["supersedes"] == ["openmp:omp_set_nested"]
    provenance = shipped_provenance("openmp")["openmp:omp_set_nested"]
    assert provenance["/identity/deprecated_in"]["method"] == "source"
    assert "__GOMP_DEPRECATED_5_0" in provenance["/identity/deprecated_in"]["from"]


def test_a_header_deprecation_marker_must_agree_with_the_curated_version() -> None:
    record = {
        "name": "omp_get_level",
        "declared_by": {
            "libgomp": {
                "return_type": "int",
                "parameters": [],
                "line": 246,
                "attributes": ["__GOMP_DEPRECATED_5_1"],
            }
        },
    }
    with pytest.raises(classify_openmp.ClassifyError, match=r"deprecated in OpenMP-5\.1"):
        classify_openmp.build_entry(record, Provenance("classify/openmp.py"))


def test_judgements_are_marked_and_documented() -> None:
    provenance = shipped_provenance("openmp")
    assert set(provenance) == set(entries())
    judged = {
        re.sub(r"/\d+", "", pointer)
        for records in provenance.values()
        for pointer, record in records.items()
        if record["from"].startswith("judgement:")
    }
    assert "/execution/thread_safety" in judged
    documented = DOCS.read_text()
    missing = sorted(field for field in judged if f"`{field}`" not in documented)
    assert not missing, f"judgement fields not listed in {DOCS.name}: {missing}"


def test_curated_parameter_names_must_match_the_declaration() -> None:
    record = {
        "name": "omp_get_team_size",
        "declared_by": {
            "libgomp": {
                "return_type": "int",
                "parameters": [{"type": "int", "name": None, "array": False}],
                "line": 1,
                "attributes": [],
            }
        },
    }
    entry = classify_openmp.build_entry(record, Provenance("classify/openmp.py"))
    assert entry["parameters"][0]["name"] == "level"
    record["declared_by"]["libgomp"]["parameters"].append(
        {"type": "int", "name": None, "array": False}
    )
    with pytest.raises(classify_openmp.ClassifyError, match="declares 2 parameters"):
        classify_openmp.build_entry(record, Provenance("classify/openmp.py"))


def test_a_rebuild_from_the_cached_headers_equals_the_shipped_corpus() -> None:
    paths = {name: cached_source_or_skip(name, "openmp") for name in extract_openmp.SOURCES}
    from usis.build import find_pipeline, run_model

    pipeline = find_pipeline("openmp")
    assert not isinstance(pipeline, str)
    built = run_model(pipeline, paths, progress=lambda line: None)
    assert json.loads(built.files["final-openmp-api.json"]) == shipped("openmp", "final")


SPECIFIED = {
    "openmp:omp_get_device_from_uid": ("int omp_get_device_from_uid(const char *uid)", "§24.7"),
    "openmp:omp_get_uid_from_device": (
        "const char *omp_get_uid_from_device(int device_num)",
        "§24.8",
    ),
    "openmp:omp_is_free_agent": ("int omp_is_free_agent(void)", "§23.1.4"),
}


@pytest.mark.parametrize("key", sorted(SPECIFIED))
def test_routines_no_pinned_header_declares_come_from_the_specification(key: str) -> None:
    signature, section = SPECIFIED[key]
    entry = entries()[key]
    assert entry["bindings"]["c"] == {
        "expressible": True,
        "header": "omp.h",
        "signature": signature,
    }
    assert entry["identity"]["since"] == "OpenMP-6.0"
    assert section in declared_by(key) and "No pinned omp.h declares it" in declared_by(key)
    record = shipped_provenance("openmp")[key]["/bindings/c/signature"]
    assert record["method"] == "curated" and f"OpenMP 6.0 {section}" in record["from"]


def test_the_specified_routines_read_as_the_specification_defines_them() -> None:
    from_uid = entries()["openmp:omp_get_device_from_uid"]
    assert (from_uid["return"]["kind"], from_uid["return"]["value_kind"]) == ("value", "DEVICE")
    assert [(p["name"], p["kind"], p["direction"]) for p in from_uid["parameters"]] == [
        ("uid", "STRING", "in")
    ]
    assert entries()["openmp:omp_is_free_agent"]["return"]["kind"] == "bool"
    # The device information routines are unspecified inside a target region.
    assert entries()["openmp:omp_get_uid_from_device"]["execution"]["launch"] == "cpu"


def test_a_specified_routine_a_pinned_header_declares_fails_the_build() -> None:
    declared = {
        "name": "omp_is_free_agent",
        "declared_by": {
            "libomp-21": {"return_type": "int", "parameters": [], "line": 1, "attributes": []}
        },
    }
    extracted = {"model": "openmp", "sources": [], "records": [declared]}
    with pytest.raises(classify_openmp.ClassifyError, match="now declares"):
        classify_openmp.classify(extracted)
