"""The hb command: submit grades a file in process (table and --json), check answers a request,
tasks lists the catalog, grades lists what was recorded, schema prints the vendored text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hb import cli, kernels
from hb.requests_api import requests_schema_text


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(
        f"data_dir: {tmp_path / 'data'}\n"
        "grading: {reps: 2, warmup: 1, max_pairs: 2, box_pairs: 1}\n"
        "requests: {allow: [load, cast], precisions: [fp32]}\n"
    )
    return path


def hb(config_file: Path, *words: str) -> int:
    """`hb --config <config_file> <words>`: the command's exit status."""
    return cli.main(["--config", str(config_file), *words])


def test_submit_check_tasks_grades(
    config_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "scaled_add.c"
    source.write_text(kernels.solution_source("scaled_add"))
    assert hb(config_file, "submit", str(source), "--kernel", "scaled_add", "--preset", "S") == 0
    table = capsys.readouterr().out
    assert "correct         True" in table and "speedup" in table

    # --config after the subcommand is read as well.
    assert (
        cli.main(
            [
                "submit",
                str(source),
                "--kernel",
                "scaled_add",
                "--json",
                "--config",
                str(config_file),
            ]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out)["correct"] is True

    requests = tmp_path / "r.json"
    requests.write_text(
        json.dumps({"operations": [{"action": "cast", "array": "x", "to": "fp16"}]})
    )
    assert hb(config_file, "check", "--kernel", "scaled_add", "--requests", str(requests)) == 1
    assert "fp16" in json.loads(capsys.readouterr().out)["refusal"]
    status = hb(
        config_file, "submit", str(source), "--kernel", "scaled_add", "--requests", str(requests)
    )
    assert status == 2
    assert "refused: operations[0] (cast)" in capsys.readouterr().err

    assert hb(config_file, "grades") == 0
    listed = capsys.readouterr().out.splitlines()
    assert (
        listed[0].split()[:3] == ["id", "kernel", "preset"] and len(listed) == 4
    )  # two grades, one refusal

    assert cli.main(["tasks"]) == 0
    assert "void spmv_fp64(" in capsys.readouterr().out


def test_unknown_kernel(
    config_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "x.c"
    source.write_text("")
    assert hb(config_file, "submit", str(source), "--kernel", "nope") == 2
    assert "unknown kernel 'nope'" in capsys.readouterr().err


def test_schema(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["schema"]) == 0
    assert capsys.readouterr().out == requests_schema_text()


def test_serve_answers_health(config_file: Path) -> None:
    import socket
    import subprocess
    import sys
    import time

    import httpx

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "hb.cli",
            "--config",
            str(config_file),
            "serve",
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                answer = httpx.get(f"http://127.0.0.1:{port}/health", timeout=1)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "hb serve did not answer within 30 s"
                assert server.poll() is None, "hb serve exited"
                time.sleep(0.2)
        assert answer.status_code == 200 and answer.json()["status"] == "ok"
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_unreadable_files_and_bad_configs_are_clear_errors(
    config_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing.c"
    assert hb(config_file, "submit", str(missing), "--kernel", "scaled_add") == 2
    assert capsys.readouterr().err.strip() == (
        f"hb submit: cannot read {missing}: No such file or directory"
    )
    bad = tmp_path / "bad.yaml"
    bad.write_text("grading: {reps: 0}\n")
    source = tmp_path / "scaled_add.c"
    source.write_text(kernels.solution_source("scaled_add"))
    assert hb(bad, "submit", str(source), "--kernel", "scaled_add") == 2
    error = capsys.readouterr().err
    assert error.startswith("hb submit: ") and "grading.reps" in error and "Traceback" not in error
