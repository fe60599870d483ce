"""Distributed grades through the judge: the service routes (/score, /submit, /requests/check,
/task/{kernel}) and the CLI (hb submit, hb check, hb scale) on MPI ranks, recorded in the results
database like single-node grades, and the refusals a distributed setup makes before any build."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from fastapi.testclient import TestClient

from hb import cli, results_db
from hb.config import Config
from hb.distributed.driver import mpicc_path
from hb.distributed.launch import launcher_command, launcher_settings
from hb.distributed.policy import device_available
from hb.kernels import CATALOG_DIR
from hb.service import JudgeHandler, create_app
from tests.hb.conftest import make_config

pytestmark = pytest.mark.skipif(
    not Path(mpicc_path()).exists(),
    reason="MPICH's mpicc is not beside the interpreter (make setup installs it)",
)

SOLUTIONS = Path(__file__).resolve().parent / "mpi_solutions"
SCALED_ADD = (CATALOG_DIR / "scaled_add" / "solution_mpi.c").read_text()
SOLUTION_C = (CATALOG_DIR / "scaled_add" / "solution.c").read_text()
MAT_SCALED_ADD = (CATALOG_DIR / "mat_scaled_add" / "solution_mpi.c").read_text()
DISTRIBUTED = {"allow": ["load", "distribute"]}


def distribute(array: str, dim: int = 0, grid_dim: int = 0, **extra: object) -> dict[str, Any]:
    return {"action": "distribute", "array": array, "grid_dim": grid_dim, "dim": dim, **extra}


def scaled_add_request(scheme: str) -> dict[str, Any]:
    return {
        "startup": {"grid": ["P"]},
        "operations": [distribute("x", scheme=scheme), distribute("y", scheme=scheme)],
    }


SQUARE_GRID = ["root(P, 2)", "root(P, 2)"]
MAT_BLOCK_CYCLIC = {
    "startup": {"grid": SQUARE_GRID},
    "operations": [
        distribute(array, dim, dim, scheme="block_cyclic", block_size=8)
        for array in ("A", "B")
        for dim in (0, 1)
    ],
}


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("hb-mpi-data")


def mpi_config(data_dir: Path, ranks: int, **sections: dict[str, Any]) -> Config:
    requests = sections.pop("requests", DISTRIBUTED)
    mpi = {"ranks": ranks, **sections.pop("mpi", {})}
    return make_config(data_dir, requests=requests, mpi=mpi, **sections)


@pytest.fixture(scope="module")
def two_ranks(data_dir: Path) -> Iterator[TestClient]:
    with TestClient(create_app(mpi_config(data_dir, 2))) as client:
        yield client


def handler_of(client: TestClient) -> JudgeHandler:
    handler: JudgeHandler = client.app.state.handler  # type: ignore[attr-defined]
    return handler


def request_rows(handler: JudgeHandler, grade_id: int) -> list[tuple[str, str]]:
    return [
        (row["kind"], row["name"]) for row in results_db.rows_of_grade(handler.engine, grade_id)
    ]


def score_block(client: TestClient) -> dict[str, Any]:
    """/score of scaled_add's solution under a block distribution."""
    answer: dict[str, Any] = client.post(
        "/score",
        json={
            "kernel": "scaled_add",
            "source": SCALED_ADD,
            "requests": scaled_add_request("block"),
        },
    ).json()
    return answer


def test_a_distributed_grade_is_paired_with_the_mpi_baseline(two_ranks: TestClient) -> None:
    """The submission's MPI run and the kernel's solution_mpi.c alternate as whole runs of the
    same ranks and inputs: one pair per timed rep, an interval around the estimate."""
    grade = score_block(two_ranks)
    assert grade["correct"] is True, grade["reason"]
    timing = grade["timing"]
    assert timing["mode"] == "paired"
    reps = handler_of(two_ranks).config.grading.reps
    assert (
        len(timing["reps_ns"]) == len(timing["baseline_reps_ns"]) == len(timing["ratios"]) == reps
    )
    low, high = grade["speedup_ci"]
    assert low <= grade["measured_speedup"] <= high
    assert grade["baseline_ns"] > 0


