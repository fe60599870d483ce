"""The judge's timing against the same call made directly: scaled_add's own solution.c at preset M,
graded through /score (box, supervisor, frozen reads, calibrated round trip subtracted), and the
same library called in a loop from this process with ctypes, each call's inputs copied into the
same buffers just before it (by memmove; and, in a third row, by the kernel's copy into this
process's own buffers, as the supervisor stages them into the box's). They alternate in rounds (a
grade, then as many direct calls, then the other way round), so that all see the same moments of a
machine whose memory system other tenants share; the figure is the fastest of all reps of each,
printed with the difference and its target (a few microseconds on an idle machine), beside each
side's median. The machine's load average is printed beside, since a busy machine widens both.

A second table does the same for more of the catalog's own OpenMP solutions (a compute-bound one, a
stencil, a reduction, a matrix-vector product): each graded through /score, and called directly on
exactly the arrays, scalars and workspace the judge handed its runner (caught on their way to
hb.execution.runner.run_kernel), by a process of its own under the OpenMP settings the judge gives
its box, in memory laid out as the runner lays it out, each call's inputs copied in and its
workspace zeroed just before it (DIRECT_CALLER).

A third table times call by call in one box of the judge's own setup, whose runner answers the
supervisor's protocol with the judge's own loop in C and also reads its own clock around the kernel
call alone. The supervisor's own pieces drive it as they drive a grade: inputs written frozen; then,
timed in C, the thaw, "g" ... "d"; then the freeze; from the runner's CPU; the fastest calibrating
ping, each after a staging's worth of bytes, subtracted. What the judge credits less the box's own
clock, for the same call, is what the judge's way of timing adds and nothing else: it must never be
below zero, and at the fastest within the target."""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from fastapi.testclient import TestClient

from hb import kernels
from hb.config import Config, load_config
from hb.execution import box_pool, boxcall, build, exchange, runner, sandbox, supervisor
from hb.service import create_app

# Target: the judge's credited time is within this of the direct call's.
TARGET_DIFFERENCE_US = 10.0
# More of the catalog's OpenMP solutions, timed the same way (full form; the short form the first).
CATALOG_KERNELS = ("gemm", "jacobi_2d", "softmax", "atax")


def bench_config(data_dir: Path, reps: int) -> Config:
    config = load_config(None, environ={"HB_DATA_DIR": str(data_dir)})
    raw = config.model_dump()
    raw["grading"].update(reps=reps, warmup=1, datatype="fp64")
    merged = Config.model_validate(raw)
    merged.environment = {}
    return merged


def direct_ns(library: Path, n: int, reps: int, as_the_supervisor: bool = False) -> list[int]:
    """The times of `reps` direct calls of scaled_add_fp64 on arrays of n doubles (after one
    untimed warm-up call, as the judge's grade has one). Each call's inputs are copied into the
    same buffers just before it, by memmove, or `as_the_supervisor` stages them (the kernel's
    copy, process_vm_writev, here into this process's own buffers)."""
    kernel = ctypes.CDLL(str(library)).scaled_add_fp64
    kernel.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_double,
                       ctypes.c_void_p, ctypes.c_int64]  # fmt: skip
    kernel.restype = None
    rng = np.random.default_rng(1)
    times = []
    # As the judge does it: the buffers are made once, and each call's inputs are copied into them
    # just before the call (the supervisor stages every rep's own inputs into the runner's memory).
    x, y = np.empty(n), np.empty(n)
    fresh = [(rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)) for _ in range(2)]
    workspace = np.zeros(1, dtype=np.uint8)
    staged = [supervisor._BoxMemory(os.getpid(), a.ctypes.data, a.nbytes) for a in (x, y)]
    for rep in range(reps + 1):
        if as_the_supervisor:
            for memory, array in zip(staged, fresh[rep % 2], strict=True):
                memory.write(0, array)
        else:
            np.copyto(x, fresh[rep % 2][0])
            np.copyto(y, fresh[rep % 2][1])
        start = time.perf_counter_ns()
        kernel(x.ctypes.data, y.ctypes.data, n, 1.5, workspace.ctypes.data, 0)
        if rep:
            times.append(time.perf_counter_ns() - start)
    return times


