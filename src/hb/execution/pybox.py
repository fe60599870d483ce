"""The box runner of a python delivery: the code of the judge that runs inside a timed run's box
when the submission is Python. It speaks hb.execution.boxrunner's protocol with the supervisor ("a" sets
the next call's arguments and is answered with this process's id and the address of the memory
they live in, "g" calls, "p" pings, "q" ends) and calls the submission's function with numpy
arrays over that memory, which the supervisor fills (each pointer as the supervisor describes
it: dtype and shape after the request's conversions, ml_dtypes types for bf16 and fp8), then the
size symbols and scalars, the workspace as a uint8 array and workspace_bytes. The outputs are
written in place, where the supervisor reads them with the box frozen; nothing this
process reports decides a grade.

`describe` is the supervisor's side: an array's dtype and shape as JSON.
"""

from __future__ import annotations

import contextlib
import json
import mmap
import os
import sys
import traceback
from typing import Any

import ml_dtypes  # noqa: F401  (registers bfloat16 and the fp8 types with numpy)
import numpy as np

from hb.execution.boxrunner import _HUGE, JOB, _line

SOURCE = "submission.py"
# The scalars' numpy types, by the ABI kind hb.abi.scalar_argument gives them.
_SCALARS: dict[str, Any] = {"int64": int, "double": np.float64, "float": np.float32}


def describe(array: np.ndarray) -> dict[str, Any]:
    """An array's dtype (a numpy or ml_dtypes name, or a struct's fields with their offsets and
    itemsize) and shape, for the "a" message."""
    dtype = array.dtype
    if dtype.names:
        fields = dtype.fields or {}
        kind: Any = {
            "names": list(dtype.names),
            "formats": [fields[name][0].name for name in dtype.names],
            "offsets": [int(fields[name][1]) for name in dtype.names],
            "itemsize": int(dtype.itemsize),
        }
    else:
        kind = dtype.name
    return {"dtype": kind, "shape": [int(e) for e in array.shape]}


def _dtype(kind: Any) -> np.dtype[Any]:
    if isinstance(kind, dict):
        return np.dtype(
            {
                "names": kind["names"],
                "formats": [np.dtype(f) for f in kind["formats"]],
                "offsets": kind["offsets"],
                "itemsize": kind["itemsize"],
            }
        )
    return np.dtype(kind)


def _fail(message: str) -> int:
    sys.stderr.write(f"hb box: {message}\n")
    sys.stderr.flush()
    return 3


def _load(symbol: str) -> Any:
    """The submission's function `symbol`, or a message saying why there is none."""
    with open(SOURCE, encoding="utf-8") as handle:
        text = handle.read()
    namespace: dict[str, Any] = {"__name__": "submission", "__file__": SOURCE}
    try:
        exec(compile(text, SOURCE, "exec"), namespace)
    except BaseException as error:  # the submission's import-time failure is its reason
        return f"submission.py failed to load: {_last_frame(error)}"
    function = namespace.get(symbol)
    if not callable(function):
        return f"submission.py does not define a function {symbol}"
    return function


def _last_frame(error: BaseException) -> str:
    frames = traceback.extract_tb(error.__traceback__)
    where = next((f for f in reversed(frames) if f.filename == SOURCE), None)
    at = f" (line {where.lineno})" if where is not None else ""
    return f"{type(error).__name__}: {error}{at}"


def _views(buffer: np.ndarray, message: dict[str, Any]) -> list[Any]:
    arrays: list[Any] = []
    described_arrays = message.get("arrays")
    if described_arrays is None:  # the calibration's arguments: the pings never call
        return arrays
    for offset, described in zip(message["offsets"], described_arrays, strict=True):
        dtype = _dtype(described["dtype"])
        shape = tuple(described["shape"])
        count = int(np.prod(shape, dtype=np.int64))
        arrays.append(buffer[offset : offset + count * dtype.itemsize].view(dtype).reshape(shape))
    return arrays


class _Region:
    """The box's own memory that holds a call's arguments (the supervisor writes and reads it
    from outside while the box is frozen): anonymous, aligned and advised for huge pages as
    hb.execution.boxrunner's is."""

    def __init__(self, size: int) -> None:
        self.map = mmap.mmap(-1, size + _HUGE, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        whole = np.frombuffer(self.map, dtype=np.uint8)
        start = int(whole.ctypes.data)
        shift = (start + _HUGE - 1) // _HUGE * _HUGE - start
        self.address = start + shift
        self.bytes = whole[shift : shift + size]
        if hasattr(mmap, "MADV_HUGEPAGE"):
            self.map.madvise(mmap.MADV_HUGEPAGE, shift, size)

    def close(self) -> None:
        self.bytes = np.empty(0, dtype=np.uint8)
        # A view the submission kept leaves the old memory mapped.
        with contextlib.suppress(BufferError):
            self.map.close()


def main(argv: list[str]) -> int:
    go, done = (int(a) for a in argv[1:3])
    # The job is read at the first layout: a box started ahead of its grade gets it at binding.
    job: dict[str, Any] = {}
    function: Any = None
    kinds: list[Any] = []
    region: _Region | None = None
    arguments: list[Any] = []
    while True:
        command = os.read(go, 1)
        if command == b"g":
            try:
                function(*arguments)
            except BaseException as error:  # the kernel's own failure is the grade's reason
                return _fail(f"{job['symbol']} raised {_last_frame(error)}")
            os.write(done, b"d")
        elif command == b"p":
            os.write(done, b"d")
        elif command == b"a":
            message = json.loads(_line(go))
            if function is None:
                # Loaded only after the supervisor's first pings, as hb.execution.boxrunner loads its
                # library: nothing the submission does can slow the round trip calibrated.
                with open(JOB) as handle:
                    job = json.load(handle)
                kinds = [_SCALARS[kind] for kind in job["trailing_kinds"]]
                function = _load(job["symbol"])
                if isinstance(function, str):
                    return _fail(function)
            size = int(message["size"])
            if region is None or region.bytes.nbytes != size:
                arguments = []
                if region is not None:
                    region.close()
                region = _Region(size)
            workspace_offset = int(message["workspace_offset"])
            workspace_bytes = int(message["workspace_bytes"])
            arguments = [
                *_views(region.bytes, message),
                *(kind(value) for kind, value in zip(kinds, message["trailing"], strict=True)),
                region.bytes[workspace_offset : workspace_offset + workspace_bytes],
                workspace_bytes,
            ]
            os.write(done, f"r{os.getpid()} {region.address}\n".encode())
        else:
            return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
