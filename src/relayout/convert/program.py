"""Compiled conversion programs: a checked request's kernels built once, run per call with the sizes.

`compile_program(requests, arrays, target=...)` (relayout.convert.compile) lowers the request to
its NodeLayout, generates the kernels (codegen.py), builds or finds them in the cache (build.py)
and returns a program whose
`convert_in` fills the kernel-side buffers from the problem arrays and whose `convert_out` writes
the outputs back, with `timings` holding the nanoseconds of the last conversion each way.
"""

from __future__ import annotations

import ctypes
import time
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from relayout.algebra.lower import NodeLayout, PointerLayout, lower_single_node
from relayout.algebra.state import StructType
from relayout.arrays import ArraySpec
from relayout.convert.build import Toolchain, load_library
from relayout.convert.casts import aligned_empty, aligned_zeros, convert_plain, plain_kernel
from relayout.convert.codegen import (
    KernelSpec,
    buffer_dtype,
    evaluate_extents,
    identity_cell,
    program_source,
)
from relayout.expr import Sym
from relayout.models import Requests

SANITIZE_FLAGS = ("-fsanitize=address,undefined", "-fno-sanitize-recover=undefined", "-g")


class ConversionError(RuntimeError):
    """A conversion that met out-of-bounds indices, or ones that do not evaluate in int64
    (skipped, never read or written)."""


def conversion_failure(pointer: str, direction: str, errors: int) -> str:
    """The ConversionError message for a kernel's error count (-1: the extents did not fit)."""
    where = f"pointer {pointer!r} (convert_{direction})"
    if errors < 0:
        return (
            f"{where}: the extents (or the parts of the index maps over the sizes alone) do not "
            "evaluate in int64 at these sizes, or an extent exceeds 2**63 - 1025 (nothing was "
            "converted)"
        )
    return (
        f"{where}: {errors} cells had a logical index outside their array or one that does not "
        "evaluate in int64 (skipped); the layout's index maps do not fit these sizes (a "
        "shuffle's f_inv that is not a bijection at them, or overflows int64?)"
    )


@dataclass
class ConversionTimings:
    """Nanoseconds of the last convert_in and convert_out (0 before the first)."""

    convert_in_ns: int = 0
    convert_out_ns: int = 0


def infer_sizes(
    layout: NodeLayout, arrays: Mapping[str, npt.NDArray[Any]], sizes: Mapping[str, int] | None
) -> dict[str, int]:
    """`sizes`, completed from the shapes of `arrays` where an extent is a bare size symbol."""
    known = {name: int(value) for name, value in (sizes or {}).items()}
    for name, array in arrays.items():
        spec = layout.arrays.get(name)
        if spec is None:
            continue
        for extent, actual in zip(spec.extent_exprs, np.shape(array), strict=False):
            if isinstance(extent, Sym) and extent.name not in known:
                known[extent.name] = int(actual)
    return known


def _check_array(
    name: str, spec: ArraySpec, array: npt.NDArray[Any], sizes: Mapping[str, int], role: str
) -> None:
    expected_shape = evaluate_extents(spec.extent_exprs, sizes)
    expected_dtype = spec.element.numpy_dtype
    if not isinstance(array, np.ndarray):
        raise TypeError(f"{role}[{name!r}]: expected a numpy array, got {type(array).__name__}")
    if tuple(array.shape) != expected_shape or array.dtype != expected_dtype:
        raise ValueError(
            f"{role}[{name!r}]: expected {expected_dtype}{list(expected_shape)} ({spec}), "
            f"got {array.dtype}{list(array.shape)}"
        )
    if not array.flags.c_contiguous:
        raise ValueError(f"{role}[{name!r}]: expected a C-contiguous array")


@dataclass(frozen=True)
class _Step:
    """One pointer's conversion at one set of sizes."""

    pointer: PointerLayout
    shape: tuple[int, ...]
    dtype: Any
    plain: bool  # one whole array, row-major: copied or cast without a generated kernel
    zeroed: bool  # its buffer starts at zero (a struct's padding, an empty extent)


