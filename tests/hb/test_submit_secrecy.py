"""A grade that cannot be forged: nothing of a hidden run leaves /submit (nor GET /grades), the
hidden seed is generated once per data directory and kept private, /submit runs the configured
preset only, the data directory and the database are the judge's alone, and a body that is not a
JSON object is a 400 in words."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError

from hb import cli, kernels, results_db
from hb.config import Config, hidden_seed
from hb.execution import sandbox
from hb.judge import outcome as outcome_module
from hb.judge.outcome import GradeOutcome
from hb.service import JudgeHandler, create_app
from tests.hb.conftest import make_config

MARKER = "HB-SECRET-MARKER-7f3a"
WRONG_VALUE = "98765.4321"

# Prints a marker to stderr and writes values far from the reference.
WRONG_AND_CHATTY = f"""
#include <stdint.h>
#include <stdio.h>
void scaled_add_fp64(const double *restrict x, double *restrict y, int64_t N, double alpha,
                     void *workspace, int64_t workspace_bytes) {{
    (void)workspace; (void)workspace_bytes; (void)alpha;
    fprintf(stderr, "{MARKER} x0=%.17g y0=%.17g\\n", x[0], y[0]);
    fflush(stderr);
    for (int64_t i = 0; i < N; ++i) y[i] = {WRONG_VALUE};
}}
"""

# Prints the first inputs with a marker to stderr, then crashes.
CRASHING = f"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
void scaled_add_fp64(const double *restrict x, double *restrict y, int64_t N, double alpha,
                     void *workspace, int64_t workspace_bytes) {{
    (void)y; (void)N; (void)alpha; (void)workspace; (void)workspace_bytes;
    fprintf(stderr, "{MARKER} x0=%.17g\\n", x[0]);
    fflush(stderr);
    abort();
}}
"""

SPINNING = """
#include <stdint.h>
void scaled_add_fp64(const double *restrict x, double *restrict y, int64_t N, double alpha,
                     void *workspace, int64_t workspace_bytes) {
    (void)workspace; (void)workspace_bytes;
    volatile double sink = 0;
    for (;;) sink += alpha * x[0] + y[N - 1];
}
"""

# The keys whose values may be numbers in a hidden grade's answer.
NUMERIC_KEYS = {
    "grade_id", "native_ns", "baseline_ns", "speedup", "measured_speedup", "convert_in_ns",
    "convert_out_ns", "build_ns",
    # A paired grade's interval and pair count (a correct grade's credited timing, like speedup).
    "speedup_ci", "speedup_ci_low", "speedup_ci_high", "pairs",
    # The request as granted and the distributed summary: the submitter's own, or the plan's.
    "dim", "grid_dim", "ranks", "grid",
}  # fmt: skip
RUN_MEASUREMENTS = ("native_ns", "speedup", "convert_in_ns", "convert_out_ns")


def numbers(document: Any, key: str = "") -> Iterator[tuple[str, float]]:
    """Every number in a JSON document, with the key it sits under."""
    if isinstance(document, dict):
        for name, value in document.items():
            yield from numbers(value, name)
    elif isinstance(document, list):
        for value in document:
            yield from numbers(value, key)
    elif isinstance(document, int | float) and not isinstance(document, bool):
        yield key, document


def assert_hidden(answer: dict[str, Any]) -> None:
    """What every incorrect hidden answer (or GET /grades row) must look like."""
    text = json.dumps(answer)
    assert MARKER not in text and WRONG_VALUE not in text and "98765" not in text
    assert answer["max_rel_error"] is None
    assert {key for key, _ in numbers(answer)} <= NUMERIC_KEYS | {"id"}
    for key in RUN_MEASUREMENTS:
        assert answer[key] == 0, key
    assert answer.get("measured_speedup", 0) == 0 and not answer.get("rep_ns")
    assert not answer.get("baseline_rep_ns") and not answer.get("pairs")
    assert answer.get("speedup_ci") is None and answer.get("speedup_ci_low") is None


def grade_row(client: TestClient, grade_id: int) -> dict[str, Any]:
    rows = client.get("/grades", params={"limit": 1000}).json()
    return next(row for row in rows if row["id"] == grade_id)


@pytest.fixture(scope="module")
def secrecy_config(tmp_path_factory: pytest.TempPathFactory) -> Config:
    return make_config(tmp_path_factory.mktemp("secrecy") / "data")


@pytest.fixture(scope="module")
def secret_client(secrecy_config: Config) -> Iterator[TestClient]:
    with TestClient(create_app(secrecy_config)) as client:
        yield client


# -- 1. nothing hidden leaves /submit ---------------------------------------------------------