@contextlib.contextmanager
def handed_to_the_runner() -> Iterator[list[dict[str, Any]]]:
    """The arguments of every hb.execution.runner.run_kernel call made meanwhile: the library,
    symbol, pointers, reps (arrays and scalars) and workspace the judge hands its runner."""
    seen: list[dict[str, Any]] = []
    original = runner.run_kernel

    def caught(**arguments: Any) -> runner.RunResult:
        seen.append(arguments)
        return original(**arguments)

    runner.run_kernel = caught  # type: ignore[assignment]
    try:
        yield seen
    finally:
        runner.run_kernel = original  # type: ignore[assignment]


# A direct caller in a process of its own, under the OpenMP settings the judge gives its box (read by
# the OpenMP runtime as the library loads it): what the judge handed its runner, called in memory
# laid out as the runner's (one anonymous region, huge pages asked for from a 2 MiB boundary, each
# array at the supervisor's aligned offset), each call's inputs copied in and its workspace zeroed
# just before it. Its argument: a JSON file naming the library, the symbol, the pointers, the
# scalars after them, the workspace's size, each rep's arrays (an .npz each) and the calls to time.
DIRECT_CALLER = """
import ctypes, json, mmap, sys, time
import numpy as np
from hb.execution.supervisor import _aligned
spec = json.load(open(sys.argv[1]))
kinds = {"int64": ctypes.c_int64, "double": ctypes.c_double, "float": ctypes.c_float}
pointers, trailing, workspace_bytes = spec["pointers"], spec["trailing"], spec["workspace_bytes"]
kernel = getattr(ctypes.CDLL(spec["library"]), spec["symbol"])
kernel.argtypes = ([ctypes.c_void_p] * len(pointers) + [kinds[t["kind"]] for t in trailing]
                   + [ctypes.c_void_p, ctypes.c_int64])
kernel.restype = None
reps = [dict(np.load(path)) for path in spec["reps"]]
offsets, cursor = [], 0
for name in pointers:
    offsets.append(cursor)
    cursor = _aligned(cursor + max(reps[0][name].nbytes, 1))
size = cursor + max(workspace_bytes, 1)
huge = 2 << 20
region = mmap.mmap(-1, size + huge, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
raw = np.frombuffer(region, dtype=np.uint8)
skip = -raw.ctypes.data % huge
region.madvise(mmap.MADV_HUGEPAGE, skip, size)
base = raw.ctypes.data + skip
buffers = {
    name: raw[skip + offset:skip + offset + reps[0][name].nbytes]
    .view(reps[0][name].dtype).reshape(reps[0][name].shape)
    for name, offset in zip(pointers, offsets)
}
workspace = raw[skip + cursor:skip + size]
arguments = [base + offset for offset in offsets] + [t["value"] for t in trailing]
arguments += [base + cursor, workspace_bytes]
times = []
for call in range(spec["calls"] + 1):  # the first, untimed, is the warm-up a grade has too
    for name in pointers:
        np.copyto(buffers[name], reps[call % len(reps)][name])
    workspace[:] = 0
    start = time.perf_counter_ns()
    kernel(*arguments)
    if call:
        times.append(time.perf_counter_ns() - start)
print(json.dumps(times))
"""


