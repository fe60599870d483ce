"""The shipped OpenSHMEM corpus: counts, schema validity, hand-checked entries, provenance, and
(when the source is in the cache) agreement with the header it was built from."""

from __future__ import annotations

import json
import re
import string
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.usis.corpus import cached_source_or_skip, families, shipped, shipped_provenance
from usis.cheader.declarations import render_signature
from usis.classify import shmem as classify_shmem
from usis.curated import load
from usis.extract import shmem as extract_shmem

DOCS = Path(__file__).resolve().parents[2] / "docs" / "usis-openmp-shmem.md"


@cache
def entries() -> dict[str, Any]:
    return shipped("shmem", "final")["entries"]


def schema() -> dict[str, Any]:
    return json.loads(resources.files("usis.schema").joinpath("usis-api-schema.json").read_text())


def test_at_least_270_function_families_and_every_member_concretized() -> None:
    assert len(families(entries())) >= 270
    for key in (k for k in entries() if "{T}" in k):
        for suffix in entries()[key]["identity"]["type_family"]:
            member = entries()[key.replace("{T}", suffix)]
            assert member["identity"]["type_family"] is None
            assert "{T}" not in json.dumps(member)


def test_every_entry_validates_against_the_verbatim_schema() -> None:
    validator = jsonschema.Draft202012Validator(schema())
    errors = sorted(validator.iter_errors(entries()), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors[:10]
    )


def test_the_shipped_file_names_its_pinned_source() -> None:
    assert shipped("shmem", "final")["sources"] == [
        [
            "libopenmpi-dev",
            "4.1.4-3+b1",
            "089c17e74439e53ad6cab5f11d935bc9df93b26da0bd87b2b72eb789b467bea2",
        ]
    ]


def test_the_1_5_additions_are_present_and_the_header_routines_too() -> None:
    additions = [
        "shmem:shmem_team_split_strided",
        "shmem:shmem_team_split_2d",
        "shmem:shmem_team_sync",
        "shmem:shmem_ctx_get_team",
        "shmem:shmem_team_create_ctx",
        "shmem:shmem_putmem_signal",
        "shmem:shmem_ctx_int_put_signal_nbi",
        "shmem:shmem_signal_wait_until",
        "shmem:shmem_int_sum_reduce",
        "shmem:shmem_broadcastmem",
        "shmem:shmem_int_wait_until_any_vector",
        "shmem:shmem_ctx_long_atomic_fetch_add_nbi",
    ]
    for key in additions:
        assert entries()[key]["identity"]["since"] == "OpenSHMEM-1.5", key
        assert entries()[key]["tool_integration"]["profiling_name"] is None, key
    assert (
        entries()["shmem:shmem_int_put"]["tool_integration"]["profiling_name"] == "pshmem_int_put"
    )


def key_fields(key: str) -> dict[str, Any]:
    entry = entries()[key]
    memory = entry["semantics"]["memory"] or {}
    return {
        "api_group": entry["identity"]["api_group"],
        "blocking": entry["execution"]["blocking"],
        "collective": entry["execution"]["collective"],
        "execute_once": entry["execution"]["execute_once"],
        "one_sided": entry["semantics"]["one_sided"],
        "atomic": entry["semantics"]["atomic"],
        "collective_type": (entry["semantics"]["collective"] or {}).get("type"),
        "in_place": (entry["semantics"]["collective"] or {}).get("in_place"),
        "remote_completion": memory.get("remote_completion"),
        "fence_semantics": memory.get("fence_semantics"),
        "symmetric_heap": memory.get("symmetric_heap"),
        "return": (entry["return"]["kind"], entry["return"]["value_kind"]),
    }


