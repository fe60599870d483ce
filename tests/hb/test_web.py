"""The results page at / and its JSON routes: in headless Chromium against a judge with recorded
grades, the leaderboard with its metrics, the tasks this judge serves with their offers, recent
grades, a grade's page, a new grade appearing without a reload and recorded text shown as text;
and the routes themselves (/leaderboard, /grades/{id}, /offers, the page's files)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine

from hb import metrics, results_db
from hb.service import create_app
from tests import browser
from tests.hb.conftest import make_config
from tests.hb.results_support import KERNELS, record_demo, served

JUDGE_ID = "judge-web"
HOSTILE = '<img src=x onerror="document.body.dataset.owned=1">'


@pytest.fixture(scope="module")
def judge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, Engine, dict]]:
    config = make_config(
        tmp_path_factory.mktemp("web-judge"),
        service={"judge_id": JUDGE_ID, "tasks": list(KERNELS)},
        requests={"allow": ["load", "cast", "layout"], "precisions": ["fp32"]},
    )
    engine = results_db.connect(config.database_url)
    ids = record_demo(engine)
    with TestClient(create_app(config)) as client:
        yield client, engine, ids


def test_the_routes_the_page_reads(judge: tuple[TestClient, Engine, dict]) -> None:
    client, engine, ids = judge
    boards = client.get("/leaderboard").json()
    expected = metrics.leaderboards(results_db.list_grades(engine, limit=None))
    assert boards == [board.model_dump(mode="json") for board in expected]
    assert client.get("/leaderboard?experiment=nope").json() == []
    grade = client.get(f"/grades/{ids['agent-a:gemm']}").json()
    assert grade["source_sha256"] == "00" * 32 and grade["judge_id"] == "judge-demo"
    assert [row["name"] for row in grade["request_rows"]] == ["cast"]
    assert [call["name"] for call in grade["ppm_calls"]] == ["MPI_Allreduce"]
    assert grade["findings"][0]["kind"] == "blocking_collective_timed"
    missing = client.get("/grades/99999")
    assert missing.status_code == 404 and missing.json() == {"detail": "grade 99999: no such grade"}
    offers = client.get("/offers").json()
    assert [task["kernel"] for task in offers] == sorted(KERNELS)
    gemm = next(task for task in offers if task["kernel"] == "gemm")
    assert gemm["offer"].startswith("cast:fp32,") and gemm["track"] == "scientific_computing"
    page = client.get("/")
    assert page.headers["content-type"].startswith("text/html") and "/web/app.js" in page.text
    assert client.get("/web/app.js").headers["content-type"].startswith("text/javascript")
    assert client.get("/web/../service.py").status_code == 404
    assert client.get("/web/nope.js").status_code == 404


def test_a_hidden_grades_page_shows_what_get_grades_shows(
    judge: tuple[TestClient, Engine, dict],
) -> None:
    client, engine, _ = judge
    grade_id = results_db.add_grade(engine, {
        "kernel": "atax", "preset": "S", "datatype": "fp64", "language": "c", "route": "submit",
        "correct": False, "native_ns": 5, "speedup": 3.0, "rep_ns": "5,6",
        "detail": "output y: 3 of 40 values outside the tolerance at [0, 1, 2]",
        "experiment": "other",
    })  # fmt: skip
    shown = client.get(f"/grades/{grade_id}").json()
    (listed,) = [row for row in client.get("/grades?limit=1").json() if row["id"] == grade_id]
    assert {k: shown[k] for k in listed if k != "ppm_calls"} == {
        k: v for k, v in listed.items() if k != "ppm_calls"
    }
    assert shown["detail"] == "hidden inputs: the grade failed" and shown["rep_ns"] == ""
    assert (shown["speedup"], shown["native_ns"]) == (0.0, 0)


@pytest.mark.skipif(
    not browser.available(), reason="Chromium is not installed (scripts/sysdeps.sh)"
)
def test_the_page_in_chromium_shows_the_results_and_follows_new_grades(
    judge: tuple[TestClient, Engine, dict], tmp_path: Path,
) -> None:  # fmt: skip
    client, engine, ids = judge
    with served(client.app) as url, browser.Browser() as page:  # type: ignore[arg-type]
        page.navigate(f"{url}/")
        page.wait_for("document.body.dataset.ready === '1'")
        header = page.evaluate("document.querySelector('#judge').textContent")
        assert header.startswith(f"{JUDGE_ID} on ")
        rows = page.evaluate(
            "[...document.querySelectorAll('#leaderboard table:first-of-type tbody tr')]"
            ".map(r => [...r.cells].map(c => c.textContent))"
        )
        assert [row[0] for row in rows] == ["agent-a / default", "agent-b / default"]
        assert rows[0][4:9] == ["0.875", "2.45", "n too small (1 < 3)", "n too small (2 < 3)",
                                "2.45"]  # fmt: skip
        assert "cast: 0.15" in rows[0][14]
        paired = page.evaluate(
            "[...document.querySelectorAll('#leaderboard table')[1].querySelectorAll('td')]"
            ".map(c => c.textContent)"
        )
        assert paired[-1] == "0.0313" and paired[2] == "8"

        page.click("nav a[href='#tasks']")
        page.wait_for("document.querySelector('#tasks').classList.contains('shown')")
        tasks = page.evaluate(
            "[...document.querySelectorAll('#tasks tbody tr')].map(r => r.cells[0].textContent"
            " + ' ' + r.cells[3].textContent)"
        )
        assert len(tasks) == len(KERNELS) and any(t.startswith("gemm cast:fp32, ") for t in tasks)

        page.click("nav a[href='#grades']")
        newest = client.get("/grades?limit=1").json()[0]["id"]
        first = page.evaluate("document.querySelector('#grades tbody tr').cells[0].textContent")
        assert first == f"#{newest}"
        # A grade recorded while the page is open appears, and the leaderboard with it.
        added = results_db.add_grade(engine, {
            "kernel": "gemm", "preset": "S", "datatype": "fp64", "language": "c",
            "route": "submit.refused", "correct": False, "detail": HOSTILE,
            "agent_id": "agent-c", "experiment": "demo", "setup": "default",
        })  # fmt: skip
        page.wait_for(
            f"document.querySelector('#grades tbody tr').cells[0].textContent === '#{added}'",
            timeout_s=15,
        )
        assert page.evaluate("document.querySelector('#grades tbody tr').className") == "incorrect"
        page.wait_for("[...document.querySelectorAll('#leaderboard td')]"
                      ".some(c => c.textContent === 'agent-c / default')")  # fmt: skip

        page.click(f"a[href='#grade/{added}']")
        page.wait_for(f"document.querySelector('#grade').dataset.id === '{added}'")
        text = page.evaluate("document.querySelector('#grade').innerText")
        assert HOSTILE in text
        assert page.evaluate("document.querySelectorAll('#grade img').length") == 0
        assert page.evaluate("document.body.dataset.owned") is None

        page.navigate(f"{url}/#grade/{ids['agent-a:gemm']}")
        page.wait_for(f"document.querySelector('#grade').dataset.id === '{ids['agent-a:gemm']}'")
        text = page.evaluate("document.querySelector('#grade').innerText")
        for shown in ("00" * 32, '"action": "cast"', "MPI_Allreduce", "blocking_collective_timed",
                      "convert_in_ns\t100000", "judge-demo", "demo (cpu)"):  # fmt: skip
            assert shown in text
