"""The results database on SQLite and on a real PostgreSQL: migrations, add_grade writing a grade
and its typed request rows in one transaction, reading the request back both ways, and a writer
killed mid-write leaving no grade without its rows."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from hb import results_db
from hb.requests_api import RequestError, Requests

REQUEST = {
    "startup": {"load": ["openblas"]},
    "operations": [
        {"action": "cast", "array": "A", "to": "fp32"},
        {"action": "permute", "array": "B", "order": ["i1", "i0"]},
        {"action": "zip", "arrays": ["u", "v"], "into": "uv"},
    ],
}
GRADE = {
    "kernel": "gemm",
    "preset": "S",
    "datatype": "fp64",
    "language": "c",
    "route": "submit",
    "correct": True,
}


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> sa.Engine:
    if request.param == "sqlite":
        return results_db.connect(f"sqlite:///{tmp_path / 'grades.sqlite3'}")
    url = request.getfixturevalue("postgres_url")
    engine = results_db.connect(url)
    with engine.begin() as connection:  # each test starts from empty tables
        connection.execute(
            sa.text("TRUNCATE grades, grade_requests, baselines RESTART IDENTITY CASCADE")
        )
    return engine


def test_migrations_are_recorded_and_idempotent(engine: sa.Engine) -> None:
    assert results_db.applied_versions(engine) == [m[0] for m in results_db.MIGRATIONS]
    assert results_db.migrate(engine) == []


def test_grade_and_rows_agree(engine: sa.Engine) -> None:
    grade_id = results_db.add_grade(engine, {**GRADE, "native_ns": 10, "convert_in_ns": 3}, REQUEST)
    row = results_db.get_grade(engine, grade_id)
    assert row is not None and row["convert_in_ns"] == 3 and row["convert_out_ns"] == 0
    recorded = json.loads(row["requests"])
    assert recorded["v"] == 1 and list(recorded) == sorted(recorded)
    rows = results_db.rows_of_grade(engine, grade_id)
    assert [(r["kind"], r["name"], r["array"]) for r in rows] == [
        ("load", "openblas", None),
        ("operation", "cast", "A"),
        ("operation", "permute", "B"),
        ("operation", "zip", "u"),
    ]
    expected = Requests.validate(REQUEST)
    assert results_db.requests_of_row(row) == expected
    assert results_db.requests_from_rows(rows) == expected


def test_empty_request_is_the_empty_string(engine: sa.Engine) -> None:
    grade_id = results_db.add_grade(engine, GRADE)
    row = results_db.get_grade(engine, grade_id)
    assert row is not None and row["requests"] == ""
    assert results_db.rows_of_grade(engine, grade_id) == []
    assert results_db.requests_of_row(row) == Requests()


def test_grid_row(engine: sa.Engine) -> None:
    request = {"startup": {"grid": ["root(P, 2)", "root(P, 2)"]}}
    grade_id = results_db.add_grade(engine, GRADE, request)
    rows = results_db.rows_of_grade(engine, grade_id)
    assert [(r["kind"], json.loads(r["entry"])) for r in rows] == [
        ("grid", ["root(P, 2)", "root(P, 2)"])
    ]
    assert results_db.requests_from_rows(rows) == Requests.validate(request)


def test_a_malformed_request_writes_nothing(engine: sa.Engine) -> None:
    with pytest.raises(RequestError, match=r"operations\[0\] \(cast\)"):
        results_db.add_grade(engine, GRADE, {"operations": [{"action": "cast", "array": "A"}]})
    assert results_db.list_grades(engine) == []


def test_a_regrade_takes_its_grade_request(engine: sa.Engine) -> None:
    first = results_db.add_grade(engine, GRADE, REQUEST)
    final = results_db.add_grade(engine, {**GRADE, "route": "final"}, of_grade_id=first)
    row = results_db.get_grade(engine, final)
    assert row is not None and row["of_grade_id"] == first
    assert results_db.requests_of_row(row) == Requests.validate(REQUEST)
    assert len(results_db.rows_of_grade(engine, final)) == 4


def test_a_regrade_records_its_grade_request_and_refuses_another(engine: sa.Engine) -> None:
    first = results_db.add_grade(engine, GRADE, REQUEST)
    # Given the same request, or of_grade_id as the grade's column: the parent's request.
    same = results_db.add_grade(engine, {**GRADE, "route": "final"}, REQUEST, of_grade_id=first)
    column = results_db.add_grade(engine, {**GRADE, "route": "final", "of_grade_id": first})
    for grade_id in (same, column):
        row = results_db.get_grade(engine, grade_id)
        assert row is not None and row["of_grade_id"] == first
        assert results_db.requests_of_row(row) == Requests.validate(REQUEST)
        assert len(results_db.rows_of_grade(engine, grade_id)) == 4
    before = len(results_db.list_grades(engine))
    other = {"operations": [{"action": "cast", "array": "A", "to": "fp16"}]}
    with pytest.raises(ValueError, match="differs from grade"):
        results_db.add_grade(engine, {**GRADE, "route": "final"}, other, of_grade_id=first)
    with pytest.raises(ValueError, match="differs from grade"):
        results_db.add_grade(engine, {**GRADE, "route": "final", "of_grade_id": first}, "")
    with pytest.raises(ValueError, match="differ"):
        results_db.add_grade(engine, {**GRADE, "of_grade_id": first}, of_grade_id=same)
    assert len(results_db.list_grades(engine)) == before


def test_baselines(engine: sa.Engine) -> None:
    assert results_db.get_baseline(engine, "gemm", "S", "fp64", 0) is None
    results_db.set_baseline(engine, "gemm", "S", "fp64", 0, 1234)
    results_db.set_baseline(engine, "gemm", "S", "fp64", 0, 1200)
    assert results_db.get_baseline(engine, "gemm", "S", "fp64", 0) == 1200


WRITER = """
import sys, time
from hb import results_db
engine = results_db.connect(sys.argv[1])
results_db._between_inserts = lambda: time.sleep(0.05)
request = {"startup": {"load": ["openblas"]}, "operations": [{"action": "cast", "array": "A", "to": "fp32"}]}
grade = {"kernel": "gemm", "preset": "S", "datatype": "fp64", "language": "c", "route": "submit", "correct": True}
print("ready", flush=True)
while True:
    results_db.add_grade(engine, grade, request)