# Hand-checked against OpenSHMEM 1.5: each expectation is what the specification's routine
# section says (puts complete remotely only at a quiet; fence orders, quiet completes; ...).
GOLDEN: dict[str, dict[str, Any]] = {
    "shmem:shmem_int_put": {
        "api_group": "one_sided",
        "blocking": True,
        "one_sided": {"operation": "put", "epoch_type": "implicit", "ordering": "none"},
        "remote_completion": "after_quiet",
        "symmetric_heap": True,
        "return": ("void", None),
    },
    "shmem:shmem_putmem_nbi": {
        "blocking": False,
        "remote_completion": "after_quiet",
        "one_sided": {"operation": "put", "epoch_type": "implicit", "ordering": "none"},
    },
    "shmem:shmem_double_get": {
        "api_group": "one_sided",
        "one_sided": {"operation": "get", "epoch_type": "implicit", "ordering": "none"},
        "remote_completion": None,
    },
    "shmem:shmem_long_g": {"return": ("value", None), "remote_completion": None},
    "shmem:shmem_long_atomic_fetch_add": {
        "atomic": {"operation": "fetch_add", "fetch": True, "compare": False},
        "remote_completion": "after_return",
        "return": ("value", None),
    },
    "shmem:shmem_int_atomic_compare_swap": {
        "atomic": {"operation": "cswap", "fetch": True, "compare": True},
    },
    "shmem:shmem_uint64_atomic_xor": {
        "atomic": {"operation": "xor", "fetch": False, "compare": False},
        "remote_completion": "after_quiet",
        "return": ("void", None),
    },
    "shmem:shmem_barrier_all": {
        "api_group": "collective",
        "collective": True,
        "fence_semantics": "both",
    },
    "shmem:shmem_sync_all": {"collective": True, "fence_semantics": "none"},
    "shmem:shmem_quiet": {"api_group": "synchronization", "fence_semantics": "both"},
    "shmem:shmem_fence": {"api_group": "synchronization", "fence_semantics": "remote"},
    "shmem:shmem_int_broadcast": {
        "collective": True,
        "collective_type": "broadcast",
        "in_place": False,
        "return": ("ERROR_CODE", None),
    },
    "shmem:shmem_broadcast64": {"collective_type": "broadcast", "return": ("void", None)},
    "shmem:shmem_float_sum_reduce": {
        "collective_type": "allreduce",
        "in_place": True,
        "collective": True,
    },
    "shmem:shmem_team_split_strided": {
        "api_group": "management",
        "collective": True,
        "return": ("ERROR_CODE", None),
    },
    "shmem:shmem_my_pe": {"api_group": "query", "return": ("value", "RANK")},
    "shmem:shmem_team_n_pes": {"return": ("value", "TEAM_SIZE")},
    "shmem:shmem_init": {"execute_once": False, "collective": True},
    "shmem:shmem_test_lock": {"blocking": False, "return": ("bool", None)},
}


@pytest.mark.parametrize("key", sorted(GOLDEN))
def test_golden_entry(key: str) -> None:
    actual = key_fields(key)
    expected = GOLDEN[key]
    assert {name: actual[name] for name in expected} == expected


def test_golden_parameters_of_put_and_broadcast() -> None:
    put = {p["name"]: p for p in entries()["shmem:shmem_int_put"]["parameters"]}
    assert put["target"]["memory_space"] == "symmetric_heap"
    assert put["target"]["direction"] == "out" and put["target"]["length"] == "len"
    assert put["source"]["memory_space"] == "host" and put["source"]["constant"] is True
    assert put["pe"]["kind"] == "RANK" and put["len"]["kind"] == "COUNT"
    broadcast = {p["name"]: p for p in entries()["shmem:shmem_broadcast32"]["parameters"]}
    assert broadcast["source"]["root_only"] is True
    assert broadcast["pSync"]["length"] == "SHMEM_BCAST_SYNC_SIZE"
    assert broadcast["PE_size"]["kind"] == "TEAM_SIZE"
    nbi = {p["name"]: p for p in entries()["shmem:shmem_int_put_nbi"]["parameters"]}
    assert nbi["source"]["asynchronous"] is True


