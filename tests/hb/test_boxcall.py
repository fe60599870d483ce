"""The box runner's loop in C (hb.execution.boxcall, driven by hb.execution.boxrunner): after "c" it
answers pings and calls the kernel itself, through libffi, with every kind of argument the
runner passes (pointers, int64, double, float), hands the layout and the end back to the runner,
and gives the same outputs as the runner's own loop; where the loop is not beside the runner,
"c" is answered and the runner keeps its own loop."""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from hb.execution import boxcall, boxrunner, supervisor

pytestmark = pytest.mark.skipif(
    boxcall.library() is None, reason="no C compiler or no libffi header to build the loop with"
)

KERNEL = r"""
#include <stdint.h>
void scaled_add_fp64(const double *x, double *y, int64_t n, double alpha, void *w, int64_t wb) {
    (void)w; (void)wb;
    for (int64_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}
void scaled_add_fp32(const float *x, float *y, int64_t n, float alpha, void *w, int64_t wb) {
    (void)w; (void)wb;
    for (int64_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}
"""


class Runner:
    """hb.execution.boxrunner in a directory of its own, outside any box, on two pipes."""

    def __init__(self, directory: Path, symbol: str, trailing: list[str]) -> None:
        (directory / "box.json").write_text(
            json.dumps({"symbol": symbol, "pointers": 2, "trailing_kinds": trailing})
        )
        go_read, self.go = os.pipe()
        self.done, done_write = os.pipe()
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-m", "hb.execution.boxrunner", str(go_read), str(done_write)],
            cwd=directory, pass_fds=(go_read, done_write),
        )  # fmt: skip
        os.close(go_read)
        os.close(done_write)

    def ask(self, message: bytes) -> bytes:
        os.write(self.go, message)
        return os.read(self.done, 1)

    def layout(self, n: int, item: int, alpha: float) -> tuple[int, int, int]:
        second = supervisor._aligned(n * item)
        end = second + supervisor._aligned(n * item)
        message = {"size": end + supervisor.ALIGN, "offsets": [0, second], "trailing": [n, alpha],
                   "workspace_offset": end, "workspace_bytes": 0}  # fmt: skip
        assert self.ask(b"a" + json.dumps(message).encode() + b"\n") == b"r"
        line = b""
        while not line.endswith(b"\n"):
            line += os.read(self.done, 1)
        pid, base = (int(field) for field in line.split())
        return pid, base, second

    def close(self) -> int:
        os.write(self.go, b"q")
        os.close(self.go)
        os.close(self.done)
        return self.process.wait(timeout=30)


@pytest.fixture
def library_dir(tmp_path: Path) -> Path:
    source = tmp_path / "kernel.c"
    source.write_text(KERNEL)
    subprocess.run(["gcc", "-O2", "-shared", "-fPIC", str(source), "-o",
                    str(tmp_path / "libsubmission.so")], check=True)  # fmt: skip
    return tmp_path


@pytest.fixture
def runners() -> Iterator[list[Runner]]:
    made: list[Runner] = []
    yield made
    for runner in made:
        if runner.process.poll() is None:
            runner.process.kill()
            runner.process.wait()


def _maps(pid: int) -> str:
    return Path(f"/proc/{pid}/maps").read_text()


@pytest.mark.parametrize(("dtype", "symbol"), [(np.float64, "scaled_add_fp64"),
                                                (np.float32, "scaled_add_fp32")])  # fmt: skip