class ConversionProgram:
    """The conversion kernels of one request over one set of array specs, on one target."""

    def __init__(
        self,
        requests: Requests,
        layout: NodeLayout,
        target: str,
        toolchain: Toolchain | None,
    ) -> None:
        self.requests = requests
        self.layout = layout
        self.target = target
        self.toolchain = toolchain
        self.timings = ConversionTimings()
        self.pointers = [p for p in layout.pointers if p.sparse is None]
        self.source, self.kernels, self.symbols = program_source(layout, target)
        self.kernel_of: dict[tuple[str, str], KernelSpec] = {
            (k.pointer, k.direction): k for k in self.kernels
        }
        # The sizes the request has been checked at. A layout lowered without sizes holds where
        # `check` at the sizes accepts; at sizes it refuses (an inner digit's factor that does not
        # divide, a shuffle that is not a bijection there) no conversion runs.
        self._checked_sizes: set[tuple[tuple[str, int], ...]] = set()
        self._size_symbols = sorted(
            {s for spec in layout.arrays.values() for e in spec.extent_exprs for s in e.symbols()}
        )
        # The sizes the layout was lowered at (compile_program's `sizes`), and how to lower it
        # again at others; programs lowered at other sizes, by their sizes.
        self.lowered_at: dict[str, int] | None = None
        self.lower_again: Any = None
        self._elsewhere: dict[tuple[tuple[str, int], ...], ConversionProgram] = {}
        # Per set of sizes, what each pointer's conversion needs (its buffer's shape and dtype,
        # whether it is a plain copy or cast): worked out once, so a repeated call costs the
        # conversion and little else.
        self._steps_at: dict[tuple[int, ...], list[_Step]] = {}
        self._symbols_at: dict[tuple[int, ...], tuple[npt.NDArray[np.int64], int]] = {}

    def _at(self, sizes: Mapping[str, int]) -> ConversionProgram:
        """This program where `sizes` agree with the sizes it was lowered at, else the program
        lowered again at `sizes` (built once per set of sizes)."""
        if self.lowered_at is None or all(
            int(sizes.get(name, value)) == value for name, value in self.lowered_at.items()
        ):
            return self
        key = tuple(sorted((name, int(value)) for name, value in sizes.items()))
        if key not in self._elsewhere:
            self._elsewhere[key] = self.lower_again(dict(key))
        return self._elsewhere[key]

    def check_sizes(self, sizes: Mapping[str, int]) -> None:
        """RequestError, as `check_requests` at `sizes` words it, when the check refuses them."""
        key = tuple((s, int(sizes[s])) for s in self._size_symbols if s in sizes)
        if key in self._checked_sizes:
            return
        lower_single_node(self.requests, self.layout.arrays, dict(key))
        self._checked_sizes.add(key)

    # -- shared helpers

    def _steps(self, sizes: Mapping[str, int]) -> list[_Step]:
        key = tuple(int(sizes.get(s, -1)) for s in self.symbols)
        steps = self._steps_at.get(key)
        if steps is None:
            steps = []
            for pointer in self.pointers:
                shape = self.buffer_shape(pointer, sizes)
                plain = self._plain(pointer)
                steps.append(_Step(
                    pointer=pointer,
                    shape=shape,
                    dtype=buffer_dtype(pointer.element),
                    plain=plain,
                    zeroed=0 in shape or isinstance(pointer.element, StructType),
                ))  # fmt: skip
            self._steps_at[key] = steps
        return steps

    def buffer_shape(self, pointer: PointerLayout, sizes: Mapping[str, int]) -> tuple[int, ...]:
        return evaluate_extents(pointer.extents, sizes)

    def _symbol_values(self, sizes: Mapping[str, int]) -> npt.NDArray[np.int64]:
        missing = [s for s in self.symbols if s not in sizes]
        if missing:
            raise ValueError(
                f"sizes: missing {missing}; the layout's extents need {list(self.symbols)}"
            )
        return np.array([int(sizes[s]) for s in self.symbols] or [0], dtype=np.int64)

    def _symbols_address(self, sizes: Mapping[str, int]) -> int:
        """The address of the kernels' symbols argument at `sizes`, its array made once per set
        of sizes (and kept, so the address stays valid)."""
        key = tuple(int(sizes.get(s, -1)) for s in self.symbols)
        found = self._symbols_at.get(key)
        if found is None:
            values = self._symbol_values(sizes)
            found = self._symbols_at[key] = (values, values.ctypes.data)
        return found[1]

    def _inputs_for(
        self, inputs: Mapping[str, npt.NDArray[Any]], sizes: Mapping[str, int]
    ) -> dict[str, npt.NDArray[Any]]:
        ready: dict[str, npt.NDArray[Any]] = {}
        needed = {s for p in self.pointers for s in p.sources}
        for name in sorted(needed):
            spec = self.layout.arrays[name]
            if name in inputs:
                _check_array(name, spec, inputs[name], sizes, "inputs")
                ready[name] = inputs[name]
            elif spec.intent == "out":
                # An output-only array has no values yet: its buffer starts from zeros.
                shape = evaluate_extents(spec.extent_exprs, sizes)
                ready[name] = np.zeros(shape, dtype=spec.element.numpy_dtype)
            else:
                raise ValueError(
                    f"inputs: missing array {name!r} ({spec}); convert_in needs every array it "
                    f"reads: {sorted(needed)}"
                )
        return ready

    def _plain(self, pointer: PointerLayout) -> bool:
        """The pointer is one whole array, row-major: copied, narrowed or widened (an fp32
        problem's array cast to fp64) by the plain cast library, without a generated kernel."""
        if self.target != "host" or len(pointer.sources) != 1:
            return False
        spec = self.layout.arrays[pointer.sources[0]]
        if not identity_cell(pointer, spec):
            return False
        if pointer.element == spec.dtype:
            return True
        if isinstance(pointer.element, StructType):
            return False
        return plain_kernel(spec.element.numpy_dtype, buffer_dtype(pointer.element)) is not None

    # -- the two directions

    def convert_in(
        self,
        inputs: Mapping[str, npt.NDArray[Any]],
        sizes: Mapping[str, int] | None = None,
        *,
        buffers: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Kernel-side buffers (packed physical shape, requested dtype, 64-byte aligned) per pointer.

        `buffers` from an earlier call are refilled in place when their shape and dtype still fit,
        which spares a repeated conversion the page faults of fresh memory.
        """
        sizes = infer_sizes(self.layout, inputs, sizes)
        elsewhere = self._at(sizes)
        if elsewhere is not self:
            converted = elsewhere.convert_in(inputs, sizes, buffers=buffers)
            self.timings = elsewhere.timings
            return converted
        self.check_sizes(sizes)
        arrays = self._inputs_for(inputs, sizes)
        start = time.perf_counter_ns()
        buffers = self._run_in(arrays, sizes, dict(buffers or {}))
        self.timings.convert_in_ns = time.perf_counter_ns() - start
        return buffers

    def convert_out(
        self,
        buffers: Mapping[str, Any],
        outputs: Mapping[str, npt.NDArray[Any]],
        sizes: Mapping[str, int] | None = None,
    ) -> None:
        """Write each output array (intent out/inout) back from the buffers, in place."""
        sizes = infer_sizes(self.layout, outputs, sizes)
        elsewhere = self._at(sizes)
        if elsewhere is not self:
            elsewhere.convert_out(buffers, outputs, sizes)
            self.timings = elsewhere.timings
            return
        self.check_sizes(sizes)
        for name, array in outputs.items():
            spec = self.layout.arrays.get(name)
            if spec is None:
                raise ValueError(
                    f"outputs: {name!r} is not one of the arrays {list(self.layout.arrays)}"
                )
            if spec.intent == "in":
                raise ValueError(
                    f"outputs: {name!r} has intent in; only out/inout arrays are written"
                )
            _check_array(name, spec, array, sizes, "outputs")
        start = time.perf_counter_ns()
        self._run_out(buffers, outputs, sizes)
        self.timings.convert_out_ns = time.perf_counter_ns() - start

    def _run_in(
        self,
        arrays: Mapping[str, npt.NDArray[Any]],
        sizes: Mapping[str, int],
        reuse: Mapping[str, Any],
    ) -> dict[str, Any]:
        raise NotImplementedError

    def _reusable(
        self, reuse: Mapping[str, Any], pointer: PointerLayout, shape: tuple[int, ...], dtype: Any
    ) -> Any:
        """The caller's old buffer for `pointer` when it still fits, else None."""
        old = reuse.get(pointer.name)
        if old is None or tuple(old.shape) != shape or old.dtype != dtype:
            return None
        return old

    def _run_out(
        self,
        buffers: Mapping[str, Any],
        outputs: Mapping[str, npt.NDArray[Any]],
        sizes: Mapping[str, int],
    ) -> None:
        raise NotImplementedError


# Arrays whose addresses a host program remembers at most (then it forgets them all).
ADDRESSES_KEPT = 64


class HostProgram(ConversionProgram):
    """Kernels compiled with the host C compiler and OpenMP, loaded with ctypes."""

    def __init__(self, requests: Requests, layout: NodeLayout, toolchain: Toolchain | None) -> None:
        super().__init__(requests, layout, "host", toolchain)
        self.library = load_library(self.source, toolchain)
        self._addresses: dict[int, tuple[weakref.ref[npt.NDArray[Any]], int]] = {}
        self._functions: dict[str, Any] = {}
        for kernel in self.kernels:
            function = getattr(self.library, kernel.name)
            function.restype = ctypes.c_int64
            function.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
            self._functions[kernel.name] = function

    def _address(self, array: npt.NDArray[Any]) -> int:
        """The address of `array`'s data, remembered while the array lives: numpy's
        `array.ctypes.data` costs microseconds, which a tiny conversion's few calls notice, and a
        reused buffer is looked up on every call. Only a view's is remembered (the buffers
        aligned_empty makes are views): an array owning its data can move it (ndarray.resize)."""
        if array.flags.owndata:
            return int(array.ctypes.data)
        known = self._addresses.get(id(array))
        if known is not None and known[0]() is array:
            return known[1]
        if len(self._addresses) >= ADDRESSES_KEPT:
            self._addresses.clear()
        address = int(array.ctypes.data)
        self._addresses[id(array)] = (weakref.ref(array), address)
        return address

    def _call(
        self, kernel: KernelSpec, arrays: list[int], buffer: npt.NDArray[Any], symbols: int
    ) -> None:
        """Kernel `kernel` over the arrays at addresses `arrays`, `buffer` and the symbols."""
        pointers = (ctypes.c_void_p * max(len(arrays), 1))(*arrays)
        # A ctypes array and plain addresses pass as void * as they are (no casts per call).
        errors = self._functions[kernel.name](pointers, self._address(buffer), symbols)
        if errors:
            raise ConversionError(conversion_failure(kernel.pointer, kernel.direction, errors))

    def _run_in(
        self,
        arrays: Mapping[str, npt.NDArray[Any]],
        sizes: Mapping[str, int],
        reuse: Mapping[str, Any],
    ) -> dict[str, Any]:
        symbols = self._symbols_address(sizes)
        # Each array's address looked up once per call (a part of several pointers is read by
        # each), which a tiny conversion notices.
        addresses: dict[str, int] = {}
        buffers: dict[str, Any] = {}
        for step in self._steps(sizes):
            pointer, shape, dtype = step.pointer, step.shape, step.dtype
            old = self._reusable(reuse, pointer, shape, dtype)
            if old is not None and not (old.flags.c_contiguous and old.flags.writeable):
                old = None
            if step.plain:
                source = arrays[pointer.sources[0]]
                buffer = old if old is not None else aligned_empty(shape, dtype)
                convert_plain(source.reshape(-1), buffer.reshape(-1), self.toolchain)
                buffers[pointer.name] = buffer
                continue
            # A struct's padding bytes are never written by the kernel: start them at zero.
            if old is not None:
                buffer = old
            else:
                buffer = aligned_zeros(shape, dtype) if step.zeroed else aligned_empty(shape, dtype)
            kernel = self.kernel_of[(pointer.name, "in")]
            for name in kernel.sources:
                if name not in addresses:
                    addresses[name] = self._address(arrays[name])
            self._call(kernel, [addresses[s] for s in kernel.sources], buffer, symbols)
            buffers[pointer.name] = buffer
        return buffers

    def _run_out(
        self,
        buffers: Mapping[str, Any],
        outputs: Mapping[str, npt.NDArray[Any]],
        sizes: Mapping[str, int],
    ) -> None:
        symbols = self._symbols_address(sizes)
        addresses: dict[str, int] = {}
        scratch: dict[str, npt.NDArray[Any]] = {}  # kept alive until the last kernel has run
        for step in self._steps(sizes):
            pointer = step.pointer
            kernel = self.kernel_of.get((pointer.name, "out"))
            if kernel is None or not any(s in outputs for s in kernel.sources):
                continue
            buffer = buffers[pointer.name]
            if (
                tuple(buffer.shape) != step.shape
                or buffer.dtype != step.dtype
                or not buffer.flags.c_contiguous
            ):
                raise ValueError(
                    f"buffers[{pointer.name!r}]: expected a C-contiguous {step.dtype}"
                    f"{list(step.shape)}, got {buffer.dtype}{list(buffer.shape)}"
                )
            if step.plain and pointer.sources[0] in outputs:
                target = outputs[pointer.sources[0]]
                convert_plain(buffer.reshape(-1), target.reshape(-1), self.toolchain)
                continue
            for name in kernel.sources:
                if name not in addresses:
                    # An array the caller did not ask for is written into scratch memory.
                    written = outputs.get(name)
                    if written is None:
                        written = scratch[name] = np.empty(
                            evaluate_extents(self.layout.arrays[name].extent_exprs, sizes),
                            dtype=self.layout.arrays[name].element.numpy_dtype,
                        )
                    addresses[name] = self._address(written)
            self._call(kernel, [addresses[s] for s in kernel.sources], buffer, symbols)
