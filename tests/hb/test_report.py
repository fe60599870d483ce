"""hb report on SQLite and PostgreSQL: report.md's tables and the three PNG plots from recorded
grades, one experiment or all, and an empty database (or a missing one) said in words."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from hb import cli, report, results_db
from tests.hb.results_support import EXPERIMENT, record_demo

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


def test_an_empty_database_says_so_and_writes_empty_tables(
    database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    monkeypatch.setenv("HB_DATABASE_URL", database)
    assert cli.main(["report", "--out", str(tmp_path / "out")]) == 0
    text = (tmp_path / "out" / "report.md").read_text()
    assert "The database holds no grades: every table below is empty." in text
    assert "| agent / setup | tasks | grades |" in text and "| judge | machine | grades |" in text
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