def direct_spec(handed: dict[str, Any], calls: int, scratch: Path) -> Path:
    """DIRECT_CALLER's argument for `calls` calls of what the judge handed its runner, each on the
    next rep's inputs in turn, written once per kernel into `scratch` (every grade of a kernel
    hands over the same library and inputs)."""
    reps: list[runner.RepInput] = list(handed["reps"])
    paths = []
    for index, rep in enumerate(reps):
        paths.append(str(scratch / f"rep_{index}.npz"))
        np.savez(paths[-1], **rep.arrays)  # type: ignore[arg-type]
    spec = scratch / "direct.json"
    spec.write_text(json.dumps({
        "library": str(handed["library"]), "symbol": handed["symbol"],
        "pointers": list(handed["pointers"]), "trailing": reps[0].trailing,
        "workspace_bytes": int(handed["workspace_bytes"]), "reps": paths, "calls": calls,
    }))  # fmt: skip
    return spec


def direct_calls(spec: Path) -> list[int]:
    """The times of the direct calls `spec` asks for, from DIRECT_CALLER under the OpenMP
    settings the judge gives its box."""
    setup = runner.box_setup(spec.parent, sandbox.Limits())
    openmp = {key: value for key, value in setup.env if key.startswith("OMP_")}
    done = subprocess.run(
        [sys.executable, "-c", DIRECT_CALLER, str(spec)], env={**os.environ, **openmp},
        capture_output=True, text=True, check=True, timeout=600,
    )  # fmt: skip
    return [int(ns) for ns in json.loads(done.stdout)]


def _graded(client: TestClient, name: str, source: str, preset: str,
            library: Path) -> tuple[list[int], dict[str, Any]]:  # fmt: skip
    """One /score grade's credited reps, and what the judge handed its runner for the
    submission's run (not the baseline's)."""
    with handed_to_the_runner() as seen:
        answer = client.post(
            "/score", json={"kernel": name, "source": source, "preset": preset}
        ).json()
    assert answer.get("correct"), answer
    handed = next(h for h in seen if Path(h["library"]) == library)
    return [int(ns) for ns in answer["timing"]["reps_ns"]], handed


def catalog_rows(client: TestClient, config: Config, names: tuple[str, ...], preset: str,
                 rounds: int, reps: int) -> list[tuple[str, list[int], list[int]]]:  # fmt: skip
    """Per kernel of `names`: the judge's credited reps through /score and as many direct calls
    of what it handed its runner, in rounds that alternate which side goes first."""
    rows = []
    for name in names:
        source = kernels.solution_source(name)
        built = build.build(source, "c", [], config.build_cache_dir, sandbox.Limits())
        assert built.library is not None, built.reason
        # A first grade hands over the arrays (and times the baseline once); its reps are unused.
        _, handed = _graded(client, name, source, preset, built.library)
        scratch = config.data_dir / f"direct-{name}"
        scratch.mkdir()
        spec = direct_spec(handed, reps, scratch)
        judged: list[int] = []
        direct: list[int] = []
        for round_ in range(rounds):
            for side in ("direct", "judge") if round_ % 2 == 0 else ("judge", "direct"):
                if side == "judge":
                    judged += _graded(client, name, source, preset, built.library)[0]
                else:
                    box_pool.settle(60)  # the grade's box discarded, the next one started
                    direct += direct_calls(spec)
        rows.append((name, judged, direct))
    return rows


