"""One distributed grade end to end: the run directory rank 0 reads (global inputs, per-rank index
files, the layout table), the launch, the gathered outputs and timings, and the comparison of the
whole domain against the numpy reference, as a single-node grade does."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hb import kernels
from hb.distributed.driver import (
    LAYOUT_VERSION,
    SUBMISSION_LIBRARY,
    submission_library,
)
from hb.distributed.launch import (
    LOCAL_LAUNCHER,
    LaunchResult,
    box_limits,
    launcher_command,
    launcher_environment,
    run_launcher,
)
from hb.distributed.signature import (
    local_sizes_table,
    symbol_arrivals,
    workspace_bytes_at,
)
from hb.execution import sandbox, supervisor_pool
from hb.execution.supervisor import LAYOUT_MAGIC
from hb.judge import grading
from hb.kernels import Manifest
from hb.precision import NUMPY_DTYPES, TOLERANCE_MATRIX, Tolerance
from relayout.distribution import Distribution

# The driver's name inside its box.
DRIVER_FILE = "driver"
HOSTFILE = "hostfile"

Reference = Callable[[dict[str, np.ndarray], dict[str, int], dict[str, float]], None]


@dataclass(frozen=True)
class RunSpec:
    """What one distributed run computes: the kernel at a precision, the plan at the run's rank
    count, the global size symbols and scalar values, and the warm-up and timed repeats."""

    kernel: Manifest
    precision: str
    plan: Distribution
    sizes: Mapping[str, int]
    scalars: Mapping[str, float | int]
    reps: int = 3
    warmup: int = 1

    @property
    def ranks(self) -> int:
        return self.plan.ranks

    def global_shape(self, name: str) -> tuple[int, ...]:
        return self.kernel.shape_of(name, self.sizes)


def broadcast(plan: Distribution, name: str) -> bool:
    """Whether the driver broadcasts the array whole: replicated and laid out row-major. A
    replicated array under a local layout goes by its index file like a distributed one."""
    return plan.arrays[name].replicated and name not in plan.local


def layout_table(spec: RunSpec) -> bytes:
    """The driver's layout table: header, per-array global counts, per-rank tile counts, primary
    flags, size values and workspace, then the scalars as 8-byte words (little-endian int64s)."""
    kernel, plan = spec.kernel, spec.plan
    words: list[int] = [
        LAYOUT_MAGIC, LAYOUT_VERSION, plan.ranks, len(kernel.arrays), len(kernel.sizes),
        len(kernel.scalars), spec.warmup, spec.reps,
    ]  # fmt: skip
    for array in kernel.arrays:
        words += [int(np.prod(spec.global_shape(array.name))), int(broadcast(plan, array.name))]
    per_rank_sizes = local_sizes_table(kernel, plan, spec.sizes)
    for rank in range(plan.ranks):
        for array in kernel.arrays:
            count = int(np.prod(plan.tile_extents(array.name, spec.global_shape(array.name), rank)))
            words += [count, int(plan.is_primary_holder(array.name, rank))]
        words += [per_rank_sizes[rank][s] for s in kernel.sizes]
        words.append(workspace_bytes_at(kernel, per_rank_sizes[rank]))
    body = struct.pack(f"<{len(words)}q", *words)
    for scalar in kernel.scalars:
        value = spec.scalars[scalar.name]
        body += (
            struct.pack("<q", int(value))
            if scalar.type == "int"
            else struct.pack("<d", float(value))
        )
    return body


def write_run_directory(spec: RunSpec, inputs: Mapping[str, np.ndarray], directory: Path) -> None:
    """Write what rank 0 reads: layout.bin, in_<array>.bin (row-major at the problem precision) and
    index_<array>.bin (each rank's packed-tile flat indices, ranks in order, -1 for a dead cell)
    per array the driver does not broadcast."""
    directory.mkdir(parents=True, exist_ok=True)
    dtype = NUMPY_DTYPES[spec.precision]
    for array in spec.kernel.arrays:
        shape = spec.global_shape(array.name)
        if array.name not in inputs:
            raise ValueError(f"inputs: no array {array.name!r} for {spec.kernel.name}")
        data = np.ascontiguousarray(inputs[array.name], dtype=dtype)
        if data.shape != shape:
            raise ValueError(f"inputs.{array.name}: shape {data.shape}, expected {shape}")
        data.tofile(directory / f"in_{array.name}.bin")
        if broadcast(spec.plan, array.name):
            continue
        with open(directory / f"index_{array.name}.bin", "wb") as handle:
            for rank in range(spec.ranks):
                spec.plan.tile_indices(array.name, shape, rank).astype("<i8").tofile(handle)
    (directory / "layout.bin").write_bytes(layout_table(spec))


@dataclass
class DistributedRun:
    """A finished run: every rep's gathered outputs (warm-ups first), each timed repeat's seconds
    (MAX over ranks: from the supervisor's go to the last rank's done), the launch."""

    launch: LaunchResult
    rep_outputs: list[dict[str, np.ndarray]] = field(default_factory=list)
    rep_seconds: list[float] = field(default_factory=list)
    convert_in_seconds: list[float] = field(default_factory=list)
    convert_out_seconds: list[float] = field(default_factory=list)
    failure: str | None = None
    warmup: int = 0
    round_trip_s: float = 0.0

    @property
    def outputs(self) -> dict[str, np.ndarray]:
        """The credited repeat's gathered outputs."""
        rep = self.credited_rep
        if rep is None or not self.rep_outputs:
            return {}
        return self.rep_outputs[min(self.warmup + rep, len(self.rep_outputs) - 1)]

    @property
    def credited_rep(self) -> int | None:
        """The index of the credited repeat: the fastest."""
        if not self.rep_seconds:
            return None
        return min(range(len(self.rep_seconds)), key=self.rep_seconds.__getitem__)

    @property
    def credited_s(self) -> float | None:
        """The credited time: the fastest repeat's MAX over ranks."""
        rep = self.credited_rep
        return None if rep is None else self.rep_seconds[rep]

    @property
    def convert_in_s(self) -> float:
        """The credited repeat's cast-in seconds (MAX over ranks; 0 without casts)."""
        rep = self.credited_rep
        return 0.0 if rep is None or not self.convert_in_seconds else self.convert_in_seconds[rep]

    @property
    def convert_out_s(self) -> float:
        """The credited repeat's cast-out seconds (MAX over ranks; 0 without casts)."""
        rep = self.credited_rep
        return 0.0 if rep is None or not self.convert_out_seconds else self.convert_out_seconds[rep]


def run_distributed(
    program: Path,
    spec: RunSpec,
    inputs: Mapping[str, np.ndarray] | Sequence[Mapping[str, np.ndarray]],
    directory: Path,
    *,
    launcher: str = LOCAL_LAUNCHER,
    hostfile: str | Path | None = None,
    timeout_s: float = 60.0,
    threads_per_rank: int = 1,
    limits: sandbox.Limits | None = None,
    casts: Mapping[str, str] | None = None,
    device: bool = False,
    shard_seeds: Sequence[int] | None = None,
) -> DistributedRun:
    """Run the driver on spec.ranks ranks in a box and read back the outputs. `inputs` is one set
    of global arrays for every rep, or one per rep (warm-ups first). A host-tile driver is
    supervised (hb.execution.supervisor stages, casts, times and gathers outside the box); a device-tile
    driver (`device`) scatters, times and gathers itself from the run directory. With
    `shard_seeds` (one per rep, warm-ups first; the generated-input kernels of hb.kernels) the supervisor
    generates each rank's tiles itself from the rep's seed instead of staging `inputs`, which
    must then be those seeds' arrays (generate_whole): the reference is applied to them."""
    reps = spec.warmup + spec.reps
    rep_inputs = [inputs] * reps if isinstance(inputs, Mapping) else list(inputs)
    if len(rep_inputs) != reps:
        raise ValueError(f"inputs: {len(rep_inputs)} sets for {reps} reps")
    with sandbox.Box(directory, box_limits(timeout_s, limits), threads=threads_per_rank) as box:
        box.write(DRIVER_FILE, Path(program).read_bytes(), mode=0o555)
        library = submission_library(Path(program))
        if library.exists():
            box.write(SUBMISSION_LIBRARY, library.read_bytes(), mode=0o555)
        if hostfile is not None:
            # The launcher reads the hostfile inside the box (as it reads everything else).
            box.write(HOSTFILE, Path(hostfile).read_bytes())
            hostfile = HOSTFILE
        command = launcher_command(
            launcher, spec.ranks, f"./{DRIVER_FILE}", [box.inside], hostfile=hostfile
        )
        environment = launcher_environment(threads=threads_per_rank)
        if device:
            write_run_directory(spec, rep_inputs[0], box.workdir)
            return _gathered(spec, run_launcher(box, command, timeout_s, environment), box.workdir)
        box.write("layout.bin", layout_table(spec))
        if shard_seeds is not None and len(shard_seeds) != reps:
            raise ValueError(f"shard_seeds: {len(shard_seeds)} seeds for {reps} reps")
        return _supervised(spec, rep_inputs, box, box.command(command, environment), casts or {},
                           timeout_s, shard_seeds)  # fmt: skip


def _supervised(
    spec: RunSpec, rep_inputs: list[Mapping[str, np.ndarray]], box: sandbox.Box,
    command: sandbox.BoxCommand, casts: Mapping[str, str], timeout_s: float,
    shard_seeds: Sequence[int] | None = None,
) -> DistributedRun:  # fmt: skip
    """The supervisor's run of a host-tile driver: the job (each rank's tile counts, index maps,
    primary flags and workspace; each rep's global inputs, or with `shard_seeds` each rep's seed
    and each array's range, from which it generates the tiles) in a directory the box never
    sees."""
    from hb.execution import runner, supervisor

    dtype = NUMPY_DTYPES[spec.precision]
    per_rank_sizes = local_sizes_table(spec.kernel, spec.plan, spec.sizes)
    private = Path(tempfile.mkdtemp(prefix="job-", dir=box.root))
    try:
        arrays, indices = [], {}
        for array in spec.kernel.arrays:
            shape = spec.global_shape(array.name)
            whole = broadcast(spec.plan, array.name)
            counts = [
                int(np.prod(spec.plan.tile_extents(array.name, shape, r)))
                for r in range(spec.ranks)
            ]
            if not whole:
                for rank in range(spec.ranks):
                    indices[f"{array.name}.{rank}"] = spec.plan.tile_indices(
                        array.name, shape, rank
                    )
            arrays.append({
                "name": array.name, "output": array.is_output, "shape": list(shape),
                "broadcast": whole, "counts": counts, "cast": casts.get(array.name),
                "primary": [bool(spec.plan.is_primary_holder(array.name, r)) for r in range(spec.ranks)],
            })  # fmt: skip
        np.savez(private / "index.npz", **indices)  # type: ignore[arg-type]
        generation = None
        if shard_seeds is not None:
            generation = kernels.generation_job(spec.kernel, spec.sizes, shard_seeds)
            rep_inputs = []
        for index, arrays_of_rep in enumerate(rep_inputs):
            staged = {}
            for array in spec.kernel.arrays:
                if array.name not in arrays_of_rep:
                    raise ValueError(f"inputs: no array {array.name!r} for {spec.kernel.name}")
                data = np.ascontiguousarray(arrays_of_rep[array.name], dtype=dtype)
                if data.shape != spec.global_shape(array.name):
                    raise ValueError(
                        f"inputs.{array.name}: shape {data.shape}, expected {spec.global_shape(array.name)}"
                    )
                staged[array.name] = data
            np.savez(private / f"inputs_{index}.npz", **staged)  # type: ignore[arg-type]
        job = {
            "mode": "ranks", "box": command.to_json(), "box_dir": str(box.workdir),
            "freeze": box.freeze_control(), "timeout_s": timeout_s, "ranks": spec.ranks,
            "precision": spec.precision, "arrays": arrays, "warmup": spec.warmup,
            "workspace": [workspace_bytes_at(spec.kernel, per_rank_sizes[r]) for r in range(spec.ranks)],
            "reps": [f"inputs_{i}.npz" for i in range(len(rep_inputs))],
            "generate": generation,
        }  # fmt: skip
        (private / supervisor.JOB_FILE).write_text(json.dumps(job))
        started = time.monotonic()
        with runner.timing_slot(box.limits.cpus):
            ended = supervisor_pool.supervise(private, command.pass_fds, timeout=timeout_s + 60)
        return _supervised_run(spec, private, ended, command.argv, time.monotonic() - started, box)
    finally:
        shutil.rmtree(private, ignore_errors=True)


def _supervised_run(
    spec: RunSpec, private: Path, ended: subprocess.CompletedProcess[bytes], argv: list[str],
    wall_s: float, box: sandbox.Box,
) -> DistributedRun:  # fmt: skip
    from hb.execution import runner, supervisor

    stdout = _text(private / "box.stdout")
    stderr = _text(private / "box.stderr")
    result_path = private / supervisor.RESULT_FILE
    if ended.returncode != 0 or not result_path.is_file():
        detail = ended.stderr.decode("utf-8", "replace").strip().splitlines()[-1:]
        launch = LaunchResult(argv, ended.returncode or 1, False, wall_s, stdout, stderr)
        return DistributedRun(launch, failure=f"the judge's supervisor failed: {' '.join(detail)}")
    report = json.loads(result_path.read_text())
    failure = report.get("failure")
    code = int(report.get("returncode") or 0)
    launch = LaunchResult(argv, code, failure == "timeout", wall_s, stdout, stderr)
    if not report.get("ok"):
        if box.oom_killed():
            reason = "the MPI run exceeded the box's memory limit and was killed"
        elif failure == "timeout":
            reason = (
                f"the MPI run exceeded its wall-clock limit after {wall_s:.1f} s and was killed"
            )
        else:
            # A launcher the supervisor stopped after a failure ended by its kill, which says
            # nothing.
            ended_as = launch.failure() if code != 0 and not report.get("stopped") else None
            reason = ended_as or runner.supervised_failure(str(failure or ""), "the MPI run")
        return DistributedRun(launch, failure=reason)
    reps = report["reps"]
    outputs = []
    for index in range(len(reps)):
        outputs.append(supervisor.read_outputs(private, report["outputs"], index))
    timed = reps[spec.warmup :]
    return DistributedRun(
        launch,
        rep_outputs=outputs,
        rep_seconds=[r["kernel_ns"] / 1e9 for r in timed],
        convert_in_seconds=[r["convert_in_ns"] / 1e9 for r in timed],
        convert_out_seconds=[r["convert_out_ns"] / 1e9 for r in timed],
        warmup=spec.warmup,
        round_trip_s=int(report.get("round_trip_ns", 0)) / 1e9,
    )


def _text(path: Path, limit: int = 8000) -> str:
    try:
        return path.read_bytes()[-limit:].decode("utf-8", "replace")
    except OSError:
        return ""


def _gathered(spec: RunSpec, launch: LaunchResult, directory: Path) -> DistributedRun:
    """What rank 0 left in the run directory: timings and the gathered outputs."""
    run = DistributedRun(launch=launch, failure=launch.failure())
    if run.failure is not None:
        return run
    timings_path = directory / "timings.json"
    if not timings_path.exists():
        run.failure = "the MPI run ended without writing timings.json (rank 0 did not finish)"
        return run
    try:
        timings = json.loads(sandbox.read_box_file(timings_path, 1 << 20))
        run.rep_seconds = [float(s) for s in timings["rep_seconds"]]
        run.convert_in_seconds = [float(s) for s in timings.get("convert_in_seconds", [])]
        run.convert_out_seconds = [float(s) for s in timings.get("convert_out_seconds", [])]
    except (OSError, ValueError, KeyError, TypeError):
        run.failure = "the MPI run left a timings.json the judge cannot read"
        return run
    dtype = NUMPY_DTYPES[spec.precision]
    gathered: dict[str, np.ndarray] = {}
    for array in spec.kernel.arrays:
        if not array.is_output:
            continue
        shape = spec.global_shape(array.name)
        expected_bytes = int(np.prod(shape)) * dtype.itemsize
        try:
            data = sandbox.read_box_file(directory / f"out_{array.name}.bin", expected_bytes)
        except OSError as error:
            run.failure = f"out_{array.name}.bin could not be read: {error.strerror or error}"
            return run
        raw = np.frombuffer(data[: len(data) // dtype.itemsize * dtype.itemsize], dtype=dtype)
        if raw.size != int(np.prod(shape)):
            run.failure = (
                f"out_{array.name}.bin holds {raw.size} elements, expected {int(np.prod(shape))}"
            )
            return run
        gathered[array.name] = raw.reshape(shape)
    run.rep_outputs = [gathered]
    run.warmup = 0
    return run


@dataclass
class DistributedGrade:
    """The grade of one submission at one rank count."""

    kernel: str
    precision: str
    ranks: int
    grid: tuple[int, ...]
    correct: bool
    credited_s: float | None
    rep_seconds: list[float]
    convert_in_s: float
    convert_out_s: float
    failure: str | None
    mismatches: list[str]
    max_relative_error: float | None
    symbols: dict[str, Any]
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "kernel": self.kernel,
            "precision": self.precision,
            "ranks": self.ranks,
            "grid": list(self.grid),
            "correct": self.correct,
            "credited_s": self.credited_s,
            "rep_seconds": self.rep_seconds,
            "convert_in_s": self.convert_in_s,
            "convert_out_s": self.convert_out_s,
            "failure": self.failure,
            "mismatches": self.mismatches,
            "max_relative_error": self.max_relative_error,
            "symbols": self.symbols,
            "notes": self.notes,
        }


def grade_distributed(
    program: Path,
    kernel: Manifest,
    precision: str,
    plan: Any,
    sizes: Mapping[str, int],
    scalars: Mapping[str, float | int],
    inputs: Mapping[str, np.ndarray] | Sequence[Mapping[str, np.ndarray]],
    reference: Reference,
    directory: Path,
    *,
    reps: int = 3,
    warmup: int = 1,
    launcher: str = LOCAL_LAUNCHER,
    hostfile: str | Path | None = None,
    timeout_s: float = 60.0,
    tolerance: Tolerance | None = None,
    limits: sandbox.Limits | None = None,
    threads_per_rank: int = 1,
    casts: Mapping[str, str] | None = None,
    device: bool = False,
    shard_seeds: Sequence[int] | None = None,
) -> DistributedGrade:
    """Run the built driver under `plan` and grade every rep's gathered outputs against
    `reference` applied to copies of that rep's inputs (global arrays at the problem precision;
    one set for every rep, or one per rep, warm-ups first). `shard_seeds`: the ranks' tiles are
    generated from each rep's seed (run_distributed), `inputs` being those seeds' arrays."""
    distribution = Distribution.of(plan)
    spec = RunSpec(
        kernel, precision, distribution, dict(sizes), dict(scalars), reps=reps, warmup=warmup
    )
    run = run_distributed(
        program, spec, inputs, directory, launcher=launcher, hostfile=hostfile,
        timeout_s=timeout_s, threads_per_rank=threads_per_rank, limits=limits, casts=casts,
        device=device, shard_seeds=shard_seeds,
    )  # fmt: skip
    arrivals = {s: a.to_json()["arrives"] for s, a in symbol_arrivals(kernel, distribution).items()}
    mismatches: list[str] = []
    worst: float | None = None
    if run.failure is None:
        dtype = NUMPY_DTYPES[precision]
        band = tolerance or TOLERANCE_MATRIX[precision]
        rep_inputs = [inputs] if isinstance(inputs, Mapping) else list(inputs)
        worst = 0.0
        references: dict[int, dict[str, np.ndarray]] = {}
        for index, outputs in enumerate(run.rep_outputs):
            given = rep_inputs[index] if index < len(rep_inputs) else rep_inputs[0]
            if id(given) not in references:
                expected = {n: np.array(v, dtype=dtype, copy=True) for n, v in given.items()}
                reference(expected, dict(sizes), dict(scalars))
                references[id(given)] = expected
            expected = references[id(given)]
            for name, got in outputs.items():
                comparison = grading.compare(name, got, expected[name], band)
                worst = max(worst, comparison.max_relative_error)
                if not comparison.correct:
                    label = "the warm-up" if index < run.warmup else f"rep {index - run.warmup + 1}"
                    mismatches.append(
                        f"{comparison.reason or f'{name}: outside the band'} (on the inputs of {label})"
                    )
            if mismatches:
                break
    return DistributedGrade(
        kernel=kernel.name,
        precision=precision,
        ranks=distribution.ranks,
        grid=distribution.grid,
        correct=run.failure is None and not mismatches,
        credited_s=run.credited_s,
        rep_seconds=run.rep_seconds,
        convert_in_s=run.convert_in_s,
        convert_out_s=run.convert_out_s,
        failure=run.failure,
        mismatches=mismatches,
        max_relative_error=worst,
        symbols=arrivals,
    )