@pytest.mark.parametrize("scheme", ["block", "cyclic"])
def test_scaled_add_on_two_ranks_is_graded_and_recorded(two_ranks: TestClient, scheme: str) -> None:
    answer = two_ranks.post(
        "/submit",
        json={"kernel": "scaled_add", "source": SCALED_ADD, "requests": scaled_add_request(scheme)},
    )
    assert answer.status_code == 200, answer.text
    grade = answer.json()
    assert grade["correct"] is True and grade["reason"] is None
    assert grade["distributed"]["ranks"] == 2 and grade["distributed"]["grid"] == [2]
    assert grade["distributed"]["symbols"] == {"N": "local"}
    assert grade["native_ns"] > 0 and grade["baseline_ns"] > 0 and grade["speedup"] > 0
    handler = handler_of(two_ranks)
    row = results_db.get_grade(handler.engine, grade["grade_id"])
    assert row is not None and row["correct"] and row["route"] == "submit"
    assert row["native_ns"] == grade["native_ns"]
    recorded = results_db.requests_of_row(row)
    assert recorded.startup.grid == ["P"]
    assert request_rows(handler, grade["grade_id"]) == [
        ("grid", "grid"),
        ("operation", "distribute"),
        ("operation", "distribute"),
    ]


def test_mat_scaled_add_block_cyclic_on_a_square_grid_of_four(data_dir: Path) -> None:
    with TestClient(create_app(mpi_config(data_dir, 4))) as client:
        check = client.post(
            "/requests/check", json={"kernel": "mat_scaled_add", "requests": MAT_BLOCK_CYCLIC}
        ).json()
        assert check["accepted"] is True
        assert check["signature"].startswith(
            "void mat_scaled_add_mpi_fp64(const double *restrict A"
        )
        assert "MPI_Comm comm" in check["signature"]
        assert check["plan"]["grid"] == [2, 2]
        distribution = check["distribution"]
        assert {s: a["arrives"] for s, a in distribution["symbols"].items()} == {
            "M": "local",
            "N": "local",
        }
        # Preset S is 64 x 96: 8-blocks dealt over 2 x 2 leave each rank 32 x 48.
        assert [r["tiles"]["A"] for r in distribution["ranks"]] == [[32, 48]] * 4
        answer = client.post(
            "/score",
            json={
                "kernel": "mat_scaled_add",
                "source": MAT_SCALED_ADD,
                "requests": MAT_BLOCK_CYCLIC,
            },
        )
        assert answer.status_code == 200, answer.text
        grade = answer.json()
        assert grade["correct"] is True, grade
        assert grade["distributed"]["grid"] == [2, 2]


def test_refusals_name_what_is_wrong_and_record_the_call(two_ranks: TestClient) -> None:
    handler = handler_of(two_ranks)
    only_y = {"startup": {"grid": ["P"]}, "operations": [distribute("y")]}
    answer = two_ranks.post(
        "/score", json={"kernel": "scaled_add", "source": SCALED_ADD, "requests": only_y}
    )
    assert answer.status_code == 400
    assert "array x is left neither distributed nor replicated" in answer.json()["detail"]
    refused = results_db.list_grades(handler.engine, route="score.refused", limit=1)[0]
    assert "array x" in refused["detail"] and not refused["correct"]

    square = {**MAT_BLOCK_CYCLIC}
    answer = two_ranks.post(
        "/score", json={"kernel": "mat_scaled_add", "source": MAT_SCALED_ADD, "requests": square}
    )
    assert answer.status_code == 400
    assert answer.json()["detail"].startswith("startup.grid must span mpi.ranks: ")

    python_delivery = two_ranks.post(
        "/requests/check",
        json={
            "kernel": "scaled_add",
            "language": "python",
            "requests": scaled_add_request("block"),
        },
    ).json()
    assert python_delivery["accepted"] is False

    on_device = scaled_add_request("block")
    on_device["operations"].append({"action": "place", "array": "x", "on": "device"})
    with_place = JudgeHandler(
        mpi_config(handler.config.data_dir, 2, requests={"allow": ["load", "distribute", "place"]})
    )
    from hb.envelope import RequestsCheckBody

    refusal = with_place.check(RequestsCheckBody(kernel="scaled_add", requests=on_device))
    assert refusal["accepted"] is False and "(place): x on device" in refusal["refusal"]
    single_node_place = {"operations": [{"action": "place", "array": "x", "on": "host"}]}
    refusal = with_place.check(RequestsCheckBody(kernel="scaled_add", requests=single_node_place))
    assert refusal == {
        "accepted": False,
        "refusal": "operations[0] (place): place needs startup.grid (a distributed run)",
    }


