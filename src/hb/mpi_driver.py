"""The judge's entry to distributed grades (ARCHITECTURE.md's mpi_driver): build the generated MPI
driver with a submission, grade it at a rank count, describe a plan for /task and /requests/check,
and run the scaling curve; the work is done in hb.distributed."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hb import abi, kernels, sandbox
from hb.distributed.driver import DriverBuild, build_driver, cast_refusal, driver_source
from hb.distributed.engine import DistributedGrade, Reference, grade_distributed
from hb.distributed.launch import LOCAL_LAUNCHER, launcher_command
from hb.distributed.local_layout import local_layouts
from hb.distributed.policy import (
    default_plan,
    device_available,
    distributed_cast_refusal,
    place_refusal,
    plan_refusal,
)
from hb.distributed.scaling import ScalingPoint, plot_scaling, scaling_curve, scaling_table
from hb.distributed.signature import (
    DistributedKernel,
    grid_at,
    local_sizes_table,
    rank_sizes,
    symbol_arrivals,
    tile_extent_texts,
)
from hb.distributed.tiles import GridPlan, local_shape, rank_coords, read_plan, tile_extents
from hb.grading import rep_seed
from hb.precision import NUMPY_DTYPES, Tolerance
from relayout.errors import RequestError

__all__ = [
    "DEFAULT_RANK_COUNTS",
    "LOCAL_LAUNCHER",
    "DistributedGrade",
    "DistributedKernel",
    "DriverBuild",
    "GridPlan",
    "ScalingPoint",
    "build_driver",
    "cast_refusal",
    "default_plan",
    "describe_plan",
    "device_available",
    "distributed_cast_refusal",
    "distributed_refusal",
    "driver_source",
    "entry_signature",
    "grade_distributed",
    "grade_submission",
    "grid_at",
    "launcher_command",
    "launcher_settings",
    "local_layouts",
    "local_sizes_table",
    "lower_plan",
    "place_refusal",
    "plan_refusal",
    "rank_sizes",
    "read_plan",
    "requested_casts",
    "requested_device_arrays",
    "scale_requests",
    "scale_submission",
    "symbol_arrivals",
]

# The scaling points when mpi.rank_counts is not configured.
DEFAULT_RANK_COUNTS = (1, 2, 4)


def launcher_settings(mpi_section: Any) -> tuple[str, str | None, tuple[int, ...]]:
    """(launcher template, hostfile, rank counts) from the config's mpi section; the fields
    mpi.launcher, mpi.hostfile and mpi.rank_counts fall back to one-machine mpiexec, no hostfile
    and (1, 2, 4) where the section does not declare them."""
    template = getattr(mpi_section, "launcher", None) or LOCAL_LAUNCHER
    hostfile = getattr(mpi_section, "hostfile", None)
    counts = getattr(mpi_section, "rank_counts", None) or DEFAULT_RANK_COUNTS
    return template, (str(hostfile) if hostfile else None), tuple(int(c) for c in counts)


def describe_plan(
    kernel: DistributedKernel, plan: Any, sizes: Mapping[str, int] | None = None
) -> dict[str, Any]:
    """What /task/{kernel} and /requests/check show of a plan: the plan's JSON, which size symbols
    arrive local (with the reason), each rank's grid coordinates, each local tile layout (its
    single-node program over the owned extents, digits and packed extents) and, given the global
    sizes, each rank's packed tile extents (`tiles`), owned extents where a local layout differs
    (`owned`) and size values."""
    grid_plan = read_plan(plan)
    answer: dict[str, Any] = {
        "plan": grid_plan.to_json(),
        "rank_order": "row-major: rank = c0 * P1 + c1 on a 2-D grid",
        "symbols": {s: a.to_json() for s, a in symbol_arrivals(kernel, grid_plan).items()},
    }
    if grid_plan.local:
        texts = tile_extent_texts(kernel, grid_plan)
        answer["local_layouts"] = {
            name: {**layout.to_json(), "tile": texts[name]}
            for name, layout in grid_plan.local.items()
        }
    if sizes is not None:
        ranks = []
        for rank in range(grid_plan.ranks):
            described: dict[str, Any] = {
                "rank": rank,
                "coords": list(rank_coords(rank, grid_plan.grid)),
                "sizes": rank_sizes(kernel, grid_plan, sizes, rank),
                "tiles": {
                    a.name: list(
                        tile_extents(grid_plan, a.name, kernel.global_shape(a, sizes), rank)
                    )
                    for a in kernel.arrays
                },
            }
            if grid_plan.local:
                described["owned"] = {
                    name: list(local_shape(grid_plan, name, kernel.global_shape(name, sizes), rank))
                    for name in grid_plan.local
                }
            ranks.append(described)
        answer["ranks"] = ranks
    return answer


def entry_signature(
    kernel: DistributedKernel, precision: str, casts: Mapping[str, str], plan: Any
) -> str:
    """The MPI entry point as the submission must define it under `plan`, each locally laid-out
    tile's packed extents in a comment after its pointer."""
    return kernel.c_prototype(precision, casts, tile_extent_texts(kernel, plan)) + ";"


