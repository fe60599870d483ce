"""A distributed grade from a request: lower it over the grid (relayout's Distribution over the
kernel's arrays), refuse what the grade cannot take, build the generated MPI driver with the
submission, grade it at a rank count, and run the scaling curve."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hb import abi, kernels
from hb.distributed.driver import build_driver, cast_refusal
from hb.distributed.engine import DistributedGrade, Reference, grade_distributed
from hb.distributed.launch import DEFAULT_RANK_COUNTS, LOCAL_LAUNCHER
from hb.distributed.policy import distributed_cast_refusal, place_refusal, plan_refusal
from hb.distributed.scaling import ScalingPoint, plot_scaling, scaling_curve, scaling_table
from hb.distributed.signature import grid_at, mpi_refusal
from hb.execution import sandbox
from hb.judge.grading import rep_seed
from hb.kernels import Manifest
from hb.precision import NUMPY_DTYPES, Tolerance
from relayout.distribution import Distribution, lower_distribution
from relayout.errors import RequestError


def scale_submission(
    program: Path,
    kernel: Manifest,
    precision: str,
    grid: Sequence[str | int],
    plan_at: Callable[[tuple[int, ...]], Any],
    sizes: Mapping[str, int],
    scalars: Mapping[str, float | int],
    inputs: Mapping[str, np.ndarray],
    reference: Reference,
    directory: Path,
    *,
    rank_counts: Sequence[int] = DEFAULT_RANK_COUNTS,
    reps: int = 3,
    warmup: int = 1,
    launcher: str = LOCAL_LAUNCHER,
    hostfile: str | None = None,
    timeout_s: float = 60.0,
    limits: sandbox.Limits | None = None,
    casts: Mapping[str, str] | None = None,
    device: bool = False,
    shard_seeds: Sequence[int] | None = None,
) -> tuple[list[ScalingPoint], str, Path]:
    """Grade one built submission at each rank count (`plan_at(grid_extents)` gives the plan
    there, e.g. plan_requests at that rank count), and write the table and the PNG under
    `directory`. Returns (points, table text, PNG path). `shard_seeds`: grade_distributed's."""

    def grade_at(ranks: int, extents: tuple[int, ...]) -> DistributedGrade:
        return grade_distributed(
            program, kernel, precision, plan_at(extents), sizes, scalars, inputs, reference,
            directory / f"ranks_{ranks}", reps=reps, warmup=warmup, launcher=launcher,
            hostfile=hostfile, timeout_s=timeout_s, limits=limits, casts=casts, device=device,
            shard_seeds=shard_seeds,
        )  # fmt: skip

    directory.mkdir(parents=True, exist_ok=True)
    points = scaling_curve(rank_counts, grid, grade_at)
    table = scaling_table(points)
    (directory / "scaling.txt").write_text(table)
    png = plot_scaling(points, directory / "scaling.png", f"{kernel.name} ({precision})")
    return points, table, png


# ---------------------------------------------------------------------------------------------
# The judge's calls: a request and a manifest in, a refusal, a grade or a scaling curve out.


def requested_casts(requests: Any) -> dict[str, str]:
    """Each cast array's precision (the last cast of an array wins), from relayout's Requests."""
    casts: dict[str, str] = {}
    for operation in requests.operations:
        if operation.action == "cast":
            target = operation.to
            casts[operation.array] = str(getattr(target, "value", target))
    return casts


def requested_device_arrays(requests: Any, manifest: Any, residency: str = "host") -> list[str]:
    """The arrays whose tiles live in device memory: the last place of an array decides, and an
    array no place names lives in the run-wide `residency` (mpi.residency)."""
    placed: dict[str, str] = {}
    for operation in requests.operations:
        if operation.action == "place":
            placed[operation.array] = str(getattr(operation.on, "value", operation.on))
    return [a.name for a in manifest.arrays if placed.get(a.name, residency) == "device"]


def lower_plan(
    requests: Any, manifest: Any, precision: str, ranks: int, sizes: Mapping[str, int] | None = None
) -> Distribution:
    """The request lowered at `ranks` over the kernel's arrays at `precision`: relayout's plan and
    each tile's local layout (RequestError naming the entry when the program does not lower)."""
    return lower_distribution(
        requests, abi.relayout_arrays(manifest, precision), dict(sizes) if sizes else None, ranks
    )


def distributed_refusal(
    requests: Any,
    manifest: Any,
    precision: str,
    *,
    ranks: int,
    replicatable_allowlist: Sequence[str] | None = None,
    layout_flexible_allowlist: Sequence[str] | None = None,
    residency: str = "host",
    lowered: Callable[[], Distribution] | None = None,
    label: str = "preset S",
) -> str | None:
    """Why a request with startup.grid cannot be graded on `ranks` ranks (mpi.ranks), or None:
    the kernel (dense floating arrays only), the grid (it must span mpi.ranks), the lowering
    (`lowered()`, the request at the graded sizes that `label` names; default preset S), the
    plan's refusals, place (device tiles under `residency` too: a CUDA device and toolchain must
    be present), and the casts."""
    refusal = mpi_refusal(manifest)
    if refusal:
        return refusal
    extents, note = grid_at(list(requests.startup.grid), ranks)
    if extents is None:
        return f"startup.grid must span mpi.ranks: {note}"
    try:
        if lowered is None:
            plan = lower_plan(requests, manifest, precision, ranks, manifest.preset_sizes("S"))
        else:
            plan = lowered()
    except (RequestError, ValueError) as error:
        return f"{error} (lowered at {label})"
    casts = requested_casts(requests)
    return (
        plan_refusal(
            manifest,
            plan,
            replicatable_allowlist=replicatable_allowlist,
            layout_flexible_allowlist=layout_flexible_allowlist,
        )
        or place_refusal(
            plan, distributed=True, residency=residency, operations=requests.operations
        )
        or distributed_cast_refusal(plan, casts, residency)
        or cast_refusal(manifest, precision, casts)
    )