def test_task_grid_is_injected_and_a_named_grid_refused(data_dir: Path) -> None:
    config = mpi_config(
        data_dir,
        2,
        requests={"allow": ["load"], "grid": "task"},
        mpi={"grade_distributed": True},
    )
    with TestClient(create_app(config)) as client:
        named = client.post(
            "/score",
            json={
                "kernel": "scaled_add",
                "source": SCALED_ADD,
                "requests": scaled_add_request("block"),
            },
        )
        assert named.status_code == 400 and "requests.grid: task" in named.json()["detail"]
        bare = client.post("/score", json={"kernel": "scaled_add", "source": SCALED_ADD})
        assert bare.status_code == 400
        assert "array x is left neither distributed nor replicated" in bare.json()["detail"]
        operations = {"operations": scaled_add_request("cyclic")["operations"]}
        answer = client.post(
            "/score", json={"kernel": "scaled_add", "source": SCALED_ADD, "requests": operations}
        )
        assert answer.status_code == 200, answer.text
        grade = answer.json()
        assert grade["correct"] is True and grade["requests"]["startup"]["grid"] == ["P"]
        handler = handler_of(client)
        assert request_rows(handler, grade["grade_id"])[0] == ("grid", "grid")
        task = client.get("/task/scaled_add").json()
        assert task["mpi"]["grid_set_by"] == "task"
        assert task["mpi"]["default_requests"] == {
            "operations": [
                distribute("x", scheme="block"),
                distribute("y", scheme="block"),
            ],
            "startup": {"grid": ["P"]},
        }
        assert "MPI_Comm comm" in task["mpi"]["signature"]
        assert task["mpi"]["default_distribution"]["symbols"]["N"]["arrives"] == "local"
        assert "distribute" in task["request_actions"]["actions"]
        assert task["request_actions"]["grid"] is False


def test_task_grid_without_grade_distributed_lays_out_over_the_task_grid(
    tmp_path: Path,
) -> None:
    config = mpi_config(tmp_path, 2, requests={"allow": ["load", "distribute"], "grid": "task"})
    operations = {"operations": scaled_add_request("block")["operations"]}
    with TestClient(create_app(config)) as client:
        handler = handler_of(client)
        assert client.get("/task/scaled_add").json()["mpi"]["grid_set_by"] == "task"
        checked = client.post(
            "/requests/check", json={"kernel": "scaled_add", "requests": operations}
        ).json()
        assert checked["accepted"] is True, checked
        assert checked["plan"]["grid"] == [2]
        answer = client.post(
            "/score", json={"kernel": "scaled_add", "source": SCALED_ADD, "requests": operations}
        )
        assert answer.status_code == 200, answer.text
        grade = answer.json()
        assert grade["correct"] is True and grade["requests"]["startup"]["grid"] == ["P"]
        assert request_rows(handler, grade["grade_id"])[0] == ("grid", "grid")
        # A refused call records the injected grid too.
        placed = {
            "operations": [
                *operations["operations"],
                {"action": "place", "array": "x", "on": "host"},
            ]
        }
        refused = client.post(
            "/score", json={"kernel": "scaled_add", "source": SCALED_ADD, "requests": placed}
        )
        assert refused.status_code == 400
        assert refused.json()["detail"].startswith("operations[2] (place): this setup does not")
        row = results_db.list_grades(handler.engine, route="score.refused", limit=1)[0]
        assert request_rows(handler, row["id"])[0] == ("grid", "grid")
        # A submission naming a grid stays refused.
        named = client.post(
            "/score",
            json={
                "kernel": "scaled_add",
                "source": SCALED_ADD,
                "requests": scaled_add_request("block"),
            },
        )
        assert named.status_code == 400 and "requests.grid: task" in named.json()["detail"]
        # A request that does not distribute stays single-node.
        single = client.post("/score", json={"kernel": "scaled_add", "source": SOLUTION_C})
        assert single.status_code == 200 and "grid" not in single.json()["requests"].get(
            "startup", {}
        )


