"""place on device: the generated driver hands the kernel device pointers (a device per rank,
cudaMalloc'd tiles copied in and out around every repeat outside the timed bracket), is built with
nvcc, and is refused with the reason where no device or toolchain is present."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hb.distributed.driver import (
    build_driver,
    device_toolchain_refusal,
    driver_source,
    mpi_flags,
    mpicc_path,
    mpiexec_path,
)
from hb.distributed.grade import distributed_refusal, grade_submission, requested_device_arrays
from hb.distributed.policy import device_available
from hb.kernels import load_manifest
from relayout.models import Requests

SCALED_ADD = load_manifest("scaled_add")

CUDA_SCALED_ADD = r"""
#include <mpi.h>
#include <stdint.h>
__global__ void scaled_add_kernel(const double *x, double *y, int64_t n, double alpha) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += alpha * x[i];
}
/* Device pointers in; the kernel launch is the submission's own. */
extern "C" void scaled_add_mpi_fp64(const double *__restrict__ x, double *__restrict__ y, int64_t N,
                                    double alpha, MPI_Comm comm, void *workspace,
                                    int64_t workspace_bytes) {
    (void)comm; (void)workspace; (void)workspace_bytes;
    if (N > 0) scaled_add_kernel<<<(unsigned)((N + 255) / 256), 256>>>(x, y, N, alpha);
}
"""

ON_DEVICE = Requests.validate(
    {
        "startup": {"grid": ["P"]},
        "operations": [
            {"action": "distribute", "array": "x", "grid_dim": 0, "dim": 0},
            {"action": "distribute", "array": "y", "grid_dim": 0, "dim": 0},
            {"action": "place", "array": "x", "on": "device"},
            {"action": "place", "array": "y", "on": "device"},
        ],
    }
)

requires_mpi = pytest.mark.skipif(
    not (Path(mpicc_path()).exists() and Path(mpiexec_path()).exists()),
    reason="MPICH's mpicc and mpiexec are not beside the interpreter (make setup installs them)",
)


def _between(text: str, start: str, end: str) -> str:
    return text[text.index(start) : text.index(end, text.index(start))]


def test_device_driver_hands_the_kernel_device_pointers() -> None:
    source = driver_source(SCALED_ADD, "fp64", device_arrays=["x", "y"])
    assert "#if 1\n#include <cuda_runtime_api.h>" in source
    assert "static const int hb_on_device[HB_ARRAYS] = {1, 1};" in source
    assert re.search(r"cudaSetDevice\(node_rank % devices\)", source)
    assert "MPI_COMM_TYPE_SHARED" in source and "cudaMalloc(&device_tiles[a]" in source
    call = (
        "scaled_add_mpi_fp64((hb_element *)device_tiles[0], (hb_element *)device_tiles[1], "
        "mine[2 * HB_ARRAYS + 0], (hb_element)hb_word_double(scalar_words[0]), MPI_COMM_WORLD, "
        "workspace, workspace_bytes);"
    )
    assert call in source
    # Copies are outside the timed bracket: in before the barrier, out after the MAX reduction.
    copy_in = source.index("cudaMemcpyHostToDevice")
    timed = _between(
        source, "started = MPI_Wtime();\n        scaled_add_mpi_fp64", "rep_seconds[rep]"
    )
    assert copy_in < source.index("started = MPI_Wtime();\n        scaled_add_mpi_fp64")
    assert "cudaDeviceSynchronize()" in timed and "cudaMemcpy" not in timed
    copy_out = source.index("cudaMemcpyDeviceToHost")
    assert copy_out > source.index("rep_seconds[rep] = slowest;")
    assert "hb_on_device[a] && hb_array_is_output[a]" in source
    assert "cudaFree(device_tiles[a])" in source


def test_host_driver_has_no_cuda_and_one_placed_array_only_its_pointer() -> None:
    host = driver_source(SCALED_ADD, "fp64")
    assert "#if 0\n#include <cuda_runtime_api.h>" in host
    assert "device_tiles[0]" not in host
    mixed = driver_source(SCALED_ADD, "fp64", device_arrays=["y"])
    assert "static const int hb_on_device[HB_ARRAYS] = {0, 1};" in mixed
    assert "scaled_add_mpi_fp64(tiles[0], (hb_element *)device_tiles[1]," in mixed


def test_a_cast_device_tile_or_an_unknown_array_is_refused() -> None:
    with pytest.raises(ValueError, match=r"cast \(x\): a device-resident MPI tile takes no cast"):
        driver_source(SCALED_ADD, "fp64", {"x": "fp32"}, device_arrays=["x"])
    with pytest.raises(ValueError, match="place 'q': scaled_add has no array 'q'"):
        driver_source(SCALED_ADD, "fp64", device_arrays=["q"])


def test_placed_arrays_are_read_from_the_request_and_the_residency() -> None:
    manifest = load_manifest("scaled_add")
    assert requested_device_arrays(ON_DEVICE, manifest) == ["x", "y"]
    only_y = Requests.validate(
        {**ON_DEVICE.model_dump(mode="json"), "operations": [
            *ON_DEVICE.model_dump(mode="json")["operations"][:2],
            {"action": "place", "array": "x", "on": "host"},
        ]}
    )  # fmt: skip
    assert requested_device_arrays(only_y, manifest) == []
    assert requested_device_arrays(only_y, manifest, residency="device") == ["y"]


def test_without_a_device_the_grade_is_refused_with_the_reason() -> None:
    available, why = device_available()
    if available and device_toolchain_refusal() is None:
        pytest.skip("this host has a CUDA device and toolchain, so placement is accepted")
    refusal = distributed_refusal(ON_DEVICE, load_manifest("scaled_add"), "fp64", ranks=2)
    assert refusal is not None and refusal.startswith("operations[2] (place): x on device: ")
    assert (why if not available else str(device_toolchain_refusal())) in refusal


@requires_mpi
@pytest.mark.skipif(
    device_toolchain_refusal() is not None,
    reason=f"the device driver is built with nvcc: {device_toolchain_refusal()}",
)
def test_the_device_driver_compiles_and_links_with_nvcc(tmp_path: Path) -> None:
    compile_flags, link_flags = mpi_flags()
    assert any(flag.startswith("-I") for flag in compile_flags) and "-lmpi" in link_flags
    built = build_driver(SCALED_ADD, "fp64", CUDA_SCALED_ADD, tmp_path, device_arrays=["x", "y"])
    assert built.program is not None and built.program.exists(), built.log
    # The sources compiled in a box; only the program reaches the cache.
    assert [p.name for p in tmp_path.iterdir() if p.name != "boxes"] == [built.program.name]
    broken = build_driver(
        SCALED_ADD, "fp64", CUDA_SCALED_ADD.replace("extern", "exturn"), tmp_path,
        device_arrays=["x", "y"],
    )  # fmt: skip
    assert broken.program is None and "exturn" in broken.log


@pytest.mark.mpi
@requires_mpi
@pytest.mark.skipif(not device_available()[0], reason="needs a CUDA device")
@pytest.mark.parametrize("ranks", [1, 2])
def test_scaled_add_on_device_tiles(ranks: int, tmp_path: Path) -> None:
    manifest = load_manifest("scaled_add")
    assert distributed_refusal(ON_DEVICE, manifest, "fp64", ranks=ranks) is None
    result = grade_submission(
        manifest, ON_DEVICE, CUDA_SCALED_ADD, "fp64", ranks=ranks, directory=tmp_path, reps=2
    )
    assert result.correct, result.failure or result.mismatches
    assert result.credited_s is not None and result.credited_s == min(result.rep_seconds)
