"""Which rank owns which elements under a distribution plan: grid coordinates, per-axis ownership
(block, cyclic, block_cyclic), each rank's packed local tile, and scatter/gather in numpy by index."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from hb.distributed.local_layout import LocalLayout

SCHEMES = ("block", "cyclic", "block_cyclic")
LOCATIONS = ("host", "device")


class PlanError(ValueError):
    """A distribution plan the engine cannot read; the message names the array and axis."""


@dataclass(frozen=True)
class AxisSplit:
    """How one array dimension is handed to the grid: `grid_dim` None keeps it whole."""

    grid_dim: int | None
    scheme: str = "block"
    block_size: int = 1

    @property
    def cyclic_block(self) -> int | None:
        """The block of a cyclic family scheme (cyclic is block_cyclic(1)); None for block."""
        if self.scheme == "cyclic":
            return 1
        if self.scheme == "block_cyclic":
            return self.block_size
        return None

    def same_split(self, other: AxisSplit) -> bool:
        """Both axes cut the same way (same grid dimension, scheme and block)."""
        return self.grid_dim == other.grid_dim and (
            self.grid_dim is None or self.cyclic_block == other.cyclic_block
        )


@dataclass(frozen=True)
class ArrayPlan:
    """One array's distribution: replicated whole on every rank, or one AxisSplit per dimension."""

    replicated: bool = False
    axes: tuple[AxisSplit, ...] = ()
    location: str | None = None

    @property
    def distributed_grid_dims(self) -> frozenset[int]:
        return frozenset(a.grid_dim for a in self.axes if a.grid_dim is not None)


@dataclass(frozen=True)
class GridPlan:
    """A whole distribution plan: the grid's extents, each array's ArrayPlan and, for an array
    whose tile the program lays out other than row-major in global order, its LocalLayout (not
    part of the plan's JSON: the digit program over the grid carries it)."""

    grid: tuple[int, ...]
    arrays: Mapping[str, ArrayPlan]
    local: Mapping[str, LocalLayout] = field(default_factory=dict)

    @property
    def ranks(self) -> int:
        return int(np.prod(self.grid)) if self.grid else 1

    def to_json(self) -> dict[str, Any]:
        """The plan as relayout's DistributionPlan JSON, every default left out."""
        arrays: dict[str, Any] = {}
        for name, array in self.arrays.items():
            entry: dict[str, Any] = {}
            if array.replicated:
                entry["replicated"] = True
            else:
                axes = []
                for axis in array.axes:
                    written: dict[str, Any] = {"grid_dim": axis.grid_dim}
                    if axis.grid_dim is not None and axis.scheme != "block":
                        written["scheme"] = axis.scheme
                    if axis.grid_dim is not None and axis.scheme == "block_cyclic":
                        written["block_size"] = axis.block_size
                    axes.append(written)
                entry["axes"] = axes
            if array.location is not None:
                entry["location"] = array.location
            arrays[name] = entry
        return {"grid": list(self.grid), "arrays": arrays}


def _as_mapping(plan: Any) -> Mapping[str, Any]:
    if isinstance(plan, GridPlan):
        return plan.to_json()
    if hasattr(plan, "model_dump"):
        # relayout's pydantic DistributionPlan: its JSON is the contract, so read that view.
        return plan.model_dump(mode="json", exclude_defaults=True)
    if isinstance(plan, Mapping):
        return plan
    raise PlanError(
        f"a distribution plan is a DistributionPlan model or its JSON dict, not {type(plan).__name__}"
    )


def _read_object(where: str, raw: Any, what: str, fields: tuple[str, ...]) -> Mapping[str, Any]:
    """`raw` as a plan entry: an object (`what` says which) holding only `fields`."""
    if not isinstance(raw, Mapping):
        raise PlanError(f"{where}: expected {what}, got {raw!r}")
    unknown = set(raw) - set(fields)
    if unknown:
        raise PlanError(f"{where}: unknown fields {sorted(unknown)}; expected {', '.join(fields)}")
    return raw


