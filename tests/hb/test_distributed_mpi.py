"""Distributed grades under mpiexec on 1, 2 and 4 ranks (4 oversubscribe the machine's 2 cores):
the generated driver with the catalog's MPI solutions, gathered outputs graded against numpy,
casts inlined around each repeat, a crashing and a hanging rank, a hostfile launch, and the
scaling curve with its PNG."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hb.distributed.driver import DriverBuild, build_driver, mpicc_path, mpiexec_path
from hb.distributed.engine import DistributedGrade, grade_distributed
from hb.distributed.grade import scale_submission
from hb.distributed.policy import default_plan
from hb.kernels import CATALOG_DIR, Manifest, load_manifest, load_reference

pytestmark = [
    pytest.mark.mpi,
    pytest.mark.skipif(
        not (Path(mpicc_path()).exists() and Path(mpiexec_path()).exists()),
        reason="MPICH's mpicc and mpiexec are not beside the interpreter (make setup installs them)",
    ),
]

SOLUTIONS = Path(__file__).resolve().parent / "mpi_solutions"
SIZES = {
    "scaled_add": {"N": 37},
    "mat_scaled_add": {"M": 11, "N": 9},
    "jacobi_2d": {"N": 13},
    "heat_3d": {"N": 9},
}
SCALARS = {"jacobi_2d": {"TSTEPS": 3}, "heat_3d": {"TSTEPS": 2}}


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mpi-builds")


def kernel(name: str) -> Manifest:
    return load_manifest(name)


def build(
    name: str, source: str, build_dir: Path, precision: str = "fp64", **options: Any
) -> DriverBuild:
    built = build_driver(kernel(name), precision, source, build_dir, **options)
    assert built.ok, built.log
    return built


def catalog_solution(name: str) -> str:
    return (CATALOG_DIR / name / "solution_mpi.c").read_text()


def inputs_for(name: str, precision: str = "fp64", seed: int = 7) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    k = kernel(name)
    dtype = np.float64 if precision == "fp64" else np.float32
    return {a.name: rng.uniform(-1, 1, k.shape_of(a, SIZES[name])).astype(dtype) for a in k.arrays}


def scalars_for(name: str) -> dict[str, float | int]:
    values: dict[str, float | int] = {
        s.name: s.value for s in kernel(name).scalars if s.value is not None
    }
    values.update(SCALARS.get(name, {}))
    return values


def grade(
    name: str,
    built: DriverBuild,
    plan: Any,
    workdir: Path,
    *,
    precision: str = "fp64",
    inputs: Mapping[str, np.ndarray] | None = None,
    timeout_s: float = 30.0,
    **options: Any,
) -> DistributedGrade:
    assert built.program is not None
    return grade_distributed(
        built.program, kernel(name), precision, plan, SIZES[name], scalars_for(name),
        inputs if inputs is not None else inputs_for(name, precision), load_reference(name).reference,
        workdir, reps=2, warmup=1, timeout_s=timeout_s, **options,
    )  # fmt: skip


def one_d(arrays: tuple[str, ...], ranks: int, scheme: str = "block", block_size: int = 1) -> dict:
    axis: dict[str, Any] = {"grid_dim": 0, "scheme": scheme}
    if scheme == "block_cyclic":
        axis["block_size"] = block_size
    return {"grid": [ranks], "arrays": {a: {"axes": [axis]} for a in arrays}}


def assert_correct(result: DistributedGrade) -> None:
    assert result.failure is None, result.failure
    assert result.mismatches == []
    assert result.correct
    assert result.credited_s is not None and result.credited_s == min(result.rep_seconds)
    assert len(result.rep_seconds) == 2


@pytest.mark.parametrize("ranks", [1, 2, 4])
@pytest.mark.parametrize(
    ("scheme", "block_size"), [("block", 1), ("cyclic", 1), ("block_cyclic", 3)]
)
def test_scaled_add(
    ranks: int, scheme: str, block_size: int, build_dir: Path, tmp_path: Path
) -> None:
    built = build("scaled_add", catalog_solution("scaled_add"), build_dir)
    result = grade("scaled_add", built, one_d(("x", "y"), ranks, scheme, block_size), tmp_path)
    assert_correct(result)
    assert result.symbols == {"N": "local"}


def test_scaled_add_with_x_replicated_gets_global_n(build_dir: Path, tmp_path: Path) -> None:
    built = build("scaled_add", (SOLUTIONS / "scaled_add_replicated_x.c").read_text(), build_dir)
    plan = {"grid": [4], "arrays": {"x": {"replicated": True}, "y": {"axes": [{"grid_dim": 0}]}}}
    result = grade("scaled_add", built, plan, tmp_path)
    assert_correct(result)
    assert result.symbols == {"N": "global"}


@pytest.mark.parametrize("ranks", [1, 4])
def test_mat_scaled_add_block_cyclic_on_a_square_grid(
    ranks: int, build_dir: Path, tmp_path: Path
) -> None:
    side = int(ranks**0.5)
    axes = [
        {"grid_dim": 0, "scheme": "block_cyclic", "block_size": 2},
        {"grid_dim": 1, "scheme": "block_cyclic", "block_size": 2},
    ]
    plan = {"grid": [side, side], "arrays": {"A": {"axes": axes}, "B": {"axes": axes}}}
    built = build("mat_scaled_add", catalog_solution("mat_scaled_add"), build_dir)
    result = grade("mat_scaled_add", built, plan, tmp_path)
    assert_correct(result)
    assert result.symbols == {"M": "local", "N": "local"}


def test_mat_scaled_add_over_one_dimension_of_a_2d_grid_in_fp32(
    build_dir: Path, tmp_path: Path
) -> None:
    # Ranks (0, 1) and (1, 1) hold the same rows as (0, 0) and (1, 0); only the latter are gathered.
    axes = [{"grid_dim": 0}, {"grid_dim": None}]
    plan = {"grid": [2, 2], "arrays": {"A": {"axes": axes}, "B": {"axes": axes}}}
    built = build("mat_scaled_add", catalog_solution("mat_scaled_add"), build_dir, precision="fp32")
    assert_correct(grade("mat_scaled_add", built, plan, tmp_path, precision="fp32"))


@pytest.mark.parametrize("ranks", [1, 2, 4])
@pytest.mark.parametrize("name", ["jacobi_2d", "heat_3d"])
def test_stencils_with_halo_exchange(
    name: str, ranks: int, build_dir: Path, tmp_path: Path
) -> None:
    built = build(name, catalog_solution(name), build_dir)
    assert_correct(grade(name, built, default_plan(kernel(name), ranks), tmp_path))


def test_jacobi_without_halo_exchange_is_graded_incorrect(build_dir: Path, tmp_path: Path) -> None:
    source = catalog_solution("jacobi_2d")
    no_halo = source.replace("NAME##_halo(a, rows, N, up, down, comm);", "").replace(
        "NAME##_halo(b, rows, N, up, down, comm);", ""
    )
    assert no_halo != source
    built = build("jacobi_2d", no_halo, build_dir)
    assert_correct(
        grade("jacobi_2d", built, default_plan(kernel("jacobi_2d"), 1), tmp_path / "one")
    )
    wrong = grade("jacobi_2d", built, default_plan(kernel("jacobi_2d"), 2), tmp_path / "two")
    assert not wrong.correct and wrong.failure is None
    assert wrong.mismatches and wrong.mismatches[0].startswith("A: ")


def test_cast_tile_is_converted_around_every_repeat(build_dir: Path, tmp_path: Path) -> None:
    built = build(
        "scaled_add",
        (SOLUTIONS / "scaled_add_x_fp16.c").read_text(),
        build_dir,
        casts={"x": "fp16"},
    )
    rng = np.random.default_rng(3)
    exact_in_fp16 = {"x": rng.integers(-64, 64, 37) / 8.0, "y": rng.uniform(-1, 1, 37)}
    casts = {"x": "fp16"}
    result = grade(
        "scaled_add", built, one_d(("x", "y"), 2), tmp_path / "exact", inputs=exact_in_fp16,
        casts=casts,
    )  # fmt: skip
    assert_correct(result)
    assert result.convert_in_s > 0.0 and result.convert_out_s == 0.0
    # Narrowing is graded in the problem precision's band: fp16 rounding of x fails fp64's.
    rounded = grade("scaled_add", built, one_d(("x", "y"), 2), tmp_path / "rounded", casts=casts)
    assert not rounded.correct and rounded.failure is None


def test_cast_output_is_widened_back_before_the_gather(build_dir: Path, tmp_path: Path) -> None:
    casts = {"x": "fp16", "y": "fp32"}
    built = build(
        "scaled_add", (SOLUTIONS / "scaled_add_cast_both.c").read_text(), build_dir, casts=casts
    )
    rng = np.random.default_rng(4)
    exact = {"x": rng.integers(-64, 64, 37) / 8.0, "y": rng.integers(-64, 64, 37) / 8.0}
    result = grade("scaled_add", built, one_d(("x", "y"), 4), tmp_path, inputs=exact, casts=casts)
    assert_correct(result)
    assert result.convert_in_s > 0.0 and result.convert_out_s > 0.0


def processes_running(program: Path) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            command = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if str(program).encode() in command:
            found.append(int(entry))
    return found


@pytest.mark.parametrize(
    ("variant", "expected"), [("crash", "Segmentation fault"), ("hang", "wall-clock limit")]
)
def test_a_crashing_or_hanging_rank_fails_cleanly(
    variant: str, expected: str, build_dir: Path, tmp_path: Path
) -> None:
    built = build("scaled_add", (SOLUTIONS / f"scaled_add_{variant}.c").read_text(), build_dir)
    result = grade("scaled_add", built, one_d(("x", "y"), 4), tmp_path, timeout_s=3.0)
    assert not result.correct
    assert expected in (result.failure or "")
    assert result.credited_s is None
    assert processes_running(built.program or Path("/nonexistent")) == []


def test_the_cluster_launcher_template_runs_with_a_hostfile(
    build_dir: Path, tmp_path: Path
) -> None:
    hostfile = tmp_path / "hosts"
    hostfile.write_text("localhost:4\n")
    built = build("scaled_add", catalog_solution("scaled_add"), build_dir)
    result = grade(
        "scaled_add", built, one_d(("x", "y"), 4), tmp_path / "run",
        launcher="{mpiexec} -n {ranks} -f {hostfile}", hostfile=hostfile,
    )  # fmt: skip
    assert_correct(result)


def test_scaling_curve_skips_what_the_grid_does_not_span(build_dir: Path, tmp_path: Path) -> None:
    name = "mat_scaled_add"
    built = build(name, catalog_solution(name), build_dir)
    assert built.program is not None

    def plan_at(extents: tuple[int, ...]) -> dict:
        axes = [{"grid_dim": 0, "scheme": "cyclic"}, {"grid_dim": 1, "scheme": "cyclic"}]
        return {"grid": list(extents), "arrays": {"A": {"axes": axes}, "B": {"axes": axes}}}

    points, table, png = scale_submission(
        built.program, kernel(name), "fp64", ["root(P, 2)", "root(P, 2)"], plan_at, SIZES[name],
        scalars_for(name), inputs_for(name), load_reference(name).reference, tmp_path,
        rank_counts=[1, 2, 4], reps=2,
    )  # fmt: skip
    assert [p.ranks for p in points] == [1, 2, 4]
    assert points[1].grid is None and "skipped" in (points[1].note or "")
    assert "root(2, 2) is not an integer" in (points[1].note or "")
    assert points[0].efficiency == pytest.approx(1.0)
    assert points[2].correct and points[2].efficiency is not None and points[2].speedup is not None
    assert "skipped" in table and table.splitlines()[0].split()[:5] == [
        "ranks", "grid", "time_s", "speedup", "efficiency",
    ]  # fmt: skip
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "scaling.txt").read_text() == table


def test_no_mpi_process_outlives_the_module(build_dir: Path) -> None:
    assert Path("/proc/self/cmdline").exists(), "the leftover check reads /proc"
    leftovers = processes_running(build_dir)
    assert leftovers == [], f"processes still running from {build_dir}: {leftovers}"