def _processes_under(directory: Path) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if str(directory) in command:
            found.append(f"{entry.name}: {command}")
    return found


def test_a_crashing_rank_fails_the_grade_and_the_service_answers(two_ranks: TestClient) -> None:
    source = (SOLUTIONS / "scaled_add_crash.c").read_text()
    answer = two_ranks.post(
        "/score",
        json={"kernel": "scaled_add", "source": source, "requests": scaled_add_request("block")},
    )
    assert answer.status_code == 200, answer.text
    grade = answer.json()
    assert grade["correct"] is False
    assert "Segmentation fault (signal 11)" in grade["reason"], grade["reason"]
    handler = handler_of(two_ranks)
    row = results_db.get_grade(handler.engine, grade["grade_id"])
    assert row is not None and not row["correct"] and row["detail"] == grade["reason"]
    assert _processes_under(handler.config.sandbox_dir) == []
    assert two_ranks.get("/health").json()["status"] == "ok"
    again = two_ranks.post(
        "/score",
        json={
            "kernel": "scaled_add",
            "source": SCALED_ADD,
            "requests": scaled_add_request("block"),
        },
    )
    assert again.json()["correct"] is True


def test_a_hanging_rank_fails_within_the_sandbox_timeout(data_dir: Path) -> None:
    config = mpi_config(data_dir, 2, sandbox={"timeout_s": 4})
    handler = JudgeHandler(config)
    from hb.envelope import Submission

    source = (SOLUTIONS / "scaled_add_hang.c").read_text()
    started = time.monotonic()
    grade = handler.grade(
        Submission(kernel="scaled_add", source=source, requests=scaled_add_request("block")),
        "score",
    ).model_dump()
    assert time.monotonic() - started < 30
    assert grade["correct"] is False
    assert "exceeded its wall-clock limit" in grade["reason"], grade["reason"]
    assert _processes_under(config.sandbox_dir) == []


def cli_files(
    data_dir: Path, directory: Path, source: str, requests: dict[str, Any], ranks: int = 2
) -> tuple[Path, Path, Path]:
    """What `hb --config ... submit / check / scale` read, written in `directory`: the config
    (distributed requests allowed, `ranks` ranks), the C source and the request's JSON."""
    config = directory / "config.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "data_dir": str(data_dir),
                "requests": DISTRIBUTED,
                "grading": {"reps": 2, "warmup": 1},
                "sandbox": {"timeout_s": 30},
                "mpi": {"ranks": ranks, "rank_counts": [1, 2, 4]},
            }
        )
    )
    source_file = directory / "solution_mpi.c"
    source_file.write_text(source)
    requests_file = directory / "requests.json"
    requests_file.write_text(json.dumps(requests))
    return config, source_file, requests_file


