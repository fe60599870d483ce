"""The only code of the judge that runs inside a timed run's box, with its loop in C
(hb.execution.boxcall): load the submission, hold the memory its arguments live in, and call the
kernel each time the supervisor says "go".

It measures nothing and writes no result: the supervisor outside the box writes each rep's inputs
into this process's memory and reads the outputs back (process_vm_writev/readv) while the box is
frozen, and times each call from its own side of the pipes. The memory is the box's own anonymous
memory, advised for transparent huge pages as numpy's large arrays are, so that a kernel sees the
same pages here as when it is called directly. Protocol on two pipes (fds given on the command
line): "a<json>\\n" sets the arguments of the next call (region size, pointer offsets, trailing
values) and is answered "r<pid> <address>\\n" (this process's id in the box and the region's
address); "g" calls the kernel and is answered "d" when it returns; "p" is answered "d" at once
(the supervisor's calibration); "c" loads the loop in C the judge wrote beside the submission
(hb.execution.boxcall), which from then on answers "p" and "g" itself and hands every other
command back; "q" or end of file ends the runner. Only the standard library is imported, so the
box starts in milliseconds.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys

TYPE_CHECKING = False  # typing costs the box's start more than the rest of its imports
if TYPE_CHECKING:
    from typing import Any

LIBRARY = "./libsubmission.so"
# The runner's loop in C (hb.execution.boxcall), written beside the submission by the judge.
NATIVE_LOOP = "./libhbcall.so"
JOB = "box.json"
_TYPES = {"int64": ctypes.c_int64, "double": ctypes.c_double, "float": ctypes.c_float}
_PROT_READ_WRITE, _MAP_PRIVATE_ANONYMOUS, _MADV_HUGEPAGE = 0x1 | 0x2, 0x02 | 0x20, 14
# Huge-page alignment of the region, so that its first array starts on a 2 MiB page.
_HUGE = 2 << 20


def _line(fd: int) -> bytes:
    parts = []
    while True:
        byte = os.read(fd, 1)
        if byte in (b"", b"\n"):
            return b"".join(parts)
        parts.append(byte)


def _load() -> Any:
    """The kernel's entry point with its argument types, or None (said on stderr). The job is
    read here, not at the start: a box started ahead of its grade gets its files at binding."""
    with open(JOB) as handle:
        job = json.load(handle)
    try:
        kernel = getattr(ctypes.CDLL(os.path.abspath(LIBRARY)), job["symbol"])
    except (OSError, AttributeError) as error:
        sys.stderr.write(f"hb box: the library does not define {job['symbol']} ({error})\n")
        return None
    kernel.argtypes = (
        [ctypes.c_void_p] * int(job["pointers"])
        + [_TYPES[kind] for kind in job["trailing_kinds"]]
        + [ctypes.c_void_p, ctypes.c_int64]
    )
    kernel.restype = None
    return kernel


def _native_loop() -> Any:
    """The loop in C the judge wrote beside the submission, loaded; None where it is not there."""
    try:
        loop = ctypes.CDLL(os.path.abspath(NATIVE_LOOP))
    except OSError:
        return None
    loop.hb_prepare.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p,
                                ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_double)]  # fmt: skip
    loop.hb_prepare.restype = ctypes.c_int
    loop.hb_serve.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
    loop.hb_serve.restype = ctypes.c_int
    return loop


_KINDS = {ctypes.c_void_p: "p", ctypes.c_int64: "i", ctypes.c_double: "d", ctypes.c_float: "f"}


def _prepare(loop: Any, kernel: Any, arguments: list[object]) -> None:
    """Tell the loop in C the next call. Where it cannot make it (a kernel wrapped in Python, a
    kind it does not know), it prepares none and hands every "g" back to be called from here."""
    types = getattr(kernel, "argtypes", None) if isinstance(kernel, ctypes._CFuncPtr) else None
    if types is None or len(types) != len(arguments):
        loop.hb_prepare(None, 0, b"", None, None)
        return
    kinds = "".join(_KINDS.get(kind, "?") for kind in types)
    count = len(arguments)
    integers = (ctypes.c_int64 * max(count, 1))()
    reals = (ctypes.c_double * max(count, 1))()
    for index, (kind, value) in enumerate(zip(kinds, arguments, strict=True)):
        if kind in "pi":
            integers[index] = int(value)  # type: ignore[call-overload]
        elif kind in "df":
            reals[index] = float(value)  # type: ignore[arg-type]
    loop.hb_prepare(ctypes.cast(kernel, ctypes.c_void_p), count, kinds.encode(), integers, reals)


def main(argv: list[str]) -> int:
    go, done = (int(a) for a in argv[1:3])
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long]  # fmt: skip
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    kernel: Any = None
    start, base, mapped = 0, 0, 0
    arguments: list[object] = []
    # The loop in C, once the supervisor asks for it ("c"): it answers "p" and a prepared "g"
    # itself and hands any other command back here.
    loop: Any = None
    handed: bytes | None = None
    while True:
        if handed is not None:
            command, handed = handed, None
        else:
            command = os.read(go, 1)
        if command == b"g":
            kernel(*arguments)
            os.write(done, b"d")
        elif command == b"p":
            os.write(done, b"d")
        elif command == b"c":
            loop = _native_loop()
            os.write(done, b"d")
        elif command == b"a":
            message = json.loads(_line(go))
            if kernel is None:
                # Loaded only after the supervisor's first pings, so that nothing the library
                # does can slow the round trip it calibrates (and so lower the credited time).
                kernel = _load()
                if kernel is None:
                    return 3
            size = int(message["size"])
            if size != mapped:
                if mapped:
                    libc.munmap(start, mapped + _HUGE)
                start = libc.mmap(
                    None, size + _HUGE, _PROT_READ_WRITE, _MAP_PRIVATE_ANONYMOUS, -1, 0
                )
                if start in (None, ctypes.c_void_p(-1).value):
                    sys.stderr.write("hb box: the arguments' memory could not be mapped\n")
                    return 4
                base = (start + _HUGE - 1) // _HUGE * _HUGE
                libc.madvise(base, size, _MADV_HUGEPAGE)
                mapped = size
            arguments = [
                *(base + offset for offset in message["offsets"]),
                *message["trailing"],
                base + int(message["workspace_offset"]),
                int(message["workspace_bytes"]),
            ]
            if loop is not None:
                _prepare(loop, kernel, arguments)
            os.write(done, f"r{os.getpid()} {base}\n".encode())
        else:
            return 0
        if loop is not None:
            answer = loop.hb_serve(go, done, -1)
            handed = bytes([answer]) if answer >= 0 else b""


if __name__ == "__main__":
    sys.exit(main(sys.argv))