@pytest.mark.parametrize("in_c", [True, False])
def test_the_loop_in_c_calls_the_kernel_as_the_runner_does(
    library_dir: Path, runners: list[Runner], dtype: type, symbol: str, in_c: bool
) -> None:
    loop = boxcall.library()
    assert loop is not None
    if in_c:
        (library_dir / boxcall.FILE).write_bytes(loop)
    kind = "double" if dtype is np.float64 else "float"
    runner = Runner(library_dir, symbol, ["int64", kind])
    runners.append(runner)
    assert runner.ask(b"c") == b"d"
    assert runner.ask(b"p") == b"d"
    n, alpha = 1000, 1.5
    pid, base, second = runner.layout(n, np.dtype(dtype).itemsize, alpha)
    memory = supervisor._BoxMemory(pid, base, second + n * np.dtype(dtype).itemsize)
    rng = np.random.default_rng(3)
    for _ in range(3):  # repeated calls on the same prepared layout
        x, y = rng.uniform(-1, 1, n).astype(dtype), rng.uniform(-1, 1, n).astype(dtype)
        memory.write(0, x)
        memory.write(second, y)
        assert runner.ask(b"g") == b"d"
        got = memory.read(second, y)
        np.testing.assert_array_equal(got, y + dtype(alpha) * x)
        assert runner.ask(b"p") == b"d"
    # The loop in C was loaded only where the judge put it.
    assert (boxcall.FILE in _maps(pid)) is in_c
    # A new layout goes back to the runner and the loop serves the call it prepares.
    pid, base, second = runner.layout(n // 2, np.dtype(dtype).itemsize, 2.0)
    memory = supervisor._BoxMemory(pid, base, second + n * np.dtype(dtype).itemsize)
    x, y = np.ones(n // 2, dtype=dtype), np.zeros(n // 2, dtype=dtype)
    memory.write(0, x)
    memory.write(second, y)
    assert runner.ask(b"g") == b"d"
    np.testing.assert_array_equal(memory.read(second, y), np.full(n // 2, 2.0, dtype=dtype))
    assert runner.close() == 0


def test_a_call_the_loop_cannot_make_goes_back_to_the_runner(
    library_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loop's contract, in this process: a prepared "g" is called and answered, a kernel
    whose argument kind it does not know is prepared by none and its "g" handed back, and so is
    any command but "p" and "g"."""
    loop_bytes = boxcall.library()
    assert loop_bytes is not None
    (tmp_path / boxcall.FILE).write_bytes(loop_bytes)
    monkeypatch.chdir(tmp_path)
    loop = boxrunner._native_loop()
    assert loop is not None
    library = ctypes.CDLL(str(library_dir / "libsubmission.so"))
    kernel = library.scaled_add_fp64
    kernel.argtypes = [ctypes.c_void_p] * 2 + [ctypes.c_int64, ctypes.c_double, ctypes.c_void_p,
                                               ctypes.c_int64]  # fmt: skip
    x, y = np.arange(4.0), np.ones(4)
    go_read, go_write = os.pipe()
    done_read, done_write = os.pipe()
    try:
        boxrunner._prepare(loop, kernel, [x.ctypes.data, y.ctypes.data, 4, 0.5, 0, 0])
        os.write(go_write, b"pgq")
        assert loop.hb_serve(go_read, done_write, -1) == ord("q")
        assert os.read(done_read, 2) == b"dd"
        np.testing.assert_array_equal(y, 1 + 0.5 * np.arange(4.0))
        odd = library.scaled_add_fp64
        odd.argtypes = [ctypes.c_void_p] * 2 + [ctypes.c_int32, ctypes.c_double,
                                                ctypes.c_void_p, ctypes.c_int64]  # fmt: skip
        boxrunner._prepare(loop, odd, [x.ctypes.data, y.ctypes.data, 4, 0.5, 0, 0])
        os.write(go_write, b"g")
        assert loop.hb_serve(go_read, done_write, -1) == ord("g")
        np.testing.assert_array_equal(y, 1 + 0.5 * np.arange(4.0))  # not called by the loop
        os.close(go_write)
        go_write = -1
        assert loop.hb_serve(go_read, done_write, -1) == -1  # the end of the input
    finally:
        for fd in (go_read, go_write, done_read, done_write):
            if fd >= 0:
                os.close(fd)
