"""The device target: its CUDA source says what it must, runs right when emulated on the CPU, and on a
real GPU (cupy present) matches the reference engine bit for bit."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from relayout import Requests, lower_single_node
from relayout.convert import compile_program
from relayout.convert.codegen import program_source
from relayout.convert.reference import ReferenceEngine
from tests.relayout.convert_support.cuda_emulation import EmulatedDeviceProgram
from tests.relayout.convert_support.programs import (
    assert_buffers_equal,
    compare_convert_out,
    random_inputs,
)
from tests.relayout.test_convert_programs import FIXED_PROGRAMS


def cupy_with_device() -> Any:
    try:
        import cupy  # type: ignore[import-not-found]
    except ImportError:
        return None
    try:
        return cupy if cupy.cuda.runtime.getDeviceCount() > 0 else None
    except Exception:
        return None


CUPY = cupy_with_device()
NO_GPU = "needs cupy and a CUDA device; cupy is not installed or sees no GPU on this machine"


def test_cuda_source_has_what_a_device_kernel_needs() -> None:
    layout = lower_single_node(
        Requests.validate(
            {
                "operations": [
                    {"action": "cast", "array": "A", "to": "bf16"},
                    {
                        "action": "block",
                        "array": "A",
                        "digit": "i1",
                        "factor": 4,
                        "into": ["b", "f"],
                    },
                    {"action": "permute", "array": "A", "order": ["b", "i0", "f"]},
                ]
            }
        ),
        {"A": "fp64[N,M]:inout"},
    )
    source, kernels, symbols = program_source(layout, "device")
    assert [k.name for k in kernels] == ["relayout_in_0_A", "relayout_out_0_A"]
    assert symbols == ("M", "N")
    assert 'extern "C" __global__ void relayout_in_0_A(' in source
    assert "blockIdx.x * blockDim.x + threadIdx.x" in source and "gridDim.x" in source
    assert "atomicAdd(error_count" in source
    assert "#include" not in source  # NVRTC has no system headers
    assert "static __device__ __forceinline__ int64_t relayout_floordiv" in source
    assert "relayout_round_f32bits_bf16(relayout_f64_to_f32_odd(" in source
    assert "relayout_widen_bf16(" in source
    assert "__double_as_longlong" in source and "#pragma omp" not in source


@pytest.mark.skipif(
    shutil.which("g++") is None, reason="needs g++ to emulate the CUDA source on the CPU"
)
@FIXED_PROGRAMS
def test_emulated_device_kernels_match_the_reference(
    operations: list[dict[str, Any]], arrays: dict[str, str], sizes: dict[str, int], tmp_path: Path
) -> None:
    request = Requests.validate({"operations": operations})
    program = EmulatedDeviceProgram(lower_single_node(request, arrays), tmp_path)
    reference = ReferenceEngine(request, arrays, sizes)
    inputs = random_inputs(arrays, sizes, seed=5)
    buffers = program.convert_in(inputs, sizes)
    expected = reference.convert_in(inputs)
    assert_buffers_equal(expected, buffers)
    compare_convert_out(
        program, reference, arrays, inputs, buffers, expected, sizes, every_array=True
    )


@pytest.mark.gpu
@pytest.mark.skipif(CUPY is None, reason=NO_GPU)
@FIXED_PROGRAMS
def test_device_kernels_match_the_reference(
    operations: list[dict[str, Any]], arrays: dict[str, str], sizes: dict[str, int]
) -> None:
    from relayout.convert.device import to_host

    request = Requests.validate({"operations": operations})
    program = compile_program(request, arrays, target="device")
    reference = ReferenceEngine(request, arrays, sizes)
    inputs = random_inputs(arrays, sizes, seed=6)
    buffers = program.convert_in(inputs, sizes)
    expected = reference.convert_in(inputs)
    assert_buffers_equal(expected, buffers, to_host)
    compare_convert_out(program, reference, arrays, inputs, buffers, expected, sizes)
