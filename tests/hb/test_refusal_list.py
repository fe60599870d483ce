"""The refusals before a build are one ordered list (hb.judge.refusals.REFUSALS) that every route runs
at the graded sizes: a check added to it refuses /requests/check, /score, /submit, `hb submit`
and `hb scale` alike, before anything is built, and nothing is spent on the submission."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from hb import cli, kernels
from hb.judge import refusals
from hb.service import create_app
from tests.hb.conftest import make_config

PROBE = "probe: refused by the check added to the list"


def test_the_list_runs_in_the_specs_order() -> None:
    assert [r.name for r in refusals.REFUSALS] == [
        "language", "allowances", "cast", "startup.load", "distributed", "sparse", "relayout",
        "shuffle",
    ]  # fmt: skip


@pytest.fixture
def probed(monkeypatch: pytest.MonkeyPatch) -> list[refusals.Call]:
    """A check appended to the list that refuses every call and keeps what it was asked."""
    seen: list[refusals.Call] = []

    def probe(call: refusals.Call) -> str:
        seen.append(call)
        return PROBE

    added = refusals.Refusal("probe", lambda call: True, probe)
    monkeypatch.setattr(refusals, "REFUSALS", (*refusals.REFUSALS, added))
    return seen


def test_every_http_route_runs_the_list_at_its_sizes(
    probed: list[refusals.Call], tmp_path: Path
) -> None:
    config = make_config(tmp_path)
    source = kernels.solution_source("scaled_add")
    with TestClient(create_app(config)) as client:
        check = client.post("/requests/check", json={"kernel": "scaled_add", "preset": "M"})
        assert check.json() == {"accepted": False, "refusal": PROBE}
        score = client.post(
            "/score", json={"kernel": "scaled_add", "source": source, "preset": "S"}
        )
        assert score.status_code == 400 and PROBE in score.text
        submit = client.post("/submit", json={"kernel": "scaled_add", "source": source})
        assert submit.status_code == 400 and PROBE in submit.text
        graded = client.get("/grades").json()
    assert [call.label for call in probed] == ["preset M", "preset S", "preset S"]
    assert probed[0].sizes == kernels.load_manifest("scaled_add").preset_sizes("M")
    # Refused calls are recorded as refused, and no grade was built or run.
    assert all(row["route"].endswith(".refused") for row in graded)


def test_the_cli_runs_the_list_too(probed: list[refusals.Call], tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        f"data_dir: {tmp_path / 'data'}\ngrading: {{reps: 2, warmup: 1, max_pairs: 2, box_pairs: 1}}\n"
        "requests: {allow: [load, distribute]}\n"
    )
    source = tmp_path / "kernel.c"
    source.write_text(kernels.solution_source("scaled_add"))
    assert cli.main(["--config", str(config), "submit", str(source), "--kernel", "scaled_add"]) != 0
    mpi_source = tmp_path / "kernel_mpi.c"
    mpi_source.write_text((kernels.CATALOG_DIR / "scaled_add" / "solution_mpi.c").read_text())
    status = cli.main([
        "--config", str(config), "scale", "scaled_add", str(mpi_source),
        "--ranks", "1,2", "--out", str(tmp_path / "scale"),
    ])  # fmt: skip
    assert status == 2
    assert not (tmp_path / "scale" / "scaling.txt").exists()
    assert len(probed) == 3  # hb submit once, hb scale at each rank count
    assert json.loads(probed[-1].granted.to_json())["startup"]["grid"]


# ---------------------------------------------------------------------------------------------
# What checking lowers, the grade reuses


def counting(monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> list[int]:
    """Count the calls of `owner.name` (wrapped in place)."""
    calls: list[int] = []
    original = getattr(owner, name)

    def wrapped(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, wrapped)
    return calls


def test_a_single_node_grade_checks_its_request_once_symbolically_and_once_at_its_sizes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import relayout.check

    checks = counting(monkeypatch, relayout.check, "check_requests")
    config = make_config(tmp_path, requests={"allow": ["load", "cast"], "precisions": ["fp32"]})
    cast = {"operations": [{"action": "cast", "array": "x", "to": "fp32"}]}
    source = kernels.solution_source("scaled_add").replace(
        "scaled_add_fp64(const double *restrict x", "scaled_add_fp64(const float *restrict x"
    )
    with TestClient(create_app(config)) as client:
        answer = client.post(
            "/score",
            json={"kernel": "scaled_add", "source": source, "requests": cast, "preset": "S"},
        )
    assert answer.status_code == 200, answer.text
    # Built, run and converted (fp32's rounding of x is outside the fp64 band: graded incorrect).
    assert answer.json()["convert_in_ns"] > 0, answer.json()
    assert len(checks) == 2


@pytest.mark.mpi
def test_a_distributed_grade_lowers_its_plan_once_at_the_graded_sizes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from hb.distributed import grade
    from relayout import distribution

    lowered: list[dict[str, int] | None] = []
    original = distribution.lower_distribution

    def recording(requests, arrays, sizes, ranks):  # type: ignore[no-untyped-def]
        lowered.append(dict(sizes) if sizes else None)
        return original(requests, arrays, sizes, ranks)

    monkeypatch.setattr(grade, "lower_distribution", recording)
    config = make_config(
        tmp_path, requests={"allow": ["load", "distribute"]}, mpi={"ranks": 2},
        grading={"preset": "M"},
    )  # fmt: skip
    request = {
        "startup": {"grid": ["P"]},
        "operations": [
            {"action": "distribute", "array": "x", "grid_dim": 0, "dim": 0},
            {"action": "distribute", "array": "y", "grid_dim": 0, "dim": 0},
        ],
    }
    source = (kernels.CATALOG_DIR / "scaled_add" / "solution_mpi.c").read_text()
    with TestClient(create_app(config)) as client:
        answer = client.post(
            "/submit", json={"kernel": "scaled_add", "source": source, "requests": request}
        )
    assert answer.status_code == 200, answer.text
    assert answer.json()["correct"] is True, answer.json()
    # Once for the submission (checked, then graded), once for the baseline's default request.
    preset_m = kernels.load_manifest("scaled_add").preset_sizes("M")
    assert lowered[0] == preset_m
    assert lowered.count(preset_m) == 2
