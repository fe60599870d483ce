"""The trusted side of a timed run (`python -m hb.supervisor JOBDIR`, started by the judge outside
any box): it converts each rep's inputs, stages them in an arena it shares with the box, times the
kernel call from outside the box, freezes the box before it reads the outputs, converts them back
and writes what it saw into JOBDIR, which the box cannot reach.

Per rep: [box frozen] convert in (timed) and copy into the arena, zero the workspace, tell the box
the arguments; then t0, thaw, "go" ... "done", t1, freeze; then copy the outputs out of the arena
and convert them out (timed). The box runs only between a thaw and the next freeze, and t0 is read
before the thaw, so nothing it does outside that window is off the clock. The credited time of a
rep is t1 - t0 less the calibrated round trip (the fastest of the empty exchanges through the
same thaw, pipes and freeze: CALIBRATION_PINGS before the first rep, PINGS_PER_REP after each),
and never less than RESOLUTION_NS.
"""

from __future__ import annotations

import json
import os
import select
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hb.sandbox import BoxCommand, freeze

CALIBRATION_PINGS = 25
PINGS_PER_REP = 5
# The finest time the judge credits: a call faster than the round trip's jitter is timed as this.
RESOLUTION_NS = 1000
ALIGN = 4096
JOB_FILE = "job.json"
RESULT_FILE = "result.json"


class RunFailure(Exception):
    """The box failed the rep: it crashed, stopped answering, or broke the protocol."""


def _aligned(offset: int) -> int:
    return (offset + ALIGN - 1) // ALIGN * ALIGN


@dataclass
class _Channel:
    go: int
    done: int
    process: Any
    deadline: float

    def ask(self, message: bytes, answer: bytes) -> None:
        os.write(self.go, message)
        self.expect(answer)

    def expect(self, answer: bytes) -> None:
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise RunFailure("timeout")
        ready, _, _ = select.select([self.done], [], [], remaining)
        if not ready:
            raise RunFailure("timeout")
        got = os.read(self.done, 1)
        if got != answer:
            raise RunFailure("ended" if got == b"" else f"protocol: {got!r}")


