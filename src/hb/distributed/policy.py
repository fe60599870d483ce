"""What a distributed grade accepts: a kernel's default plan at a rank count, and the refusals on a
lowered plan (unplaced arrays, replication and layout allowlists, cyclic grids, device placement,
casts), each naming the array and saying what would be accepted."""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from hb.distributed.driver import device_toolchain_refusal
from hb.distributed.signature import grid_at
from hb.kernels import Manifest
from relayout.distribution import Distribution
from relayout.models import Requests
from relayout.plan import ArrayPlan


def default_grid(manifest: Any) -> list[str]:
    """The grid extents over P the kernel's default distribution uses ([] when it has none)."""
    if not manifest.distribution:
        return []
    return [str(extent) for extent in manifest.distribution.get("grid", [])]


def default_plan(kernel: Manifest, ranks: int) -> Distribution:
    """The kernel's manifest distribution at `ranks` ranks (its grid evaluated there);
    ValueError when it has none or its grid does not span `ranks`."""
    distribution = kernel.distribution
    if not distribution:
        raise ValueError(f"{kernel.name}: the manifest has no distribution")
    extents, note = grid_at(distribution.get("grid", ["P"]), ranks)
    if extents is None:
        raise ValueError(
            f"{kernel.name}: the default distribution does not run on {ranks} ranks: {note}"
        )
    return Distribution.of({"grid": list(extents), "arrays": distribution.get("arrays", {})})


def default_requests(manifest: Any, ranks: int = 4) -> Requests:
    """The kernel's default distribution as short-form distribute / replicate operations
    (Requests.from_plan at `ranks`), with the grid kept as the manifest's expressions over P."""
    plan = default_plan(manifest, ranks)
    document = Requests.from_plan(plan.plan).to_dict()
    document.setdefault("startup", {})["grid"] = default_grid(manifest)
    return Requests.validate(document)


def _listed(allowlist: Collection[str], kernel: str, array: str) -> bool:
    return kernel in allowlist or f"{kernel}.{array}" in allowlist


def _same_layout(a: ArrayPlan, b: ArrayPlan) -> bool:
    if a.replicated or b.replicated:
        return a.replicated == b.replicated
    return len(a.axes) == len(b.axes) and all(
        x.same_split(y) for x, y in zip(a.axes, b.axes, strict=True)
    )


def _default_on_grid(kernel: Manifest, grid: tuple[int, ...]) -> Distribution | None:
    """The default distribution's array layouts on `grid`; None when the kernel has none or its
    default grid has another number of dimensions (then every layout differs from it)."""
    distribution = kernel.distribution
    if not distribution or len(distribution.get("grid", ["P"])) != len(grid):
        return None
    return Distribution.of({"grid": list(grid), "arrays": distribution.get("arrays", {})})


def plan_refusal(
    kernel: Manifest,
    plan: Any,
    *,
    replicatable_allowlist: Collection[str] | None = None,
    layout_flexible_allowlist: Collection[str] | None = None,
) -> str | None:
    """Why a lowered plan cannot be graded for `kernel`, or None.

    - every array must be distributed or replicated (an array left untouched is named);
    - a plan entry must name an array of the kernel, with one axis per dimension;
    - a plan relayout would not give back (a cyclic axis on an unequal grid, ...) is named;
    - replicatable_allowlist (None: no restriction): an array the default distribution does not
      replicate may be replicated only when "<kernel>" or "<kernel>.<array>" is listed;
    - layout_flexible_allowlist (None: no restriction): an array may be laid out differently from
      the default distribution only when "<kernel>" or "<kernel>.<array>" is listed.
    """
    try:
        lowered = Distribution.of(plan)
    except ValueError as error:
        return str(error)
    names = [a.name for a in kernel.arrays]
    for name in lowered.arrays:
        if name not in names:
            return (
                f"plan.arrays.{name}: {kernel.name} has no array {name!r}; its arrays are {names}"
            )
    missing = [name for name in names if name not in lowered.arrays]
    if missing:
        return (
            f"arrays {missing} are neither distributed nor replicated; on a distributed grade every "
            f"array of {kernel.name} needs a distribute or a replicate"
        )
    default = _default_on_grid(kernel, lowered.grid)
    for array in kernel.arrays:
        entry = lowered.arrays[array.name]
        if not entry.replicated and not entry.distributed_grid_dims:
            return (
                f"plan.arrays.{array.name}: {kernel.name}.{array.name} is neither distributed nor "
                f"replicated (every axis kept whole); distribute a dimension or replicate it"
            )
        if not entry.replicated and len(entry.axes) != len(array.shape):
            return (
                f"plan.arrays.{array.name}.axes: {len(entry.axes)} entries for a "
                f"{len(array.shape)}-D array; expected one per dimension"
            )
        default_entry = default.arrays.get(array.name) if default is not None else None
        if (
            entry.replicated
            and replicatable_allowlist is not None
            and not (default_entry is not None and default_entry.replicated)
            and not _listed(replicatable_allowlist, kernel.name, array.name)
        ):
            return (
                f"plan.arrays.{array.name}: {kernel.name}.{array.name} may not be replicated here "
                f"(not in replicatable_allowlist); distribute it"
            )
        if (
            layout_flexible_allowlist is not None
            and not _listed(layout_flexible_allowlist, kernel.name, array.name)
            and (default_entry is None or not _same_layout(entry, default_entry))
        ):
            expected = default.to_json()["arrays"].get(array.name) if default is not None else None
            return (
                f"plan.arrays.{array.name}: {kernel.name}.{array.name} must keep the default "
                f"distribution (not in layout_flexible_allowlist); expected {expected}"
            )
    return None


