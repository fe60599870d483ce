"""The results database's migrations replay: a new database built by every migration in order is
the schema today's Table objects describe (columns, types, nullability, defaults, keys, indexes),
on SQLite and on a real PostgreSQL; a database left at any older version upgrades and keeps its
rows; databases opened at once apply each migration once."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from hb import results_db
from hb.requests_api import Requests, to_recorded

VERSIONS = [version for version, _, _ in results_db.MIGRATIONS]
OLD_REQUEST = {"startup": {"load": ["openblas"]}}
GRADE = {
    "kernel": "gemm",
    "preset": "S",
    "datatype": "fp64",
    "language": "c",
    "route": "submit",
    "correct": True,
}

OpenDatabase = Callable[..., sa.Engine]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def open_database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[OpenDatabase]:
    """open_database(): an engine on a new empty database (neither migrated nor cached);
    open_database(url): another engine on that one. All are disposed (and dropped) after."""
    engines: list[sa.Engine] = []
    created: list[str] = []
    admin: sa.Engine | None = None
    if request.param == "postgres":
        server = request.getfixturevalue("postgres_url")
        admin = results_db.make_engine(server).execution_options(isolation_level="AUTOCOMMIT")

    def new_url() -> str:
        if admin is None:
            return f"sqlite:///{tmp_path / f'db{len(engines)}.sqlite3'}"
        name = f"replay_{uuid.uuid4().hex[:12]}"
        with admin.connect() as connection:
            connection.execute(sa.text(f"CREATE DATABASE {name}"))
        created.append(name)
        return admin.url.set(database=name).render_as_string(hide_password=False)

    def open_(url: str | None = None) -> sa.Engine:
        engine = results_db.make_engine(url or new_url())
        engines.append(engine)
        return engine

    try:
        yield open_
    finally:
        for engine in engines:
            engine.dispose()
        if admin is not None:
            with admin.connect() as connection:
                for name in created:
                    connection.execute(sa.text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
            admin.dispose()


def schema(engine: sa.Engine) -> dict[str, dict[str, Any]]:
    """What sqlalchemy.inspect sees of every table: columns in order (type as the dialect writes
    it, nullability, default, autoincrement), primary key, foreign keys, unique constraints,
    check constraints and indexes."""
    inspector = sa.inspect(engine)

    def ordered(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return sorted(items, key=repr)

    return {
        table: {
            "columns": [
                {**column, "type": str(column["type"].compile(dialect=engine.dialect))}
                for column in inspector.get_columns(table)
            ],
            "primary key": inspector.get_pk_constraint(table),
            "foreign keys": ordered(inspector.get_foreign_keys(table)),
            "unique": ordered(inspector.get_unique_constraints(table)),
            "checks": ordered(inspector.get_check_constraints(table)),
            "indexes": ordered(inspector.get_indexes(table)),
        }
        for table in sorted(inspector.get_table_names())
    }


def described(open_database: OpenDatabase) -> dict[str, dict[str, Any]]:
    """The schema of a new database made by today's Table objects (metadata.create_all)."""
    engine = open_database()
    results_db.metadata.create_all(engine)
    return schema(engine)


def test_versions_are_one_to_n_in_order() -> None:
    assert list(range(1, len(VERSIONS) + 1)) == VERSIONS
    assert VERSIONS[-1] == results_db.SCHEMA_VERSION
    with pytest.raises(ValueError, match="no migration 0"):
        results_db.migrate(sa.create_engine("sqlite://"), to=0)


def test_replaying_every_migration_builds_the_schema_the_tables_describe(
    open_database: OpenDatabase,
) -> None:
    replayed = open_database()
    assert results_db.migrate(replayed) == VERSIONS
    expected = described(open_database)
    assert set(expected) == {"baselines", "grade_requests", "grades", "schema_migrations"}
    assert {index["name"] for index in expected["grades"]["indexes"]} >= {"grades_leaderboard"}
    assert schema(replayed) == expected


