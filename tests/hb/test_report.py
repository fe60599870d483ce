"""hb report on SQLite and PostgreSQL: report.md's tables and the three PNG plots from recorded
grades, one experiment or all, each task's speedup with its 95% interval and the geomeans with
their tasks' bounds, and an empty database (or a missing one) said in words."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from hb import cli, report, results_db
from tests.hb.results_support import EXPERIMENT, add_paired_timing, paired_timing, record_demo

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A migrated, empty database's URL."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'hb.sqlite3'}"
        results_db.connect(url)
        return url
    url = str(request.getfixturevalue("postgres_url"))
    with results_db.connect(url).begin() as connection:
        connection.execute(
            sa.text("TRUNCATE grades, grade_requests, baselines RESTART IDENTITY CASCADE")
        )
    return url


def test_the_report_tables_and_plots_the_leaderboard(database: str, tmp_path: Path) -> None:
    record_demo(results_db.connect(database), judge_id="judge-1")
    written = report.write_report(results_db.connect(database), tmp_path / "out")
    text = written.read_text()
    assert "20 grades" in text
    assert "| judge-1 | demo (cpu) | 20 |" in text
    lines = text.splitlines()
    (a_row,) = [line for line in lines if line.startswith("| agent-a / default | 8 |")]
    cells = [cell.strip() for cell in a_row.strip("|").split("|")]
    header = [cell.strip() for cell in lines[lines.index(a_row) - 2].strip("|").split("|")]
    shown = dict(zip(header, cells, strict=True))
    assert shown["suspect"] == "1" and shown["correct rate"] == "0.875"
    assert shown["geomean scientific_computing"] == "2.45"  # (2 * 3 * 1.5 * 4) ** (1 / 4)
    assert shown["geomean loop_level"] == "n too small (1 < 3)"
    assert shown["fast_2"] == "0.5" and shown["fast_4"] == "0.125"
    assert "| agent-a / default | cast | 0.15 | 4 |" in text
    # Six tasks both solved, every ratio above 1: the exact two-sided p is 2 / 2**6.
    assert "| agent-a / default | agent-b / default | 8 | 1 | 1 | 1 | 6 | 2 | 0.0312 |" in text
    for name in ("fast_p", "speedups", "requests"):
        plot = tmp_path / "out" / f"{name}-{EXPERIMENT}.png"
        assert plot.read_bytes().startswith(PNG_MAGIC) and plot.stat().st_size > 5000
        assert f"]({plot.name})" in text


def cells_of(text: str, first: str) -> dict[str, str]:
    """The row of report.md's table that starts with `first`, by its header's columns."""
    lines = text.splitlines()
    (line,) = [line for line in lines if line.startswith(first)]
    header = next(
        lines[i] for i in range(lines.index(line), 0, -1) if lines[i + 1].startswith("|-")
    )
    names = [cell.strip() for cell in header.strip("|").split("|")]
    return dict(zip(names, [cell.strip() for cell in line.strip("|").split("|")], strict=True))


def test_the_report_shows_each_tasks_interval_and_the_geomeans_bounds(
    database: str, tmp_path: Path
) -> None:
    engine = results_db.connect(database)
    ids = record_demo(engine)
    add_paired_timing(engine, {
        ids["agent-a:gemm"]: paired_timing([2.0] * 30, 1.8, 2.2),
        # Noisy: credited by its lower bound (the demo's speedup, 1.5), estimated at 1.9.
        ids["agent-a:bicg"]: {**paired_timing([1.9] * 30, 1.5, 2.4, noisy=True),
                              "measured_speedup": 1.9},
        ids["agent-a:adam_update"]: paired_timing([1.2] * 30, 0.97, 1.3),
    })  # fmt: skip
    text = report.write_report(engine, tmp_path / "out").read_text()
    gemm = cells_of(text, "| agent-a / default | gemm |")
    assert (gemm["track"], gemm["correct"], gemm["speedup [95% CI]"]) == (
        "scientific_computing", "yes", "2 [1.8, 2.2]",
    )  # fmt: skip
    assert gemm["grade"] == f"#{ids['agent-a:gemm']}"
    bicg = cells_of(text, "| agent-a / default | bicg |")["speedup [95% CI]"]
    assert bicg == "1.5 [1.5, 2.4] noisy (estimate 1.9)"
    assert cells_of(text, "| agent-a / default | cholesky |")["speedup [95% CI]"] == "4"
    assert cells_of(text, "| agent-a / default | carried_scalar |")["speedup [95% CI]"] == "-"
    board = cells_of(text, "| agent-a / default | 8 |")
    low, high = (1.8 * 3 * 1.5 * 4) ** 0.25, (2.2 * 3 * 2.4 * 4) ** 0.25
    assert board["geomean scientific_computing"] == f"2.45 [{low:.3g}, {high:.3g}]"
    assert board["geomean overall"] == board["geomean scientific_computing"]
    assert board["geomean loop_level"] == "n too small (1 < 3)"
    # adam_update (1.2, lower bound 0.97) leaves fast_1 and gemm (2, lower bound 1.8) fast_2.
    assert (board["noisy"], board["fast_1"], board["fast_2"]) == ("1", "0.625", "0.375")
    other = cells_of(text, "| agent-b / default | 8 |")
    assert (other["noisy"], other["geomean overall"], other["fast_1"]) == ("0", "1.44", "0.75")


def test_an_empty_database_says_so_and_writes_empty_tables(
    database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    monkeypatch.setenv("HB_DATABASE_URL", database)
    assert cli.main(["report", "--out", str(tmp_path / "out")]) == 0
    text = (tmp_path / "out" / "report.md").read_text()
    assert "The database holds no grades: every table below is empty." in text
    assert "| agent / setup | tasks | grades |" in text and "| judge | machine | grades |" in text
    assert (
        "| agent / setup | kernel | preset | datatype | track | correct | speedup [95% CI] |"
        in text
    )
    assert not list((tmp_path / "out").glob("*.png"))
    record_demo(results_db.connect(database))
    assert cli.main(["report", "--experiment", "nope", "--out", str(tmp_path / "nope")]) == 0
    assert "no grades of experiment 'nope'" in (tmp_path / "nope" / "report.md").read_text()
    assert "wrote" in capsys.readouterr().out


def test_a_database_that_cannot_be_opened_is_an_error_in_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HB_DATABASE_URL", f"sqlite:///{tmp_path / 'missing' / 'hb.sqlite3'}")
    assert cli.main(["report", "--out", str(tmp_path / "out")]) == 2
    assert "hb report: cannot read the database sqlite:///" in capsys.readouterr().err