class _Arena:
    """A sealed-against-shrinking memfd the box maps; grown (never shrunk) as reps need."""

    def __init__(self) -> None:
        self.fd = os.memfd_create("hb-arena", os.MFD_ALLOW_SEALING)
        import fcntl

        fcntl.fcntl(self.fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK)
        self.size = 0
        self.view = np.empty(0, dtype=np.uint8)
        self._map: Any = None

    def ensure(self, size: int) -> None:
        import mmap

        size = max(_aligned(size), ALIGN)
        if size <= self.size:
            return
        os.ftruncate(self.fd, size)
        if self._map is not None:
            del self.view
            self._map.close()
        self._map = mmap.mmap(self.fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        self.view = np.frombuffer(self._map, dtype=np.uint8)
        self.size = size

    def region(self, offset: int, like: np.ndarray) -> np.ndarray:
        return self.view[offset : offset + like.nbytes].view(like.dtype).reshape(like.shape)


def _conversion_program(job: dict[str, Any]) -> Any:
    conversion = job.get("conversion")
    if not conversion:
        return None
    from hb import requests_api

    return requests_api.compile_conversions(
        conversion["requests"], conversion["arrays"], cache_dir=Path(job["conversion_dir"])
    )


def supervise(jobdir: Path) -> dict[str, Any]:
    job = json.loads((jobdir / JOB_FILE).read_text())
    box = BoxCommand.from_json(job["box"])
    control = tuple(job["freeze"]) if job.get("freeze") else None
    program = _conversion_program(job)
    sizes = (job.get("conversion") or {}).get("sizes", {})
    pointers: list[str] = job["pointers"]
    output_names: list[str] = job["outputs"]
    workspace_bytes = int(job["workspace_bytes"])
    arena = _Arena()
    go_read, go_write = os.pipe()
    done_read, done_write = os.pipe()
    for fd in (go_read, done_write, arena.fd):
        os.set_inheritable(fd, True)
    command = box.with_argv(
        [str(arena.fd), str(go_read), str(done_write)], (arena.fd, go_read, done_write)
    )
    with open(jobdir / "box.stdout", "wb") as out, open(jobdir / "box.stderr", "wb") as err:
        process = command.popen(Path(job["box_dir"]), out.fileno(), err.fileno())
    for fd in (go_read, done_write):
        os.close(fd)
    channel = _Channel(go_write, done_read, process, time.monotonic() + float(job["timeout_s"]))
    stop = (lambda frozen: freeze(control, frozen)) if control else (lambda frozen: True)
    report: dict[str, Any] = {"ok": False, "reps": [], "round_trip_ns": 0}
    try:
        # Arguments for the calibration: an empty arena; the pings never call the kernel.
        arena.ensure(ALIGN)
        channel.ask(
            _arguments(arena.size, [0] * len(pointers), job["reps"][0]["trailing"], 0, 0), b"r"
        )
        stop(True)
        trips: list[int] = []

        def calibrate(count: int) -> None:
            for _ in range(count):
                start = time.perf_counter_ns()
                stop(False)
                channel.ask(b"p", b"d")
                trips.append(time.perf_counter_ns() - start)
                stop(True)

        calibrate(CALIBRATION_PINGS)
        for index, rep in enumerate(job["reps"]):
            with np.load(jobdir / rep["inputs"], allow_pickle=False) as archive:
                staged = {name: archive[name].copy() for name in archive.files}
            convert_in_ns = 0
            buffers = staged
            if program is not None:
                start = time.perf_counter_ns()
                buffers = program.convert_in(staged, sizes)
                convert_in_ns = time.perf_counter_ns() - start
            arrays = [buffers[name] if name in buffers else staged[name] for name in pointers]
            offsets, cursor = [], 0
            for array in arrays:
                offsets.append(cursor)
                cursor = _aligned(cursor + max(array.nbytes, 1))
            workspace_offset = cursor
            arena.ensure(cursor + max(workspace_bytes, 1))
            for offset, array in zip(offsets, arrays, strict=True):
                arena.region(offset, np.ascontiguousarray(array))[...] = array
            arena.view[workspace_offset : workspace_offset + max(workspace_bytes, 1)] = 0
            stop(False)
            channel.ask(
                _arguments(arena.size, offsets, rep["trailing"], workspace_offset, workspace_bytes),
                b"r",
            )
            stop(True)
            start = time.perf_counter_ns()
            stop(False)
            channel.ask(b"g", b"d")
            seen = time.perf_counter_ns() - start
            if not stop(True):
                raise RunFailure("freeze")
            snapshot = {
                name: arena.region(offset, array).copy()
                for name, offset, array in zip(pointers, offsets, arrays, strict=True)
                if name in buffers or name in output_names
            }
            convert_out_ns = 0
            if program is not None:
                start = time.perf_counter_ns()
                program.convert_out(snapshot, {n: staged[n] for n in output_names}, sizes)
                convert_out_ns = time.perf_counter_ns() - start
                outputs = {n: staged[n] for n in output_names}
            else:
                outputs = {n: snapshot[n] for n in output_names}
            np.savez(jobdir / f"outputs_{index}.npz", **outputs)  # type: ignore[arg-type]
            calibrate(PINGS_PER_REP)
            report["reps"].append({
                "seen_ns": seen,
                "convert_in_ns": convert_in_ns + int(rep.get("convert_in_ns", 0)),
                "convert_out_ns": convert_out_ns,
            })  # fmt: skip
        # The round trip is the fastest empty exchange of the whole run (pings before the first
        # rep and between reps, so warm caches count on both sides of the subtraction).
        round_trip = min(trips)
        report["round_trip_ns"] = round_trip
        for rep in report["reps"]:
            rep["kernel_ns"] = max(rep["seen_ns"] - round_trip, RESOLUTION_NS)
        report["ok"] = True
        stop(False)
        os.write(go_write, b"q")
    except RunFailure as failure:
        report["failure"] = str(failure)
    except (OSError, ValueError, KeyError) as error:
        report["failure"] = f"supervisor: {error}"
    finally:
        if control is not None:
            freeze(control, False)
        try:
            process.wait(timeout=max(0.1, min(2.0, channel.deadline - time.monotonic())))
        except Exception:
            process.kill()
            process.wait()
        report["returncode"] = process.returncode
    return report


def _arguments(size: int, offsets: list[int], trailing: list[dict[str, Any]], workspace_offset: int,
               workspace_bytes: int) -> bytes:  # fmt: skip
    message = {
        "size": size,
        "offsets": offsets,
        "trailing": [entry["value"] for entry in trailing],
        "workspace_offset": workspace_offset,
        "workspace_bytes": workspace_bytes,
    }
    return b"a" + json.dumps(message).encode() + b"\n"


def main(argv: list[str]) -> int:
    jobdir = Path(argv[1])
    report = supervise(jobdir)
    (jobdir / RESULT_FILE).write_text(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
