"""Fixtures of the judge's tests: one data directory and build cache per session (builds are
reused across tests), a handler and an HTTP client over it, and a throwaway PostgreSQL cluster."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from hb.config import Config, load_config
from hb.service import JudgeHandler, create_app

POSTGRES_BIN = Path("/usr/lib/postgresql/15/bin")


def graded_correct(judge: JudgeHandler, kernel: str, source: str, language: str = "c") -> None:
    """`source` built as the judge builds a submission in `language`, run in the box on the
    grade's own inputs at preset S and compared with the reference at the judge's precision, like
    any submission, without the baseline's timing (a speedup is the benchmarks' matter): the
    catalog's sweeps grade every kernel this way. Fails the test with the judge's reason."""
    from hb import kernels, languages
    from hb.envelope import Submission
    from hb.execution import build
    from hb.judge import graders
    from hb.judge.grading import compare_reps

    manifest = judge.manifest(kernel)
    problem = judge.problem(manifest)
    built = build.build(source, language, [], judge.config.build_cache_dir, judge.build_limits)
    assert built.ok and built.library is not None, built.log
    sizes, scalars = manifest.preset_sizes("S"), manifest.preset_scalars("S")
    granted = judge.granted_requests(Submission(kernel=kernel, source="").requests, manifest)
    grader = graders.grader_for(judge.graders, manifest, granted)
    assert isinstance(grader, graders.DenseGrader)
    problems = grader.problems(manifest, "S", problem.precision, 7, sizes, scalars)
    reps, pointers = grader.rep_inputs(
        manifest, granted, problem.precision, sizes, scalars, problems,
        kernels.pointer_names(manifest),
    )  # fmt: skip
    delivery = languages.language(language).delivery
    run = grader.run(
        built.library, manifest, problem.precision, sizes, reps, pointers, delivery=delivery
    )
    assert run.ok, run.reason
    comparison = compare_reps(run, problems, problem.band)
    assert comparison.correct, comparison.reason


def make_config(data_dir: Path, **sections: dict) -> Config:
    """A test configuration: small reps, short timeouts, the given sections merged in. The
    noise gate adds no round unless a test asks for one (grading.max_pairs defaults to reps),
    and the pairs go in one pair of boxes (grading.box_pairs 1)."""
    config = load_config(None, environ={"HB_DATA_DIR": str(data_dir)})
    raw = config.model_dump()
    raw["grading"].update(reps=2, warmup=1)
    raw["sandbox"].update(timeout_s=30, threads=2)
    for name, values in sections.items():
        raw.setdefault(name, {}).update(values)
    if "max_pairs" not in sections.get("grading", {}):
        raw["grading"]["max_pairs"] = raw["grading"]["reps"]
    if "box_pairs" not in sections.get("grading", {}):
        raw["grading"]["box_pairs"] = 1
    merged = Config.model_validate(raw)
    merged.environment = {}
    return merged


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("hb-data")


@pytest.fixture(scope="session")
def config(data_dir: Path) -> Config:
    return make_config(
        data_dir,
        requests={"allow": ["load", "cast", "layout"], "precisions": ["fp32", "fp16", "bf16"]},
    )


@pytest.fixture(scope="session")
def handler(config: Config) -> JudgeHandler:
    return JudgeHandler(config)


@pytest.fixture(scope="session")
def client(config: Config) -> Iterator[TestClient]:
    with TestClient(create_app(config)) as test_client:
        yield test_client


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A PostgreSQL 15 cluster in a temporary directory on a free port, as the postgres user when
    we are root (the server refuses root); skipped with the reason where it cannot start."""
    if not (POSTGRES_BIN / "initdb").exists():
        pytest.skip(f"PostgreSQL server binaries are not installed at {POSTGRES_BIN}")
    # Outside pytest's own temporary root, which is private to root (and reset by every session).
    base = Path(tempfile.mkdtemp(prefix="hb-postgres-"))
    cluster = base / "cluster"
    prefix: list[str] = []
    if os.geteuid() == 0:
        if shutil.which("runuser") is None:
            shutil.rmtree(base, ignore_errors=True)
            pytest.skip("running as root without runuser: PostgreSQL refuses to run as root")
        prefix = ["runuser", "-u", "postgres", "--"]
        os.chmod(base, 0o777)
    port = _free_port()
    init = subprocess.run(
        [*prefix, str(POSTGRES_BIN / "initdb"), "-D", str(cluster), "-U", "hb", "--auth=trust", "-E", "UTF8"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if init.returncode != 0:
        shutil.rmtree(base, ignore_errors=True)
        pytest.skip(f"initdb failed: {init.stderr.strip()[-300:]}")
    start = subprocess.run(
        [*prefix, str(POSTGRES_BIN / "pg_ctl"), "-D", str(cluster), "-l", str(base / "log.txt"), "-w",
         "-o", f"-p {port} -k {base} -c listen_addresses=127.0.0.1", "start"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if start.returncode != 0:
        shutil.rmtree(base, ignore_errors=True)
        pytest.skip(f"pg_ctl start failed: {start.stderr.strip()[-300:]}")
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            ready = subprocess.run(
                [str(POSTGRES_BIN / "pg_isready"), "-h", "127.0.0.1", "-p", str(port)],
                capture_output=True,
                check=False,
            )
            if ready.returncode == 0:
                break
            time.sleep(0.2)
        yield f"postgresql://hb@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            [*prefix, str(POSTGRES_BIN / "pg_ctl"), "-D", str(cluster), "-m", "immediate", "stop"],
            capture_output=True, check=False,
        )  # fmt: skip
        shutil.rmtree(base, ignore_errors=True)