# A runner that answers the supervisor's protocol as the judge's does (its loop in C where the
# judge has one, hb.execution.boxcall, on the same kernel prepared the same way) and also reads its
# own clock around each kernel call alone, written on a side pipe after each answer. Its two
# arrays live in memory made as the runner makes it: one anonymous mapping, huge pages asked for
# from a 2 MiB boundary, y at the supervisor's offset from x.
SELF_TIMED_RUNNER = """
import ctypes, mmap, os, sys, time
from hb.execution import boxrunner
go, done, side, n, second = (int(a) for a in sys.argv[1:6])
kernel = ctypes.CDLL(os.path.abspath("libsubmission.so")).scaled_add_fp64
kernel.argtypes = [ctypes.c_void_p] * 2 + [ctypes.c_int64, ctypes.c_double, ctypes.c_void_p,
                                           ctypes.c_int64]
huge = 2 << 20
region = mmap.mmap(-1, second + 8 * n + 2 * huge, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
start = ctypes.addressof(ctypes.c_char.from_buffer(region))
base = (start + huge - 1) // huge * huge
region.madvise(mmap.MADV_HUGEPAGE, base - start, second + 8 * n)
workspace = ctypes.create_string_buffer(1)
arguments = [base, base + second, n, 1.5, ctypes.addressof(workspace), 0]
os.write(side, b"%d %d\\n" % (os.getpid(), base))
loop = boxrunner._native_loop()
if loop is not None:
    boxrunner._prepare(loop, kernel, arguments)
    loop.hb_serve(go, done, side)
else:
    while True:
        command = os.read(go, 1)
        if command == b"p":
            os.write(done, b"d")
        elif command == b"g":
            began = time.perf_counter_ns()
            kernel(*arguments)
            own = time.perf_counter_ns() - began
            os.write(done, b"d")
            os.write(side, own.to_bytes(8, "little"))
        else:
            break
"""


def _line(fd: int) -> bytes:
    out = b""
    while not out.endswith(b"\n"):
        piece = os.read(fd, 1)
        if not piece:
            raise RuntimeError("the box's runner ended")
        out += piece
    return out


def credited_and_own(
    library: Path, root: Path, n: int, calls: int
) -> tuple[list[int], list[int], int] | None:
    """(the judge's credited time, the box's own time) of each of `calls` calls, and the round
    trip subtracted; None where the box has no freezer. The supervisor's own pieces do the
    staging (into the box's memory, frozen), the exchange (timed in C, from the runner's CPU)
    and the calibration (pings, each after a staging's worth of bytes)."""
    limits = sandbox.Limits()
    setup = runner.box_setup(root, limits)
    second = supervisor._aligned(8 * n)
    with sandbox.Box(root, limits) as box:
        control = box.freeze_control()
        if control is None:
            return None
        freezer = sandbox.Freezer(control)
        box.write("libsubmission.so", library.read_bytes(), mode=0o555)
        loop = boxcall.library()
        if loop is not None:
            box.write(boxcall.FILE, loop, mode=0o555)
        box.write("runner.py", SELF_TIMED_RUNNER)
        go_read, go = os.pipe()
        done, done_write = os.pipe()
        side, side_write = os.pipe()
        passed = (go_read, done_write, side_write)
        process, _ = box.popen(
            [sys.executable, "-I", "runner.py", *(str(fd) for fd in passed), str(n), str(second)],
            dict(setup.env), pass_fds=passed,
        )  # fmt: skip
        for fd in passed:
            os.close(fd)
        beside = supervisor._Beside()
        try:
            box_pid, base = (int(v) for v in _line(side).split())
            freezer.set(True)
            host = supervisor._host_pid(box_pid, control, process.pid)
            memory = supervisor._BoxMemory(host, base, second + 8 * n)
            beside.follow(host)
            beside.near()
            descriptors = freezer.descriptors()
            timed = exchange.Exchange(descriptors, [go], done)
            stirred = supervisor._Stir(2 * 8 * n)

            def exchanged(command: bytes) -> int:
                if descriptors is None:
                    freezer.set(False)
                elapsed, got = timed(command, 10_000_000_000)
                if elapsed < 0:
                    raise RuntimeError(f"the box broke the exchange ({elapsed}, {got!r})")
                if descriptors is None:
                    # cgroup v2's exchange leaves the box frozen itself.
                    freezer.set(True)
                return elapsed

            def ping() -> int:
                stirred.stage()
                return exchanged(b"p")

            trips = [ping() for _ in range(supervisor.CALIBRATION_PINGS)]
            rng = np.random.default_rng(1)
            fresh = [(rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)) for _ in range(4)]
            seen, own = [], []
            for call in range(calls + 1):
                x, y = fresh[call % len(fresh)]
                memory.write(0, x)
                memory.write(second, y)
                seen.append(exchanged(b"g"))
                # The runner writes its own time after its answer: read with the box thawed.
                freezer.set(False)
                own.append(int.from_bytes(os.read(side, 8), "little"))
                freezer.set(True)
                trips += [ping() for _ in range(supervisor.PINGS_PER_REP)]
        finally:
            beside.away()
            freezer.set(False)
            freezer.close()
            os.write(go, b"q")
            for fd in (go, done, side):
                os.close(fd)
            process.wait(timeout=30)
    trip = min(trips)
    # The first call is the warm-up, as a grade's is.
    return [max(t - trip, 0) for t in seen[1:]], own[1:], trip


