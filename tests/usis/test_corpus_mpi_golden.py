"""Hand-checked MPI entries: the key fields of each, asserted against MPI-4.1 as read by hand."""

from __future__ import annotations

from typing import Any

import pytest

from tests.usis.test_corpus_mpi import built_mpi


def entry(name: str) -> dict[str, Any]:
    return built_mpi()["provenance"]["entries"][f"mpi:{name}"]


def fields(name: str, *paths: str) -> dict[str, Any]:
    """The values at dotted paths of one entry (e.g. 'execution.blocking')."""
    found = {}
    for path in paths:
        value: Any = entry(name)
        for part in path.split("."):
            value = value[part]
        found[path] = value
    return found


def parameter(name: str, parameter_name: str) -> dict[str, Any]:
    matches = [p for p in entry(name)["parameters"] if p["name"] == parameter_name]
    assert len(matches) == 1, (name, parameter_name)
    return matches[0]


BROADCAST = {
    "type": "broadcast",
    "root_involved": True,
    "in_place": False,
    "comm_scope": "both",
    "algorithm_class": "one_to_all",
    "reduction_op": False,
    "topology_aware": False,
}


@pytest.mark.parametrize(
    ("name", "blocking", "procedure_class", "stages", "completion", "variants"),
    [
        (
            "mpi_bcast",
            True,
            "b-op",
            ["i", "s", "c", "f"],
            "c",
            {"nonblocking": "mpi:mpi_ibcast", "persistent": "mpi:mpi_bcast_init", "blocking": None},
        ),
        (
            "mpi_ibcast",
            False,
            "nb-op",
            ["i", "s"],
            "ic",
            {"nonblocking": None, "persistent": None, "blocking": "mpi:mpi_bcast"},
        ),
        (
            "mpi_bcast_init",
            False,
            "p-op",
            ["i"],
            "ic",
            {"nonblocking": None, "persistent": None, "blocking": "mpi:mpi_bcast"},
        ),
    ],
)
def test_broadcast_family(
    name: str,
    blocking: bool,
    procedure_class: str,
    stages: list[str],
    completion: str,
    variants: dict[str, Any],
) -> None:
    found = entry(name)
    assert found["identity"]["api_group"] == "collective"
    assert found["execution"]["collective"] is True
    assert found["execution"]["blocking"] is blocking
    assert found["execution"]["procedure_class"] == procedure_class
    assert found["execution"]["stages"] == stages
    assert found["execution"]["completion"] == completion
    assert found["semantics"]["collective"] == BROADCAST
    assert found["tool_integration"]["buffer_aliasing"] == "forbidden"
    assert {k: found["relationships"]["variants"][k] for k in variants} == variants
    assert parameter(name, "buffer")["direction"] == "inout"
    assert parameter(name, "root")["kind"] == "RANK"
    assert parameter(name, "buffer")["pointer"] is True
    assert parameter(name, "count")["pointer"] is None
    assert found["semantics"]["formal"]["sync"]["matching"]["kind"] == "collective_rendezvous"
    assert (
        found["identity"]["since"]
        == {"mpi_bcast": "MPI-1.0", "mpi_ibcast": "MPI-3.0", "mpi_bcast_init": "MPI-4.0"}[name]
    )


@pytest.mark.parametrize(
    ("name", "synchronous", "buffered", "ready"),
    [
        ("mpi_send", None, None, None),
        ("mpi_bsend", False, True, False),
        ("mpi_ssend", True, False, False),
        ("mpi_rsend", False, False, True),
        ("mpi_isend", None, None, None),
    ],
)
def test_send_modes(name: str, synchronous: Any, buffered: Any, ready: Any) -> None:
    assert entry(name)["semantics"]["point_to_point"] == {
        "direction": "send",
        "synchronous": synchronous,
        "buffered": buffered,
        "ready": ready,
    }
    assert entry(name)["identity"]["api_group"] == "point_to_point"
    assert parameter(name, "buf")["constant"] is True
    assert parameter(name, "buf")["memory_space"] == "host"
    dependencies = {d["field"] for d in entry(name)["tool_integration"]["context_dependencies"]}
    if synchronous is None:
        assert "semantics.point_to_point.synchronous" in dependencies
    else:
        assert "semantics.point_to_point.synchronous" not in dependencies