def test_wrong_values_and_stderr_do_not_leave_submit(secret_client: TestClient) -> None:
    body = {"kernel": "scaled_add", "source": WRONG_AND_CHATTY}
    answer = secret_client.post("/submit", json=body)
    assert answer.status_code == 200, answer.text
    graded = answer.json()
    assert graded["correct"] is False and graded["route"] == "submit"
    assert graded["reason"] == "hidden inputs: output y outside the tolerance"
    assert not any(character.isdigit() for character in graded["reason"])
    assert graded.get("run_wall_s") is None and graded.get("log") is None
    assert_hidden(graded)
    row = grade_row(secret_client, graded["grade_id"])
    assert row["route"] == "submit" and row["detail"] == graded["reason"]
    assert_hidden(row)
    # The same source on /score keeps its detail: the first mismatch with its values.
    scored = secret_client.post("/score", json=body).json()
    assert scored["correct"] is False and "outside rtol" in scored["reason"]
    assert WRONG_VALUE in scored["reason"] and scored["max_rel_error"] > 0
    assert "expected" in grade_row(secret_client, scored["grade_id"])["detail"]


def test_a_crash_on_submit_names_only_the_failed_check(secret_client: TestClient) -> None:
    body = {"kernel": "scaled_add", "source": CRASHING}
    graded = secret_client.post("/submit", json=body).json()
    assert graded["correct"] is False
    assert graded["reason"] == outcome_module.HIDDEN_RUN_FAILED
    assert_hidden(graded)
    row = grade_row(secret_client, graded["grade_id"])
    assert row["detail"] == outcome_module.HIDDEN_RUN_FAILED
    assert_hidden(row)
    scored = secret_client.post("/score", json=body).json()
    assert scored["correct"] is False and MARKER in scored["reason"]


def test_a_timeout_on_submit_names_only_the_failed_check(tmp_path: Path) -> None:
    config = make_config(tmp_path / "data", sandbox={"timeout_s": 3})
    with TestClient(create_app(config)) as client:
        graded = client.post("/submit", json={"kernel": "scaled_add", "source": SPINNING}).json()
    assert graded["correct"] is False and graded["reason"] == outcome_module.HIDDEN_RUN_FAILED
    assert_hidden(graded)


def test_a_build_failure_on_submit_keeps_the_compiler_log(secret_client: TestClient) -> None:
    source = f"void f( {{ /* {MARKER} */"
    graded = secret_client.post("/submit", json={"kernel": "scaled_add", "source": source}).json()
    assert graded["correct"] is False and graded["reason"].startswith("build failed")
    assert graded["log"]  # the build never sees the hidden inputs
    assert grade_row(secret_client, graded["grade_id"])["detail"].startswith("build failed")


def test_a_correct_submit_carries_its_grade_and_no_error(secret_client: TestClient) -> None:
    source = kernels.solution_source("scaled_add")
    graded = secret_client.post("/submit", json={"kernel": "scaled_add", "source": source}).json()
    assert graded["correct"] is True and graded["reason"] is None
    assert graded["native_ns"] > 0 and graded["speedup"] > 0
    assert graded["max_rel_error"] is None and graded.get("run_wall_s") is None
    row = grade_row(secret_client, graded["grade_id"])
    assert row["correct"] and row["max_rel_error"] is None and row["native_ns"] > 0


def test_hidden_answer_cuts_a_distributed_grade() -> None:
    distributed = {
        "ranks": 2, "grid": [2], "symbols": {"N": "local"}, "failure": None,
        "mismatches": [f"y: 7 of 64 values outside rtol=1e-09 (first at (3,): got {WRONG_VALUE})"],
        "max_relative_error": 0.5, "rep_seconds": [0.25], "credited_s": 0.25, "notes": [MARKER],
    }  # fmt: skip
    outcome = GradeOutcome(
        kernel="scaled_add", preset="S", datatype="fp64", route="submit", correct=False,
        reason="; ".join(distributed["mismatches"]), distributed=distributed,
        native_ns=250_000_000, speedup=0.0, max_rel_error=0.5,
    )  # fmt: skip
    cut = outcome.hidden(["y"])
    record = cut.record()
    assert cut.reason == record["detail"] == "hidden inputs: output y outside the tolerance"
    assert cut.distributed == {"ranks": 2, "grid": [2], "symbols": {"N": "local"}}
    assert cut.native_ns == record["native_ns"] == 0 and record["max_rel_error"] is None
    assert MARKER not in cut.model_dump_json() and WRONG_VALUE not in json.dumps(record)
    crashed = {**distributed, "failure": f"rank 1 exited: {MARKER}", "mismatches": []}
    cut = outcome.model_copy(update={"reason": crashed["failure"], "distributed": crashed}).hidden(
        ["y"]
    )
    assert cut.reason == cut.record()["detail"] == outcome_module.HIDDEN_RUN_FAILED
    failed = outcome.model_copy(
        update={"reason": f"the distributed grade could not run: {MARKER}", "distributed": None}
    )
    assert failed.hidden(["y"]).reason == outcome_module.HIDDEN_GRADE_FAILED


