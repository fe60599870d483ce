"""The judge's calls into the distributed engine with relayout's requests: the refusals before a
build, a grade from a request (short form and a digit program over the grid), and `hb scale`."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from hb import cli
from hb.config import Config
from hb.distributed.driver import device_toolchain_refusal, mpicc_path
from hb.distributed.grade import distributed_refusal, grade_submission, lower_plan, requested_casts
from hb.distributed.policy import device_available
from hb.kernels import CATALOG_DIR, load_manifest
from relayout.models import Requests

requires_mpicc = pytest.mark.skipif(
    not Path(mpicc_path()).exists(),
    reason="MPICH's mpicc is not beside the interpreter (make setup installs it)",
)


def requests(grid: list[str], *operations: dict) -> Requests:
    return Requests.validate({"startup": {"grid": grid}, "operations": list(operations)})


def distribute(array: str, dim: int = 0, grid_dim: int = 0, **extra: object) -> dict:
    return {"action": "distribute", "array": array, "grid_dim": grid_dim, "dim": dim, **extra}


def test_refusals_before_a_build() -> None:
    scaled_add = load_manifest("scaled_add")
    only_y = requests(["P"], distribute("y"))
    assert "array x is left neither distributed nor replicated" in (
        distributed_refusal(only_y, scaled_add, "fp64", ranks=4) or ""
    )
    square = requests(
        ["root(P, 2)", "root(P, 2)"], distribute("x"), {"action": "replicate", "array": "y"}
    )
    refusal = distributed_refusal(square, scaled_add, "fp64", ranks=2) or ""
    assert refusal.startswith("startup.grid must span mpi.ranks: ") and "root(2, 2)" in refusal
    on_device = requests(
        ["P"], distribute("x"), distribute("y"), {"action": "place", "array": "x", "on": "device"}
    )
    placed = distributed_refusal(on_device, scaled_add, "fp64", ranks=4)
    if device_available()[0] and device_toolchain_refusal() is None:
        assert placed is None
    else:
        assert (placed or "").startswith("operations[2] (place): x on device")
    sparse = requests(["P"], {"action": "replicate", "array": "A"})
    assert "is sparse (csr)" in (
        distributed_refusal(sparse, load_manifest("spmv"), "fp64", ranks=2) or ""
    )
    fine = requests(["P"], distribute("x", scheme="cyclic"), distribute("y", scheme="cyclic"))
    assert distributed_refusal(fine, scaled_add, "fp64", ranks=4) is None


def test_digit_operations_over_the_grid_lay_out_the_local_tiles() -> None:
    manifest = load_manifest("mat_scaled_add")
    transposed = requests(
        ["P"],
        distribute("A"),
        distribute("B"),
        {"action": "permute", "array": "A", "order": ["i1", "i0"]},
    )
    assert distributed_refusal(transposed, manifest, "fp64", ranks=2) is None
    assert set(lower_plan(transposed, manifest, "fp64", 2).local) == {"A"}
    kept_local = requests(
        ["P"], distribute("A"), distribute("B"),
        {"action": "block", "array": "B", "digit": "i1", "factor": 4, "into": ["c", "f"]},
    )  # fmt: skip
    assert distributed_refusal(kept_local, manifest, "fp64", ranks=2) is None
    shuffled = requests(
        ["P"], distribute("A"), distribute("B"),
        {"action": "shuffle", "array": "B", "digits": ["i1"], "f": ["i1"], "f_inv": ["i1"]},
    )  # fmt: skip
    refusal = distributed_refusal(shuffled, manifest, "fp64", ranks=2) or ""
    assert refusal.startswith("operations[2] (shuffle): shuffle is single-node only")
    dealt = requests(
        ["root(P, 2)", "root(P, 2)"],
        {"action": "block", "array": "A", "digit": "i0", "factor": 4, "into": ["c", "f"]},
        {"action": "distribute", "array": "A", "grid_dim": 0, "digit": "c", "scheme": "cyclic"},
        distribute("A", 1, 1), distribute("B", 0, 0, scheme="block_cyclic", block_size=4), distribute("B", 1, 1),
    )  # fmt: skip
    assert distributed_refusal(dealt, manifest, "fp64", ranks=4) is None
    assert lower_plan(dealt, manifest, "fp64", 4).to_json()["arrays"]["A"] == {
        "axes": [{"grid_dim": 0, "scheme": "block_cyclic", "block_size": 4}, {"grid_dim": 1}]
    }


def test_casts_are_read_from_the_request_last_one_winning() -> None:
    request = requests(
        ["P"], {"action": "cast", "array": "x", "to": "fp32"}, {"action": "cast", "array": "x", "to": "fp16"},
        distribute("x"), distribute("y"),
    )  # fmt: skip
    assert requested_casts(request) == {"x": "fp16"}


@pytest.mark.mpi
@requires_mpicc
@pytest.mark.parametrize("ranks", [2, 4])
def test_grade_from_a_digit_program_over_the_grid(ranks: int, tmp_path: Path) -> None:
    # split + distribute of the band digit is scheme block; y in the short form, cyclic.
    program = requests(
        ["P"],
        {"action": "split", "array": "x", "digit": "i0", "parts": "P0", "into": ["band", "offset"]},
        {"action": "distribute", "array": "x", "grid_dim": 0, "digit": "band"},
        distribute("y"),
    )
    manifest = load_manifest("scaled_add")
    assert lower_plan(program, manifest, "fp64", ranks).to_json() == {
        "grid": [ranks],
        "arrays": {"x": {"axes": [{"grid_dim": 0}]}, "y": {"axes": [{"grid_dim": 0}]}},
    }
    result = grade_submission(
        manifest, program, (CATALOG_DIR / "scaled_add" / "solution_mpi.c").read_text(), "fp64",
        ranks=ranks, directory=tmp_path, reps=2,
    )  # fmt: skip
    assert result.correct, result.failure or result.mismatches
    assert result.symbols == {"N": "local"}


@pytest.mark.mpi
@requires_mpicc
def test_hb_scale_prints_the_curve(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    request_file = tmp_path / "requests.json"
    axes = {"scheme": "block_cyclic", "block_size": 8}
    request_file.write_text(
        requests(
            ["root(P, 2)", "root(P, 2)"],
            distribute("A", 0, 0, **axes), distribute("A", 1, 1, **axes),
            distribute("B", 0, 0, **axes), distribute("B", 1, 1, **axes),
        ).to_json()
    )  # fmt: skip
    parser = argparse.ArgumentParser()
    cli.add_scale_arguments(parser)
    args = parser.parse_args(
        [
            "mat_scaled_add", str(CATALOG_DIR / "mat_scaled_add" / "solution_mpi.c"),
            "--requests", str(request_file), "--ranks", "1,2,4", "--out", str(tmp_path / "out"),
            "--reps", "2",
        ]
    )  # fmt: skip
    # hb scale runs the judge's refusals: the setup must allow distribute.
    setup = Config.model_validate(
        {"data_dir": str(tmp_path / "data"), "requests": {"allow": ["load", "distribute"]}}
    )
    assert cli.scale_command(args, setup) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].split()[:3] == ["ranks", "grid", "time_s"]
    assert printed[1].split()[:2] == ["1", "1x1"] and printed[1].split()[4] == "100.0%"
    assert printed[2].split()[:2] == ["2", "-"] and "skipped" in printed[2]
    assert printed[3].split()[:2] == ["4", "2x2"]
    assert (tmp_path / "out" / "scaling.png").exists()


def test_hb_scale_runs_the_judges_refusals(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    request_file = tmp_path / "requests.json"
    request_file.write_text(requests(["P"], distribute("x", 0, 0), distribute("y", 0, 0)).to_json())
    parser = argparse.ArgumentParser()
    cli.add_scale_arguments(parser)
    args = parser.parse_args(
        ["scaled_add", str(CATALOG_DIR / "scaled_add" / "solution_mpi.c"), "--requests",
         str(request_file), "--ranks", "1,2", "--out", str(tmp_path / "out")]
    )  # fmt: skip
    # A setup that does not allow a grid refuses it here as /score does, before any build.
    assert cli.scale_command(args, Config.model_validate({"data_dir": str(tmp_path)})) == 2
    assert "startup.grid: this setup does not allow a processor grid" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