def scale_submission(
    program: Path,
    kernel: DistributedKernel,
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
) -> tuple[list[ScalingPoint], str, Path]:
    """Grade one built submission at each rank count (`plan_at(grid_extents)` gives the plan
    there, e.g. Requests.plan at that rank count), and write the table and the PNG under
    `directory`. Returns (points, table text, PNG path)."""

    def grade_at(ranks: int, extents: tuple[int, ...]) -> DistributedGrade:
        return grade_distributed(
            program, kernel, precision, plan_at(extents), sizes, scalars, inputs, reference,
            directory / f"ranks_{ranks}", reps=reps, warmup=warmup, launcher=launcher,
            hostfile=hostfile, timeout_s=timeout_s, limits=limits, casts=casts, device=device,
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
    kernel = DistributedKernel.from_manifest(manifest)
    return [a.name for a in kernel.arrays if placed.get(a.name, residency) == "device"]


def lower_plan(
    requests: Any, manifest: Any, precision: str, ranks: int, sizes: Mapping[str, int] | None = None
) -> GridPlan:
    """Requests.plan at `ranks` over the kernel's arrays (RequestError naming the entry when the
    program does not lower), read into the engine's GridPlan, with the local layout of every tile
    the digit operations lay out other than row-major in global order (hb.distributed.
    local_layout: the operations that are not distributions, as a single-node program over the
    rank's owned extents)."""
    plan = requests.plan(
        abi.relayout_arrays(manifest, precision), dict(sizes) if sizes else None, ranks
    )
    grid_plan = read_plan(plan)
    env: dict[str, int] = {name: int(value) for name, value in (sizes or {}).items()}
    env["P"] = grid_plan.ranks
    env.update({f"P{k}": extent for k, extent in enumerate(grid_plan.grid)})
    kernel = DistributedKernel.from_manifest(manifest)
    local = local_layouts(requests, {a.name: len(a.shape) for a in kernel.arrays}, env)
    return GridPlan(grid=grid_plan.grid, arrays=grid_plan.arrays, local=local)


def distributed_refusal(
    requests: Any,
    manifest: Any,
    precision: str,
    *,
    ranks: int,
    replicatable_allowlist: Sequence[str] | None = None,
    layout_flexible_allowlist: Sequence[str] | None = None,
    residency: str = "host",
) -> str | None:
    """Why a request with startup.grid cannot be graded on `ranks` ranks (mpi.ranks), or None:
    the kernel (dense floating arrays only), the grid (it must span mpi.ranks), the lowering
    (Requests.plan, and each tile's local layout), the plan's refusals, place (device tiles
    under `residency` too: a CUDA device and toolchain must be present), and the casts."""
    kernel = DistributedKernel.from_manifest(manifest)
    refusal = kernel.refusal()
    if refusal:
        return refusal
    extents, note = grid_at(list(requests.startup.grid), ranks)
    if extents is None:
        return f"startup.grid must span mpi.ranks: {note}"
    try:
        plan = lower_plan(requests, manifest, precision, ranks, manifest.preset_sizes("S"))
    except (RequestError, ValueError) as error:
        return str(error)
    casts = requested_casts(requests)
    return (
        plan_refusal(
            kernel,
            plan,
            replicatable_allowlist=replicatable_allowlist,
            layout_flexible_allowlist=layout_flexible_allowlist,
        )
        or place_refusal(
            plan, distributed=True, residency=residency, operations=requests.operations
        )
        or distributed_cast_refusal(plan, casts, residency)
        or cast_refusal(kernel, precision, casts)
    )


def _build_failure(
    kernel: DistributedKernel, precision: str, ranks: int, log: str
) -> DistributedGrade:
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
) -> DistributedGrade:
    """Build a submission (C, or `language` cpp or fortran) with the generated driver and grade it on `ranks` ranks: the plan is
    Requests.plan at `ranks`, inputs are the catalog's seeded arrays at `preset`, and the whole
    domain is compared with the reference in `band` (default: the precision's). The build goes to
    `build_directory` (default `directory/build`; content-addressed, so a cache directory works),
    the run to `directory/ranks_<P>`. Tiles placed on device (or all unplaced ones under
    `residency` device) reach the kernel as device pointers, the driver then built with nvcc."""
    kernel = DistributedKernel.from_manifest(manifest)
    sizes = manifest.preset_sizes(preset)
    scalars = manifest.preset_scalars(preset)
    plan = lower_plan(requests, manifest, precision, ranks, sizes)
    built = build_driver(
        kernel, precision, source, build_directory or directory / "build",
        casts=requested_casts(requests),
        device_arrays=requested_device_arrays(requests, manifest, residency), language=language,
    )  # fmt: skip
    if built.program is None:
        return _build_failure(kernel, precision, ranks, built.log)
    device = requested_device_arrays(requests, manifest, residency)
    # Every rep on inputs of its own (a device-tile driver stages one set for all its reps).
    inputs = [
        kernels.make_inputs(manifest, sizes, rep_seed(seed, index), NUMPY_DTYPES[precision])
        for index in range(1 if device else warmup + reps)
    ]
    return grade_distributed(
        built.program, kernel, precision, plan, sizes, scalars, inputs[0] if device else inputs,
        kernels.load_reference(manifest.name).reference, directory / f"ranks_{ranks}",
        reps=reps, warmup=warmup, launcher=launcher, hostfile=hostfile, timeout_s=timeout_s,
        tolerance=band, limits=limits, casts=requested_casts(requests), device=bool(device),
    )  # fmt: skip


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
    kernel = DistributedKernel.from_manifest(manifest)
    sizes = manifest.preset_sizes(preset)
    built = build_driver(
        kernel, precision, source, build_directory or directory / "build",
        casts=requested_casts(requests),
        device_arrays=requested_device_arrays(requests, manifest, residency),
    )  # fmt: skip
    if built.program is None:
        raise RuntimeError(f"the MPI build failed: {built.log.strip()[-2000:]}")

    def plan_at(extents: tuple[int, ...]) -> GridPlan:
        count = 1
        for extent in extents:
            count *= extent
        return lower_plan(requests, manifest, precision, count, sizes)

    return scale_submission(
        built.program, kernel, precision, list(requests.startup.grid), plan_at, sizes,
        manifest.preset_scalars(preset), kernels.make_inputs(manifest, sizes, seed, NUMPY_DTYPES[precision]),
        kernels.load_reference(manifest.name).reference, directory, rank_counts=rank_counts,
        reps=reps, warmup=warmup, launcher=launcher, hostfile=hostfile, timeout_s=timeout_s,
        limits=limits, casts=requested_casts(requests),
        device=bool(requested_device_arrays(requests, manifest, residency)),
    )  # fmt: skip