def test_deprecated_routines_point_at_their_replacement_and_back() -> None:
    assert entries()["shmem:shmem_int_swap"]["relationships"]["superseded_by"] == (
        "shmem:shmem_int_atomic_swap"
    )
    assert entries()["shmem:shmem_int_swap"]["identity"]["deprecated_in"] == "OpenSHMEM-1.4"
    assert (
        "shmem:shmem_int_sum_to_all"
        in (entries()["shmem:shmem_int_sum_reduce"]["relationships"]["supersedes"])
    )
    assert entries()["shmem:start_pes"]["relationships"]["superseded_by"] == "shmem:shmem_init"
    # The signed and/or/xor active-set reductions have no 1.5 counterpart of their type.
    assert entries()["shmem:shmem_int_and_to_all"]["relationships"]["superseded_by"] is None


def test_blocking_and_nonblocking_forms_point_at_each_other() -> None:
    put = entries()["shmem:shmem_ctx_double_put"]["relationships"]["variants"]
    assert put["nonblocking"] == "shmem:shmem_ctx_double_put_nbi"
    back = entries()["shmem:shmem_ctx_double_put_nbi"]["relationships"]["variants"]
    assert back["blocking"] == "shmem:shmem_ctx_double_put"


def test_formal_blocks_come_from_the_shape_catalog() -> None:
    formal = entries()["shmem:shmem_int_put"]["semantics"]["formal"]
    assert formal is not None
    reads = {flow["id"]: flow for flow in formal["data_flow"]}
    assert reads["source_read"]["buffer"] == "param:source"
    assert reads["dest_write"]["extent"] == {"count_ref": "param:len", "datatype_ref": "type:int"}
    share = sum(1 for e in entries().values() if e["semantics"]["formal"]) / len(entries())
    assert share > 0.4


def provenance_judgements() -> set[str]:
    """The fields (JSON pointers without indices) some entry marks as a judgement."""
    found = set()
    for records in shipped_provenance("shmem").values():
        for pointer, record in records.items():
            if record["from"].startswith("judgement:"):
                found.add(re.sub(r"/\d+", "", pointer))
    return found


def test_every_value_has_provenance_and_judgements_are_documented() -> None:
    provenance = shipped_provenance("shmem")
    assert set(provenance) == set(entries())
    assert provenance["shmem:shmem_int_put"]["/bindings/c/signature"]["method"] == "source"
    judged = provenance_judgements()
    assert "/execution/thread_safety" in judged
    documented = DOCS.read_text()
    missing = sorted(field for field in judged if f"`{field}`" not in documented)
    assert not missing, f"judgement fields not listed in {DOCS.name}: {missing}"


# -- the curated operation records ------------------------------------------------------------


def classified_routines() -> list[classify_shmem.Routine]:
    """The routines classify saw, read back from the shipped entries (family members left out)."""
    members = {
        key.replace("{T}", suffix)
        for key, entry in entries().items()
        if "{T}" in key
        for suffix in entry["identity"]["type_family"] or []
    }
    return [
        classify_shmem.Routine(
            name=entry["identity"]["name"],
            return_type=entry["return"]["binding_type"]["c"],
            parameters=[
                {"name": p["name"], "type": p["binding_type"]["c"], "array": False}
                for p in entry["parameters"]
            ],
            types=entry["identity"]["type_family"],
            origin="header",
            where="",
            profiling_name=None,
        )
        for key, entry in entries().items()
        if key not in members
    ]


def test_every_operation_of_the_corpus_has_one_curated_record_with_its_source() -> None:
    operations = load("shmem/operations.yaml")["operations"]
    used = {classify_shmem.operation_of(routine).key for routine in classified_routines()}
    assert used == set(operations), "operations.yaml records and the corpus's operations differ"
    placeholders = {"things", "on_ctx", "over", "op"}
    for key, record in operations.items():
        assert record["source"].startswith("OpenSHMEM 1."), key
        assert set(record) >= {"rule", "api_group", "desc", "execution"}, key
        assert set(record["execution"]) == {
            "blocking",
            "collective",
            "locality",
            "completion",
            "procedure_class",
        }, key
        fields = {name for _, name, _, _ in string.Formatter().parse(record["desc"]) if name}
        assert fields <= placeholders, (key, fields)
        assert (record["rule"] == "atomic") == classify_shmem.is_atomic(key), key
    for name in ("atomics.yaml", "parameters.yaml"):
        assert all(table["source"] for table in load(f"shmem/{name}").values()), name


