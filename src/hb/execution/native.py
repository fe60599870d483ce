"""The judge's own small C helpers (hb.execution.exchange's timed exchange, hb.execution.boxcall's
runner loop, hb.execution.sandbox's init of a box), compiled by the trusted side once per process
into a private directory that is removed as soon as the result is read: nothing a box can reach
and nothing left on disk for anyone to replace. Where there is no C compiler, or the helper does
not build (a header it needs is missing), `compiled` answers None and its user keeps the path it
had without it.
"""

from __future__ import annotations

import ctypes
import functools
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

# The clock both helpers read, in nanoseconds: CLOCK_MONOTONIC, as Python's time.perf_counter_ns.
CLOCK = r"""
#include <stdint.h>
#include <time.h>

static int64_t hb_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}
"""


@functools.cache
def compiled(
    source: str, libraries: tuple[str, ...] = (), executable: bool = False
) -> bytes | None:
    """The shared library (or, with `executable`, the program) built from `source`, linked with
    `libraries`; None where it does not build."""
    compiler = shutil.which("gcc") or shutil.which("cc")
    if compiler is None:
        return None
    with tempfile.TemporaryDirectory(prefix="hb-native-") as scratch:
        source_path = Path(scratch) / "helper.c"
        output = Path(scratch) / ("helper" if executable else "helper.so")
        source_path.write_text(source)
        kind = [] if executable else ["-fPIC", "-shared"]
        command = [compiler, "-O2", *kind, str(source_path), "-o", str(output), *libraries]
        try:
            built = subprocess.run(command, capture_output=True, check=False, timeout=120)
        except (OSError, subprocess.TimeoutExpired):
            return None
        if built.returncode != 0:
            return None
        return output.read_bytes()


@functools.cache
def loaded(source: str, libraries: tuple[str, ...] = ()) -> ctypes.CDLL | None:
    """The library built from `source`, loaded into this process (once), or None."""
    data = compiled(source, libraries)
    if data is None:
        return None
    with tempfile.TemporaryDirectory(prefix="hb-native-") as scratch:
        path = Path(scratch) / "helper.so"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o500)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        return ctypes.CDLL(str(path))