def test_isend_is_nonblocking_with_a_request() -> None:
    assert fields("mpi_isend", "execution.blocking", "semantics.memory.buffer_reuse") == {
        "execution.blocking": False,
        "semantics.memory.buffer_reuse": "after_wait",
    }
    assert parameter("mpi_isend", "buf")["asynchronous"] is True
    assert parameter("mpi_isend", "request")["kind"] == "REQUEST"
    lifecycle = entry("mpi_isend")["semantics"]["formal"]["handle_lifecycle"]
    assert {
        "handle": "param:request",
        "handle_kind": "REQUEST",
        "role": "create",
        "derived_from": None,
    } in lifecycle


def test_recv() -> None:
    found = entry("mpi_recv")
    assert found["semantics"]["point_to_point"]["direction"] == "receive"
    assert found["semantics"]["memory"]["remote_completion"] is None
    assert parameter("mpi_recv", "status")["kind"] == "STATUS"
    assert parameter("mpi_recv", "source")["kind"] == "RANK"
    assert "MPI_ERR_TRUNCATE" in found["return"]["possible_errors"]
    assert found["bindings"]["c"]["signature"] == (
        "int MPI_Recv(void* buf, int count, MPI_Datatype datatype, int source, int tag, "
        "MPI_Comm comm, MPI_Status* status)"
    )
    assert found["bindings"]["lis"] == {"expressible": True}
    assert found["bindings"]["fortran08"]["name"] == "MPI_Recv"
    assert found["bindings"]["fortran90"]["name"] == "MPI_RECV"


@pytest.mark.parametrize(
    ("name", "blocking", "reuse"),
    [("mpi_wait", True, "after_return"), ("mpi_test", False, "after_test")],
)
def test_wait_and_test(name: str, blocking: bool, reuse: str) -> None:
    found = entry(name)
    assert found["identity"]["api_group"] == "synchronization"
    assert found["execution"]["blocking"] is blocking
    assert found["execution"]["stages"] == ["c", "f"]
    assert found["semantics"]["memory"]["buffer_reuse"] == reuse
    assert found["semantics"]["memory"]["fence_semantics"] == "local"
    assert parameter(name, "request")["direction"] == "inout"
    assert found["tool_integration"]["buffer_aliasing"] is None


def test_allreduce() -> None:
    found = entry("mpi_allreduce")
    assert found["semantics"]["collective"] == {
        "type": "allreduce",
        "root_involved": False,
        "in_place": True,
        "comm_scope": "both",
        "algorithm_class": "all_to_all",
        "reduction_op": True,
        "topology_aware": False,
    }
    assert found["tool_integration"]["buffer_aliasing"] == "in_place_only"
    assert parameter("mpi_allreduce", "op")["kind"] == "OPERATION"
    assert found["identity"]["standard_refs"] == ["MPI-4.1 §6.9.6 All-Reduce"]
    kinds = [d["op"] for d in found["semantics"]["formal"]["data_flow"]]
    assert "reduce" in kinds


def test_alltoallw() -> None:
    found = entry("mpi_alltoallw")
    assert found["semantics"]["collective"]["type"] == "alltoall"
    assert found["semantics"]["collective"]["in_place"] is True
    assert parameter("mpi_alltoallw", "sdispls")["kind"] == "INDEX_ARRAY"
    assert parameter("mpi_alltoallw", "sendcounts")["kind"] == "COUNT"
    assert parameter("mpi_alltoallw", "sendtypes")["array_type"] == "variable"
    assert found["identity"]["since"] == "MPI-2.0"


def test_neighborhood_collective() -> None:
    found = entry("mpi_neighbor_allgather")
    assert found["semantics"]["collective"]["topology_aware"] is True
    assert found["semantics"]["collective"]["comm_scope"] == "intracommunicator"
    assert found["semantics"]["collective"]["in_place"] is False
    assert found["relationships"]["variants"]["neighborhood"] == "mpi:mpi_allgather"
    assert entry("mpi_allgather")["semantics"]["collective"]["topology_aware"] is False


