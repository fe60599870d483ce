"""Run the generated CUDA source on the CPU: compiled as C++ under a shim that defines the few CUDA
names it uses (one block of one thread walks every cell through the grid-stride loop)."""

from __future__ import annotations

import ctypes
import subprocess
from pathlib import Path
from typing import Any

import numpy as np

from relayout.algebra.lower import NodeLayout
from relayout.convert.codegen import buffer_dtype, evaluate_extents, program_source

CUDA_SHIM = """\
#define __CUDACC__ 1
#define __global__
#define __device__
#define __forceinline__ inline
struct relayout_emulated_dim3 { unsigned int x, y, z; };
static const relayout_emulated_dim3 blockIdx = {0, 0, 0}, threadIdx = {0, 0, 0};
static const relayout_emulated_dim3 blockDim = {1, 1, 1}, gridDim = {1, 1, 1};
static inline unsigned int __float_as_uint(float value) {
    unsigned int bits; __builtin_memcpy(&bits, &value, sizeof bits); return bits;
}
static inline float __uint_as_float(unsigned int bits) {
    float value; __builtin_memcpy(&value, &bits, sizeof value); return value;
}
static inline long long __double_as_longlong(double value) {
    long long bits; __builtin_memcpy(&bits, &value, sizeof bits); return bits;
}
static inline unsigned long long atomicAdd(unsigned long long *address, unsigned long long value) {
    unsigned long long old = *address; *address = old + value; return old;
}
"""


class EmulatedDeviceProgram:
    """The device kernels of a layout, built with g++ and called like cupy would launch them."""

    def __init__(self, layout: NodeLayout, workdir: Path) -> None:
        self.layout = layout
        source, self.kernels, self.symbols = program_source(layout, "device")
        self.source = source
        path = workdir / "device_kernels.cpp"
        path.write_text(CUDA_SHIM + source)
        library = workdir / "device_kernels.so"
        subprocess.run(
            ["g++", "-O1", "-fPIC", "-shared", "-x", "c++", str(path), "-o", str(library)],
            check=True,
            capture_output=True,
            text=True,
        )
        self.library = ctypes.CDLL(str(library))

    def _run(
        self, name: str, arrays: list[np.ndarray], buffer: np.ndarray, sizes: dict[str, int]
    ) -> int:
        pointers = (ctypes.c_void_p * max(len(arrays), 1))(*[a.ctypes.data for a in arrays])
        symbols = np.array([sizes[s] for s in self.symbols] or [0], dtype=np.int64)
        errors = np.zeros(1, dtype=np.uint64)
        getattr(self.library, name)(
            ctypes.cast(pointers, ctypes.c_void_p),
            ctypes.c_void_p(buffer.ctypes.data),
            ctypes.c_void_p(symbols.ctypes.data),
            ctypes.c_void_p(errors.ctypes.data),
        )
        return int(errors[0])

    def convert_in(self, inputs: dict[str, np.ndarray], sizes: dict[str, int]) -> dict[str, Any]:
        buffers = {}
        for kernel in self.kernels:
            if kernel.direction != "in":
                continue
            pointer = self.layout.pointer(kernel.pointer)
            shape = evaluate_extents(pointer.extents, sizes)
            buffer = np.zeros(shape, dtype=buffer_dtype(pointer.element))
            assert self._run(kernel.name, [inputs[s] for s in kernel.sources], buffer, sizes) == 0
            buffers[kernel.pointer] = buffer
        return buffers

    def convert_out(
        self, buffers: dict[str, Any], outputs: dict[str, np.ndarray], sizes: dict[str, int]
    ) -> None:
        for kernel in self.kernels:
            if kernel.direction != "out":
                continue
            targets = [outputs[s] for s in kernel.sources]
            assert self._run(kernel.name, targets, buffers[kernel.pointer], sizes) == 0
