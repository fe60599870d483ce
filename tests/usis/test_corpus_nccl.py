"""The shipped NCCL corpus: counts, stream-ordered semantics, the in-place rule, the group and
non-blocking context dependencies, hand-checked entries, and agreement with nccl.h when cached."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.usis.corpus import assert_golden, cached_source_or_skip, shipped, shipped_provenance
from usis.classify import nccl as classify_nccl
from usis.extract import nccl as extract_nccl


def entries() -> dict[str, Any]:
    return shipped("nccl", "final")["entries"]


COLLECTIVES = {
    "ncclAllReduce": "allreduce",
    "ncclBroadcast": "broadcast",
    "ncclBcast": "broadcast",
    "ncclReduce": "reduce",
    "ncclAllGather": "allgather",
    "ncclReduceScatter": "reduce_scatter",
    "ncclAlltoAll": "alltoall",
    "ncclGather": "gather",
    "ncclScatter": "scatter",
}


def test_every_host_function_of_nccl_h_is_an_entry_with_its_profiling_name() -> None:
    assert len(entries()) >= 60
    for key, entry in entries().items():
        name = entry["identity"]["name"]
        assert key == f"nccl:{name}"
        if entry["bindings"]["c"]["header"] == "nccl.h":
            assert entry["tool_integration"]["profiling_name"] == f"p{name}", key
        else:
            # The device API's host calls (nccl_device/host.h) have no profiling twins.
            assert entry["bindings"]["c"]["header"] == "nccl_device.h", key
            assert entry["tool_integration"]["profiling_name"] is None, key


def test_the_device_api_host_calls_are_entries() -> None:
    device = {k for k, e in entries().items() if e["bindings"]["c"]["header"] == "nccl_device.h"}
    assert {"nccl:ncclDevCommCreate", "nccl:ncclDevCommDestroy", "nccl:ncclTeamWorld"} <= device
    assert entries()["nccl:ncclDevCommCreate"]["execution"]["collective"] is True
    assert entries()["nccl:ncclTeamRankToWorld"]["return"]["value_kind"] == "RANK"


def test_the_api_areas_of_the_issue_are_all_covered() -> None:
    names = {entry["identity"]["name"] for entry in entries().values()}
    assert {"ncclCommInitRank", "ncclCommDestroy", "ncclCommCount", "ncclCommUserRank"} <= names
    assert set(COLLECTIVES) <= names
    assert {"ncclSend", "ncclRecv", "ncclGroupStart", "ncclGroupEnd"} <= names
    assert {"ncclCommRegister", "ncclMemAlloc", "ncclRedOpCreatePreMulSum"} <= names


def test_operations_on_a_stream_are_launched_by_the_cpu_run_on_the_gpu_and_complete_in_stream_order() -> (
    None
):
    on_stream = [
        key
        for key, entry in entries().items()
        if any(p["kind"] == "STREAM" for p in entry["parameters"])
    ]
    assert len(on_stream) >= 20
    for key in on_stream:
        execution = entries()[key]["execution"]
        assert (execution["launch"], execution["runs_on"]) == ("cpu", "gpu"), key
        assert execution["completion"] == "stream_ordered", key
        assert execution["blocking"] is False, key
        fields = [d["field"] for d in entries()[key]["tool_integration"]["context_dependencies"]]
        assert "execution.blocking" in fields, key


def test_collective_types_and_the_in_place_rule() -> None:
    for name, collective_type in COLLECTIVES.items():
        for key in (f"nccl:{name}", f"nccl:{name}Config"):
            if key not in entries():
                continue
            entry = entries()[key]
            collective = entry["semantics"]["collective"]
            assert collective["type"] == collective_type, key
            # nccl.h documents an in-place condition above each of these (none for alltoall).
            in_place = name in (
                "ncclAllReduce",
                "ncclBroadcast",
                "ncclReduce",
                "ncclAllGather",
                "ncclReduceScatter",
                "ncclGather",
                "ncclScatter",
            )
            assert collective["in_place"] is in_place, key
            conditions = [
                d["depends_on"]
                for d in entry["tool_integration"]["context_dependencies"]
                if d["field"] == "semantics.collective.in_place"
            ]
            assert len(conditions) == (1 if in_place else 0), key
            aliasing = entry["tool_integration"]["buffer_aliasing"]
            assert aliasing == ("in_place_only" if in_place else aliasing), key
            assert collective["reduction_op"] is any(
                p["kind"] == "OPERATION" for p in entry["parameters"]
            )
    displacement = entries()["nccl:ncclAllGather"]["parameters"][1]["desc"]
    assert "offset i*sendcount" in displacement


def test_group_and_nonblocking_context_dependencies() -> None:
    dependency = entries()["nccl:ncclAllReduce"]["tool_integration"]["context_dependencies"][0]
    assert dependency["field"] == "execution.blocking"
    assert dependency["default_value"] is False
    assert any("ncclGroupStart" in factor for factor in dependency["depends_on"])
    assert any("config.blocking" in factor for factor in dependency["depends_on"])
    init = entries()["nccl:ncclCommInitRankConfig"]
    assert init["execution"]["blocking"] is True
    assert init["tool_integration"]["context_dependencies"][0]["default_value"] is True
    assert "ncclInProgress" in init["return"]["possible_successes"]


# Hand-checked against nccl.h 2.32.3 and the NCCL user guide: pointer -> value.
GOLDEN: dict[str, dict[str, Any]] = {
    "nccl:ncclAllReduce": {
        "/bindings/c/signature": "ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)",
        "/identity/api_group": "collective",
        "/execution/collective": True,
        "/semantics/collective/type": "allreduce",
        "/semantics/collective/in_place": True,
        "/semantics/collective/reduction_op": True,
        "/semantics/collective/algorithm_class": "all_to_all",
        "/parameters/0/memory_space": "device",
        "/parameters/0/length": "count",
        "/parameters/4/kind": "OPERATION",
        "/parameters/5/kind": "COMMUNICATOR",
        "/parameters/6/kind": "STREAM",
        "/semantics/formal/participants/0/selector": "rank in param:comm",
        "/return/possible_successes": ["ncclSuccess", "ncclInProgress"],
    },
    "nccl:ncclBroadcast": {
        "/semantics/collective/type": "broadcast",
        "/semantics/collective/root_involved": True,
        "/semantics/collective/algorithm_class": "one_to_all",
        "/parameters/0/root_only": True,
        "/parameters/4/kind": "RANK",
        "/tool_integration/buffer_aliasing": "in_place_only",
        "/semantics/formal": None,
    },
    "nccl:ncclBcast": {
        "/semantics/collective/in_place": False,
        "/parameters/0/direction": "inout",
        "/tool_integration/buffer_aliasing": "allowed",
    },
    "nccl:ncclSend": {
        "/identity/api_group": "point_to_point",
        "/semantics/point_to_point/direction": "send",
        "/semantics/point_to_point/synchronous": None,
        "/execution/collective": False,
        "/parameters/3/kind": "RANK",
        "/semantics/formal/sync/matching/kind": "peer_match",
    },
    "nccl:ncclRecv": {
        "/semantics/point_to_point/direction": "receive",
        "/semantics/point_to_point/ready": None,
        "/parameters/0/direction": "out",
        "/semantics/formal/sync/matching/kind": "peer_match",
    },
    "nccl:ncclGroupStart": {
        "/bindings/c/signature": "ncclResult_t ncclGroupStart(void)",
        "/execution/blocking": False,
        "/execution/runs_on": "cpu",
        "/identity/api_group": None,
        "/parameters": [],
    },
    "nccl:ncclGroupEnd": {
        "/execution/blocking": False,
        "/execution/completion": "stream_ordered",
        "/tool_integration/context_dependencies/0/field": "execution.blocking",
        "/return/possible_successes": ["ncclSuccess", "ncclInProgress"],
    },
    "nccl:ncclCommInitRank": {
        "/bindings/c/signature": "ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank)",
        "/execution/collective": True,
        "/execution/blocking": True,
        "/identity/api_group": "management",
        "/parameters/0/kind": "COMMUNICATOR",
        "/parameters/0/direction": "out",
        "/parameters/1/kind": "TEAM_SIZE",
        "/parameters/2/kind": "ID",
        "/parameters/3/kind": "RANK",
    },
    "nccl:ncclReduceScatter": {
        "/semantics/collective/type": "reduce_scatter",
        "/parameters/0/length": "*",
        "/parameters/1/length": "recvcount",
        "/semantics/formal/data_flow/2/source/kind": "reduced",
    },
    "nccl:ncclCommCount": {
        "/identity/api_group": "query",
        "/parameters/1/kind": "TEAM_SIZE",
        "/semantics/memory": None,
    },
    "nccl:ncclCommCuDevice": {"/parameters/1/kind": "DEVICE"},
    "nccl:ncclCommSplit": {
        "/semantics/formal/handle_lifecycle/0/role": "create",
        "/semantics/formal/handle_lifecycle/0/derived_from": "param:comm",
    },
}


@pytest.mark.parametrize("key", sorted(GOLDEN))
def test_hand_checked_entries(key: str) -> None:
    assert_golden(key, entries()[key], GOLDEN[key])


def test_every_entry_has_provenance_records() -> None:
    provenance = shipped_provenance("nccl")
    assert set(provenance) == set(entries())
    for key in GOLDEN:
        assert provenance[key]["/identity/desc"]["method"] == "curated"


def test_mpi_allreduce_finds_nccl_shmem_and_nvshmem_sum_reductions() -> None:
    from usis.api import load, shipped_models

    missing = {"mpi", "shmem", "nvshmem"} - set(shipped_models())
    if missing:
        pytest.skip(f"corpora not shipped yet: {sorted(missing)}")
    found = load().equivalents("mpi:mpi_allreduce")
    assert "nccl:ncclAllReduce" in found
    assert any(key.startswith("shmem:") and "sum_reduce" in key for key in found)
    assert any(key.startswith("nvshmem:") and "sum_reduce" in key for key in found)


def test_rebuilding_from_the_cached_header_reproduces_the_shipped_entries() -> None:
    source = cached_source_or_skip("nvidia-nccl-cu12", "nccl")
    extracted = extract_nccl.extract({"nvidia-nccl-cu12": source})
    assert extracted["header_version"] == "2.32.3"
    classified = classify_nccl.classify(json.loads(json.dumps(extracted)))
    assert set(classified["entries"]) == set(entries())
    for key, entry in classified["entries"].items():
        for section in ("identity", "bindings", "execution", "parameters", "return"):
            if section == "identity":
                assert entry[section]["desc"] == entries()[key][section]["desc"], key
                continue
            assert entry[section] == entries()[key][section], f"{key} {section}"
