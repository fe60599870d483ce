"""The device target: the same generated kernels as CUDA, compiled by cupy.RawModule and run on a GPU.

bf16 and fp8 ride in unsigned buffers (uint16 / uint8 cupy arrays, viewed as the ml_dtypes type on
the way back to numpy by to_host), a struct in raw bytes with a trailing axis of its itemsize.
convert_in takes the numpy problem arrays and returns cupy buffers; convert_out takes the cupy
buffers and writes numpy (or cupy) outputs. The timings include the host-device copies.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from relayout.algebra.lower import NodeLayout
from relayout.convert.codegen import buffer_dtype, evaluate_extents
from relayout.convert.program import ConversionError, ConversionProgram, conversion_failure
from relayout.models import Requests

THREADS_PER_BLOCK = 256
MAX_BLOCKS = 65535


def import_cupy() -> Any:
    """cupy, or a RuntimeError saying why the device target cannot run here."""
    try:
        import cupy
    except ImportError as error:
        raise RuntimeError(
            'target="device" needs cupy (pip install "hb[gpu]", i.e. cupy-cuda12x) and a CUDA '
            f"device; cupy is not importable here: {error}"
        ) from None
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as error:  # cupy raises its own CUDARuntimeError subclasses
        raise RuntimeError(f'target="device": no usable CUDA device: {error}') from None
    if count < 1:
        raise RuntimeError('target="device": cupy sees no CUDA device')
    return cupy


def storage_dtype(dtype: np.dtype[Any]) -> np.dtype[Any]:
    """The dtype a device array is allocated with: unsigned bits for ml_dtypes types (which numpy
    reports as kind V), raw bytes for a struct."""
    if dtype.fields is not None:
        return np.dtype(np.uint8)
    if dtype.kind == "V":
        return np.dtype(f"uint{dtype.itemsize * 8}")
    return dtype


def device_shape(shape: tuple[int, ...], dtype: np.dtype[Any]) -> tuple[int, ...]:
    """A struct buffer carries its bytes on a trailing axis."""
    return (*shape, dtype.itemsize) if dtype.fields is not None else shape


class DeviceProgram(ConversionProgram):
    """Kernels compiled by NVRTC through cupy.RawModule; buffers are cupy arrays."""

    def __init__(self, requests: Requests, layout: NodeLayout) -> None:
        super().__init__(requests, layout, "device", None)
        self.cupy = import_cupy()
        self.module = self.cupy.RawModule(
            code=self.source, options=("--std=c++14",), name_expressions=None
        )
        self.functions = {k.name: self.module.get_function(k.name) for k in self.kernels}

    def _device_array(self, array: Any) -> Any:
        cp = self.cupy
        if isinstance(array, cp.ndarray):
            return array
        host = np.ascontiguousarray(array)
        raw = host.view(storage_dtype(host.dtype))
        return cp.asarray(raw.reshape(device_shape(host.shape, host.dtype)))

    def _launch(
        self,
        kernel_name: str,
        pointer: str,
        direction: str,
        arrays: list[Any],
        buffer: Any,
        symbols: Any,
        total: int,
    ) -> None:
        cp = self.cupy
        pointers = cp.asarray(np.array([a.data.ptr for a in arrays] or [0], dtype=np.uint64))
        errors = cp.zeros(1, dtype=cp.uint64)
        blocks = max(1, min(MAX_BLOCKS, (total + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK))
        self.functions[kernel_name](
            (blocks,), (THREADS_PER_BLOCK,), (pointers, buffer, symbols, errors)
        )
        count = int(errors.get()[0])
        if count:
            # All ones: the kernel found the extents not to fit (the host kernels' -1).
            raise ConversionError(
                conversion_failure(pointer, direction, -1 if count == 2**64 - 1 else count)
            )

    def _run_in(
        self, arrays: Mapping[str, Any], sizes: Mapping[str, int], reuse: Mapping[str, Any]
    ) -> dict[str, Any]:
        cp = self.cupy
        symbols = cp.asarray(self._symbol_values(sizes))
        device_arrays = {name: self._device_array(a) for name, a in arrays.items()}
        buffers: dict[str, Any] = {}
        for pointer in self.pointers:
            shape = self.buffer_shape(pointer, sizes)
            dtype = buffer_dtype(pointer.element)
            on_device = device_shape(shape, dtype)
            buffer = self._reusable(reuse, pointer, on_device, storage_dtype(dtype))
            if buffer is None:
                # A struct's padding bytes are never written by the kernel: start them at zero.
                allocate = cp.zeros if dtype.fields is not None else cp.empty
                buffer = allocate(on_device, dtype=storage_dtype(dtype))
            kernel = self.kernel_of[(pointer.name, "in")]
            total = int(np.prod(shape, dtype=np.int64))
            sources = [device_arrays[s] for s in kernel.sources]
            self._launch(kernel.name, pointer.name, "in", sources, buffer, symbols, total)
            buffers[pointer.name] = buffer
        cp.cuda.get_current_stream().synchronize()
        return buffers

    def _run_out(
        self, buffers: Mapping[str, Any], outputs: Mapping[str, Any], sizes: Mapping[str, int]
    ) -> None:
        cp = self.cupy
        symbols = cp.asarray(self._symbol_values(sizes))
        for pointer in self.pointers:
            kernel = self.kernel_of.get((pointer.name, "out"))
            if kernel is None or not any(s in outputs for s in kernel.sources):
                continue
            targets = []
            for s in kernel.sources:
                spec = self.layout.arrays[s]
                shape = evaluate_extents(spec.extent_exprs, sizes)
                if s in outputs and isinstance(outputs[s], cp.ndarray):
                    targets.append(outputs[s])
                else:
                    targets.append(cp.empty(shape, dtype=storage_dtype(spec.element.numpy_dtype)))
            buffer = self._device_array(buffers[pointer.name])
            total = int(np.prod(self.buffer_shape(pointer, sizes), dtype=np.int64))
            self._launch(kernel.name, pointer.name, "out", targets, buffer, symbols, total)
            for s, device_target in zip(kernel.sources, targets, strict=True):
                if s in outputs and not isinstance(outputs[s], cp.ndarray):
                    host = outputs[s]
                    host.view(storage_dtype(host.dtype))[...] = device_target.get()
        cp.cuda.get_current_stream().synchronize()


def to_host(buffer: Any, dtype: np.dtype[Any]) -> npt.NDArray[Any]:
    """A device buffer copied to numpy and viewed as the kernel dtype (ml_dtypes for bf16/fp8, the
    aligned struct for a mixed zip)."""
    host = np.ascontiguousarray(buffer.get())
    if dtype.fields is not None:
        return host.view(dtype).reshape(host.shape[:-1])
    return host.view(dtype)
