"""The shipped NVSHMEM corpus: function families and their concrete members, launch / runs_on /
gpu_scope per variant, symmetric-heap memory, fence and quiet, team calls, hand-checked entries,
and agreement with the headers when they are cached."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.usis.corpus import (
    assert_golden,
    cached_source_or_skip,
    families,
    shipped,
    shipped_provenance,
)
from usis.classify import nvshmem as classify_nvshmem
from usis.extract import nvshmem as extract_nvshmem


def entries() -> dict[str, Any]:
    return shipped("nvshmem", "final")["entries"]


def test_at_least_120_function_families_each_concretized() -> None:
    assert len(families(entries())) >= 120
    family_keys = [key for key in entries() if "{T}" in key]
    assert len(family_keys) >= 100
    for key in family_keys:
        types = entries()[key]["identity"]["type_family"]
        assert types, key
        for suffix in types:
            member = entries()[key.replace("{T}", suffix)]
            assert member["identity"]["type_family"] is None
            assert "{T}" not in json.dumps(member), key


def test_concrete_members_carry_their_c_type() -> None:
    put = entries()["nvshmem:nvshmem_longlong_put"]
    assert put["bindings"]["c"]["signature"] == (
        "void nvshmem_longlong_put(long long *dest, const long long *source, size_t nelems, int pe)"
    )
    assert put["identity"]["desc"].startswith("Copies contiguous long long elements")


def test_block_and_warp_variants_are_their_own_gpu_entries_with_gpu_scope() -> None:
    scoped = {key: entry for key, entry in entries().items() if re.search(r"_(block|warp)$", key)}
    assert len(scoped) >= 100
    for key, entry in scoped.items():
        execution = entry["execution"]
        assert (execution["launch"], execution["runs_on"]) == ("gpu", "gpu"), key
        assert execution["gpu_scope"] == key.rsplit("_", 1)[1], key


def test_on_stream_variants_are_host_calls_ordered_on_the_stream() -> None:
    on_stream = {key: entry for key, entry in entries().items() if key.endswith("_on_stream")}
    assert len(on_stream) >= 40
    for key, entry in on_stream.items():
        execution = entry["execution"]
        assert (execution["launch"], execution["runs_on"]) == ("cpu", "gpu"), key
        assert execution["completion"] == "stream_ordered" and execution["blocking"] is False
        assert execution["gpu_scope"] is None
        assert any(p["kind"] == "STREAM" for p in entry["parameters"]), key


def test_one_sided_and_collective_calls_work_on_the_symmetric_heap() -> None:
    for key, entry in entries().items():
        semantics = entry["semantics"]
        if semantics["one_sided"] or semantics["collective"]:
            assert semantics["memory"]["symmetric_heap"] is True, key
        if semantics["one_sided"] and semantics["one_sided"]["operation"] == "put":
            assert semantics["memory"]["remote_completion"] == "after_quiet", key
            # The C routines name it dest, the tile templates dst.
            dest = next(p for p in entry["parameters"] if p["name"] in ("dest", "dst"))
            assert dest["memory_space"] == "symmetric_heap", key


# Hand-checked against nvshmem.h / nvshmemx.h 3.8.0 and the NVSHMEM API documentation.
GOLDEN: dict[str, dict[str, Any]] = {
    "nvshmem:nvshmem_int_put": {
        "/bindings/c/signature": "void nvshmem_int_put(int *dest, const int *source, size_t nelems, int pe)",
        "/execution/launch": "cpu+gpu",
        "/execution/gpu_scope": "thread",
        "/execution/blocking": True,
        "/semantics/one_sided/operation": "put",
        "/semantics/memory/local_completion": "after_return",
        "/parameters/0/memory_space": "symmetric_heap",
        "/parameters/2/kind": "COUNT",
        "/parameters/3/kind": "RANK",
        "/relationships/variants/nonblocking": "nvshmem:nvshmem_int_put_nbi",
        "/semantics/formal/data_flow/1/participant": "target",
    },
    "nvshmem:nvshmem_int_p": {
        "/bindings/c/signature": "void nvshmem_int_p(int *dest, const int value, int pe)",
        "/parameters/1/kind": "SCALAR",
        "/semantics/one_sided/operation": "put",
    },
    "nvshmem:nvshmem_int_g": {
        "/bindings/c/signature": "int nvshmem_int_g(const int *src, int pe)",
        "/return/kind": "value",
        "/semantics/one_sided/operation": "get",
        "/semantics/memory/remote_completion": None,
    },
    "nvshmem:nvshmem_quiet": {
        "/identity/api_group": "synchronization",
        "/semantics/memory/fence_semantics": "both",
        "/semantics/formal/sync/events/0/id": "quiet",
        "/execution/launch": "cpu+gpu",
    },
    "nvshmem:nvshmem_fence": {
        "/semantics/memory/fence_semantics": "remote",
        "/semantics/formal/participants/0/role_kind": "initiator",
    },
    "nvshmem:nvshmem_barrier_all": {
        "/execution/collective": True,
        "/semantics/memory/fence_semantics": "both",
        # A barrier is a collective call, as OpenSHMEM's and MPI's are (USIS-C041).
        "/identity/api_group": "collective",
    },
    "nvshmem:nvshmem_int_atomic_fetch_add": {
        "/semantics/atomic": {"operation": "fetch_add", "fetch": True, "compare": False},
        "/identity/api_group": "one_sided",
        "/return/kind": "value",
        "/parameters/0/direction": "inout",
        "/semantics/formal/data_flow/2/operation_ref": "op:fetch_add",
        "/semantics/formal/data_flow/3/op": "read_modify_write",
    },
    "nvshmem:nvshmem_int_broadcast": {
        "/semantics/collective/type": "broadcast",
        "/semantics/collective/root_involved": True,
        "/parameters/0/kind": "TEAM",
        "/parameters/4/kind": "RANK",
        "/return/kind": "ERROR_CODE",
    },
    "nvshmem:nvshmem_int_sum_reduce": {
        "/semantics/collective/type": "allreduce",
        "/semantics/collective/in_place": True,
        "/tool_integration/buffer_aliasing": "in_place_only",
        "/execution/launch": "cpu+gpu",
    },
    "nvshmem:nvshmem_team_split_strided": {
        "/execution/collective": True,
        "/execution/launch": "cpu",
        "/parameters/0/kind": "TEAM",
        "/parameters/1/kind": "RANK",
        "/parameters/3/kind": "TEAM_SIZE",
        "/parameters/6/direction": "out",
        "/return/kind": "ERROR_CODE",
    },
    "nvshmem:nvshmemx_putmem_block": {
        "/bindings/c/header": "nvshmemx.h",
        "/execution/launch": "gpu",
        "/execution/gpu_scope": "block",
        "/semantics/formal/data_flow/0/extent": {
            "count_ref": "param:bytes",
            "datatype_ref": "type:byte",
        },
    },
    "nvshmem:nvshmemx_putmem_on_stream": {
        "/execution/launch": "cpu",
        "/execution/runs_on": "gpu",
        "/execution/completion": "stream_ordered",
        "/parameters/4/kind": "STREAM",
    },
    "nvshmem:nvshmem_my_pe": {"/return/kind": "value", "/return/value_kind": "RANK"},
    "nvshmem:nvshmem_team_n_pes": {"/return/value_kind": "TEAM_SIZE", "/parameters/0/kind": "TEAM"},
    "nvshmem:nvshmem_malloc": {
        "/return/kind": "RESULT",
        "/execution/collective": True,
        "/execution/execute_once": False,
    },
}


@pytest.mark.parametrize("key", sorted(GOLDEN))
def test_hand_checked_entries(key: str) -> None:
    assert_golden(key, entries()[key], GOLDEN[key])


def test_family_entries_and_members_have_provenance() -> None:
    provenance = shipped_provenance("nvshmem")
    assert set(provenance) == set(entries())
    assert provenance["nvshmem:nvshmem_int_put"]["/identity/name"]["stage"] == "assemble"
    assert provenance["nvshmem:nvshmem_{T}_put"]["/identity/desc"]["method"] == "curated"


def test_rebuilding_from_the_cached_headers_reproduces_the_shipped_entries() -> None:
    source = cached_source_or_skip("nvidia-nvshmem-cu12", "nvshmem")
    extracted = extract_nvshmem.extract({"nvidia-nvshmem-cu12": source})
    assert extracted["header_version"] == "3.8.0"
    classified = classify_nvshmem.classify(json.loads(json.dumps(extracted)))
    for key, entry in classified["entries"].items():
        assert entry["execution"] == entries()[key]["execution"], key
        assert entry["bindings"] == entries()[key]["bindings"], key


def tiles() -> dict[str, Any]:
    return {key: entry for key, entry in entries().items() if key.startswith("nvshmem:tile_")}


def test_the_tile_templates_are_keyed_by_name_and_bound_only_in_cxx() -> None:
    found = tiles()
    # Seven operations (three allreduces, three rooted reduces, allgather, broadcast, put, get,
    # collective_wait), each at thread, warp, warpgroup and block scope.
    assert len(found) == 44
    for key, entry in found.items():
        name = key.partition(":")[2]
        assert entry["identity"]["name"] == name
        assert entry["bindings"]["c"] == {
            "expressible": False,
            "header": "nvshmemx.h",
            "signature": None,
        }, key
        assert entry["bindings"]["cpp"] == {
            "expressible": True,
            "class_method": f"nvshmemx::{name}",
        }, key
        for parameter in entry["parameters"]:
            assert parameter["parameter_bindings"] == ["cpp"], key
            assert parameter["binding_type"]["c"] is None and parameter["binding_type"]["cpp"]
        assert entry["execution"]["launch"] == "gpu", key
        assert "template argument algo" in entry["identity"]["desc"], key


def test_tile_collectives_are_started_here_and_completed_by_the_wait() -> None:
    allreduce = entries()["nvshmem:tile_sum_reduce_block"]
    assert allreduce["semantics"]["collective"]["type"] == "allreduce"
    assert allreduce["execution"]["gpu_scope"] == "block"
    assert (allreduce["execution"]["blocking"], allreduce["execution"]["procedure_class"]) == (
        False,
        "nb-op",
    )
    assert allreduce["semantics"]["memory"]["local_completion"] == "after_wait"
    assert [p["name"] for p in allreduce["parameters"]] == [
        "team",
        "src",
        "dst",
        "start_coord",
        "boundary",
        "root",
        "flag",
    ]
    rooted = entries()["nvshmem:tile_max_rooted_reduce"]["semantics"]["collective"]
    assert (rooted["type"], rooted["root_involved"]) == ("reduce", True)
    wait = entries()["nvshmem:tile_collective_wait_warp"]
    assert wait["identity"]["api_group"] == "synchronization"
    assert wait["execution"]["collective"] and wait["execution"]["blocking"]
    put = entries()["nvshmem:tile_put_warpgroup"]
    assert put["semantics"]["one_sided"]["operation"] == "put"
    assert put["execution"]["gpu_scope"] is None  # warpgroup: no value of the enum fits
    assert put["identity"]["since"] == "NVSHMEM-3.5"
    assert entries()["nvshmem:tile_allgather"]["identity"]["since"] == "NVSHMEM-3.3"


def test_the_tile_records_come_from_the_cached_header() -> None:
    source = cached_source_or_skip("nvidia-nvshmem-cu12", "nvshmem")
    from usis.cheader.declarations import find_include_dir

    include = find_include_dir(source, extract_nvshmem.NVSHMEM_INCLUDE_DIR, "nvshmem.h")
    records = {record["name"]: record for record in extract_nvshmem.tile_records(include)}
    assert set(records) == {key.partition(":")[2] for key in tiles()}
    assert records["tile_sum_reduce"]["overloads"] == [
        ["team", "src", "dst", "start_coord", "boundary", "flag"],
        ["team", "src", "dst", "start_coord", "boundary", "root", "flag"],
    ]
    assert records["tile_put"]["template"].endswith("nvshmemx::tile_algo_t algo")


def test_no_placeholder_survives_outside_a_family_entry() -> None:
    # A sized routine shipped on its own (nvshmem_get128) names its width, never `{T}`.
    leftovers = [k for k, e in entries().items() if "{T}" not in k and "{T}" in json.dumps(e)]
    assert leftovers == []
    assert "128-bit elements" in entries()["nvshmem:nvshmem_get128"]["identity"]["desc"]


def test_the_launch_with_attributes_reads_its_kernel_arguments() -> None:
    for key in ("nvshmem:nvshmemx_collective_launch", "nvshmem:nvshmemx_collective_launch_attr"):
        args = next(p for p in entries()[key]["parameters"] if p["name"] == "args")
        assert args["direction"] == "in", key


def test_a_family_member_of_a_later_type_does_not_take_the_family_s_version() -> None:
    # NVSHMEM 1.0's typed RMA had the 23 standard RMA types, not half or bfloat16.
    assert entries()["nvshmem:nvshmem_{T}_put"]["identity"]["since"] is None
    assert entries()["nvshmem:nvshmem_int_put"]["identity"]["since"] == "NVSHMEM-1.0"
    assert entries()["nvshmem:nvshmem_uint64_get_nbi"]["identity"]["since"] == "NVSHMEM-1.0"
    assert entries()["nvshmem:nvshmem_half_put"]["identity"]["since"] is None
    assert entries()["nvshmem:nvshmem_bfloat16_g"]["identity"]["since"] is None
    record = shipped_provenance("nvshmem")["nvshmem:nvshmem_half_put"]["/identity/since"]
    assert "has no half" in record["from"]