def test_a_distributed_submit_says_only_which_check_failed(tmp_path: Path) -> None:
    from hb.distributed.driver import mpicc_path

    if not Path(mpicc_path()).exists():
        pytest.skip("MPICH's mpicc is not beside the interpreter (make setup installs it)")
    solution = (kernels.CATALOG_DIR / "scaled_add" / "solution_mpi.c").read_text()
    crashing = (
        Path(__file__).resolve().parent / "mpi_solutions" / "scaled_add_crash.c"
    ).read_text()
    wrong = solution.replace("alpha *", "2.5 * alpha *")
    assert wrong != solution
    grid = {
        "startup": {"grid": ["P"]},
        "operations": [
            {"action": "distribute", "array": name, "grid_dim": 0, "dim": 0} for name in "xy"
        ],
    }
    config = make_config(
        tmp_path / "data", requests={"allow": ["load", "distribute"]}, mpi={"ranks": 2}
    )
    with TestClient(create_app(config)) as client:
        for source, reason in (
            (wrong, "hidden inputs: output y outside the tolerance"),
            (crashing, outcome_module.HIDDEN_RUN_FAILED),
        ):
            body = {"kernel": "scaled_add", "source": source, "requests": grid}
            graded = client.post("/submit", json=body).json()
            assert graded["correct"] is False and graded["reason"] == reason
            assert graded["distributed"] == {"ranks": 2, "grid": [2], "symbols": {"N": "local"}}
            assert_hidden(graded)
            row = grade_row(client, graded["grade_id"])
            assert row["detail"] == reason
            assert_hidden(row)
            scored = client.post("/score", json=body).json()
            assert scored["reason"] != reason and "mismatches" in scored["distributed"]


@pytest.mark.parametrize(
    "reason",
    [
        outcome_module.HIDDEN_RUN_FAILED,
        outcome_module.HIDDEN_CONVERSION_FAILED,
        outcome_module.HIDDEN_GRADE_FAILED,
        outcome_module.HIDDEN_NO_OUTPUT_MATCHED,
        "hidden inputs: output C outside the tolerance",
        "hidden inputs: output C was not returned",
        "hidden inputs: output C has the wrong shape",
    ],
)
def test_hidden_reasons_are_the_allowed_phrases(reason: str) -> None:
    assert outcome_module.HIDDEN_REASON.fullmatch(reason)


@pytest.mark.parametrize(
    "compared, phrase",
    [
        ("C: 3 of 9 values outside rtol=1e-09 atol=1e-12 (first at (0, 1): got 2.0, "
         "expected 1.0)", "hidden inputs: output C outside the tolerance"),
        ("C: NaN positions differ (first at (4,))", "hidden inputs: output C outside the tolerance"),
        ("C: shape (2,), expected (3,)", "hidden inputs: output C has the wrong shape"),
        ("C: no output returned", "hidden inputs: output C was not returned"),
        ("rep 2: C: 1 of 9 values outside", "hidden inputs: output C outside the tolerance"),
        ("warm-up: C: shape (2,), expected (3,)", "hidden inputs: output C has the wrong shape"),
        ("Z: 1 of 1 values outside", outcome_module.HIDDEN_NO_OUTPUT_MATCHED),
    ],
)  # fmt: skip
def test_a_mismatch_becomes_its_check(compared: str, phrase: str) -> None:
    assert outcome_module.hidden_mismatch(compared, ["A", "C"]) == phrase


def test_grades_hides_a_leaky_row_recorded_before(
    secret_client: TestClient, secrecy_config: Config
) -> None:
    engine = results_db.connect(secrecy_config.database_url)
    leaky = f"the run ended by SIGABRT (aborted): {MARKER} x0={WRONG_VALUE}"
    base = {"kernel": "scaled_add", "preset": "S", "datatype": "fp64", "language": "c"}
    old = results_db.add_grade(
        engine,
        {**base, "route": "submit", "correct": False, "native_ns": 987654321,
         "max_rel_error": 0.25, "detail": leaky},
    )  # fmt: skip
    scored = results_db.add_grade(
        engine, {**base, "route": "score", "correct": False, "detail": leaky}
    )
    row = grade_row(secret_client, old)
    assert row["detail"] == outcome_module.HIDDEN_GRADE_FAILED and row["native_ns"] == 0
    assert_hidden(row)
    assert grade_row(secret_client, scored)["detail"] == leaky  # /score rows keep theirs


