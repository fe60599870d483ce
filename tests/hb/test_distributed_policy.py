"""The distributed engine's rules without running MPI: which size symbols arrive local, the MPI
entry point's C prototype, grid evaluation at a rank count, the plan refusals, place and cast
refusals, the launcher command lines, and the layout table the driver reads."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import numpy as np
import pytest

from hb.distributed.driver import (
    cast_refusal,
    device_toolchain_refusal,
    driver_source,
)
from hb.distributed.engine import RunSpec, layout_table
from hb.distributed.launch import LOCAL_LAUNCHER, LauncherError, launcher_command, launcher_settings
from hb.distributed.policy import (
    default_plan,
    device_arrays,
    device_available,
    distributed_cast_refusal,
    place_refusal,
    plan_refusal,
)
from hb.distributed.signature import (
    describe_plan,
    grid_at,
    local_sizes_table,
    mpi_prototype,
    symbol_arrivals,
)
from hb.execution.supervisor import LAYOUT_MAGIC
from hb.kernels import Manifest, load_manifest
from hb.requests_api import Requests
from relayout.distribution import Distribution


def kernel(name: str) -> Manifest:
    return load_manifest(name)


def arrives(name: str, plan: dict) -> dict[str, str]:
    return {s: a.to_json()["arrives"] for s, a in symbol_arrivals(kernel(name), plan).items()}


MAT_2D_BLOCK_CYCLIC = {
    "grid": [2, 2],
    "arrays": {
        name: {
            "axes": [
                {"grid_dim": 0, "scheme": "block_cyclic", "block_size": 4},
                {"grid_dim": 1, "scheme": "block_cyclic", "block_size": 4},
            ]
        }
        for name in ("A", "B")
    },
}


def test_symbols_arrive_local_when_every_axis_they_size_splits_alike() -> None:
    assert arrives("scaled_add", default_plan(kernel("scaled_add"), 4)) == {"N": "local"}
    assert arrives("mat_scaled_add", MAT_2D_BLOCK_CYCLIC) == {"M": "local", "N": "local"}
    assert arrives("mat_scaled_add", default_plan(kernel("mat_scaled_add"), 4)) == {
        "M": "local",
        "N": "global",
    }
    assert arrives("jacobi_2d", default_plan(kernel("jacobi_2d"), 4)) == {"N": "global"}
    assert arrives("heat_3d", default_plan(kernel("heat_3d"), 2)) == {"N": "global"}


def test_symbols_arrive_global_when_split_differently_or_replicated() -> None:
    mixed = {
        "grid": [4],
        "arrays": {
            "x": {"axes": [{"grid_dim": 0, "scheme": "cyclic"}]},
            "y": {"axes": [{"grid_dim": 0}]},
        },
    }
    arrival = symbol_arrivals(kernel("scaled_add"), mixed)["N"]
    assert not arrival.local and "y dim 0 is split differently from x dim 0" in arrival.reason
    replicated = {
        "grid": [4],
        "arrays": {"x": {"replicated": True}, "y": {"axes": [{"grid_dim": 0}]}},
    }
    arrival = symbol_arrivals(kernel("scaled_add"), replicated)["N"]
    assert not arrival.local and arrival.reason == "x is replicated"


def test_each_rank_gets_its_own_value_of_a_local_symbol() -> None:
    plan = {
        "grid": [3],
        "arrays": {
            n: {"axes": [{"grid_dim": 0, "scheme": "block_cyclic", "block_size": 4}]}
            for n in ("x", "y")
        },
    }
    # 18 elements in blocks of 4 over 3 ranks: blocks 0,3 | 1,4(2 of 4) | 2.
    assert [row["N"] for row in local_sizes_table(kernel("scaled_add"), plan, {"N": 18})] == [
        8,
        6,
        4,
    ]
    table = local_sizes_table(kernel("mat_scaled_add"), MAT_2D_BLOCK_CYCLIC, {"M": 10, "N": 7})
    assert [(row["M"], row["N"]) for row in table] == [(6, 4), (6, 3), (4, 4), (4, 3)]


def test_mpi_entry_point_prototype() -> None:
    assert mpi_prototype(kernel("scaled_add"), "fp64") == (
        "void scaled_add_mpi_fp64(const double *restrict x, double *restrict y, int64_t N, "
        "double alpha, MPI_Comm comm, void *workspace, int64_t workspace_bytes)"
    )
    assert mpi_prototype(kernel("jacobi_2d"), "fp32", {"A": "bf16"}) == (
        "void jacobi_2d_mpi_fp32(__npb_bf16 *restrict A, float *restrict B, int64_t N, "
        "int64_t TSTEPS, MPI_Comm comm, void *workspace, int64_t workspace_bytes)"
    )


def test_grid_at_spans_or_says_why_not() -> None:
    assert grid_at(["root(P, 2)", "root(P, 2)"], 4) == ((2, 2), None)
    extents, note = grid_at(["root(P, 2)", "root(P, 2)"], 2)
    assert extents is None and "does not span P = 2" in (note or "")
    assert grid_at(["P"], 3) == ((3,), None)
    extents, note = grid_at(["2", "P // 2"], 3)
    assert extents is None and "multiply to 2, not P = 3" in (note or "")


def test_plan_refusals_name_the_array() -> None:
    scaled_add = kernel("scaled_add")
    only_y = {"grid": [2], "arrays": {"y": {"axes": [{"grid_dim": 0}]}}}
    assert "['x'] are neither distributed nor replicated" in (
        plan_refusal(scaled_add, only_y) or ""
    )
    stranger = {
        "grid": [2],
        "arrays": {"x": {"replicated": True}, "y": {"replicated": True}, "z": {"replicated": True}},
    }
    assert "scaled_add has no array 'z'" in (plan_refusal(scaled_add, stranger) or "")
    cyclic_on_uneven = {
        "grid": [2, 1],
        "arrays": {
            n: {"axes": [{"grid_dim": 0, "scheme": "cyclic"}, {"grid_dim": None}]}
            for n in ("A", "B")
        },
    }
    refusal = plan_refusal(kernel("mat_scaled_add"), cyclic_on_uneven) or ""
    assert "plan arrays.A.axes[0]: a cyclic axis needs an equal-edge grid, not [2, 1]" in refusal
    assert plan_refusal(kernel("mat_scaled_add"), MAT_2D_BLOCK_CYCLIC) is None


def test_replicatable_and_layout_flexible_allowlists() -> None:
    scaled_add = kernel("scaled_add")
    replicate_x = {
        "grid": [2],
        "arrays": {"x": {"replicated": True}, "y": {"axes": [{"grid_dim": 0}]}},
    }
    assert plan_refusal(scaled_add, replicate_x) is None
    refusal = plan_refusal(scaled_add, replicate_x, replicatable_allowlist=[]) or ""
    assert "scaled_add.x may not be replicated" in refusal
    assert plan_refusal(scaled_add, replicate_x, replicatable_allowlist=["scaled_add.x"]) is None
    cyclic = {
        "grid": [2],
        "arrays": {n: {"axes": [{"grid_dim": 0, "scheme": "cyclic"}]} for n in ("x", "y")},
    }
    refusal = plan_refusal(scaled_add, cyclic, layout_flexible_allowlist=[]) or ""
    assert "scaled_add.x must keep the default distribution" in refusal
    assert plan_refusal(scaled_add, cyclic, layout_flexible_allowlist=["scaled_add"]) is None
    assert (
        plan_refusal(scaled_add, default_plan(scaled_add, 2), layout_flexible_allowlist=[]) is None
    )


def test_place_is_refused_on_one_node_and_without_a_device() -> None:
    on_device = {
        "grid": [2],
        "arrays": {
            "x": {"axes": [{"grid_dim": 0}], "location": "device"},
            "y": {"axes": [{"grid_dim": 0}]},
        },
    }
    assert "a single-node grade takes no place" in (
        place_refusal(on_device, distributed=False) or ""
    )
    available, _ = device_available()
    refusal = place_refusal(on_device, distributed=True)
    if available and device_toolchain_refusal() is None:
        assert refusal is None
    else:
        assert refusal is not None and refusal.startswith("place (x) on device: ")
        assert "use location host" in refusal
    # Under mpi.residency device every unplaced array lives on the device too.
    assert device_arrays(on_device, "device") == ["x", "y"]
    assert device_arrays(on_device) == ["x"]
    on_host = {
        "grid": [2],
        "arrays": {
            "x": {"axes": [{"grid_dim": 0}], "location": "host"},
            "y": {"axes": [{"grid_dim": 0}]},
        },
    }
    assert place_refusal(on_host, distributed=True) is None
    assert "device-resident MPI tile takes no cast" in (
        distributed_cast_refusal(on_device, {"x": "fp32"}) or ""
    )


def test_device_refusal_names_the_place_or_the_residency(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from hb.distributed import policy

    monkeypatch.setattr(policy, "device_available", lambda: (False, "no CUDA driver (libcuda)"))
    plan = {
        "grid": [2],
        "arrays": {
            "x": {"axes": [{"grid_dim": 0}]},
            "y": {"axes": [{"grid_dim": 0}], "location": "device"},
        },
    }
    operations = Requests.validate(
        {
            "startup": {"grid": ["P"]},
            "operations": [
                {"action": "distribute", "array": "x", "grid_dim": 0, "dim": 0},
                {"action": "distribute", "array": "y", "grid_dim": 0, "dim": 0},
                {"action": "place", "array": "y", "on": "device"},
            ],
        }
    ).operations
    refusal = place_refusal(plan, distributed=True, operations=operations) or ""
    assert refusal.startswith("operations[2] (place): y on device: no CUDA driver"), refusal
    unplaced = {"grid": [2], "arrays": {"x": {"axes": [{"grid_dim": 0}]}}}
    residency = place_refusal(unplaced, distributed=True, residency="device") or ""
    assert residency.startswith("mpi.residency (device): the unplaced arrays (x)"), residency


def test_cast_refusals_of_the_driver() -> None:
    scaled_add = kernel("scaled_add")
    assert cast_refusal(scaled_add, "fp64", {"x": "fp16"}) is None
    assert "already fp64" in (cast_refusal(scaled_add, "fp64", {"x": "fp64"}) or "")
    assert "from fp32 the casts are to" in (cast_refusal(scaled_add, "fp32", {"x": "fp64"}) or "")
    assert "no array 'q'" in (cast_refusal(scaled_add, "fp64", {"q": "fp16"}) or "")
    # Host tiles: the supervisor casts (relayout's kernels, outside the box); the driver declares
    # the cast type and only calls the kernel on its arena.
    source = driver_source(scaled_add, "fp64", {"x": "bf16"})
    assert (
        "relayout_cast_" not in source
        and "void scaled_add_mpi_fp64(const __npb_bf16 *restrict x" in source
    )
    assert "mmap(" in source and "MPI_Reduce" not in source


def test_launcher_command_lines() -> None:
    assert launcher_command(LOCAL_LAUNCHER, 4, "/b/drv", ["/run"], mpiexec="/v/mpiexec") == [
        "/v/mpiexec", "-n", "4", "/b/drv", "/run",
    ]  # fmt: skip
    assert launcher_command(
        "{mpiexec} -n {ranks} -f {hostfile} -ppn 2",
        8,
        "/b/drv",
        ["/run dir"],
        hostfile="/h/hosts",
        mpiexec="mpiexec",
    ) == ["mpiexec", "-n", "8", "-f", "/h/hosts", "-ppn", "2", "/b/drv", "/run dir"]
    assert launcher_command("srun -n {ranks} --kill-on-bad-exit=1", 16, "/b/drv", ["/run"]) == [
        "srun", "-n", "16", "--kill-on-bad-exit=1", "/b/drv", "/run",
    ]  # fmt: skip
    with pytest.raises(LauncherError, match=re.escape("unknown field {nodes}")):
        launcher_command("srun -N {nodes} -n {ranks}", 2, "d")
    with pytest.raises(LauncherError, match=re.escape("names {hostfile} but no hostfile")):
        launcher_command("mpiexec -n {ranks} -f {hostfile}", 2, "d")
    with pytest.raises(LauncherError, match=re.escape("never names {ranks}")):
        launcher_command("mpiexec -n 4", 2, "d")


def test_launcher_settings_fall_back_where_the_config_is_silent() -> None:
    class Section:
        launcher = "srun -n {ranks}"
        rank_counts = (1, 4, 16)

    assert launcher_settings(Section()) == ("srun -n {ranks}", None, (1, 4, 16))
    assert launcher_settings(object()) == (LOCAL_LAUNCHER, None, (1, 2, 4))


def test_layout_table_words() -> None:
    plan = Distribution.of(
        {"grid": [2], "arrays": {"x": {"replicated": True}, "y": {"axes": [{"grid_dim": 0}]}}}
    )
    spec = RunSpec(kernel("scaled_add"), "fp64", plan, {"N": 5}, {"alpha": 1.5}, reps=2, warmup=1)
    raw = layout_table(spec)
    words = struct.unpack(f"<{len(raw) // 8 - 1}q", raw[:-8])
    assert words[:8] == (LAYOUT_MAGIC, 1, 2, 2, 1, 1, 1, 2)
    assert words[8:12] == (5, 1, 5, 0)  # x: 5 elements, replicated; y: 5, distributed
    # rank rows: (x count, primary), (y count, primary), N, workspace
    assert words[12:18] == (5, 1, 3, 1, 5, 0)
    assert words[18:24] == (5, 0, 2, 1, 5, 0)
    assert struct.unpack("<d", raw[-8:]) == (1.5,)


def test_describe_plan_for_task_and_check_routes() -> None:
    answer = describe_plan(kernel("mat_scaled_add"), MAT_2D_BLOCK_CYCLIC, {"M": 10, "N": 7})
    assert answer["symbols"]["M"]["arrives"] == "local"
    assert answer["ranks"][3] == {
        "rank": 3,
        "coords": [1, 1],
        "sizes": {"M": 4, "N": 3},
        "tiles": {"A": [4, 3], "B": [4, 3]},
    }
    assert np.prod(answer["plan"]["grid"]) == 4


def test_launcher_environment_passes_only_mpi_and_launcher_variables() -> None:
    from hb.distributed.launch import launcher_environment

    env = launcher_environment(
        {
            "PATH": "/bin",
            "HB_DATABASE_URL": "postgresql://secret",
            "SLURM_JOB_ID": "7",
            "UCX_TLS": "self",
        },
        threads=2,
    )
    assert env == {"PATH": "/bin", "SLURM_JOB_ID": "7", "UCX_TLS": "self", "OMP_NUM_THREADS": "2"}


def test_every_launched_process_inherits_the_limits(tmp_path: Path) -> None:
    from hb.distributed.launch import box_limits, run_launcher
    from hb.execution import sandbox

    limits = box_limits(10, sandbox.Limits(cpu_s=7, memory_bytes=1 << 30))
    with sandbox.Box(tmp_path, limits) as box:
        result = run_launcher(
            box, ["sh", "-c", "ulimit -v; ulimit -t; ulimit -c"], timeout_s=10,
            env={"PATH": "/usr/bin:/bin"},
        )  # fmt: skip
    assert result.failure() is None
    assert result.stdout.split() == ["1048576", "7", "0"]
    assert limits.timeout_s == 10
