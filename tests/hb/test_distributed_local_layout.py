"""Digit operations over the grid: the local program each array's operations leave once the
distributions are taken out, each rank's packed tile (local digits in the program's order, dead
cells of a kept-local cut), the entry point's tile comments, and grades under mpiexec on 2 and 4
ranks with kernels that read their tiles so, and one that does not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hb.distributed.driver import build_driver, mpicc_path, mpiexec_path
from hb.distributed.engine import grade_distributed
from hb.distributed.grade import distributed_refusal, grade_submission, lower_plan
from hb.distributed.signature import describe_plan, entry_signature
from hb.kernels import CATALOG_DIR, load_manifest, load_reference
from relayout.distribution import local_layouts
from relayout.models import Requests

requires_mpi = pytest.mark.skipif(
    not (Path(mpicc_path()).exists() and Path(mpiexec_path()).exists()),
    reason="MPICH's mpicc and mpiexec are not beside the interpreter (make setup installs them)",
)

# 2 x 1 on two ranks, 2 x 2 on four: a 2-D grid at both counts.
TWO_D_GRID = ["min(P, 2)", "P // min(P, 2)"]


def requests(grid: list[str], *operations: dict[str, Any]) -> Requests:
    return Requests.validate({"startup": {"grid": grid}, "operations": list(operations)})


def distribute(array: str, dim: int = 0, grid_dim: int = 0, **extra: object) -> dict[str, Any]:
    return {"action": "distribute", "array": array, "grid_dim": grid_dim, "dim": dim, **extra}


def permute(array: str, *order: str) -> dict[str, Any]:
    return {"action": "permute", "array": array, "order": list(order)}


def block(array: str, digit: str, factor: int | str, into: list[str]) -> dict[str, Any]:
    return {"action": "block", "array": array, "digit": digit, "factor": factor, "into": into}


# x: split into P0 bands, the band dealt out, the rank's offset digit blocked by 4 and kept local.
SCALED_ADD_LOCAL_BLOCK = requests(
    ["P"],
    {"action": "split", "array": "x", "digit": "i0", "parts": "P0", "into": ["band", "offset"]},
    {"action": "distribute", "array": "x", "grid_dim": 0, "digit": "band"},
    block("x", "offset", 4, ["quad", "lane"]),
    distribute("y"),
)

# A and B in 2-D blocks; A's tile transposed on every rank.
MAT_TRANSPOSED_A = requests(
    TWO_D_GRID,
    distribute("A", 0, 0), distribute("A", 1, 1), distribute("B", 0, 0), distribute("B", 1, 1),
    permute("A", "i1", "i0"),
)  # fmt: skip

# Rows dealt out; B's whole column dimension blocked by 4 locally (its last block padded).
MAT_BLOCKED_B_COLUMNS = requests(
    ["P"], distribute("A"), distribute("B"), block("B", "i1", 4, ["c", "f"])
)


def local_programs(program: Requests, ranks: int, **sizes: int) -> dict[str, list[dict]]:
    env = {**sizes, "P": ranks, "P0": ranks}
    layouts = local_layouts(program, {name: 2 for name in ("A", "B")}, env)
    return {name: [dict(op) for op in layout.operations] for name, layout in layouts.items()}


def test_distributions_vanish_from_the_local_program_and_the_rest_stays() -> None:
    layouts = local_layouts(SCALED_ADD_LOCAL_BLOCK, {"x": 1, "y": 1}, {"N": 64, "P": 4, "P0": 4})
    assert list(layouts) == ["x"]  # y is row-major in global order: no local layout
    x = layouts["x"]
    # The offset digit is the rank's whole owned dimension, i0 of the local array.
    assert [dict(op) for op in x.operations] == [
        {"array": "x", "action": "block", "digit": "i0", "factor": 4, "into": ["quad", "lane"]}
    ]
    assert x.digits == ("quad", "lane")
    assert x.packed_extents((10,)) == (3, 4)
    assert list(x.positions((10,))) == [*range(10), -1, -1]
    # A permute of the two grid-dealt dimensions' digits is a transpose of the tile.
    assert local_programs(MAT_TRANSPOSED_A, 4) == {
        "A": [{"array": "A", "action": "permute", "order": ["i1", "i0"]}]
    }


def test_a_cyclic_dealt_block_is_one_axis_until_its_digits_are_named() -> None:
    dealt = [
        block("A", "i0", 4, ["c", "f"]),
        {"action": "distribute", "array": "A", "grid_dim": 0, "digit": "c", "scheme": "cyclic"},
        distribute("A", 1, 1), distribute("B", 0, 0), distribute("B", 1, 1),
    ]  # fmt: skip
    square = ["root(P, 2)", "root(P, 2)"]
    assert local_programs(requests(square, *dealt), 4) == {}
    # Kept in order by a permute, the rank's blocks stay one axis (no padding): an identity.
    kept = requests(square, *dealt, permute("A", "c", "f", "i1"))
    assert local_programs(kept, 4) == {}
    swapped = requests(square, *dealt, permute("A", "i1", "c", "f"))
    assert local_programs(swapped, 4) == {
        "A": [{"array": "A", "action": "permute", "order": ["i1", "i0"]}]
    }
    # Named apart, the owned dimension is cut locally by the block's factor first.
    apart = requests(square, *dealt, permute("A", "f", "i1", "c"))
    assert local_programs(apart, 4) == {
        "A": [
            {"array": "A", "action": "block", "digit": "i0", "factor": 4, "into": ["c", "f"]},
            {"array": "A", "action": "permute", "order": ["f", "i1", "c"]},
        ]
    }


@pytest.mark.parametrize("ranks", [2, 4])
@pytest.mark.parametrize(
    ("program", "shape"),
    [
        (MAT_TRANSPOSED_A, (11, 9)),
        (MAT_BLOCKED_B_COLUMNS, (7, 10)),
        (MAT_BLOCKED_B_COLUMNS, (5, 3)),
    ],
)
def test_live_tile_cells_cover_the_array_once_and_scatter_gather_is_the_identity(
    program: Requests, shape: tuple[int, int], ranks: int
) -> None:
    manifest = load_manifest("mat_scaled_add")
    plan = lower_plan(program, manifest, "fp64", ranks, None)
    whole = np.arange(np.prod(shape), dtype=np.float64).reshape(shape) + 1.0
    for name in ("A", "B"):
        seen = np.concatenate(
            [
                plan.tile_indices(name, shape, rank)
                for rank in range(plan.ranks)
                if plan.is_primary_holder(name, rank)
            ]
        )
        live = seen[seen >= 0]
        assert sorted(live.tolist()) == list(range(int(np.prod(shape))))
        tiles = plan.scatter(name, whole)
        for rank, tile in enumerate(tiles):
            assert tile.shape == plan.tile_extents(name, shape, rank)
            dead = plan.tile_indices(name, shape, rank) < 0
            assert np.all(tile.reshape(-1)[dead] == 0.0)
        assert np.array_equal(plan.gather(name, tiles, shape), whole)


def test_entry_point_and_description_show_the_packed_tiles() -> None:
    manifest = load_manifest("mat_scaled_add")
    kernel = manifest
    plan = lower_plan(MAT_BLOCKED_B_COLUMNS, manifest, "fp64", 2, {"M": 7, "N": 10})
    signature = entry_signature(kernel, "fp64", {}, plan)
    assert "double *restrict B /* [M][(N + 3) // 4][4] digits i0, c, f */" in signature
    described = describe_plan(kernel, plan, {"M": 7, "N": 10})
    assert described["local_layouts"]["B"]["digits"] == ["i0", "c", "f"]
    assert described["ranks"][1]["tiles"] == {"A": [3, 10], "B": [3, 3, 4]}
    assert described["ranks"][1]["owned"] == {"B": [3, 10]}
    transposed = lower_plan(MAT_TRANSPOSED_A, manifest, "fp64", 4, {"M": 7, "N": 10})
    assert "const double *restrict A /* [N][M] digits i1, i0 */" in entry_signature(
        kernel, "fp64", {}, transposed
    )


def test_what_stays_refused_over_a_grid() -> None:
    manifest = load_manifest("mat_scaled_add")
    padded = requests(
        ["P"], distribute("A"), distribute("B"),
        {"action": "pad", "array": "B", "digit": "i1", "amount": 3},
    )  # fmt: skip
    refusal = distributed_refusal(padded, manifest, "fp64", ranks=2) or ""
    assert refusal.startswith("operations[2] (pad): pad is single-node only")
    # A dealt dimension's digit can only be permuted (relayout's rule), so blocking it is refused.
    dealt = requests(["P"], distribute("A"), distribute("B"), block("A", "i0", 2, ["c", "f"]))
    refusal = distributed_refusal(dealt, manifest, "fp64", ranks=2) or ""
    assert refusal.startswith("operations[2] (block): digit 'i0' of A is distributed")
    for accepted in (SCALED_ADD_LOCAL_BLOCK, MAT_TRANSPOSED_A, MAT_BLOCKED_B_COLUMNS):
        name = "scaled_add" if accepted is SCALED_ADD_LOCAL_BLOCK else "mat_scaled_add"
        assert distributed_refusal(accepted, load_manifest(name), "fp64", ranks=4) is None


# ---------------------------------------------------------------------------------------------
# Under mpiexec

MAT_READS_A_TRANSPOSED = r"""
#include <mpi.h>
#include <stdint.h>
/* A's tile arrives transposed: [N][M] (local digits i1, i0). */
void mat_scaled_add_mpi_fp64(const double *restrict A, double *restrict B, int64_t M, int64_t N,
                             double alpha, MPI_Comm comm, void *workspace, int64_t workspace_bytes) {
    (void)comm; (void)workspace; (void)workspace_bytes;
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) B[i * N + j] += alpha * A[j * M + i];
}
"""

MAT_WRITES_B_BLOCKED = r"""
#include <mpi.h>
#include <stdint.h>
/* B's tile is [M][ceil(N/4)][4]: the columns blocked by 4, the last block padded. */
void mat_scaled_add_mpi_fp64(const double *restrict A, double *restrict B, int64_t M, int64_t N,
                             double alpha, MPI_Comm comm, void *workspace, int64_t workspace_bytes) {
    (void)comm; (void)workspace; (void)workspace_bytes;
    const int64_t blocks = (N + 3) / 4;
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
            double *cell = &B[(i * blocks + j / 4) * 4 + j % 4];
            *cell += alpha * A[i * N + j];
        }
    /* Dead cells read zero; writing them must not reach the gathered output. */
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = N; j < blocks * 4; ++j) {
            if (B[(i * blocks + j / 4) * 4 + j % 4] != 0.0) MPI_Abort(comm, 9);
            B[(i * blocks + j / 4) * 4 + j % 4] = 1.0e300;
        }
}
"""


@pytest.mark.mpi
@requires_mpi
@pytest.mark.parametrize("ranks", [2, 4])
def test_scaled_add_with_a_kept_local_block_of_the_band_offset(ranks: int, tmp_path: Path) -> None:
    manifest = load_manifest("scaled_add")
    result = grade_submission(
        manifest, SCALED_ADD_LOCAL_BLOCK, (CATALOG_DIR / "scaled_add" / "solution_mpi.c").read_text(),
        "fp64", ranks=ranks, directory=tmp_path, reps=2,
    )  # fmt: skip
    assert result.correct, result.failure or result.mismatches
    assert result.symbols == {"N": "local"}


@pytest.mark.mpi
@requires_mpi
@pytest.mark.parametrize("ranks", [2, 4])
def test_mat_scaled_add_reads_its_transposed_tile(ranks: int, tmp_path: Path) -> None:
    manifest = load_manifest("mat_scaled_add")
    aware = grade_submission(
        manifest, MAT_TRANSPOSED_A, MAT_READS_A_TRANSPOSED, "fp64", ranks=ranks,
        directory=tmp_path / "aware", reps=2,
    )  # fmt: skip
    assert aware.correct, aware.failure or aware.mismatches
    assert aware.grid == ((2, 1) if ranks == 2 else (2, 2))
    unaware = grade_submission(
        manifest, MAT_TRANSPOSED_A, (CATALOG_DIR / "mat_scaled_add" / "solution_mpi.c").read_text(),
        "fp64", ranks=ranks, directory=tmp_path / "unaware", reps=2,
    )  # fmt: skip
    assert unaware.failure is None and not unaware.correct and unaware.mismatches


@pytest.mark.mpi
@requires_mpi
def test_dead_cells_read_zero_and_are_dropped_on_the_gather(tmp_path: Path) -> None:
    manifest = load_manifest("mat_scaled_add")
    kernel = manifest
    sizes = {"M": 7, "N": 10}  # 10 columns in blocks of 4: two dead cells per row
    plan = lower_plan(MAT_BLOCKED_B_COLUMNS, manifest, "fp64", 2, sizes)
    built = build_driver(kernel, "fp64", MAT_WRITES_B_BLOCKED, tmp_path / "build")
    assert built.program is not None, built.log
    rng = np.random.default_rng(3)
    inputs = {name: rng.uniform(-1, 1, (7, 10)) for name in ("A", "B")}
    result = grade_distributed(
        built.program, kernel, "fp64", plan, sizes, {"alpha": -0.75}, inputs,
        load_reference("mat_scaled_add").reference, tmp_path / "run", reps=2, timeout_s=30.0,
    )  # fmt: skip
    assert result.correct, result.failure or result.mismatches


@pytest.mark.mpi
@requires_mpi
def test_the_judge_checks_and_grades_a_transposed_tile(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from hb.service import create_app
    from tests.hb.conftest import make_config

    config = make_config(tmp_path, requests={"allow": ["load", "distribute"]}, mpi={"ranks": 4})
    request = json.loads(MAT_TRANSPOSED_A.to_json())
    with TestClient(create_app(config)) as client:
        check = client.post(
            "/requests/check", json={"kernel": "mat_scaled_add", "requests": request}
        ).json()
        assert check["accepted"] is True, check
        assert "const double *restrict A /* [N][M] digits i1, i0 */" in check["signature"]
        distribution = check["distribution"]
        assert distribution["local_layouts"]["A"]["digits"] == ["i1", "i0"]
        # Preset S is 64 x 96 over 2 x 2: each rank's A tile is its 48 columns by 32 rows.
        assert [r["tiles"]["A"] for r in distribution["ranks"]] == [[48, 32]] * 4
        answer = client.post(
            "/score",
            json={
                "kernel": "mat_scaled_add",
                "source": MAT_READS_A_TRANSPOSED,
                "requests": request,
            },
        )
        assert answer.status_code == 200, answer.text
        assert answer.json()["correct"] is True, answer.json()


def test_a_replicated_array_under_a_local_layout_goes_by_its_index_file() -> None:
    from hb.distributed.engine import broadcast

    manifest = load_manifest("mat_scaled_add")
    program = requests(
        ["P"], {"action": "replicate", "array": "A"}, distribute("B"), permute("A", "i1", "i0")
    )
    plan = lower_plan(program, manifest, "fp64", 2, {"M": 2, "N": 3})
    assert not broadcast(plan, "A") and broadcast(
        lower_plan(requests(["P"], {"action": "replicate", "array": "A"}, distribute("B")),
                              manifest, "fp64", 2),
        "A",
    )  # fmt: skip
    for rank in range(2):
        assert plan.tile_indices("A", (2, 3), rank).tolist() == [0, 3, 1, 4, 2, 5]
    assert [plan.is_primary_holder("A", rank) for rank in range(2)] == [True, False]


def test_relayouts_inner_block_rule_holds_where_the_sizes_fix_it() -> None:
    manifest = load_manifest("scaled_add")
    for ranks in (2, 4):
        assert distributed_refusal(SCALED_ADD_LOCAL_BLOCK, manifest, "fp64", ranks=ranks) is None
    refusal = distributed_refusal(SCALED_ADD_LOCAL_BLOCK, manifest, "fp64", ranks=3) or ""
    assert refusal.startswith("operations[2] (block): factor 4 does not divide the extent")


SQUARE = ["root(P, 2)", "root(P, 2)"]
A_BANDS = [
    {"action": "split", "array": "A", "digit": "i0", "parts": "P0", "into": ["b0", "o0"]},
    {"action": "distribute", "array": "A", "grid_dim": 0, "digit": "b0"},
    {"action": "split", "array": "A", "digit": "i1", "parts": "P1", "into": ["b1", "o1"]},
    {"action": "distribute", "array": "A", "grid_dim": 1, "digit": "b1"},
    distribute("B", 0, 0),
    distribute("B", 1, 1),
]
A_DEALT_BLOCKS = [
    block("A", "i0", 3, ["c", "f"]),
    {"action": "distribute", "array": "A", "grid_dim": 0, "digit": "c", "scheme": "cyclic"},
    distribute("A", 1, 1),
    distribute("B", 0, 0),
    distribute("B", 1, 1),
]
A_KEPT_SPLIT = [
    distribute("A"),
    distribute("B"),
    {"action": "split", "array": "A", "digit": "i1", "parts": 3, "into": ["s", "t"]},
    permute("A", "t", "i0", "s"),
]


@pytest.mark.parametrize(
    ("grid", "operations", "digits"),
    [
        (SQUARE, [*A_BANDS, permute("A", "b1", "b0", "o1", "o0")], ("i1", "i0")),
        (
            SQUARE,
            [*A_BANDS, block("A", "o1", 2, ["c", "f"]), permute("A", "b0", "b1", "c", "o0", "f")],
            ("c", "i0", "f"),
        ),
        (SQUARE, [*A_DEALT_BLOCKS, permute("A", "f", "i1", "c")], ("f", "i1", "c")),
        (SQUARE, [*A_DEALT_BLOCKS, block("A", "f", 3, ["f1", "f2"])], ("c", "f1", "f2", "i1")),
        (["P"], A_KEPT_SPLIT, ("t", "i0", "s")),
        (
            ["P"],
            [*A_KEPT_SPLIT, permute("A", "i0", "s", "t"),
             {"action": "unsplit", "array": "A", "digits": ["s", "t"], "parts": 3, "into": "j"}],
            None,
        ),
    ],
)  # fmt: skip
def test_local_programs_cover_the_owned_cells_once(
    grid: list[str], operations: list[dict[str, Any]], digits: tuple[str, ...] | None
) -> None:
    manifest = load_manifest("mat_scaled_add")
    shape = (11, 7)
    program = requests(grid, *operations)
    assert distributed_refusal(program, manifest, "fp64", ranks=4) is None
    plan = lower_plan(program, manifest, "fp64", 4, {"M": shape[0], "N": shape[1]})
    # None: the operations leave the tile as the owned block (an unsplit undoes the split).
    assert (plan.local["A"].digits if "A" in plan.local else None) == digits
    for rank in range(plan.ranks):
        cells = plan.tile_indices("A", shape, rank)
        live = cells[cells >= 0]
        assert (
            len(set(live.tolist())) == live.size == int(np.prod(plan.owned_shape("A", shape, rank)))
        )
    whole = np.arange(77, dtype=np.float64).reshape(shape) + 1.0
    assert np.array_equal(plan.gather("A", plan.scatter("A", whole), shape), whole)