def main(full: bool) -> int:
    reps, rounds = (50, 4) if full else (3, 1)
    preset = "M" if full else "S"
    manifest = kernels.load_manifest("scaled_add")
    n = manifest.preset_sizes(preset)["N"]
    source = kernels.solution_source("scaled_add")
    judged: list[int] = []
    direct: list[int] = []
    staged: list[int] = []
    trips: list[int] = []
    with tempfile.TemporaryDirectory(prefix="hb-bench-") as scratch:
        config = bench_config(Path(scratch), reps)
        built = build.build(source, "c", [], config.build_cache_dir, sandbox.Limits())
        assert built.library is not None, built.reason
        with TestClient(create_app(config)) as client:
            for round_ in range(rounds):
                sides = ("judge", "direct", "staged")
                for side in sides if round_ % 2 == 0 else sides[::-1]:
                    if side != "judge":
                        got = direct_ns(built.library, n, reps, as_the_supervisor=side == "staged")
                        (direct if side == "direct" else staged).extend(got)
                        continue
                    answer = client.post(
                        "/score", json={"kernel": "scaled_add", "source": source, "preset": preset}
                    ).json()
                    assert answer.get("correct"), answer
                    judged += [int(ns) for ns in answer["timing"]["reps_ns"]]
                    trips.append(int(answer["timing"]["round_trip_ns"]))
    # The catalog's kernels run for milliseconds at M: fewer reps a grade, in a judge of their own.
    catalog_reps = 20 if full else reps
    with tempfile.TemporaryDirectory(prefix="hb-bench-") as scratch:
        config = bench_config(Path(scratch), catalog_reps)
        with TestClient(create_app(config)) as client:
            names = CATALOG_KERNELS if full else CATALOG_KERNELS[:1]
            catalog = catalog_rows(client, config, names, preset, rounds, catalog_reps)
    difference_us = (min(judged) - min(direct)) / 1e3
    load = " ".join(f"{v:.2f}" for v in os.getloadavg())
    print(
        f"scaled_add solution.c at preset {preset} (N={n}), {rounds} rounds of {reps} reps each "
        f"side, alternated; load average {load}"
    )
    print(f"{'figure':<34}{'fastest':>10}{'median':>10}{'target':>10}  status")
    print(f"{'judge credited kernel_ns (us)':<34}{min(judged) / 1e3:>10.1f}"
          f"{statistics.median(judged) / 1e3:>10.1f}")  # fmt: skip
    print(f"{'round trip subtracted (us)':<34}{min(trips) / 1e3:>10.1f}"
          f"{statistics.median(trips) / 1e3:>10.1f}")  # fmt: skip
    print(f"{'direct ctypes call (us)':<34}{min(direct) / 1e3:>10.1f}"
          f"{statistics.median(direct) / 1e3:>10.1f}")  # fmt: skip
    within = abs(difference_us) <= TARGET_DIFFERENCE_US
    print(
        f"{'judge - direct (us)':<34}{difference_us:>10.1f}"
        f"{(statistics.median(judged) - statistics.median(direct)) / 1e3:>10.1f}"
        f"{TARGET_DIFFERENCE_US:>10.1f}  {'ok' if within else 'over target'}"
    )
    # The same loop with its inputs staged as the supervisor stages them: what the way of copying
    # does to the next call, apart from what the judge's timing adds.
    print(f"{'direct, staged as the judge (us)':<34}{min(staged) / 1e3:>10.1f}"
          f"{statistics.median(staged) / 1e3:>10.1f}")  # fmt: skip
    print(f"{'judge - direct staged (us)':<34}{(min(judged) - min(staged)) / 1e3:>10.1f}"
          f"{(statistics.median(judged) - statistics.median(staged)) / 1e3:>10.1f}")  # fmt: skip
    print(f"more of the catalog's OpenMP solutions at preset {preset}, {rounds} rounds of "
          f"{catalog_reps} "
          f"reps each side: the judge against the same call made directly on what it handed its "
          f"runner")  # fmt: skip
    print(f"{'figure':<34}{'fastest':>10}{'median':>10}{'target':>10}  status")
    catalog_within = True
    for name, judged_here, direct_here in catalog:
        fastest = (min(judged_here) - min(direct_here)) / 1e3
        median = (statistics.median(judged_here) - statistics.median(direct_here)) / 1e3
        catalog_within &= abs(fastest) <= TARGET_DIFFERENCE_US
        print(f"{name + ' judge credited (us)':<34}{min(judged_here) / 1e3:>10.1f}"
              f"{statistics.median(judged_here) / 1e3:>10.1f}")  # fmt: skip
        print(f"{name + ' direct call (us)':<34}{min(direct_here) / 1e3:>10.1f}"
              f"{statistics.median(direct_here) / 1e3:>10.1f}")  # fmt: skip
        print(
            f"{name + ' judge - direct (us)':<34}{fastest:>10.1f}{median:>10.1f}"
            f"{TARGET_DIFFERENCE_US:>10.1f}  "
            f"{'ok' if abs(fastest) <= TARGET_DIFFERENCE_US else 'over target'}"
            f" ({100 * fastest * 1e3 / min(direct_here):+.1f}% of the direct call)"
        )
    within = within and catalog_within
    with tempfile.TemporaryDirectory(prefix="hb-bench-") as scratch:
        config = bench_config(Path(scratch), reps)
        built = build.build(source, "c", [], config.build_cache_dir, sandbox.Limits())
        assert built.library is not None, built.reason
        measured = credited_and_own(built.library, config.data_dir / "boxes", n, 4 * reps)
    if measured is None:
        print("call by call in a box: skipped, the box has no cgroup freezer here")
        return 0 if within or not full else 1
    credited, own, trip = measured
    added = [c - o for c, o in zip(credited, own, strict=True)]
    print(f"call by call in one box of the judge's setup, {len(credited)} calls: what the judge "
          f"credits against the box's own clock around the same call")  # fmt: skip
    print(f"{'figure':<34}{'fastest':>10}{'median':>10}{'target':>10}  status")
    print(f"{'judge credited (us)':<34}{min(credited) / 1e3:>10.1f}"
          f"{statistics.median(credited) / 1e3:>10.1f}")  # fmt: skip
    print(f"{'fastest ping subtracted (us)':<34}{trip / 1e3:>10.1f}")
    print(f"{'box clock around the call (us)':<34}{min(own) / 1e3:>10.1f}"
          f"{statistics.median(own) / 1e3:>10.1f}")  # fmt: skip
    added_within = 0 <= min(added) / 1e3 <= TARGET_DIFFERENCE_US
    print(
        f"{'credited - own, per call (us)':<34}{min(added) / 1e3:>10.1f}"
        f"{statistics.median(added) / 1e3:>10.1f}"
        f"{TARGET_DIFFERENCE_US:>10.1f}  {'ok' if added_within else 'over target'}"
    )
    print(f"calls credited less than the box's own clock: {sum(a < 0 for a in added)} of "
          f"{len(added)} (target 0)")  # fmt: skip
    return 0 if (within and added_within) or not full else 1