@pytest.mark.parametrize(
    ("name", "operation", "remote"),
    [
        ("mpi_put", "put", "after_fence"),
        ("mpi_get", "get", None),
        ("mpi_accumulate", "accumulate", "after_fence"),
    ],
)
def test_rma_transfers(name: str, operation: str, remote: Any) -> None:
    found = entry(name)
    assert found["identity"]["api_group"] == "one_sided"
    assert found["semantics"]["one_sided"]["operation"] == operation
    assert found["semantics"]["one_sided"]["epoch_type"] == "fence"
    assert found["semantics"]["memory"]["remote_completion"] == remote
    assert found["semantics"]["memory"]["local_completion"] == "after_flush"
    assert found["execution"]["blocking"] is False
    assert found["execution"]["collective"] is False
    assert parameter(name, "target_rank")["kind"] == "RANK"
    assert parameter(name, "win")["kind"] == "WINDOW"
    target = [p for p in found["semantics"]["formal"]["participants"] if p["id"] == "target"]
    assert target and target[0]["role_kind"] == "passive_target"


def test_fetch_and_op_and_compare_and_swap() -> None:
    assert entry("mpi_fetch_and_op")["semantics"]["atomic"] == {
        "operation": None,
        "fetch": True,
        "compare": False,
    }
    assert entry("mpi_compare_and_swap")["semantics"]["atomic"] == {
        "operation": "cswap",
        "fetch": True,
        "compare": True,
    }
    for name in ("mpi_fetch_and_op", "mpi_compare_and_swap"):
        assert entry(name)["identity"]["api_group"] == "one_sided"
        assert entry(name)["semantics"]["one_sided"] is None
        assert entry(name)["identity"]["since"] == "MPI-3.0"


@pytest.mark.parametrize(
    ("name", "collective", "fence_semantics", "shape_event"),
    [
        ("mpi_win_fence", True, "both", "close_epoch"),
        ("mpi_win_lock", False, None, "open_epoch"),
        ("mpi_win_unlock", False, "both", "close_epoch"),
        ("mpi_win_start", False, None, "open_epoch"),
        ("mpi_win_complete", False, "local", "close_epoch"),
        ("mpi_win_post", False, None, "open_epoch"),
        ("mpi_win_wait", False, "both", "close_epoch"),
    ],
)
def test_window_epoch_calls(
    name: str, collective: bool, fence_semantics: Any, shape_event: str
) -> None:
    found = entry(name)
    assert found["identity"]["api_group"] == "synchronization"
    assert found["execution"]["collective"] is collective
    memory = found["semantics"]["memory"]
    assert (memory["fence_semantics"] if memory else None) == fence_semantics
    events = {event["event_type"] for event in found["semantics"]["formal"]["sync"]["events"]}
    assert shape_event in events
    assert found["identity"]["standard_refs"][0].startswith("MPI-4.1 §12.5")


def test_comm_split() -> None:
    found = entry("mpi_comm_split")
    assert found["execution"]["collective"] is True
    assert found["identity"]["api_group"] == "management"
    assert parameter("mpi_comm_split", "color")["kind"] == "SCALAR"
    assert parameter("mpi_comm_split", "newcomm")["direction"] == "out"
    lifecycle = found["semantics"]["formal"]["handle_lifecycle"]
    assert lifecycle[0]["role"] == "create" and lifecycle[0]["derived_from"] == "param:comm"


@pytest.mark.parametrize("name", ["mpi_init", "mpi_init_thread", "mpi_finalize"])
def test_init_and_finalize_execute_once(name: str) -> None:
    found = entry(name)
    assert found["execution"]["execute_once"] is True
    assert found["execution"]["collective"] is (name == "mpi_finalize")
    assert found["tool_integration"]["profiling_name"] == "P" + found["identity"]["name"]


def test_only_init_and_finalize_execute_once() -> None:
    once = sorted(
        k for k, e in built_mpi()["provenance"]["entries"].items() if e["execution"]["execute_once"]
    )
    assert once == ["mpi:mpi_finalize", "mpi:mpi_init", "mpi:mpi_init_thread"]


def test_init_thread_levels() -> None:
    assert parameter("mpi_init_thread", "required")["kind"] == "THREAD_LEVEL"
    assert parameter("mpi_init_thread", "provided")["kind"] == "THREAD_LEVEL"


def test_collective_file_read() -> None:
    found = entry("mpi_file_read_all")
    assert found["identity"]["api_group"] == "io"
    assert found["execution"]["collective"] is True
    assert found["execution"]["blocking"] is True
    assert found["relationships"]["variants"]["nonblocking"] == "mpi:mpi_file_iread_all"
    assert parameter("mpi_file_read_all", "fh")["kind"] == "FILE"
    assert "MPI_ERR_IO" in found["return"]["possible_errors"]
    assert entry("mpi_file_read")["execution"]["collective"] is False


