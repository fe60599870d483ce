"""Each consistency rule: a fixture that violates it (found, with the rule's id) and the valid fixture
corpus (not found)."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.usis.factory import mini_corpus, parameter
from usis.validate import RULES, consistency_findings, schema_findings, validate_entries

Corpus = dict[str, Any]
DOCS = Path(__file__).resolve().parents[2] / "docs" / "usis.md"


def bcast(corpus: Corpus) -> dict[str, Any]:
    entry: dict[str, Any] = corpus["mpi:mpi_bcast"]
    return entry


def formal(corpus: Corpus, key: str = "mpi:mpi_bcast") -> dict[str, Any]:
    block: dict[str, Any] = corpus[key]["semantics"]["formal"]
    return block


def rename_key(corpus: Corpus) -> None:
    corpus["mpi:mpi_broadcast"] = corpus.pop("mpi:mpi_comm_rank")


def dangling_reference(corpus: Corpus) -> None:
    bcast(corpus)["relationships"]["variants"]["persistent"] = "mpi:mpi_bcast_init"


def asymmetric_variant(corpus: Corpus) -> None:
    corpus["mpi:mpi_ibcast"]["relationships"]["variants"]["blocking"] = None


def asymmetric_gpu(corpus: Corpus) -> None:
    corpus["mpi:mpi_recv"]["relationships"]["variants"]["gpu"] = "mpi:mpi_comm_rank"


def stale_supersedes(corpus: Corpus) -> None:
    corpus["mpi:mpi_type_get_extent"]["relationships"]["supersedes"] = []


def length_without_array_type(corpus: Corpus) -> None:
    bcast(corpus)["parameters"][0]["array_type"] = None


def length_names_nothing(corpus: Corpus) -> None:
    bcast(corpus)["parameters"][0]["length"] = "nelems"


def value_kind_for_error_code(corpus: Corpus) -> None:
    bcast(corpus)["return"]["value_kind"] = "RANK"


def two_semantic_classes(corpus: Corpus) -> None:
    bcast(corpus)["semantics"]["point_to_point"] = {
        "direction": "send",
        "synchronous": None,
        "buffered": None,
        "ready": None,
    }


def reduction_without_operator(corpus: Corpus) -> None:
    bcast(corpus)["semantics"]["collective"]["reduction_op"] = True


def in_place_without_aliasing(corpus: Corpus) -> None:
    corpus["mpi:mpi_allreduce"]["tool_integration"]["buffer_aliasing"] = "forbidden"


def either_without_context(corpus: Corpus) -> None:
    bcast(corpus)["parameters"][0]["memory_space"] = "either"


def execute_once_elsewhere(corpus: Corpus) -> None:
    bcast(corpus)["execution"]["execute_once"] = True


def signature_when_inexpressible(corpus: Corpus) -> None:
    bcast(corpus)["bindings"]["c"]["expressible"] = False


def collective_without_rendezvous(corpus: Corpus) -> None:
    formal(corpus)["sync"]["matching"] = None


def matched_via_nothing(corpus: Corpus) -> None:
    formal(corpus, "mpi:mpi_recv")["sync"]["events"][0]["id"] = "arrived"
    formal(corpus, "mpi:mpi_recv")["sync"]["ordering"] = []


def placeholder_left(corpus: Corpus) -> None:
    bcast(corpus)["identity"]["desc"] = "Broadcasts {{buffer}}."


def selector_does_not_parse(corpus: Corpus) -> None:
    formal(corpus)["participants"][0]["selector"] = "rank === param:root"


def unknown_parameter(corpus: Corpus) -> None:
    formal(corpus)["participants"][0]["selector"] = "rank == param:leader"


def unregistered_scope(corpus: Corpus) -> None:
    formal(corpus, "mpi:mpi_allreduce")["data_flow"][1]["inputs"][0]["scope"] = "everyone"


def dangling_formal_id(corpus: Corpus) -> None:
    formal(corpus)["data_flow"][1]["source"]["ref"] = "root_copy"


def reduce_with_participant(corpus: Corpus) -> None:
    formal(corpus, "mpi:mpi_allreduce")["data_flow"][1]["participant"] = "members"


def family_without_types(corpus: Corpus) -> None:
    entry = corpus.pop("mpi:mpi_type_get_extent")
    entry["identity"]["name"] = "MPI_Type_get_{T}"
    corpus["mpi:mpi_type_get_{T}"] = entry
    corpus["mpi:mpi_type_extent"]["relationships"]["superseded_by"] = "mpi:mpi_type_get_{T}"


def family_member_missing(corpus: Corpus) -> None:
    family_without_types(corpus)
    corpus["mpi:mpi_type_get_{T}"]["identity"]["type_family"] = ["extent"]


def self_with_many(corpus: Corpus) -> None:
    formal(corpus, "mpi:mpi_recv")["participants"][0]["cardinality"] = "many"


def passive_target_calls(corpus: Corpus) -> None:
    formal(corpus, "mpi:mpi_recv")["participants"][1]["role_kind"] = "passive_target"


def superseded_not_deprecated(corpus: Corpus) -> None:
    corpus["mpi:mpi_type_extent"]["identity"]["deprecated_in"] = None


def duplicate_parameter(corpus: Corpus) -> None:
    bcast(corpus)["parameters"].append(parameter("count", "COUNT"))


def receive_with_send_mode(corpus: Corpus) -> None:
    corpus["mpi:mpi_recv"]["semantics"]["point_to_point"]["synchronous"] = False


def dual_launch_with_gpu_variant(corpus: Corpus) -> None:
    bcast(corpus)["execution"]["launch"] = "cpu+gpu"
    bcast(corpus)["relationships"]["variants"]["gpu"] = "mpi:mpi_allreduce"


def host_call_with_gpu_scope(corpus: Corpus) -> None:
    bcast(corpus)["execution"]["gpu_scope"] = "block"


def runtime_atomic_without_operator(corpus: Corpus) -> None:
    bcast(corpus)["semantics"]["atomic"] = {"operation": None, "fetch": True, "compare": False}


def aliasing_without_buffers(corpus: Corpus) -> None:
    corpus["mpi:mpi_comm_rank"]["tool_integration"]["buffer_aliasing"] = "forbidden"


def memory_space_on_a_count(corpus: Corpus) -> None:
    bcast(corpus)["parameters"][1]["memory_space"] = "host"


def context_for_no_field(corpus: Corpus) -> None:
    bcast(corpus)["tool_integration"]["context_dependencies"] = [
        {"field": "execution.speed", "default_value": None, "depends_on": [], "note": "n"}
    ]


def topology_aware_allreduce(corpus: Corpus) -> None:
    corpus["mpi:mpi_allreduce"]["semantics"]["collective"]["topology_aware"] = True


def collective_not_called_by_all(corpus: Corpus) -> None:
    bcast(corpus)["execution"]["collective"] = False


def returned_handle_without_result(corpus: Corpus) -> None:
    formal(corpus)["handle_lifecycle"][0]["handle"] = "return_value"


def blocking_nonblocking_procedure(corpus: Corpus) -> None:
    bcast(corpus)["execution"]["procedure_class"] = "nb-op"


def invariant_outside_the_grammar(corpus: Corpus) -> None:
    bcast(corpus)["tool_integration"]["invariants"] = ["param:count >= 0", "count is positive"]


def equivalent_with_other_locality(corpus: Corpus) -> None:
    twin = copy.deepcopy(corpus["mpi:mpi_allreduce"])
    twin["identity"]["model"] = "nccl"
    twin["identity"]["name"] = "ncclAllReduce"
    twin["execution"]["locality"] = "both"
    corpus["nccl:ncclAllReduce"] = twin


def in_place_single_buffer(corpus: Corpus) -> None:
    bcast(corpus)["semantics"]["collective"]["in_place"] = True


def paired_with_nothing(corpus: Corpus) -> None:
    bcast(corpus)["parameters"][1]["constraints"]["paired_with"] = "recvcount"


def async_pair_unlinked(corpus: Corpus) -> None:
    twin = copy.deepcopy(corpus["mpi:mpi_recv"])
    twin["identity"]["name"] = "MPI_RecvAsync"
    twin["relationships"]["variants"]["blocking"] = "mpi:mpi_recv"
    corpus["mpi:mpi_recvAsync"] = twin


def nonblocking_with_nothing_pending(corpus: Corpus) -> None:
    corpus["mpi:mpi_ibcast"]["execution"]["completion"] = None


def offset_indexes_a_scalar(corpus: Corpus) -> None:
    formal(corpus)["data_flow"][0]["extent"]["count_ref"] = "param:count[rank]"


VIOLATIONS: dict[str, tuple[Callable[[Corpus], None], str, str]] = {
    "USIS-C001": (rename_key, "mpi:mpi_broadcast", "identity.name"),
    "USIS-C002": (dangling_reference, "mpi:mpi_bcast", "relationships.variants.persistent"),
    "USIS-C003": (asymmetric_variant, "mpi:mpi_bcast", "relationships.variants.nonblocking"),
    "USIS-C004": (asymmetric_gpu, "mpi:mpi_recv", "relationships.variants.gpu"),
    "USIS-C005": (stale_supersedes, "mpi:mpi_type_get_extent", "relationships.supersedes"),
    "USIS-C006": (length_without_array_type, "mpi:mpi_bcast", "parameters[0].length"),
    "USIS-C007": (length_names_nothing, "mpi:mpi_bcast", "parameters[0].length"),
    "USIS-C008": (value_kind_for_error_code, "mpi:mpi_bcast", "return.value_kind"),
    "USIS-C009": (two_semantic_classes, "mpi:mpi_bcast", "semantics"),
    "USIS-C010": (reduction_without_operator, "mpi:mpi_bcast", "semantics.collective.reduction_op"),
    "USIS-C011": (
        in_place_without_aliasing,
        "mpi:mpi_allreduce",
        "tool_integration.buffer_aliasing",
    ),
    "USIS-C012": (either_without_context, "mpi:mpi_bcast", "parameters[0].memory_space"),
    "USIS-C013": (execute_once_elsewhere, "mpi:mpi_bcast", "execution.execute_once"),
    "USIS-C014": (signature_when_inexpressible, "mpi:mpi_bcast", "bindings.c.signature"),
    "USIS-C015": (collective_without_rendezvous, "mpi:mpi_bcast", "semantics.formal.sync.matching"),
    "USIS-C016": (matched_via_nothing, "mpi:mpi_recv", "semantics.formal.data_flow[0].source.via"),
    "USIS-C017": (placeholder_left, "mpi:mpi_bcast", "identity.desc"),
    "USIS-C018": (
        selector_does_not_parse,
        "mpi:mpi_bcast",
        "semantics.formal.participants[0].selector",
    ),
    "USIS-C019": (unknown_parameter, "mpi:mpi_bcast", "semantics.formal.participants[0].selector"),
    "USIS-C020": (
        unregistered_scope,
        "mpi:mpi_allreduce",
        "semantics.formal.data_flow[1].inputs[0].scope",
    ),
    "USIS-C021": (dangling_formal_id, "mpi:mpi_bcast", "semantics.formal.data_flow[1].source.ref"),
    "USIS-C022": (
        reduce_with_participant,
        "mpi:mpi_allreduce",
        "semantics.formal.data_flow[1].participant",
    ),
    "USIS-C023": (family_without_types, "mpi:mpi_type_get_{T}", "identity.type_family"),
    "USIS-C024": (family_member_missing, "mpi:mpi_type_get_{T}", "identity.type_family[0]"),
    "USIS-C025": (self_with_many, "mpi:mpi_recv", "semantics.formal.participants[0].cardinality"),
    "USIS-C026": (
        passive_target_calls,
        "mpi:mpi_recv",
        "semantics.formal.participants[1].calls_function",
    ),
    "USIS-C027": (superseded_not_deprecated, "mpi:mpi_type_extent", "identity.deprecated_in"),
    "USIS-C028": (duplicate_parameter, "mpi:mpi_bcast", "parameters[5].name"),
    "USIS-C029": (receive_with_send_mode, "mpi:mpi_recv", "semantics.point_to_point.synchronous"),
    "USIS-C030": (dual_launch_with_gpu_variant, "mpi:mpi_bcast", "relationships.variants.gpu"),
    "USIS-C031": (host_call_with_gpu_scope, "mpi:mpi_bcast", "execution.gpu_scope"),
    "USIS-C032": (runtime_atomic_without_operator, "mpi:mpi_bcast", "semantics.atomic.operation"),
    "USIS-C033": (
        aliasing_without_buffers,
        "mpi:mpi_comm_rank",
        "tool_integration.buffer_aliasing",
    ),
    "USIS-C034": (memory_space_on_a_count, "mpi:mpi_bcast", "parameters[1].memory_space"),
    "USIS-C035": (
        context_for_no_field,
        "mpi:mpi_bcast",
        "tool_integration.context_dependencies[0].field",
    ),
    "USIS-C036": (
        topology_aware_allreduce,
        "mpi:mpi_allreduce",
        "semantics.collective.topology_aware",
    ),
    "USIS-C037": (collective_not_called_by_all, "mpi:mpi_bcast", "execution.collective"),
    "USIS-C038": (
        returned_handle_without_result,
        "mpi:mpi_bcast",
        "semantics.formal.handle_lifecycle[0].handle",
    ),
    "USIS-C039": (blocking_nonblocking_procedure, "mpi:mpi_bcast", "execution.blocking"),
    "USIS-C040": (invariant_outside_the_grammar, "mpi:mpi_bcast", "tool_integration.invariants[1]"),
    "USIS-C041": (equivalent_with_other_locality, "nccl:ncclAllReduce", "execution.locality"),
    "USIS-C042": (in_place_single_buffer, "mpi:mpi_bcast", "semantics.collective.in_place"),
    "USIS-C043": (
        paired_with_nothing,
        "mpi:mpi_bcast",
        "parameters[1].constraints.paired_with",
    ),
    "USIS-C044": (async_pair_unlinked, "mpi:mpi_recv", "relationships.variants.nonblocking"),
    "USIS-C045": (
        nonblocking_with_nothing_pending,
        "mpi:mpi_ibcast",
        "execution.procedure_class",
    ),
    "USIS-C046": (
        offset_indexes_a_scalar,
        "mpi:mpi_bcast",
        "semantics.formal.data_flow[0].extent.count_ref",
    ),
}


def test_every_rule_has_a_violating_fixture() -> None:
    assert sorted(VIOLATIONS) == sorted(rule.id for rule in RULES)


def test_rule_ids_are_unique_and_well_formed() -> None:
    ids = [rule.id for rule in RULES]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"USIS-C\d{3}", rule_id) for rule_id in ids)


def test_the_valid_fixture_has_no_findings() -> None:
    assert validate_entries(mini_corpus()) == []


@pytest.mark.parametrize("rule_id", sorted(VIOLATIONS))
def test_violation_is_found_by_its_rule(rule_id: str) -> None:
    mutate, key, path = VIOLATIONS[rule_id]
    corpus = copy.deepcopy(mini_corpus())
    assert not [f for f in consistency_findings(corpus) if f.rule == rule_id]
    mutate(corpus)
    found = [f for f in consistency_findings(corpus) if f.rule == rule_id]
    assert [(f.key, f.path) for f in found] == [(key, path)], found
    assert str(found[0]).startswith(f"{key}: {path}: ")
    assert str(found[0]).endswith(f"({rule_id})")


def test_schema_findings_name_key_and_path() -> None:
    corpus = copy.deepcopy(mini_corpus())
    bcast(corpus)["parameters"][2]["direction"] = "sideways"
    findings = schema_findings(corpus)
    assert [(f.key, f.path, f.rule) for f in findings] == [
        ("mpi:mpi_bcast", "parameters[2].direction", "schema")
    ]
    assert "'sideways' is not one of" in findings[0].message


def test_schema_findings_inside_any_of_point_at_the_real_problem() -> None:
    corpus = copy.deepcopy(mini_corpus())
    bcast(corpus)["bindings"]["c"]["expressible"] = "yes"
    findings = schema_findings(corpus)
    assert [(f.key, f.path, f.message) for f in findings] == [
        ("mpi:mpi_bcast", "bindings.c.expressible", "'yes' is not of type 'boolean'")
    ]


def test_a_malformed_entry_gets_schema_findings_not_a_crash() -> None:
    corpus = copy.deepcopy(mini_corpus())
    del bcast(corpus)["semantics"]
    bcast(corpus)["parameters"] = "none"
    findings = validate_entries(corpus)
    assert findings and all(f.key == "mpi:mpi_bcast" for f in findings)
    assert {f.rule for f in findings} == {"schema"}


def test_cross_model_references_count_as_known() -> None:
    corpus = copy.deepcopy(mini_corpus())
    bcast(corpus)["relationships"]["variants"]["gpu"] = "nccl:ncclBroadcast"
    assert [f.rule for f in consistency_findings(corpus)] == ["USIS-C002"]
    assert consistency_findings(corpus, known_keys={"nccl:ncclBroadcast"}) == []


@pytest.mark.skipif(not DOCS.is_file(), reason="docs/usis.md not written")
def test_docs_list_every_rule_with_its_statement() -> None:
    text = DOCS.read_text()
    for rule in RULES:
        assert f"| {rule.id} | {rule.statement} |" in text, rule.id