def _is_positive_int(value: Any) -> bool:
    # bool is an int to Python, but `true` is no extent or block size in a plan.
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _read_axis(name: str, index: int, raw: Any, grid: tuple[int, ...]) -> AxisSplit:
    where = f"plan.arrays.{name}.axes[{index}]"
    raw = _read_object(where, raw, "an object with grid_dim", ("grid_dim", "scheme", "block_size"))
    grid_dim = raw.get("grid_dim")
    scheme = raw.get("scheme") or "block"
    block_size = raw.get("block_size", 1)
    if block_size is None:
        block_size = 1
    if grid_dim is not None:
        if isinstance(grid_dim, bool) or not isinstance(grid_dim, int):
            raise PlanError(f"{where}.grid_dim: expected an integer or null, got {grid_dim!r}")
        if not 0 <= grid_dim < len(grid):
            raise PlanError(
                f"{where}.grid_dim: {grid_dim} is outside the {len(grid)}-D grid {list(grid)}; "
                f"expected 0..{len(grid) - 1} or null"
            )
    if scheme not in SCHEMES:
        raise PlanError(f"{where}.scheme: {scheme!r} is not one of {list(SCHEMES)}")
    if not _is_positive_int(block_size):
        raise PlanError(f"{where}.block_size: expected a positive integer, got {block_size!r}")
    return AxisSplit(grid_dim=grid_dim, scheme=scheme, block_size=block_size)


def read_plan(plan: Any) -> GridPlan:
    """The plan (relayout's DistributionPlan, its JSON dict, or a GridPlan) checked and normalised.

    Raises PlanError naming the entry: an unknown field, a grid_dim outside the grid, a grid
    dimension used twice by one array, an unknown scheme or location.
    """
    raw = _as_mapping(plan)
    grid_raw = raw.get("grid")
    if not isinstance(grid_raw, Sequence) or isinstance(grid_raw, str) or not grid_raw:
        raise PlanError(
            f"plan.grid: expected a non-empty list of positive extents, got {grid_raw!r}"
        )
    grid = tuple(grid_raw)
    for position, extent in enumerate(grid):
        if not _is_positive_int(extent):
            raise PlanError(f"plan.grid[{position}]: expected a positive integer, got {extent!r}")
    arrays_raw = raw.get("arrays") or {}
    if not isinstance(arrays_raw, Mapping):
        raise PlanError(
            f"plan.arrays: expected an object of array name -> plan, got {arrays_raw!r}"
        )
    arrays: dict[str, ArrayPlan] = {}
    for name, entry in arrays_raw.items():
        where = f"plan.arrays.{name}"
        entry = _read_object(where, entry, "an object", ("replicated", "axes", "location"))
        location = entry.get("location")
        if location is not None and location not in LOCATIONS:
            raise PlanError(f"{where}.location: {location!r} is not one of {list(LOCATIONS)}")
        if entry.get("replicated"):
            if entry.get("axes"):
                raise PlanError(f"{where}: a replicated array takes no axes")
            arrays[name] = ArrayPlan(replicated=True, location=location)
            continue
        axes_raw = entry.get("axes")
        if not isinstance(axes_raw, Sequence) or isinstance(axes_raw, str) or not axes_raw:
            raise PlanError(f"{where}: expected replicated: true or one axes entry per dimension")
        axes = tuple(_read_axis(name, i, a, grid) for i, a in enumerate(axes_raw))
        used = [a.grid_dim for a in axes if a.grid_dim is not None]
        if len(used) != len(set(used)):
            raise PlanError(f"{where}.axes: grid dimension used by more than one axis: {used}")
        arrays[name] = ArrayPlan(axes=axes, location=location)
    local = dict(plan.local) if isinstance(plan, GridPlan) else {}
    unknown = sorted(set(local) - set(arrays))
    if unknown:
        raise PlanError(f"plan.local: local layouts for {unknown}, which the plan does not hold")
    return GridPlan(grid=grid, arrays=arrays, local=local)


# ---------------------------------------------------------------------------------------------
# One axis


