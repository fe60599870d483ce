"""Laws of per-rank ownership: counts against numroc-style formulas, indices that partition every
axis, owners that agree with indices, block as numpy.array_split, and scatter-then-gather as the
identity on every plan shape (1-D and 2-D grids, replication, arrays over fewer grid dimensions)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hb.distributed.tiles import (
    AxisSplit,
    PlanError,
    axis_count,
    axis_indices,
    axis_owner,
    coords_rank,
    gather,
    is_primary_holder,
    local_shape,
    rank_coords,
    read_plan,
    scatter,
    tile_flat_indices,
)


def numroc(extent: int, block: int, coord: int, parts: int) -> int:
    """ScaLAPACK's NUMROC with source process 0, written from its definition."""
    blocks = extent // block
    count = (blocks // parts) * block
    extra_blocks = blocks % parts
    if coord < extra_blocks:
        count += block
    elif coord == extra_blocks:
        count += extent % block
    return count


def split_axis(scheme: str, block: int) -> AxisSplit:
    return AxisSplit(grid_dim=0, scheme=scheme, block_size=block if scheme == "block_cyclic" else 1)


schemes = st.sampled_from(["block", "cyclic", "block_cyclic"])


@settings(max_examples=150)
@given(
    extent=st.integers(0, 200), parts=st.integers(1, 9), block=st.integers(1, 12), scheme=schemes
)
def test_indices_partition_the_axis_and_agree_with_owner_and_count(
    extent: int, parts: int, block: int, scheme: str
) -> None:
    axis = split_axis(scheme, block)
    seen = []
    for coord in range(parts):
        owned = axis_indices(extent, parts, coord, axis)
        assert len(owned) == axis_count(extent, parts, coord, axis)
        assert np.all(np.diff(owned) > 0), "local order is ascending global order"
        assert np.all(axis_owner(owned, extent, parts, axis) == coord)
        seen.append(owned)
    assert np.array_equal(np.sort(np.concatenate(seen)), np.arange(extent))


@settings(max_examples=100)
@given(extent=st.integers(0, 300), parts=st.integers(1, 9), block=st.integers(1, 16))
def test_cyclic_counts_are_numroc(extent: int, parts: int, block: int) -> None:
    for coord in range(parts):
        assert axis_count(extent, parts, coord, split_axis("block_cyclic", block)) == numroc(
            extent, block, coord, parts
        )
        assert axis_count(extent, parts, coord, split_axis("cyclic", 1)) == numroc(
            extent, 1, coord, parts
        )


@settings(max_examples=100)
@given(extent=st.integers(0, 300), parts=st.integers(1, 9))
def test_block_is_array_split(extent: int, parts: int) -> None:
    bands = np.array_split(np.arange(extent), parts)
    for coord, band in enumerate(bands):
        assert np.array_equal(axis_indices(extent, parts, coord, split_axis("block", 1)), band)


def test_block_cyclic_owner_is_block_index_mod_parts() -> None:
    axis = split_axis("block_cyclic", 3)
    index = np.arange(40)
    assert np.array_equal(axis_owner(index, 40, 4, axis), (index // 3) % 4)
    assert list(axis_indices(20, 3, 1, axis)) == [3, 4, 5, 12, 13, 14]


def test_ranks_map_to_grid_coordinates_row_major() -> None:
    assert [rank_coords(r, (2, 3)) for r in range(6)] == [
        (0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2),
    ]  # fmt: skip
    assert all(coords_rank(rank_coords(r, (2, 3)), (2, 3)) == r for r in range(6))
    with pytest.raises(ValueError, match="outside a grid of 6 ranks"):
        rank_coords(6, (2, 3))


@st.composite
def plans_and_shapes(draw: st.DrawFn) -> tuple[dict, tuple[int, ...]]:
    ndim_grid = draw(st.integers(1, 2))
    grid = [draw(st.integers(1, 3)) for _ in range(ndim_grid)]
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(0, 9)) for _ in range(ndim))
    if draw(st.booleans()) and draw(st.booleans()):
        return {"grid": grid, "arrays": {"A": {"replicated": True}}}, shape
    free_dims = list(range(ndim_grid))
    axes = []
    for _ in range(ndim):
        choice = draw(st.sampled_from([None, *free_dims]))
        if choice is None:
            axes.append({"grid_dim": None})
            continue
        free_dims.remove(choice)
        scheme = draw(schemes)
        axis = {"grid_dim": choice, "scheme": scheme}
        if scheme == "block_cyclic":
            axis["block_size"] = draw(st.integers(1, 4))
        axes.append(axis)
    return {"grid": grid, "arrays": {"A": {"axes": axes}}}, shape


@settings(max_examples=120)
@given(plans_and_shapes())
def test_scatter_then_gather_is_the_identity(case: tuple[dict, tuple[int, ...]]) -> None:
    raw, shape = case
    plan = read_plan(raw)
    whole = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    tiles = scatter(plan, "A", whole)
    for rank, tile in enumerate(tiles):
        assert tile.shape == local_shape(plan, "A", shape, rank)
        assert np.array_equal(
            tile.ravel(), whole.ravel()[tile_flat_indices(plan, "A", shape, rank)]
        )
    assert np.array_equal(gather(plan, "A", tiles, shape), whole)
    # Each element is gathered from exactly one primary holder.
    primary = [r for r in range(plan.ranks) if is_primary_holder(plan, "A", r)]
    owned = np.concatenate(
        [tile_flat_indices(plan, "A", shape, r) for r in primary] or [np.zeros(0)]
    )
    assert np.array_equal(np.sort(owned), np.arange(whole.size))


def test_two_d_block_cyclic_tile_of_one_rank() -> None:
    plan = read_plan(
        {
            "grid": [2, 2],
            "arrays": {
                "A": {
                    "axes": [
                        {"grid_dim": 0, "scheme": "block_cyclic", "block_size": 2},
                        {"grid_dim": 1, "scheme": "cyclic"},
                    ]
                }
            },
        }
    )
    whole = np.arange(36).reshape(6, 6)
    # rank 2 is grid coordinates (1, 0): rows 2, 3 (block 1 of three of size 2), even columns.
    assert np.array_equal(scatter(plan, "A", whole)[2], whole[[2, 3]][:, [0, 2, 4]])


def test_read_plan_accepts_relayouts_model_and_json_alike() -> None:
    from relayout.plan import DistributionPlan

    document = {
        "grid": [2, 2],
        "arrays": {
            "A": {
                "axes": [
                    {"grid_dim": 0, "scheme": "block_cyclic", "block_size": 32},
                    {"grid_dim": None},
                ]
            },
            "x": {"replicated": True},
        },
    }
    from_model = read_plan(DistributionPlan.model_validate(document))
    assert from_model == read_plan(document)
    assert from_model.to_json() == document
    assert from_model.arrays["A"].axes[1] == AxisSplit(grid_dim=None)


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"grid": [], "arrays": {}}, "plan.grid: expected a non-empty list"),
        ({"grid": [2], "arrays": {"A": {"axes": [{"grid_dim": 1}]}}}, r"plan.arrays.A.axes\[0\].grid_dim: 1 is outside"),
        ({"grid": [2], "arrays": {"A": {"axes": [{"grid_dim": 0, "scheme": "snake"}]}}}, "scheme: 'snake' is not one of"),
        ({"grid": [2, 2], "arrays": {"A": {"axes": [{"grid_dim": 0}, {"grid_dim": 0}]}}}, "used by more than one axis"),
        ({"grid": [2], "arrays": {"A": {"replicated": True, "axes": [{"grid_dim": 0}]}}}, "replicated array takes no axes"),
        ({"grid": [2], "arrays": {"A": {"axes": [{"grid_dim": 0}], "local": 1}}}, r"unknown fields \['local'\]"),
        ({"grid": [2], "arrays": {"A": {"axes": [{"grid_dim": 0}], "location": "disk"}}}, "location: 'disk'"),
    ],
)  # fmt: skip
def test_read_plan_refuses_with_the_entry(document: dict, message: str) -> None:
    with pytest.raises(PlanError, match=message):
        read_plan(document)


def test_tiles_of_an_array_not_in_the_plan_are_refused_by_name() -> None:
    plan = read_plan({"grid": [2], "arrays": {"A": {"axes": [{"grid_dim": 0}]}}})
    with pytest.raises(PlanError, match="'B' is neither distributed nor replicated"):
        local_shape(plan, "B", (4,), 0)