def device_available() -> tuple[bool, str]:
    """Whether device tiles can be placed here: the CUDA driver (libcuda) loads and counts at
    least one device. The generated driver talks to the CUDA runtime itself, so cupy is not
    needed."""
    library = ctypes.util.find_library("cuda")
    if library is None:
        return False, "no CUDA driver (libcuda) on this host"
    try:
        cuda = ctypes.CDLL(library)
        status = cuda.cuInit(0)
        if status != 0:
            return False, f"the CUDA driver does not start (cuInit returned {status})"
        count = ctypes.c_int(0)
        status = cuda.cuDeviceGetCount(ctypes.byref(count))
    except OSError as error:
        return False, f"the CUDA driver does not load: {error}"
    if status != 0 or count.value < 1:
        return False, "the CUDA driver finds no device"
    return True, f"{count.value} CUDA device(s)"


def device_arrays(plan: Any, residency: str = "host") -> list[str]:
    """The arrays whose tiles live in device memory: placed on device, or left unplaced under a
    run-wide mpi.residency of device."""
    lowered = Distribution.of(plan)
    return sorted(
        name for name, array in lowered.arrays.items() if (array.location or residency) == "device"
    )


def place_refusal(
    plan: Any | None,
    *,
    distributed: bool,
    residency: str = "host",
    operations: Sequence[Any] = (),
) -> str | None:
    """Why the plan's place operations (and the run-wide `residency`) cannot be honoured, or None.

    place is refused on a single-node grade. Device tiles need a CUDA device (cupy finds one) and
    the CUDA toolchain that builds the driver (nvcc and the runtime headers); where either is
    missing the refusal says which, naming the place operation of `operations` (the request's)
    that put an array there, or mpi.residency when no place did.
    """
    if plan is None:
        return None
    lowered = Distribution.of(plan)
    placed = sorted(name for name, a in lowered.arrays.items() if a.location is not None)
    if placed and not distributed:
        return f"place ({', '.join(placed)}): a single-node grade takes no place; place needs startup.grid"
    on_device = device_arrays(lowered, residency)
    if not on_device:
        return None
    available, why = device_available()
    if available:
        missing = device_toolchain_refusal()
        if not missing:
            return None
        why = missing
    placed_on_device = [n for n in on_device if lowered.arrays[n].location == "device"]
    if placed_on_device:
        for index, operation in enumerate(operations):
            if (
                getattr(operation, "action", None) == "place"
                and getattr(operation, "on", None) == "device"
                and getattr(operation, "array", None) in placed_on_device
            ):
                return (
                    f"operations[{index}] (place): {operation.array} on device: {why}; "
                    "use location host"
                )
        return f"place ({', '.join(placed_on_device)}) on device: {why}; use location host"
    return (
        f"mpi.residency (device): the unplaced arrays ({', '.join(on_device)}) would live on "
        f"device: {why}; set mpi.residency to host, or place them on host"
    )


def distributed_cast_refusal(
    plan: Any, casts: Mapping[str, str], residency: str = "host"
) -> str | None:
    """Casts on a distributed grade: the driver inlines relayout's host cast kernels around each
    repeat, so a cast of a device-resident tile is refused (spec §1); the cast's own checks are
    hb.distributed.driver.cast_refusal."""
    if not casts:
        return None
    on_device = sorted(set(casts) & set(device_arrays(plan, residency)))
    if on_device:
        return f"cast ({', '.join(on_device)}): a device-resident MPI tile takes no cast; place it on host"
    return None


__all__ = [
    "default_grid",
    "default_plan",
    "default_requests",
    "device_arrays",
    "device_available",
    "distributed_cast_refusal",
    "place_refusal",
    "plan_refusal",
]
