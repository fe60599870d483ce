"""The results database: grades and their requests (one typed grade_requests row per library,
the grid and each operation), written together in one transaction through SQLAlchemy Core; SQLite
by default, PostgreSQL by URL, with versioned migrations that replay (docs/results_db.md)."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine, RowMapping

from hb.requests_api import Requests, from_recorded, to_recorded

# The current schema, as the queries below use it. A database reaches it only by MIGRATIONS;
# tests/hb/test_migrations.py checks that replaying them builds exactly what these tables describe.
metadata = sa.MetaData()

# The bookkeeping table migrate() creates before version 1; it never changes.
schema_migrations = sa.Table(
    "schema_migrations",
    metadata,
    sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("description", sa.Text, nullable=False),
    sa.Column("applied_at", sa.DateTime(timezone=True), nullable=False),
)

grades = sa.Table(
    "grades",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("kernel", sa.Text, nullable=False),
    sa.Column("preset", sa.Text, nullable=False),
    sa.Column("datatype", sa.Text, nullable=False),
    sa.Column("language", sa.Text, nullable=False),
    sa.Column("route", sa.Text, nullable=False),
    sa.Column("correct", sa.Boolean, nullable=False),
    sa.Column("native_ns", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("baseline_ns", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("speedup", sa.Float, nullable=False, server_default="0"),
    sa.Column("convert_in_ns", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("convert_out_ns", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("max_rel_error", sa.Float, nullable=True),
    sa.Column("precision_override", sa.Text, nullable=True),
    sa.Column("requests", sa.Text, nullable=False, server_default=""),
    sa.Column("of_grade_id", sa.Integer, sa.ForeignKey("grades.id"), nullable=True),
    sa.Column("source_sha256", sa.Text, nullable=False, server_default=""),
    sa.Column("detail", sa.Text, nullable=False, server_default=""),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    # Version 6: a speedup above grading.speedup_suspect_above is recorded, not credited
    # (speedup 0) until verified again; measured_speedup keeps what was measured. The
    # protections the grade's box had, comma-separated, and the timed reps' times.
    sa.Column("suspect", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("measured_speedup", sa.Float, nullable=False, server_default=sa.text("0")),
    sa.Column("protections", sa.Text, nullable=False, server_default=""),
    sa.Column("rep_ns", sa.Text, nullable=False, server_default=""),
    # Version 7: who asked (the caller identity an agent's tools send, and its round), which
    # judge graded it on which machine (campaigns share one database across judges), and the
    # parallel-programming calls the submission's object makes, as usis entries (JSON list).
    sa.Column("agent_id", sa.Text, nullable=False, server_default=""),
    sa.Column("agent_round", sa.Integer, nullable=True),
    sa.Column("experiment", sa.Text, nullable=False, server_default=""),
    sa.Column("setup", sa.Text, nullable=False, server_default=""),
    sa.Column("judge_id", sa.Text, nullable=False, server_default=""),
    sa.Column("machine", sa.Text, nullable=False, server_default=""),
    sa.Column("ppm_calls", sa.Text, nullable=False, server_default=""),
    # Version 8: paired timing's interval and pairs, and the baseline's reps beside rep_ns.
    sa.Column("speedup_ci_low", sa.Float, nullable=True),
    sa.Column("speedup_ci_high", sa.Float, nullable=True),
    sa.Column("noisy", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("pairs", sa.Integer, nullable=False, server_default=sa.text("0")),
    sa.Column("baseline_rep_ns", sa.Text, nullable=False, server_default=""),
    sa.Index("grades_leaderboard", "kernel", "preset", "route", "correct"),  # version 3
)

grade_requests = sa.Table(
    "grade_requests",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column(
        "grade_id", sa.Integer, sa.ForeignKey("grades.id", ondelete="CASCADE"), nullable=False
    ),
    # Entries in request order: the libraries, then the grid, then the operations.
    sa.Column("position", sa.Integer, nullable=False),
    sa.Column("kind", sa.Text, nullable=False),  # load | grid | operation
    sa.Column("name", sa.Text, nullable=False),  # the library, "grid", or the operation's action
    sa.Column("array", sa.Text, nullable=True),  # the array an operation names first
    sa.Column("entry", sa.Text, nullable=False),  # the entry's JSON as relayout writes it
    sa.UniqueConstraint("grade_id", "position"),
    sa.Index("grade_requests_by_grade", "grade_id"),  # version 4
)

baselines = sa.Table(
    "baselines",
    metadata,
    sa.Column("kernel", sa.Text, primary_key=True),
    sa.Column("preset", sa.Text, primary_key=True),
    sa.Column("datatype", sa.Text, primary_key=True),
    # 64-bit: a generated hidden seed has 63 random bits. Migration 5 widened PostgreSQL's
    # integer; SQLite's INTEGER (the type version 2 created) holds 64 bits already.
    sa.Column(
        "seed",
        sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
        primary_key=True,
        autoincrement=False,
    ),
    sa.Column("baseline_ns", sa.BigInteger, nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
)


# Frozen DDL: what each version shipped, in its own metadata, never edited and never shared
# with the tables above (a later column there must not reach an old version's step).
_v1 = sa.MetaData()
_v1_grades = sa.Table(
    "grades",
    _v1,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("kernel", sa.Text, nullable=False),
    sa.Column("preset", sa.Text, nullable=False),
    sa.Column("datatype", sa.Text, nullable=False),
    sa.Column("language", sa.Text, nullable=False),
    sa.Column("route", sa.Text, nullable=False),
    sa.Column("correct", sa.Boolean, nullable=False),
    sa.Column("native_ns", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("baseline_ns", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("speedup", sa.Float, nullable=False, server_default="0"),
    sa.Column("convert_in_ns", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("convert_out_ns", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("max_rel_error", sa.Float, nullable=True),
    sa.Column("precision_override", sa.Text, nullable=True),
    sa.Column("requests", sa.Text, nullable=False, server_default=""),
    sa.Column("of_grade_id", sa.Integer, sa.ForeignKey("grades.id"), nullable=True),
    sa.Column("source_sha256", sa.Text, nullable=False, server_default=""),
    sa.Column("detail", sa.Text, nullable=False, server_default=""),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
)
_v1_grade_requests = sa.Table(
    "grade_requests",
    _v1,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column(
        "grade_id", sa.Integer, sa.ForeignKey("grades.id", ondelete="CASCADE"), nullable=False
    ),
    sa.Column("position", sa.Integer, nullable=False),
    sa.Column("kind", sa.Text, nullable=False),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("array", sa.Text, nullable=True),
    sa.Column("entry", sa.Text, nullable=False),
    sa.UniqueConstraint("grade_id", "position"),
)
_v2 = sa.MetaData()
_v2_baselines = sa.Table(
    "baselines",
    _v2,
    sa.Column("kernel", sa.Text, primary_key=True),
    sa.Column("preset", sa.Text, primary_key=True),
    sa.Column("datatype", sa.Text, primary_key=True),
    sa.Column("seed", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("baseline_ns", sa.BigInteger, nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
)


def _create(*tables: sa.Table) -> Callable[[Connection], None]:
    def step(connection: Connection) -> None:
        for table in tables:
            table.create(connection)

    return step


def _sql(*statements: str, dialect: str | None = None) -> Callable[[Connection], None]:
    """Plain DDL, on every dialect or only on `dialect`."""

    def step(connection: Connection) -> None:
        if dialect is None or connection.dialect.name == dialect:
            for statement in statements:
                connection.execute(sa.text(statement))

    return step


def _add_integrity_columns(connection: Connection) -> None:
    # Version 6 as it shipped: four columns, each NOT NULL with a default for the rows before it.
    false = "FALSE" if connection.dialect.name == "postgresql" else "0"
    for name, ddl in (
        ("suspect", f"BOOLEAN NOT NULL DEFAULT {false}"),
        ("measured_speedup", "FLOAT NOT NULL DEFAULT 0"),
        ("protections", "TEXT NOT NULL DEFAULT ''"),
        ("rep_ns", "TEXT NOT NULL DEFAULT ''"),
    ):
        connection.execute(sa.text(f"ALTER TABLE grades ADD COLUMN {name} {ddl}"))


def _add_provenance_columns(connection: Connection) -> None:
    # Version 7 as it shipped: who asked, in which experiment and setup, which judge on which
    # machine graded it, and the submission's parallel-programming calls.
    for name, ddl in (
        ("agent_id", "TEXT NOT NULL DEFAULT ''"),
        ("agent_round", "INTEGER"),
        ("experiment", "TEXT NOT NULL DEFAULT ''"),
        ("setup", "TEXT NOT NULL DEFAULT ''"),
        ("judge_id", "TEXT NOT NULL DEFAULT ''"),
        ("machine", "TEXT NOT NULL DEFAULT ''"),
        ("ppm_calls", "TEXT NOT NULL DEFAULT ''"),
    ):
        connection.execute(sa.text(f"ALTER TABLE grades ADD COLUMN {name} {ddl}"))


def _add_paired_columns(connection: Connection) -> None:
    # Version 8 as it shipped: a paired grade's interval, whether it is noisy, how many pairs its
    # estimate rests on, and the baseline's reps timed beside the submission's.
    false = "FALSE" if connection.dialect.name == "postgresql" else "0"
    for name, ddl in (
        ("speedup_ci_low", "FLOAT"),
        ("speedup_ci_high", "FLOAT"),
        ("noisy", f"BOOLEAN NOT NULL DEFAULT {false}"),
        ("pairs", "INTEGER NOT NULL DEFAULT 0"),
        ("baseline_rep_ns", "TEXT NOT NULL DEFAULT ''"),
    ):
        connection.execute(sa.text(f"ALTER TABLE grades ADD COLUMN {name} {ddl}"))


# Ordered and append-only: a change to the schema is a new entry (and the matching edit of the
# tables above), never an edit of an old entry; each step is applied exactly once per database.
MIGRATIONS: list[tuple[int, str, Callable[[Connection], None]]] = [
    (1, "grades and grade_requests", _create(_v1_grades, _v1_grade_requests)),
    (2, "baselines cache", _create(_v2_baselines)),
    (
        3,
        "leaderboard index",
        _sql("CREATE INDEX grades_leaderboard ON grades (kernel, preset, route, correct)"),
    ),
    (
        4,
        "grade_requests by grade",
        _sql("CREATE INDEX grade_requests_by_grade ON grade_requests (grade_id)"),
    ),
    # SQLite's INTEGER already holds 64 bits; PostgreSQL's integer holds 32.
    (
        5,
        "64-bit baseline seeds",
        _sql("ALTER TABLE baselines ALTER COLUMN seed TYPE BIGINT", dialect="postgresql"),
    ),
    (6, "suspect grades, measured speedups, protections and rep times", _add_integrity_columns),
    (7, "callers, experiments, judges, machines and parallel calls", _add_provenance_columns),
    (
        8,
        "paired timing: speedup intervals, noisy grades, pairs and baseline reps",
        _add_paired_columns,
    ),
]
SCHEMA_VERSION = MIGRATIONS[-1][0]

# Taken by every migrating transaction on PostgreSQL (SQLite's BEGIN IMMEDIATE is its lock).
_MIGRATION_LOCK = 0x6862_5F6D_6967_7261  # "hb_migra"

_engines: dict[str, Engine] = {}
_POOLED_ENGINES = 16
_engines_lock = threading.Lock()

# A test's window between the grade row and its grade_requests rows (see the kill-mid-write test).
_between_inserts: Callable[[], None] | None = None


def connect(url: str) -> Engine:
    """The engine for `url` (one per URL per process), migrated to SCHEMA_VERSION."""
    with _engines_lock:
        if url in _engines:
            return _engines[url]
        engine = make_engine(url)
        migrate(engine)
        _engines[url] = engine
        # A process that opens many databases (a test session, a report over several) keeps the
        # pooled connections of the latest few: an older engine still works, reconnecting on use.
        while len(_engines) > _POOLED_ENGINES:
            _engines.pop(next(iter(_engines))).dispose()
        return engine


def make_engine(url: str) -> Engine:
    """A new engine for `url` as connect() configures it, neither cached nor migrated."""
    if url.startswith("postgresql://"):
        url_for_driver = "postgresql+psycopg://" + url.removeprefix("postgresql://")
    else:
        url_for_driver = url
    if url_for_driver.startswith("sqlite"):
        _private_sqlite_file(url_for_driver)
        engine = sa.create_engine(
            url_for_driver, connect_args={"check_same_thread": False, "timeout": 30}
        )
        sa.event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    return sa.create_engine(url_for_driver, pool_pre_ping=True)


def _private_sqlite_file(url: str) -> None:
    """Create a SQLite database file with mode 0600 before SQLite opens it (its -wal and -shm
    files take the database's mode), and narrow an existing one (and those files) to 0600."""
    parsed = sa.engine.make_url(url)
    database = parsed.database
    if not database or database == ":memory:" or database.startswith("file:") or parsed.query:
        return
    path = os.path.abspath(database)
    if not os.path.isdir(os.path.dirname(path)):
        return  # SQLite says what is missing
    os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
    for name in (path, f"{path}-wal", f"{path}-shm", f"{path}-journal"):
        if os.path.exists(name) and os.stat(name).st_mode & 0o077:
            os.chmod(name, 0o600)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")  # readers do not block the writer
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


def applied_versions(engine: Engine) -> list[int]:
    with engine.connect() as connection:
        return _applied(connection)


def _applied(connection: Connection) -> list[int]:
    if not sa.inspect(connection).has_table("schema_migrations"):
        return []
    query = sa.select(schema_migrations.c.version).order_by(schema_migrations.c.version)
    return [row.version for row in connection.execute(query)]


def _lock(connection: Connection) -> None:
    """Serialize migrating transactions: a second process opening the same new database waits,
    then finds the versions applied. On SQLite it also makes the step's DDL part of the
    transaction (the driver would otherwise run DDL outside one)."""
    if connection.dialect.name == "sqlite":
        connection.exec_driver_sql("BEGIN IMMEDIATE")
    elif connection.dialect.name == "postgresql":
        connection.execute(sa.select(sa.func.pg_advisory_xact_lock(_MIGRATION_LOCK)))


def migrate(engine: Engine, to: int | None = None) -> list[int]:
    """Apply every migration the database lacks, in order, each in its own transaction with its
    schema_migrations row; up to version `to` (default: all). The versions applied."""
    known = [version for version, _, _ in MIGRATIONS]
    if to is not None and to not in known:
        raise ValueError(f"migrate: no migration {to}; the versions are {known}")
    wanted = [m for m in MIGRATIONS if to is None or m[0] <= to]
    if {version for version, _, _ in wanted} <= set(
        _locked_retry(lambda: applied_versions(engine))
    ):
        return []  # the usual case: no lock taken

    def create_bookkeeping() -> None:
        with engine.begin() as connection:
            _lock(connection)
            schema_migrations.create(connection, checkfirst=True)

    _locked_retry(create_bookkeeping)
    applied = []
    for version, description, step in wanted:

        def apply(version: int = version, description: str = description, step: Any = step) -> bool:
            with engine.begin() as connection:
                _lock(connection)
                if version in _applied(connection):
                    return False
                step(connection)
                connection.execute(
                    schema_migrations.insert().values(
                        version=version, description=description, applied_at=datetime.now(UTC)
                    )
                )
            return True

        if _locked_retry(apply):
            applied.append(version)
    return applied


def _locked_retry(action: Callable[[], Any], attempts: int = 12) -> Any:
    """`action`, tried again while SQLite answers "database is locked" at once (it does, rather
    than wait, when two connections would deadlock upgrading their locks): several judges opening
    one new database together each take their turn. The transaction rolled back, so a retry
    starts clean; any other error, or the last attempt's, is raised."""
    for attempt in range(attempts):
        try:
            return action()
        except sa.exc.OperationalError as error:
            if "database is locked" not in str(error) or attempt == attempts - 1:
                raise
            time.sleep(0.02 * 2 ** min(attempt, 6))
    return None


def request_rows(requests: Requests) -> list[dict[str, Any]]:
    """The typed grade_requests rows of one request (without grade_id)."""
    rows: list[dict[str, Any]] = []
    for library in requests.startup.load:
        rows.append({"kind": "load", "name": library, "array": None, "entry": json.dumps(library)})
    if requests.startup.grid:
        rows.append(
            {
                "kind": "grid",
                "name": "grid",
                "array": None,
                "entry": json.dumps(list(requests.startup.grid)),
            }
        )
    for operation in requests.operations:
        entry = operation.model_dump(mode="json", exclude_defaults=True)
        entry["action"] = operation.action
        first_array = entry.get("array") or (entry.get("arrays") or [None])[0]
        rows.append(
            {
                "kind": "operation",
                "name": operation.action,
                "array": first_array,
                "entry": json.dumps(entry, sort_keys=True),
            }
        )
    for position, row in enumerate(rows):
        row["position"] = position
    return rows


GRADE_FIELDS = (
    "kernel", "preset", "datatype", "language", "route", "correct", "native_ns", "baseline_ns",
    "speedup", "convert_in_ns", "convert_out_ns", "max_rel_error", "precision_override",
    "source_sha256", "detail", "suspect", "measured_speedup", "protections", "rep_ns",
    "agent_id", "agent_round", "experiment", "setup", "judge_id", "machine", "ppm_calls",
    "speedup_ci_low", "speedup_ci_high", "noisy", "pairs", "baseline_rep_ns",
)  # fmt: skip


def add_grade(
    engine: Engine,
    grade: Mapping[str, Any],
    requests: Requests | Mapping[str, Any] | str | None = None,
    of_grade_id: int | None = None,
) -> int:
    """Record one grade and its request in one transaction; the new grade's id.

    The request is validated first (RequestError before anything is written). A row made of
    another (of_grade_id, the keyword or the grade's column: a final or a regrade) records that
    grade's request; a given request that differs from it is a ValueError, raised before
    anything is written.
    """
    unknown = set(grade) - {*GRADE_FIELDS, "of_grade_id"}
    if unknown:
        raise ValueError(
            f"add_grade: unknown grade fields {sorted(unknown)}; accepted: "
            f"{[*GRADE_FIELDS, 'of_grade_id']}"
        )
    in_grade = grade.get("of_grade_id")
    if in_grade is not None and of_grade_id is not None and in_grade != of_grade_id:
        raise ValueError(
            f"add_grade: of_grade_id {of_grade_id} and the grade's of_grade_id {in_grade} differ"
        )
    of_grade_id = of_grade_id if of_grade_id is not None else in_grade
    validated = Requests.validate(requests if requests is not None else "")
    with engine.begin() as connection:
        if of_grade_id is not None:
            parent = connection.execute(
                sa.select(grades.c.requests).where(grades.c.id == of_grade_id)
            ).first()
            if parent is None:
                raise ValueError(f"add_grade: of_grade_id {of_grade_id} names no grade")
            # A final or a regrade grades the request its grade was made with (spec §4).
            recorded = from_recorded(parent.requests)
            if requests is not None and validated.to_json() != recorded.to_json():
                raise ValueError(
                    f"add_grade: the request differs from grade {of_grade_id}'s, which a row "
                    f"made of it records ({recorded.to_json() or 'none'})"
                )
            validated = recorded
        values = {key: value for key, value in grade.items() if key != "of_grade_id"}
        values.update(
            requests=to_recorded(validated), of_grade_id=of_grade_id, created_at=datetime.now(UTC)
        )
        inserted = connection.execute(grades.insert().values(**values)).inserted_primary_key
        assert inserted is not None
        grade_id = int(inserted[0])
        if _between_inserts is not None:
            _between_inserts()
        rows = request_rows(validated)
        if rows:
            connection.execute(
                grade_requests.insert(), [{**row, "grade_id": grade_id} for row in rows]
            )
    return grade_id


def requests_of_row(row: Mapping[str, Any] | RowMapping) -> Requests:
    """The request a grades row records, read from its JSON (Requests.from_recorded)."""
    return from_recorded(row["requests"])


def requests_from_rows(rows: Iterable[Mapping[str, Any] | RowMapping]) -> Requests:
    """The request rebuilt from a grade's grade_requests rows."""
    load: list[str] = []
    grid: list[Any] = []
    operations: list[Any] = []
    for row in sorted(rows, key=lambda r: r["position"]):
        entry = json.loads(row["entry"])
        if row["kind"] == "load":
            load.append(entry)
        elif row["kind"] == "grid":
            grid = entry
        elif row["kind"] == "operation":
            operations.append(entry)
        else:
            raise ValueError(f"grade_requests row {row['position']}: unknown kind {row['kind']!r}")
    startup: dict[str, Any] = {}
    if load:
        startup["load"] = load
    if grid:
        startup["grid"] = grid
    document: dict[str, Any] = {}
    if startup:
        document["startup"] = startup
    if operations:
        document["operations"] = operations
    return Requests.validate(document)


def get_grade(engine: Engine, grade_id: int) -> dict[str, Any] | None:
    with engine.connect() as connection:
        row = (
            connection.execute(sa.select(grades).where(grades.c.id == grade_id)).mappings().first()
        )
        return dict(row) if row else None


def rows_of_grade(engine: Engine, grade_id: int) -> list[dict[str, Any]]:
    with engine.connect() as connection:
        result = connection.execute(
            sa.select(grade_requests)
            .where(grade_requests.c.grade_id == grade_id)
            .order_by(grade_requests.c.position)
        )
        return [dict(row) for row in result.mappings()]


def list_grades(
    engine: Engine, kernel: str | None = None, route: str | None = None, limit: int | None = 50,
    experiment: str | None = None, agent_id: str | None = None,
) -> list[dict[str, Any]]:  # fmt: skip
    """The newest grades first (`limit` of them, or all for None), optionally of one kernel,
    route, experiment or caller."""
    query = sa.select(grades).order_by(grades.c.id.desc()).limit(limit)
    if kernel:
        query = query.where(grades.c.kernel == kernel)
    if route:
        query = query.where(grades.c.route == route)
    if experiment:
        query = query.where(grades.c.experiment == experiment)
    if agent_id:
        query = query.where(grades.c.agent_id == agent_id)
    with engine.connect() as connection:
        return [dict(row) for row in connection.execute(query).mappings()]


def get_baseline(engine: Engine, kernel: str, preset: str, datatype: str, seed: int) -> int | None:
    with engine.connect() as connection:
        row = connection.execute(
            sa.select(baselines.c.baseline_ns).where(
                baselines.c.kernel == kernel,
                baselines.c.preset == preset,
                baselines.c.datatype == datatype,
                baselines.c.seed == seed,
            )
        ).first()
        return int(row.baseline_ns) if row else None


def set_baseline(
    engine: Engine, kernel: str, preset: str, datatype: str, seed: int, baseline_ns: int
) -> None:
    key = {"kernel": kernel, "preset": preset, "datatype": datatype, "seed": seed}
    with engine.begin() as connection:
        connection.execute(
            sa.delete(baselines).where(*(baselines.c[k] == v for k, v in key.items()))
        )
        connection.execute(
            baselines.insert().values(**key, baseline_ns=baseline_ns, created_at=datetime.now(UTC))
        )


def orphan_grades(engine: Engine) -> Sequence[int]:
    """Grades whose request is not empty yet have no grade_requests row (never, by add_grade)."""
    with engine.connect() as connection:
        has_rows = (
            sa.select(grade_requests.c.grade_id)
            .where(grade_requests.c.grade_id == grades.c.id)
            .exists()
        )
        query = sa.select(grades.c.id).where(grades.c.requests != "", ~has_rows)
        return [row.id for row in connection.execute(query)]


def credit_verified(engine: Engine, grade_id: int) -> None:
    """Credit a suspect grade its measured speedup, once a regrade has verified it."""
    with engine.begin() as connection:
        connection.execute(
            sa.update(grades)
            .where(grades.c.id == grade_id, grades.c.suspect.is_(True))
            .values(suspect=False, speedup=grades.c.measured_speedup)
        )