@pytest.mark.parametrize("old", VERSIONS[:-1])
def test_a_database_at_an_old_version_upgrades_and_keeps_its_rows(
    open_database: OpenDatabase, old: int
) -> None:
    engine = open_database()
    assert results_db.migrate(engine, to=old) == VERSIONS[:old]
    assert results_db.applied_versions(engine) == VERSIONS[:old]
    inspector = sa.inspect(engine)
    # Each step is the DDL its version shipped, not today's tables.
    columns = {column["name"] for column in inspector.get_columns("grades")}
    assert ("suspect" in columns) == (old >= 6)
    assert ("agent_id" in columns) == (old >= 7)
    assert inspector.has_table("baselines") == (old >= 2)
    if old >= 2:
        seed = {c["name"]: c["type"] for c in inspector.get_columns("baselines")}["seed"]
        widened = old >= 5 and engine.dialect.name == "postgresql"
        assert str(seed.compile(dialect=engine.dialect)) == ("BIGINT" if widened else "INTEGER")

    # A row as a writer of version `old` wrote it: only the columns version 1 had.
    created_at = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    old_grades = sa.table(
        "grades",
        *(sa.column(name) for name in ("id", *GRADE, "native_ns", "speedup", "requests")),
        sa.column("created_at", sa.DateTime(timezone=True)),
    )
    old_rows = sa.table("grade_requests", *map(sa.column, ("grade_id", "position", "kind", "name", "entry")))  # fmt: skip
    old_baselines = sa.table(
        "baselines",
        *map(sa.column, ("kernel", "preset", "datatype", "seed", "baseline_ns")),
        sa.column("created_at", sa.DateTime(timezone=True)),
    )
    recorded = to_recorded(Requests.validate(OLD_REQUEST))
    with engine.begin() as connection:
        grade_id = connection.execute(
            sa.insert(old_grades)
            .values(**GRADE, native_ns=40, speedup=2.5, requests=recorded, created_at=created_at)
            .returning(old_grades.c.id)
        ).scalar_one()
        connection.execute(
            sa.insert(old_rows).values(
                grade_id=grade_id, position=0, kind="load", name="openblas", entry='"openblas"'
            )
        )
        if old >= 2:
            connection.execute(
                sa.insert(old_baselines).values(
                    kernel="gemm", preset="S", datatype="fp64", seed=7, baseline_ns=100,
                    created_at=created_at,
                )
            )  # fmt: skip

    assert results_db.migrate(engine) == VERSIONS[old:]
    assert results_db.applied_versions(engine) == VERSIONS

    row = results_db.get_grade(engine, grade_id)
    assert row is not None
    assert {key: row[key] for key in (*GRADE, "native_ns", "speedup", "requests")} == {
        **GRADE, "native_ns": 40, "speedup": 2.5, "requests": recorded
    }  # fmt: skip
    assert row["created_at"].replace(tzinfo=row["created_at"].tzinfo or UTC) == created_at
    # The columns added since take their defaults on the old row.
    assert (row["suspect"], row["measured_speedup"], row["protections"], row["rep_ns"]) == (
        False, 0, "", ""
    )  # fmt: skip
    assert (row["convert_in_ns"], row["max_rel_error"], row["of_grade_id"]) == (0, None, None)
    rows = results_db.rows_of_grade(engine, grade_id)
    assert results_db.requests_from_rows(rows) == Requests.validate(OLD_REQUEST)
    assert results_db.orphan_grades(engine) == []
    if old >= 2:
        assert results_db.get_baseline(engine, "gemm", "S", "fp64", 7) == 100

    # The upgraded database takes what today's code writes, beside the old row.
    regrade = results_db.add_grade(
        engine,
        {**GRADE, "route": "final", "suspect": True, "measured_speedup": 90.0, "rep_ns": "1,2"},
        of_grade_id=grade_id,
    )
    again = results_db.get_grade(engine, regrade)
    assert again is not None and again["suspect"] is True and again["of_grade_id"] == grade_id
    assert len(results_db.rows_of_grade(engine, regrade)) == 1
    seed = 2**63 - 1  # a generated hidden seed's range (version 5)
    results_db.set_baseline(engine, "gemm", "S", "fp64", seed, 321)
    assert results_db.get_baseline(engine, "gemm", "S", "fp64", seed) == 321

    assert schema(engine) == described(open_database)


def test_databases_opened_at_once_apply_each_migration_once(open_database: OpenDatabase) -> None:
    first = open_database()
    url = first.url.render_as_string(hide_password=False)
    engines = [first, *(open_database(url) for _ in range(3))]
    start = threading.Barrier(len(engines))
    applied: list[list[int]] = []
    failures: list[BaseException] = []

    def open_and_migrate(engine: sa.Engine) -> None:
        start.wait()
        try:
            applied.append(results_db.migrate(engine))
        except BaseException as error:
            failures.append(error)

    threads = [threading.Thread(target=open_and_migrate, args=(e,)) for e in engines]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert failures == []
    assert sorted(version for versions in applied for version in versions) == VERSIONS
    assert results_db.applied_versions(first) == VERSIONS


def test_a_failing_step_leaves_neither_its_ddl_nor_its_version(
    open_database: OpenDatabase, monkeypatch: pytest.MonkeyPatch
) -> None:
    def half_done(connection: sa.engine.Connection) -> None:
        connection.execute(sa.text("CREATE TABLE half_done (id INTEGER)"))
        connection.execute(sa.text("ALTER TABLE grades ADD COLUMN half_done TEXT"))
        raise RuntimeError("the step fails after its DDL")

    engine = open_database()
    broken = [*results_db.MIGRATIONS, (VERSIONS[-1] + 1, "fails halfway", half_done)]
    monkeypatch.setattr(results_db, "MIGRATIONS", broken)
    with pytest.raises(RuntimeError, match="fails after its DDL"):
        results_db.migrate(engine)
    assert results_db.applied_versions(engine) == VERSIONS
    inspector = sa.inspect(engine)
    assert not inspector.has_table("half_done")
    assert "half_done" not in {column["name"] for column in inspector.get_columns("grades")}