# -- 2. the hidden seed ------------------------------------------------------------------------


def test_the_shipped_default_generates_the_seed() -> None:
    assert Config().grading.hidden_seed == "generate"


def test_the_hidden_seed_is_generated_kept_private_and_reused(tmp_path: Path) -> None:
    first = JudgeHandler(make_config(tmp_path / "one"))
    seed_file = tmp_path / "one" / "hidden_seed"
    assert seed_file.is_file() and stat.S_IMODE(seed_file.stat().st_mode) == 0o600
    assert seed_file.read_text().strip() == str(first.hidden_seed)
    assert first.hidden_seed != first.config.grading.public_seed
    assert first._seed("submit") == first.hidden_seed
    assert first._seed("score") == first.config.grading.public_seed
    with TestClient(create_app(make_config(tmp_path / "one"))) as client:
        again = client.app.state.handler  # type: ignore[attr-defined]
        assert again.hidden_seed == first.hidden_seed
    other = JudgeHandler(make_config(tmp_path / "two"))
    assert other.hidden_seed != first.hidden_seed


def test_a_configured_hidden_seed_wins(tmp_path: Path) -> None:
    handler = JudgeHandler(make_config(tmp_path / "data", grading={"hidden_seed": 4242}))
    assert handler.hidden_seed == 4242 and handler._seed("submit") == 4242
    assert not (tmp_path / "data" / "hidden_seed").exists()
    with pytest.raises(ValidationError, match=r"hidden_seed equals grading\.public_seed"):
        make_config(tmp_path / "data", grading={"hidden_seed": 0})


def test_a_seed_file_is_narrowed_and_a_bad_one_is_a_clear_error(tmp_path: Path) -> None:
    config = make_config(tmp_path / "data")
    config.data_dir.mkdir(mode=0o700)
    config.hidden_seed_file.write_text("31337\n")
    os.chmod(config.hidden_seed_file, 0o644)
    assert hidden_seed(config) == 31337
    assert stat.S_IMODE(config.hidden_seed_file.stat().st_mode) == 0o600
    # The file's text is never echoed (a digit string no temporary path holds stands for it).
    config.hidden_seed_file.write_text("not a seed 8675309x\n")
    with pytest.raises(ValueError, match="expected the hidden seed") as raised:
        hidden_seed(config)
    assert "8675309" not in str(raised.value)


