"""One distributed grade end to end: the run directory rank 0 reads (global inputs, per-rank index
files, the layout table), the launch, the gathered outputs and timings, and the comparison of the
whole domain against the numpy reference, as a single-node grade does."""

from __future__ import annotations

import json
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hb import grading, sandbox
from hb.distributed.driver import LAYOUT_MAGIC, LAYOUT_VERSION
from hb.distributed.launch import (
    LOCAL_LAUNCHER,
    LaunchResult,
    RankLimits,
    box_limits,
    launcher_command,
    launcher_environment,
    run_launcher,
)
from hb.distributed.signature import (
    DistributedKernel,
    local_sizes_table,
    symbol_arrivals,
    workspace_bytes_at,
)
from hb.distributed.tiles import (
    GridPlan,
    is_primary_holder,
    read_plan,
    tile_extents,
    tile_flat_indices,
)
from hb.precision import NUMPY_DTYPES, TOLERANCE_MATRIX, Tolerance

# The driver's name inside its box.
DRIVER_FILE = "driver"
HOSTFILE = "hostfile"

Reference = Callable[[dict[str, np.ndarray], dict[str, int], dict[str, float]], None]


@dataclass(frozen=True)
class RunSpec:
    """What one distributed run computes: the kernel at a precision, the plan at the run's rank
    count, the global size symbols and scalar values, and the warm-up and timed repeats."""

    kernel: DistributedKernel
    precision: str
    plan: GridPlan
    sizes: Mapping[str, int]
    scalars: Mapping[str, float | int]
    reps: int = 3
    warmup: int = 1

    @property
    def ranks(self) -> int:
        return self.plan.ranks

    def global_shape(self, name: str) -> tuple[int, ...]:
        return self.kernel.global_shape(name, self.sizes)


def broadcast(plan: GridPlan, name: str) -> bool:
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
            count = int(
                np.prod(tile_extents(plan, array.name, spec.global_shape(array.name), rank))
            )
            words += [count, int(is_primary_holder(plan, array.name, rank))]
        words += [per_rank_sizes[rank][s] for s in kernel.sizes]
        words.append(workspace_bytes_at(kernel, per_rank_sizes[rank]))
    body = struct.pack(f"<{len(words)}q", *words)
    for scalar in kernel.scalars:
        value = spec.scalars[scalar.name]
        body += (
            struct.pack("<q", int(value))
            if scalar.kind == "int"
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
                tile_flat_indices(spec.plan, array.name, shape, rank).astype("<i8").tofile(handle)
    (directory / "layout.bin").write_bytes(layout_table(spec))


@dataclass
class DistributedRun:
    """A finished run: the gathered outputs, each repeat's MAX-over-ranks seconds, the launch."""

    launch: LaunchResult
    outputs: dict[str, np.ndarray] = field(default_factory=dict)
    rep_seconds: list[float] = field(default_factory=list)
    convert_in_seconds: list[float] = field(default_factory=list)
    convert_out_seconds: list[float] = field(default_factory=list)
    failure: str | None = None

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
    inputs: Mapping[str, np.ndarray],
    directory: Path,
    *,
    launcher: str = LOCAL_LAUNCHER,
    hostfile: str | Path | None = None,
    timeout_s: float = 60.0,
    threads_per_rank: int = 1,
    limits: RankLimits | None = None,
) -> DistributedRun:
    """Stage the inputs in `directory`, run the driver on spec.ranks ranks, read back the outputs."""
    # The run directory is the box's: the driver, the inputs rank 0 reads and what it writes.
    with sandbox.Box(directory, box_limits(timeout_s, limits), threads=threads_per_rank) as box:
        write_run_directory(spec, inputs, box.workdir)
        box.write(DRIVER_FILE, Path(program).read_bytes(), mode=0o555)
        if hostfile is not None:
            # The launcher reads the hostfile inside the box (as it reads everything else).
            box.write(HOSTFILE, Path(hostfile).read_bytes())
            hostfile = HOSTFILE
        command = launcher_command(
            launcher, spec.ranks, f"./{DRIVER_FILE}", [box.inside], hostfile=hostfile
        )
        environment = launcher_environment(threads=threads_per_rank)
        return _gathered(spec, run_launcher(box, command, timeout_s, environment), box.workdir)


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
        run.outputs[array.name] = raw.reshape(shape)
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
    kernel: DistributedKernel,
    precision: str,
    plan: Any,
    sizes: Mapping[str, int],
    scalars: Mapping[str, float | int],
    inputs: Mapping[str, np.ndarray],
    reference: Reference,
    directory: Path,
    *,
    reps: int = 3,
    warmup: int = 1,
    launcher: str = LOCAL_LAUNCHER,
    hostfile: str | Path | None = None,
    timeout_s: float = 60.0,
    tolerance: Tolerance | None = None,
    limits: RankLimits | None = None,
    threads_per_rank: int = 1,
) -> DistributedGrade:
    """Run the built driver under `plan` and grade the gathered outputs against `reference`
    applied to copies of `inputs` (global arrays at the problem precision)."""
    grid_plan = read_plan(plan)
    spec = RunSpec(
        kernel, precision, grid_plan, dict(sizes), dict(scalars), reps=reps, warmup=warmup
    )
    run = run_distributed(
        program, spec, inputs, directory, launcher=launcher, hostfile=hostfile,
        timeout_s=timeout_s, threads_per_rank=threads_per_rank, limits=limits,
    )  # fmt: skip
    arrivals = {s: a.to_json()["arrives"] for s, a in symbol_arrivals(kernel, grid_plan).items()}
    mismatches: list[str] = []
    worst: float | None = None
    if run.failure is None:
        dtype = NUMPY_DTYPES[precision]
        expected = {name: np.array(value, dtype=dtype, copy=True) for name, value in inputs.items()}
        reference(expected, dict(sizes), dict(scalars))
        band = tolerance or TOLERANCE_MATRIX[precision]
        worst = 0.0
        for name, got in run.outputs.items():
            comparison = grading.compare(name, got, expected[name], band)
            worst = max(worst, comparison.max_relative_error)
            if not comparison.correct:
                mismatches.append(comparison.reason or f"{name}: outside the band")
    return DistributedGrade(
        kernel=kernel.name,
        precision=precision,
        ranks=grid_plan.ranks,
        grid=grid_plan.grid,
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