def test_an_operation_without_a_curated_record_is_an_error_naming_the_file() -> None:
    routine = classify_shmem.Routine("shmem_frobnicate", "void", [], None, "header", "h:1", None)
    operation = classify_shmem.operation_of(routine)
    with pytest.raises(classify_shmem.ClassifyError, match=r"shmem_frobnicate: .*operations\.yaml"):
        classify_shmem.classify_operation(routine, operation)


def test_a_nonblocking_operation_returns_before_it_completes() -> None:
    operations = load("shmem/operations.yaml")["operations"]
    nonblocking = {key: record for key, record in operations.items() if key.endswith("_nbi")}
    assert len(nonblocking) >= 10
    for key, record in nonblocking.items():
        execution = record["execution"]
        assert (execution["blocking"], execution["completion"], execution["procedure_class"]) == (
            False,
            "ic",
            "nb-op",
        ), key
        assert record["semantics"]["memory"]["local_completion"] == "after_flush", key
        blocking = operations.get(key.removesuffix("_nbi"))
        if blocking is not None:
            assert blocking["execution"]["blocking"] is True, key
            assert blocking["api_group"] == record["api_group"], key


def test_a_family_member_that_breaks_the_pattern_is_an_error() -> None:
    def record(name: str, params: list[tuple[str, str]]) -> dict[str, Any]:
        return {
            "name": name,
            "return_type": "void",
            "parameters": [{"type": t, "name": n, "array": False} for t, n in params],
            "file": "shmem.h",
            "line": 1,
            "attributes": [],
        }

    good = [
        record("shmem_int_put", [("int*", "target"), ("int", "pe")]),
        record("shmem_long_put", [("long*", "target"), ("int", "pe")]),
    ]
    (family,) = classify_shmem.group_families(good)
    assert family.name == "shmem_{T}_put"
    assert [p["type"] for p in family.parameters] == ["{T}*", "int"]
    bad = [*good, record("shmem_float_put", [("float*", "target"), ("long", "pe")])]
    with pytest.raises(classify_shmem.ClassifyError, match=re.escape("shmem_{T}_put")):
        classify_shmem.group_families(bad)


# -- against the fetched header -----------------------------------------------------------------


def test_families_render_back_to_the_header_declarations() -> None:
    source = cached_source_or_skip("libopenmpi-dev", "shmem")
    extracted = extract_shmem.extract({"libopenmpi-dev": source})
    declared = {
        record["name"]: render_signature(
            record["name"], record["return_type"], record["parameters"]
        )
        for record in extracted["records"]
    }
    assert len(declared) == 844
    # Open MPI's own names that no OpenSHMEM specification defines are left out of the corpus.
    excluded = set(load("shmem/extensions.yaml")["excluded"])
    assert excluded == {"my_pe", "num_pes", "globalexit", "shmem_broadcast"}
    assert not {f"shmem:{name}" for name in excluded} & set(entries())
    declared = {name: text for name, text in declared.items() if name not in excluded}
    header_keys = [k for k, e in entries().items() if e["identity"]["since"] != "OpenSHMEM-1.5"]
    rendered = {
        entries()[key]["identity"]["name"]: entries()[key]["bindings"]["c"]["signature"]
        for key in header_keys
        if "{T}" not in key
    }
    assert {name: rendered.get(name) for name in declared} == declared


def test_classify_reproduces_the_shipped_family_entries() -> None:
    source = cached_source_or_skip("libopenmpi-dev", "shmem")
    classified = classify_shmem.classify(extract_shmem.extract({"libopenmpi-dev": source}))
    assert len(classified["entries"]) == len(families(entries()))
    for key in ("shmem:shmem_{T}_put", "shmem:shmem_quiet", "shmem:shmem_team_split_strided"):
        mine = classified["entries"][key]
        assert mine["identity"] == {**entries()[key]["identity"]}
        assert mine["execution"] == entries()[key]["execution"]