def test_deprecated_attribute_call() -> None:
    found = entry("mpi_attr_get")
    assert found["identity"]["deprecated_in"] == "MPI-2.0"
    assert found["relationships"]["superseded_by"] == "mpi:mpi_comm_get_attr"
    assert entry("mpi_comm_get_attr")["relationships"]["supersedes"] == ["mpi:mpi_attr_get"]


def test_comm_size_and_rank_kinds() -> None:
    assert parameter("mpi_comm_size", "size")["kind"] == "TEAM_SIZE"
    assert parameter("mpi_comm_rank", "rank")["kind"] == "RANK"
    assert entry("mpi_comm_rank")["semantics"]["memory"] is None
    assert entry("mpi_comm_rank")["tool_integration"]["buffer_aliasing"] is None


def test_ulfm_revoke() -> None:
    found = entry("mpi_comm_revoke")
    assert found["identity"]["since"] is None
    assert found["bindings"]["c"]["signature"] == "int MPI_Comm_revoke(MPI_Comm comm)"
    assert found["tool_integration"]["profiling_name"] == "PMPI_Comm_revoke"
    assert [p["name"] for p in found["parameters"]] == ["comm", "ierror"]


def test_fortran_only_calls_have_no_c_prototype() -> None:
    for name in ("mpi_sizeof", "mpi_f_sync_reg"):
        assert entry(name)["bindings"]["c"] == {
            "expressible": False,
            "header": "mpi.h",
            "signature": None,
        }


@pytest.mark.parametrize(("name", "blocking"), [("mpi_probe", True), ("mpi_iprobe", False)])
def test_probes_start_no_operation(name: str, blocking: bool) -> None:
    found = entry(name)
    assert found["execution"]["blocking"] is blocking
    assert found["execution"]["procedure_class"] is None
    assert found["execution"]["stages"] is None
    assert found["semantics"]["memory"] is None
    assert parameter(name, "flag" if name == "mpi_iprobe" else "status")["direction"] == "out"


def test_gather_root_only_parameters_come_from_the_source() -> None:
    assert parameter("mpi_gather", "recvbuf")["root_only"] is True
    assert parameter("mpi_gather", "sendbuf")["root_only"] is False
    assert parameter("mpi_gather", "recvcount")["constraints"]["paired_with"] == "sendcount"


@pytest.mark.parametrize(
    ("name", "since"),
    [
        # MPI-2.0 chapter 3, Version 1.2 of MPI, §3.1 Version Number.
        ("mpi_get_version", "MPI-1.2"),
        # MPI-2.1 Transfer of Handles; absent from MPI-2.0 §4.12.4.
        ("mpi_errhandler_c2f", "MPI-2.1"),
        # MPI-4.1 Annex B.4.2 (Changes in MPI-3.0) item 30.
        ("mpi_status_f082c", "MPI-3.0"),
        ("mpi_status_f2f08", "MPI-3.0"),
    ],
)
def test_since_checked_against_the_standard(name: str, since: str) -> None:
    assert entry(name)["identity"]["since"] == since


def test_sizeof_deprecated_since_mpi_4_0() -> None:
    # MPI-4.1 §16.3 Deprecated since MPI-4.0; Annex B.2.2 item 33.
    assert entry("mpi_sizeof")["identity"]["deprecated_in"] == "MPI-4.0"


@pytest.mark.parametrize(
    ("name", "ref"),
    [
        # Section numbers of the MPI-4.1 PDF (its HTML edition numbers chapters one higher).
        ("mpi_sendrecv", "MPI-4.1 §3.2.7 Blocking Send-Receive"),
        ("mpi_abort", "MPI-4.1 §11.4.2 Aborting MPI Processes"),
        ("mpi_file_set_errhandler", "MPI-4.1 §9.3.3 Error Handlers for Files"),
        ("mpi_file_read_at_all_begin", "MPI-4.1 §14.4.5 Split Collective Data Access Routines"),
        ("mpi_comm_c2f", "MPI-4.1 §19.3.4 Transfer of Handles"),
    ],
)
def test_standard_refs_checked_against_the_standard(name: str, ref: str) -> None:
    assert entry(name)["identity"]["standard_refs"][0] == ref
