"""The only code of the judge that runs inside a timed run's box: load the submission, map the
arena the supervisor shares with the box, and call the kernel each time the supervisor says "go".

It measures nothing and writes no result: the supervisor outside the box times each call from its
own side of the pipes and reads the outputs from the arena while the box is frozen. Protocol on
two pipes (fds given on the command line): "a<json>\\n" sets the arguments of the next call (arena
size, pointer offsets, trailing values) and is answered "r"; "g" calls the kernel and is answered
"d" when it returns; "p" is answered "d" at once (the supervisor's calibration); "q" or end of file
ends the runner. Only the standard library is imported, so the box starts in milliseconds.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys

LIBRARY = "./libsubmission.so"
JOB = "box.json"
_TYPES = {"int64": ctypes.c_int64, "double": ctypes.c_double, "float": ctypes.c_float}
_PROT_READ_WRITE, _MAP_SHARED = 0x1 | 0x2, 0x01


def _line(fd: int) -> bytes:
    parts = []
    while True:
        byte = os.read(fd, 1)
        if byte in (b"", b"\n"):
            return b"".join(parts)
        parts.append(byte)


def main(argv: list[str]) -> int:
    arena_fd, go, done = (int(a) for a in argv[1:4])
    with open(JOB) as handle:
        job = json.load(handle)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long]  # fmt: skip
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    try:
        kernel = getattr(ctypes.CDLL(os.path.abspath(LIBRARY)), job["symbol"])
    except (OSError, AttributeError) as error:
        sys.stderr.write(f"hb box: the library does not define {job['symbol']} ({error})\n")
        return 3
    kernel.argtypes = (
        [ctypes.c_void_p] * int(job["pointers"])
        + [_TYPES[kind] for kind in job["trailing_kinds"]]
        + [ctypes.c_void_p, ctypes.c_int64]
    )
    kernel.restype = None
    base, mapped = 0, 0
    arguments: list[object] = []
    while True:
        command = os.read(go, 1)
        if command == b"g":
            kernel(*arguments)
            os.write(done, b"d")
        elif command == b"p":
            os.write(done, b"d")
        elif command == b"a":
            message = json.loads(_line(go))
            size = int(message["size"])
            if size != mapped:
                if mapped:
                    libc.munmap(base, mapped)
                base = libc.mmap(None, size, _PROT_READ_WRITE, _MAP_SHARED, arena_fd, 0)
                if base in (None, ctypes.c_void_p(-1).value):
                    sys.stderr.write("hb box: the arena could not be mapped\n")
                    return 4
                mapped = size
            arguments = [
                *(base + offset for offset in message["offsets"]),
                *message["trailing"],
                base + int(message["workspace_offset"]),
                int(message["workspace_bytes"]),
            ]
            os.write(done, b"r")
        else:
            return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