def test_a_ctx_routine_without_a_plain_routine_cites_its_own_name() -> None:
    assert entries()["shmem:shmem_ctx_create"]["identity"]["standard_refs"] == [
        "OpenSHMEM-1.5 shmem_ctx_create"
    ]
    assert entries()["shmem:shmem_ctx_destroy"]["identity"]["standard_refs"] == [
        "OpenSHMEM-1.5 shmem_ctx_destroy"
    ]
    # A ctx form is documented with its plain routine.
    assert entries()["shmem:shmem_ctx_{T}_put"]["identity"]["standard_refs"] == [
        "OpenSHMEM-1.5 shmem_TYPENAME_put"
    ]
    # Every citation by a routine's own spelling names a routine of the corpus.
    cited = {
        ref.split(" ", 1)[1].replace("TYPENAME", "{T}")
        for entry in entries().values()
        for ref in entry["identity"]["standard_refs"]
        if ref.split(" ", 1)[1].startswith("shmem_")
    }
    names = {key.split(":", 1)[1] for key in entries()}
    assert sorted(cited - names) == []


def test_team_collectives_and_single_element_rma_have_formal_blocks() -> None:
    assigned = {
        "shmem:shmem_barrier_all": "world_barrier",
        "shmem:shmem_sync_all": "world_barrier",
        "shmem:shmem_team_sync": "team_barrier",
        "shmem:shmem_{T}_broadcast": "team_broadcast",
        "shmem:shmem_broadcastmem": "team_broadcast",
        "shmem:shmem_{T}_sum_reduce": "team_allreduce",
        "shmem:shmem_uint_and_reduce": "team_allreduce",
        "shmem:shmem_{T}_alltoall": "team_alltoall",
        "shmem:shmem_alltoallmem": "team_alltoall",
        "shmem:shmem_{T}_fcollect": "team_allgather",
        "shmem:shmem_fcollectmem": "team_allgather",
        "shmem:shmem_team_split_strided": "team_split",
        "shmem:shmem_team_split_2d": "team_split_2d",
        "shmem:shmem_{T}_p": "put",
        "shmem:shmem_ctx_{T}_g": "get",
    }
    provenance = shipped_provenance("shmem")
    for key, shape in assigned.items():
        formal = entries()[key]["semantics"]["formal"]
        assert formal is not None, key
        origin = provenance[key]["/semantics/formal"]["from"]
        assert origin == f"curated/shapes.json#shmem.{shape}", key
        # A team is not a communicator, and the schema has no handle kind for it.
        assert formal["handle_lifecycle"] == [], key
        if entries()[key]["execution"]["collective"]:
            assert any(p["cardinality"] == "many" for p in formal["participants"]), key
            assert formal["sync"]["matching"]["kind"] == "collective_rendezvous", key
    reduce = entries()["shmem:shmem_long_max_reduce"]["semantics"]["formal"]
    combine = next(flow for flow in reduce["data_flow"] if flow["op"] == "reduce")
    assert combine["operation_ref"] == "op:max"
    gather = entries()["shmem:shmem_int_fcollect"]["semantics"]["formal"]["data_flow"][1]
    assert gather["source"]["placement_offset"] == "rank * extent_size(param:nelems, type:int)"
    # Active-set, variable-size and strided forms have no fitting shape.
    for key in (
        "shmem:shmem_broadcast32",
        "shmem:shmem_barrier",
        "shmem:shmem_{T}_sum_to_all",
        "shmem:shmem_{T}_collect",
        "shmem:shmem_{T}_alltoalls",
        "shmem:shmem_{T}_iput",
    ):
        assert entries()[key]["semantics"]["formal"] is None, key
    share = sum(1 for e in entries().values() if e["semantics"]["formal"]) / len(entries())
    assert share > 0.65
