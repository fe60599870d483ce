"""Facts across the shipped corpora that the sources state and rules once got wrong: directions the
documentation gives, versions and deprecations, fields read with the schema's meaning, collective
facts and formal data flow."""

from __future__ import annotations

import functools
import json
from typing import Any

import pytest

from usis.build import PACKAGE_CORPUS_DIR
from usis.split import corpus_file_name


@functools.cache
def entries(model: str) -> dict[str, Any]:
    path = PACKAGE_CORPUS_DIR / corpus_file_name(model)
    if not path.is_file():
        pytest.skip(f"no shipped corpus for {model}")
    found: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))["entries"]
    return found


def entry(key: str) -> dict[str, Any]:
    found: dict[str, Any] = entries(key.split(":")[0])[key]
    return found


def direction(key: str, name: str) -> str:
    return next(str(p["direction"]) for p in entry(key)["parameters"] if p["name"] == name)


@pytest.mark.parametrize(
    ("key", "name", "expected"),
    [
        ("nccl:ncclCommSplit", "config", "in"),
        ("nccl:ncclCommInitRankConfig", "config", "in"),
        ("nccl:ncclRedOpCreatePreMulSum", "scalar", "in"),
        ("nccl:ncclCommSplit", "newcomm", "out"),
        ("nvshmem:nvshmemx_collective_launch", "args", "in"),
        ("nvshmem:nvshmemx_init_attr", "attributes", "in"),
        ("cuda:cudaFree", "devPtr", "in"),
        ("cuda:cudaFreeAsync", "devPtr", "in"),
        ("cuda:cudaHostRegister", "ptr", "in"),
        ("cuda:cudaIpcGetMemHandle", "devPtr", "in"),
        ("cuda:cudaIpcGetMemHandle", "handle", "out"),
        ("cuda:cudaLaunchKernel", "args", "in"),
        ("cuda:cudaMalloc", "devPtr", "out"),
        ("cuda:cudaGraphGetNodes", "numNodes", "inout"),
    ],
)
def test_directions_follow_the_documentation(key: str, name: str, expected: str) -> None:
    assert direction(key, name) == expected


@pytest.mark.parametrize(
    ("key", "since"),
    [
        ("nccl:ncclSend", "NCCL-2.7"),
        ("nccl:ncclCommSplit", "NCCL-2.18"),
        ("nccl:ncclGroupSimulateEnd", "NCCL-2.22"),
        ("cuda:cudaMallocAsync", "CUDA-11.2"),
        ("cuda:cudaGraphInstantiateWithParams", "CUDA-12.0"),
        ("nvshmem:nvshmem_team_split_strided", "NVSHMEM-2.0"),
    ],
)
def test_versions_are_curated(key: str, since: str) -> None:
    assert entry(key)["identity"]["since"] == since


def test_deprecations_name_what_the_header_names() -> None:
    bcast = entry("nccl:ncclBcast")
    assert bcast["identity"]["deprecated_in"] is not None
    assert bcast["relationships"]["superseded_by"] == "nccl:ncclBroadcast"
    assert entry("cuda:cudaThreadExit")["relationships"]["superseded_by"] == "cuda:cudaDeviceReset"
    for name in ("cudaSetDoubleForDevice", "cudaSetDoubleForHost"):
        assert entry(f"cuda:{name}")["identity"]["deprecated_in"] == "CUDA-7.5"


def test_every_x_and_x_async_pair_is_linked() -> None:
    cuda = entries("cuda")
    pairs = [key for key in cuda if key.endswith("Async") and key.removesuffix("Async") in cuda]
    assert len(pairs) >= 16
    for key in pairs:
        assert cuda[key.removesuffix("Async")]["relationships"]["variants"]["nonblocking"] == key


def test_a_large_count_binding_is_claimed_only_where_an_mpi_count_form_exists() -> None:
    mpi = entries("mpi")
    assert mpi["mpi:mpi_send"]["bindings"]["lis"] == {"expressible": True}
    assert mpi["mpi:mpi_comm_rank"]["bindings"]["lis"] == {"expressible": False}
    claimed = [key for key, e in mpi.items() if e["bindings"]["lis"]["expressible"]]
    # MPI-4.1 has a `_c` form for about 160 procedures (the ones with a POLY* parameter).
    assert 150 <= len(claimed) <= 170