def test_cli_submit_check_and_scale(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config, source, requests = cli_files(
        data_dir, tmp_path, SCALED_ADD, scaled_add_request("cyclic")
    )

    status = cli.main(
        ["--config", str(config), "submit", str(source), "--kernel", "scaled_add",
         "--requests", str(requests)]
    )  # fmt: skip
    printed = capsys.readouterr().out
    assert status == 0, printed
    assert "2 (grid 2)" in printed and "N: local" in printed

    status = cli.main(
        ["--config", str(config), "check", "--kernel", "scaled_add", "--requests", str(requests)]
    )
    checked = json.loads(capsys.readouterr().out)
    assert status == 0 and checked["distribution"]["symbols"]["N"]["arrives"] == "local"

    out = tmp_path / "scaling"
    status = cli.main(
        ["--config", str(config), "scale", "scaled_add", str(source), "--requests", str(requests),
         "--ranks", "1,2,4", "--reps", "2", "--out", str(out)]
    )  # fmt: skip
    printed = capsys.readouterr().out
    assert status == 0, printed
    lines = printed.splitlines()
    assert lines[0].split()[:5] == ["ranks", "grid", "time_s", "speedup", "efficiency"]
    points = [line.split() for line in lines[1:4]]
    assert [p[0] for p in points] == ["1", "2", "4"]
    assert points[0][4] == "100.0%" and all(p[2] != "-" for p in points)
    png = out / "scaling.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"plot: {png}" in printed


def test_cli_scale_skips_a_point_the_grid_does_not_span(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config, source, requests = cli_files(data_dir, tmp_path, MAT_SCALED_ADD, MAT_BLOCK_CYCLIC)
    status = cli.main(
        ["--config", str(config), "scale", "mat_scaled_add", str(source), "--requests",
         str(requests), "--ranks", "1,2", "--reps", "1", "--out", str(tmp_path / "out")]
    )  # fmt: skip
    printed = capsys.readouterr().out
    assert status == 0, printed
    two = next(line for line in printed.splitlines() if line.split()[:1] == ["2"])
    assert "skipped: " in two
    assert (tmp_path / "out" / "scaling.png").is_file()
    assert os.path.getsize(tmp_path / "out" / "scaling.png") > 0


@pytest.mark.parametrize("kernel", ["jacobi_2d", "heat_3d"])
def test_halo_exchange_kernels_under_their_default_distribution(
    two_ranks: TestClient, kernel: str
) -> None:
    task = two_ranks.get(f"/task/{kernel}").json()
    source = (CATALOG_DIR / kernel / "solution_mpi.c").read_text()
    answer = two_ranks.post(
        "/score",
        json={"kernel": kernel, "source": source, "requests": task["mpi"]["default_requests"]},
    )
    assert answer.status_code == 200, answer.text
    grade = answer.json()
    assert grade["correct"] is True, grade
    assert grade["distributed"]["ranks"] == 2 and grade["baseline_ns"] > 0


@pytest.mark.parametrize(
    ("mpi", "expected"),
    [
        ({}, ["MPIEXEC", "-n", "8", "DRIVER", "RUN"]),
        (
            {"launcher": "{mpiexec} -n {ranks} -f {hostfile}", "hostfile": "/etc/hb/hosts"},
            ["MPIEXEC", "-n", "8", "-f", "/etc/hb/hosts", "DRIVER", "RUN"],
        ),
        (
            {"launcher": "srun -n {ranks} --kill-on-bad-exit=1"},
            ["srun", "-n", "8", "--kill-on-bad-exit=1", "DRIVER", "RUN"],
        ),
    ],
)
def test_the_configured_launcher_gives_the_command_line(
    tmp_path: Path, mpi: dict[str, str], expected: list[str]
) -> None:
    from hb.config import load_config

    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({"mpi": {"ranks": 8, **mpi}}))
    template, hostfile, counts = launcher_settings(load_config(path, environ={}).mpi)
    assert counts == (1, 2, 4)
    command = launcher_command(template, 8, "DRIVER", ["RUN"], hostfile=hostfile, mpiexec="MPIEXEC")
    assert command == expected


def test_allowlists_from_the_config_restrict_the_layouts(data_dir: Path) -> None:
    from hb.envelope import RequestsCheckBody

    replicated_x = {
        "startup": {"grid": ["P"]},
        "operations": [{"action": "replicate", "array": "x"}, distribute("y")],
    }
    open_setup = JudgeHandler(mpi_config(data_dir, 2))
    assert open_setup.check(RequestsCheckBody(kernel="scaled_add", requests=replicated_x))[
        "accepted"
    ]
    strict = JudgeHandler(
        mpi_config(
            data_dir,
            2,
            mpi={"replicatable_allowlist": ["mat_scaled_add"], "layout_flexible_allowlist": []},
        )
    )
    refused = strict.check(RequestsCheckBody(kernel="scaled_add", requests=replicated_x))
    assert refused["accepted"] is False
    assert refused["refusal"].startswith(
        "plan.arrays.x: scaled_add.x may not be replicated here (not in replicatable_allowlist)"
    )
    cyclic = strict.check(
        RequestsCheckBody(kernel="scaled_add", requests=scaled_add_request("cyclic"))
    )
    assert cyclic["accepted"] is False and "layout_flexible_allowlist" in cyclic["refusal"]
    default = strict.check(
        RequestsCheckBody(kernel="scaled_add", requests=scaled_add_request("block"))
    )
    assert default["accepted"] is True
    flexible = JudgeHandler(
        mpi_config(data_dir, 2, mpi={"layout_flexible_allowlist": ["scaled_add.x", "scaled_add.y"]})
    )
    assert flexible.check(
        RequestsCheckBody(kernel="scaled_add", requests=scaled_add_request("cyclic"))
    )["accepted"]


def test_a_distributed_task_prompt_states_the_mpi_entry_point(data_dir: Path) -> None:
    handler = JudgeHandler(
        mpi_config(data_dir, 4, requests={"allow": ["load"]}, mpi={"grade_distributed": True})
    )
    task = handler.task("mat_scaled_add")
    section = task["requests_section"]
    assert "void mat_scaled_add_mpi_fp64(const double *restrict A" in section
    assert "you set startup.grid" in section and task["request_actions"]["grid"] is True
    assert '"action": "distribute", "array": "A"' in section
    assert "layout operations on one node" not in section


def test_a_cast_tile_is_timed_apart_and_graded_in_the_problem_band(data_dir: Path) -> None:
    config = mpi_config(
        data_dir,
        2,
        requests={"allow": ["load", "distribute", "cast"], "precisions": ["fp32", "fp16"]},
    )
    handler = JudgeHandler(config)
    from hb.envelope import RequestsCheckBody, Submission

    requests = scaled_add_request("block")
    requests["operations"].insert(0, {"action": "cast", "array": "x", "to": "fp16"})
    check = handler.check(RequestsCheckBody(kernel="scaled_add", requests=requests))
    assert check["accepted"] is True
    assert check["signature"].startswith(
        "void scaled_add_mpi_fp64(const _Float16 *restrict x, double *restrict y"
    )
    source = (SOLUTIONS / "scaled_add_x_fp16.c").read_text()
    grade = handler.grade(
        Submission(kernel="scaled_add", source=source, requests=requests), "score"
    ).model_dump()
    # The seeded x is not exact in fp16, and the band stays fp64's (spec §1).
    assert grade["correct"] is False and grade["reason"] and "y" in grade["reason"]
    assert grade["convert_in_ns"] > 0 and grade["convert_out_ns"] == 0
    row = results_db.get_grade(handler.engine, grade["grade_id"])
    assert row is not None and row["convert_in_ns"] == grade["convert_in_ns"]
    assert [kind for kind, _ in request_rows(handler, grade["grade_id"])] == [
        "grid",
        "operation",
        "operation",
        "operation",
    ]


def test_device_residency_goes_to_the_driver_and_is_refused_without_a_device(
    data_dir: Path,
) -> None:
    from hb.envelope import RequestsCheckBody

    available, why = device_available()
    if available:
        pytest.skip("a CUDA device is present: device residency is graded, not refused")
    handler = JudgeHandler(mpi_config(data_dir, 2, mpi={"residency": "device"}))
    refused = handler.check(
        RequestsCheckBody(kernel="scaled_add", requests=scaled_add_request("block"))
    )
    assert refused["accepted"] is False
    assert why in refused["refusal"], refused["refusal"]


def test_a_distributed_grade_runs_from_make_runs_default_configuration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # make run: the shipped config.yaml, its relative data_dir resolved against the working
    # directory, a setup that allows distribute through the environment.
    from hb.config import load_config

    monkeypatch.chdir(tmp_path)
    config = load_config(
        CATALOG_DIR.parents[2] / "config.yaml",
        environ={"HPCAGENT_BENCH_REQUESTS_ALLOW": "load,distribute"},
    )
    assert not config.data_dir.is_absolute()
    with TestClient(create_app(config)) as client:
        body = score_block(client)
    assert body["correct"] is True, body.get("reason")
    assert body["distributed"]["ranks"] == config.mpi.ranks