def _build_failure(kernel: Manifest, precision: str, ranks: int, log: str) -> DistributedGrade:
    return DistributedGrade(
        kernel=kernel.name, precision=precision, ranks=ranks, grid=(), correct=False,
        credited_s=None, rep_seconds=[], convert_in_s=0.0, convert_out_s=0.0,
        failure=f"the MPI build failed: {log.strip()[-2000:]}", mismatches=[],
        max_relative_error=None, symbols={},
    )  # fmt: skip


def grade_submission(
    manifest: Any,
    requests: Any,
    source: str,
    precision: str,
    *,
    ranks: int,
    directory: Path,
    preset: str = "S",
    seed: int = 0,
    reps: int = 5,
    warmup: int = 1,
    launcher: str = LOCAL_LAUNCHER,
    hostfile: str | None = None,
    timeout_s: float = 60.0,
    band: Tolerance | None = None,
    limits: sandbox.Limits | None = None,
    build_directory: Path | None = None,
    residency: str = "host",
    language: str = "c",
    plan: Distribution | None = None,
) -> DistributedGrade:
    """Build a submission (C, or `language` cpp or fortran) with the generated driver and grade it on `ranks` ranks: the plan is
    plan_requests at `ranks`, inputs are the catalog's seeded arrays at `preset`, and the whole
    domain is compared with the reference in `band` (default: the precision's). The build goes to
    `build_directory` (default `directory/build`; content-addressed, so a cache directory works),
    the run to `directory/ranks_<P>`. Tiles placed on device (or all unplaced ones under
    `residency` device) reach the kernel as device pointers, the driver then built with nvcc.
    `plan` is the request already lowered at `ranks` and the preset's sizes, where checking did.
    """
    sizes = manifest.preset_sizes(preset)
    scalars = manifest.preset_scalars(preset)
    if plan is None:
        plan = lower_plan(requests, manifest, precision, ranks, sizes)
    casts = requested_casts(requests)
    device = requested_device_arrays(requests, manifest, residency)
    built = build_driver(
        manifest, precision, source, build_directory or directory / "build", casts=casts,
        device_arrays=device, language=language,
    )  # fmt: skip
    if built.program is None:
        return _build_failure(manifest, precision, ranks, built.log)
    # Every rep on inputs of its own (a device-tile driver stages one set for all its reps).
    seeds = [rep_seed(seed, index) for index in range(1 if device else warmup + reps)]
    inputs = [kernels.make_inputs(manifest, sizes, s, NUMPY_DTYPES[precision]) for s in seeds]
    return grade_distributed(
        built.program, manifest, precision, plan, sizes, scalars, inputs[0] if device else inputs,
        kernels.load_reference(manifest.name).reference, directory / f"ranks_{ranks}",
        reps=reps, warmup=warmup, launcher=launcher, hostfile=hostfile, timeout_s=timeout_s,
        tolerance=band, limits=limits, casts=casts, device=bool(device),
        shard_seeds=_shard_seeds(manifest, seeds, bool(device)),
    )  # fmt: skip


def _shard_seeds(manifest: Manifest, seeds: Sequence[int], device: bool) -> list[int] | None:
    """The seeds a supervised run generates each rank's tiles from (hb.kernels.inputs'
    kernels; make_inputs gave the reference the same arrays), or None: the run stages inputs."""
    return list(seeds) if kernels.generated_inputs(manifest) and not device else None


def scale_requests(
    manifest: Any,
    requests: Any,
    source: str,
    precision: str,
    *,
    directory: Path,
    rank_counts: Sequence[int] = DEFAULT_RANK_COUNTS,
    preset: str = "S",
    seed: int = 0,
    reps: int = 5,
    warmup: int = 1,
    launcher: str = LOCAL_LAUNCHER,
    hostfile: str | None = None,
    timeout_s: float = 60.0,
    limits: sandbox.Limits | None = None,
    build_directory: Path | None = None,
    residency: str = "host",
) -> tuple[list[ScalingPoint], str, Path]:
    """The scaling curve of one submission (what `hb scale` prints): built once, graded at each
    rank count its startup.grid spans, table and PNG written under `directory`."""
    sizes = manifest.preset_sizes(preset)
    casts = requested_casts(requests)
    device_arrays = requested_device_arrays(requests, manifest, residency)
    built = build_driver(
        manifest, precision, source, build_directory or directory / "build", casts=casts,
        device_arrays=device_arrays,
    )  # fmt: skip
    if built.program is None:
        raise RuntimeError(f"the MPI build failed: {built.log.strip()[-2000:]}")

    def plan_at(extents: tuple[int, ...]) -> Distribution:
        count = 1
        for extent in extents:
            count *= extent
        return lower_plan(requests, manifest, precision, count, sizes)

    return scale_submission(
        built.program, manifest, precision, list(requests.startup.grid), plan_at, sizes,
        manifest.preset_scalars(preset), kernels.make_inputs(manifest, sizes, seed, NUMPY_DTYPES[precision]),
        kernels.load_reference(manifest.name).reference, directory, rank_counts=rank_counts,
        reps=reps, warmup=warmup, launcher=launcher, hostfile=hostfile, timeout_s=timeout_s,
        limits=limits, casts=casts, device=bool(device_arrays),
        shard_seeds=_shard_seeds(manifest, [seed] * (warmup + reps), bool(device_arrays)),
    )  # fmt: skip