def test_the_tools_interface_returns_its_own_error_classes() -> None:
    for key, found in entries("mpi").items():
        if key.startswith("mpi:mpi_t_") and found["return"]["kind"] == "ERROR_CODE":
            errors = found["return"]["possible_errors"]
            assert errors and all(code.startswith("MPI_T_ERR_") for code in errors), key


def test_a_void_return_keeps_its_c_type() -> None:
    returned = entry("nvshmem:nvshmem_barrier_all")["return"]
    assert (returned["kind"], returned["binding_type"]["c"]) == ("void", "void")


def test_collective_facts() -> None:
    for name in ("ncclGather", "ncclScatter"):
        assert entry(f"nccl:{name}")["semantics"]["collective"]["in_place"] is True
    launch = entry("nvshmem:nvshmemx_collective_launch")["execution"]
    assert launch["collective"] is True
    assert entry("nvshmem:nvshmem_barrier_all")["identity"]["api_group"] == "collective"
    assert entry("shmem:shmem_init")["execution"]["locality"] == "both"
    assert entry("cuda:cudaGetLastError")["execution"]["procedure_class"] != "nb-op"
    query = entry("cuda:cudaStreamQuery")["return"]
    assert "cudaErrorNotReady" not in query["possible_errors"]
    assert "cudaErrorNotReady" in query["possible_successes"]
    for name in ("cudaSignalExternalSemaphoresAsync_v2", "cudaWaitExternalSemaphoresAsync_v2"):
        execution = entry(f"cuda:{name}")["execution"]
        assert (execution["blocking"], execution["completion"]) == (False, "stream_ordered")


def data_flow(key: str, access: str) -> dict[str, Any]:
    formal = entry(key)["semantics"]["formal"]
    found: dict[str, Any] = next(a for a in formal["data_flow"] if a["id"] == access)
    return found


def test_reduce_scatter_places_slices_by_the_prefix_sum_of_the_counts() -> None:
    for name in ("mpi_reduce_scatter", "mpi_ireduce_scatter", "mpi_reduce_scatter_init"):
        key = f"mpi:{name}"
        assert data_flow(key, "contribution")["extent"]["count_ref"] == "total(param:recvcounts)"
        offset = data_flow(key, "slice_write")["source"]["offset"]
        assert offset == "extent_size(prefix_sum(param:recvcounts, rank), param:datatype)"


def test_neighbourhood_collectives_place_by_neighbour_index() -> None:
    for name, access in (
        ("mpi_neighbor_allgather", "assembled_write"),
        ("mpi_neighbor_alltoall", "incoming_slices"),
    ):
        formal = json.dumps(entry(f"mpi:{name}")["semantics"]["formal"])
        assert "neighbor_index(param:comm, rank)" in formal, name
        assert data_flow(f"mpi:{name}", access)["source"]["placement_offset"].startswith(
            "neighbor_index("
        )


def test_rma_offsets_and_results() -> None:
    put = data_flow("mpi:mpi_put", "target_write")
    assert put["offset"] == "param:target_disp * disp_unit(param:win)"
    result = data_flow("mpi:mpi_get_accumulate", "result_write")["extent"]
    assert result == {"count_ref": "param:result_count", "datatype_ref": "param:result_datatype"}


def test_data_moving_calls_have_formal_blocks() -> None:
    for key in (
        "cuda:cudaMemcpy",
        "cuda:cudaMemcpyAsync",
        "cuda:cudaMemset",
        "openmp:omp_target_memcpy",
        "nvshmem:nvshmem_int_sum_reduce",
        "nvshmem:nvshmem_barrier_all",
    ):
        assert entry(key)["semantics"]["formal"] is not None, key


def test_names_programs_call_are_entries() -> None:
    for key in ("cuda:cudaGetDeviceProperties", "cuda:cudaStreamGetCaptureInfo"):
        assert entry(key)["identity"]["desc"]
    assert "nvshmem:nvshmem_sync" in entries("nvshmem")
    for name in ("my_pe", "num_pes", "globalexit", "shmem_broadcast"):
        assert f"shmem:{name}" not in entries("shmem")


def test_descriptions_read_the_name_right() -> None:
    assert "async" not in entry("cuda:cudaFreeAsync")["identity"]["desc"].lower().split()
    assert entry("cuda:cudaFree")["identity"]["desc"] != "Frees the current device."
    assert "version 2" in entry("cuda:cudaGraphAddNode_v2")["identity"]["desc"]