@pytest.mark.parametrize("engine_kind", ["sqlite", "postgresql"])
def test_a_63_bit_seed_keeps_its_baseline(
    engine_kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if engine_kind == "sqlite":
        url = f"sqlite:///{tmp_path / 'grades.sqlite3'}"
    else:
        url = request.getfixturevalue("postgres_url")
    engine = results_db.connect(url)
    seed = (1 << 63) - 5
    results_db.set_baseline(engine, "scaled_add", "S", "fp64", seed, 1234)
    assert results_db.get_baseline(engine, "scaled_add", "S", "fp64", seed) == 1234


def test_a_submission_cannot_read_the_hidden_seed(
    secret_client: TestClient, secrecy_config: Config
) -> None:
    if not sandbox.namespaces_available():
        pytest.skip("without namespaces a submission runs as the judge's user (docs/hb.md)")
    seed_file = secrecy_config.hidden_seed_file
    seed = secret_client.app.state.handler.hidden_seed  # type: ignore[attr-defined]
    probing = f"""
#include <stdint.h>
#include <stdio.h>
void scaled_add_fp64(const double *restrict x, double *restrict y, int64_t N, double alpha,
                     void *workspace, int64_t workspace_bytes) {{
    (void)x; (void)alpha; (void)workspace; (void)workspace_bytes;
    FILE *seed = fopen("{seed_file}", "r");
    double mark = seed ? 111.0 : 222.0;
    if (seed) fclose(seed);
    for (int64_t i = 0; i < N; ++i) y[i] = mark;
}}
"""
    scored = secret_client.post("/score", json={"kernel": "scaled_add", "source": probing}).json()
    assert scored["correct"] is False and "222.0" in scored["reason"], scored["reason"]
    including = f'#include "{seed_file}"\n'
    built = secret_client.post("/score", json={"kernel": "scaled_add", "source": including})
    assert built.json()["reason"].startswith("build failed")
    assert str(seed) not in built.text


# -- 3. /submit runs the configured preset -----------------------------------------------------


@pytest.mark.parametrize("preset", ["S", "M", "XL"])
def test_a_preset_on_submit_is_a_400(
    secret_client: TestClient, secrecy_config: Config, preset: str
) -> None:
    before = len(
        results_db.list_grades(results_db.connect(secrecy_config.database_url), limit=1000)
    )
    answer = secret_client.post(
        "/submit",
        json={"kernel": "scaled_add", "source": kernels.solution_source("scaled_add"),
              "preset": preset},
    )  # fmt: skip
    assert answer.status_code == 400
    detail = answer.json()["detail"]
    assert detail.startswith("preset: /submit grades at the configured preset")
    assert "grading.preset: S" in detail and "use /score to try other presets" in detail
    after = results_db.list_grades(results_db.connect(secrecy_config.database_url), limit=1000)
    assert len(after) == before


def test_score_still_takes_a_preset(secret_client: TestClient) -> None:
    source = kernels.solution_source("scaled_add")
    graded = secret_client.post(
        "/score", json={"kernel": "scaled_add", "source": source, "preset": "M"}
    ).json()
    assert graded["correct"] and graded["preset"] == "M"


def test_hb_submit_refuses_a_preset_on_the_submit_route(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config_file = tmp_path / "config.yaml"
    config_file.write_text(
        f"data_dir: {tmp_path / 'data'}\ngrading: {{reps: 2, warmup: 1, max_pairs: 2, box_pairs: 1}}\n"
    )
    source = tmp_path / "scaled_add.c"
    source.write_text(kernels.solution_source("scaled_add"))
    words = ["--config", str(config_file), "submit", str(source), "--kernel", "scaled_add"]
    assert cli.main([*words, "--route", "submit", "--preset", "S"]) == 2
    error = capsys.readouterr().err
    assert "--preset applies to --route score only" in error and "grading.preset: S" in error
    assert cli.main([*words, "--route", "submit", "--json"]) == 0
    graded = json.loads(capsys.readouterr().out)
    assert graded["route"] == "submit" and graded["preset"] == "S" and graded["correct"]


# -- 4. the data directory and the database are private ----------------------------------------


def test_the_data_dir_is_0700_and_the_database_0600(tmp_path: Path) -> None:
    previous = os.umask(0)  # what the judge sets must not depend on the umask
    try:
        config = make_config(tmp_path / "fresh" / "data")
        JudgeHandler(config)
    finally:
        os.umask(previous)
    for directory in (
        tmp_path / "fresh",
        config.data_dir,
        config.build_cache_dir,
        config.sandbox_dir,
        config.conversion_cache_dir,
    ):
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700, directory
    database = config.data_dir / "hb.sqlite3"
    assert stat.S_IMODE(database.stat().st_mode) == 0o600
    for companion in (Path(f"{database}-wal"), Path(f"{database}-shm")):
        if companion.exists():
            assert stat.S_IMODE(companion.stat().st_mode) & 0o077 == 0, companion


def test_an_existing_database_is_narrowed_to_0600(tmp_path: Path) -> None:
    database = tmp_path / "old.sqlite3"
    database.touch()
    os.chmod(database, 0o644)
    results_db.connect(f"sqlite:///{database}")
    assert stat.S_IMODE(database.stat().st_mode) == 0o600


# -- 5. a body that is not a JSON object ---------------------------------------------------------


@pytest.mark.parametrize("route", ["/score", "/submit", "/requests/check"])
@pytest.mark.parametrize(
    "body, headers, words",
    [
        ("not json", {"content-type": "application/json"}, "is not valid JSON"),
        ('{"kernel": "scaled_add"', {"content-type": "application/json"}, "is not valid JSON"),
        ("not json", {"content-type": "text/plain"}, "was not sent as JSON"),
        ("[1, 2]", {"content-type": "application/json"}, "is an array in JSON, not an object"),
        ('"scaled_add"', {"content-type": "application/json"}, "is a string in JSON"),
        ("42", {"content-type": "application/json"}, "is a number in JSON"),
        ("", {"content-type": "application/json"}, "is empty"),
        ("null", {"content-type": "application/json"}, "is null in JSON, not an object"),
    ],
)
def test_a_body_that_is_not_an_object_is_a_400_in_words(
    secret_client: TestClient, route: str, body: str, headers: dict[str, str], words: str
) -> None:
    answer = secret_client.post(route, content=body, headers=headers)
    assert answer.status_code == 400
    detail = answer.json()["detail"]
    assert detail.startswith("body: the request body ") and words in detail, detail
    assert "send one JSON object with Content-Type: application/json" in detail