"""


def test_a_writer_killed_mid_write_leaves_no_orphan(engine: sa.Engine) -> None:
    url = engine.url.render_as_string(hide_password=False).replace(
        "postgresql+psycopg://", "postgresql://"
    )
    for attempt in range(3):
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, url], stdout=subprocess.PIPE, text=True
        )
        assert writer.stdout is not None and writer.stdout.readline().strip() == "ready"
        # Once the writer is in its loop, each add_grade spends most of its time between the two
        # inserts, so the kill lands inside a transaction nearly every time.
        deadline = time.monotonic() + 30
        while (
            len(results_db.list_grades(engine, limit=1000)) <= attempt
            and time.monotonic() < deadline
        ):
            time.sleep(0.01)
        time.sleep(0.02 * (attempt + 1))
        writer.send_signal(signal.SIGKILL)
        writer.wait()
    grades = results_db.list_grades(engine, limit=1000)
    assert grades, "the writer recorded nothing before it was killed"
    assert results_db.orphan_grades(engine) == []
    for grade in grades:
        assert len(results_db.rows_of_grade(engine, grade["id"])) == 2


def test_the_documented_query_runs(engine: sa.Engine) -> None:
    document = (Path(__file__).resolve().parents[2] / "docs" / "results_db.md").read_text()
    query = document.split("```sql\n", 1)[1].split("```", 1)[0]
    fast = {**GRADE, "preset": "M", "native_ns": 100, "speedup": 3.0}
    results_db.add_grade(engine, fast, REQUEST)
    results_db.add_grade(engine, {**fast, "native_ns": 80, "speedup": 3.5})
    results_db.add_grade(engine, {**fast, "correct": False, "native_ns": 10}, REQUEST)
    with engine.connect() as connection:
        rows = [tuple(row) for row in connection.execute(sa.text(query))]
    assert rows == [("gemm", 80, 3.5, 1)]