def axis_count(extent: int, parts: int, coord: int, axis: AxisSplit) -> int:
    """How many of an axis's `extent` indices grid coordinate `coord` of `parts` owns."""
    if axis.grid_dim is None:
        return extent
    block = axis.cyclic_block
    if block is None:
        # Balanced bands, as numpy.array_split: the first extent % parts bands one longer.
        return extent // parts + (1 if coord < extent % parts else 0)
    whole_blocks, tail = divmod(extent, block)
    count = (whole_blocks // parts) * block
    leftover = whole_blocks % parts
    if coord < leftover:
        count += block
    elif coord == leftover:
        count += tail
    return count


def axis_indices(extent: int, parts: int, coord: int, axis: AxisSplit) -> np.ndarray:
    """The global indices coordinate `coord` owns along one axis, ascending (its local order)."""
    if axis.grid_dim is None:
        return np.arange(extent, dtype=np.int64)
    block = axis.cyclic_block
    if block is None:
        base, longer = divmod(extent, parts)
        start = coord * base + min(coord, longer)
        return np.arange(start, start + base + (1 if coord < longer else 0), dtype=np.int64)
    starts = np.arange(coord * block, extent, parts * block, dtype=np.int64)
    if starts.size == 0:
        return np.zeros(0, dtype=np.int64)
    indices = (starts[:, None] + np.arange(block, dtype=np.int64)[None, :]).ravel()
    return indices[indices < extent]


def axis_owner(index: np.ndarray | int, extent: int, parts: int, axis: AxisSplit) -> Any:
    """The grid coordinate that owns global `index` along one axis (0 for a whole axis)."""
    index = np.asarray(index, dtype=np.int64)
    if axis.grid_dim is None:
        return np.zeros_like(index)
    block = axis.cyclic_block
    if block is None:
        base, longer = divmod(extent, parts)
        # The first `longer` bands have base + 1 elements, the rest base.
        boundary = longer * (base + 1)
        in_long = index < boundary
        short_owner = longer + (index - boundary) // max(base, 1)
        return np.where(in_long, index // (base + 1), short_owner)
    return (index // block) % parts


# ---------------------------------------------------------------------------------------------
# Ranks and tiles


def rank_coords(rank: int, grid: Sequence[int]) -> tuple[int, ...]:
    """A rank's grid coordinates, row-major: rank = c0 * P1 + c1 on a 2-D grid."""
    total = int(np.prod(grid))
    if not 0 <= rank < total:
        raise ValueError(f"rank {rank} is outside a grid of {total} ranks {list(grid)}")
    return tuple(int(c) for c in np.unravel_index(rank, tuple(grid)))


def coords_rank(coords: Sequence[int], grid: Sequence[int]) -> int:
    """The rank at grid coordinates `coords` (row-major)."""
    return int(np.ravel_multi_index(tuple(coords), tuple(grid)))


def _array_plan(plan: GridPlan, name: str, ndim: int) -> ArrayPlan:
    if name not in plan.arrays:
        raise PlanError(f"plan.arrays: array {name!r} is neither distributed nor replicated")
    array = plan.arrays[name]
    if not array.replicated and len(array.axes) != ndim:
        raise PlanError(
            f"plan.arrays.{name}.axes: {len(array.axes)} entries for a {ndim}-D array; "
            f"expected one per dimension"
        )
    return array


def local_axis_indices(
    plan: GridPlan, name: str, shape: Sequence[int], rank: int
) -> tuple[np.ndarray, ...]:
    """Per axis, the global indices `rank` holds of array `name` (every index when replicated)."""
    array = _array_plan(plan, name, len(shape))
    if array.replicated:
        return tuple(np.arange(e, dtype=np.int64) for e in shape)
    coords = rank_coords(rank, plan.grid)
    result = []
    for extent, axis in zip(shape, array.axes, strict=True):
        if axis.grid_dim is None:
            result.append(np.arange(extent, dtype=np.int64))
        else:
            result.append(
                axis_indices(extent, plan.grid[axis.grid_dim], coords[axis.grid_dim], axis)
            )
    return tuple(result)


def local_shape(plan: GridPlan, name: str, shape: Sequence[int], rank: int) -> tuple[int, ...]:
    """The extents of `rank`'s local tile of array `name` (global `shape`)."""
    array = _array_plan(plan, name, len(shape))
    if array.replicated:
        return tuple(shape)
    coords = rank_coords(rank, plan.grid)
    return tuple(
        extent
        if axis.grid_dim is None
        else axis_count(extent, plan.grid[axis.grid_dim], coords[axis.grid_dim], axis)
        for extent, axis in zip(shape, array.axes, strict=True)
    )


def tile_extents(plan: GridPlan, name: str, shape: Sequence[int], rank: int) -> tuple[int, ...]:
    """The extents of `rank`'s packed tile buffer of array `name`: the owned block's (local_shape)
    or, under a local layout, the extents of its digits in the order the program leaves them."""
    owned = local_shape(plan, name, shape, rank)
    layout = plan.local.get(name)
    return owned if layout is None else layout.packed_extents(owned)


def tile_flat_indices(plan: GridPlan, name: str, shape: Sequence[int], rank: int) -> np.ndarray:
    """The row-major flat global index of every element of `rank`'s packed tile, in tile order;
    -1 marks a dead cell of a local layout (it reads zero and is dropped on the gather)."""
    per_axis = local_axis_indices(plan, name, shape, rank)
    if any(len(ix) == 0 for ix in per_axis):
        owned_global = np.zeros(0, dtype=np.int64)
    else:
        owned_global = (
            np.ravel_multi_index(np.ix_(*per_axis), tuple(shape)).astype(np.int64).ravel()
        )
    layout = plan.local.get(name)
    if layout is None:
        return owned_global
    positions = layout.positions(tuple(len(ix) for ix in per_axis))
    if owned_global.size == 0:
        return np.full(positions.shape, -1, dtype=np.int64)
    return np.where(positions >= 0, owned_global[np.maximum(positions, 0)], -1).astype(np.int64)


def is_primary_holder(plan: GridPlan, name: str, rank: int) -> bool:
    """Whether `rank`'s tile is the one gathered back: a tile held by several ranks (replicated,
    or spread over fewer grid dimensions than the grid has) is read from the rank whose
    coordinates on every grid dimension the array does not use are 0."""
    array = plan.arrays[name]
    if array.replicated:
        return rank == 0
    coords = rank_coords(rank, plan.grid)
    used = array.distributed_grid_dims
    return all(c == 0 for d, c in enumerate(coords) if d not in used)


def scatter(plan: GridPlan, name: str, whole: np.ndarray) -> list[np.ndarray]:
    """Each rank's packed local tile of `whole` (copies, in rank order; dead cells zero)."""
    flat = np.ascontiguousarray(whole).reshape(-1)
    tiles = []
    for rank in range(plan.ranks):
        index = tile_flat_indices(plan, name, whole.shape, rank)
        tile = np.where(index >= 0, flat[np.maximum(index, 0)] if flat.size else 0, 0)
        tiles.append(tile.astype(whole.dtype).reshape(tile_extents(plan, name, whole.shape, rank)))
    return tiles


def gather(
    plan: GridPlan, name: str, tiles: Sequence[np.ndarray], shape: Sequence[int]
) -> np.ndarray:
    """The whole array back from the ranks' tiles (each element from its primary holder; dead
    cells of a local layout are dropped)."""
    if len(tiles) != plan.ranks:
        raise ValueError(f"gather {name!r}: {len(tiles)} tiles for {plan.ranks} ranks")
    whole = np.empty(tuple(shape), dtype=tiles[0].dtype)
    flat = whole.reshape(-1)
    for rank, tile in enumerate(tiles):
        if not is_primary_holder(plan, name, rank):
            continue
        expected = tile_extents(plan, name, shape, rank)
        if tuple(tile.shape) != expected:
            raise ValueError(
                f"gather {name!r}: rank {rank}'s tile is {tile.shape}, expected {expected}"
            )
        index = tile_flat_indices(plan, name, shape, rank)
        live = index >= 0
        flat[index[live]] = np.ascontiguousarray(tile).reshape(-1)[live]
    return whole
