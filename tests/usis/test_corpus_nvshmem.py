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
            dest = next(p for p in entry["parameters"] if p["name"] == "dest")
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
