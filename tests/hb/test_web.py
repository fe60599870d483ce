"""The results page at / and its JSON routes: in headless Chromium against a judge with recorded
grades, the leaderboard with its metrics, the tasks this judge serves with their offers, recent
grades, a grade's page, a new grade appearing without a reload and recorded text shown as text,
a grade's timing plot (its pairs, interval and estimate; a hidden grade's interval alone) and the
grade's view within a 1400-pixel window; and the routes themselves (/leaderboard, /grades/{id}
with its interval and pairs, /offers, the page's files)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine

from hb import metrics, results_db
from hb.service import create_app
from tests import browser
from tests.hb.conftest import make_config
from tests.hb.results_support import KERNELS, RATIOS, record_demo, record_paired, served

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
        assert rows[0][4:10] == ["0", "0.875", "2.45", "n too small (1 < 3)",
                                 "n too small (2 < 3)", "2.45"]  # fmt: skip
        assert "cast: 0.15" in rows[0][15]
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


@pytest.fixture
def paired(judge: tuple[TestClient, Engine, dict]) -> dict[str, int]:
    """record_paired's grades (a score grade with 40 pairs, a noisy one, a hidden one)."""
    _, engine, ids = judge
    return record_paired(engine, ids)


def test_a_grades_page_carries_its_interval_and_pairs(
    judge: tuple[TestClient, Engine, dict], paired: dict[str, int]
) -> None:
    client = judge[0]
    score = client.get(f"/grades/{paired['score']}").json()
    assert (score["speedup_ci"], score["noisy"]) == ([0.99, 1.05], False)
    timing = score["timing"]
    assert timing["pairs"] == 40 and timing["reps_ns"] == [1_000_000] * 40
    assert timing["ratios"] == pytest.approx(RATIOS, rel=1e-6)
    assert client.get(f"/grades/{paired['noisy']}").json()["noisy"] is True
    # A hidden grade: its interval and its count of pairs, none of its reps nor the baseline's.
    hidden = client.get(f"/grades/{paired['hidden']}").json()
    assert hidden["speedup_ci"] == [1.8, 2.2] and hidden["baseline_rep_ns"] == ""
    assert hidden["timing"] == {"reps_ns": [], "baseline_reps_ns": [], "ratios": [], "pairs": 30}
    # The leaderboard carries the hidden grade's interval into its group's figures.
    (board,) = [b for b in client.get("/leaderboard").json() if b["experiment"] == "demo"]
    group = next(g for g in board["groups"] if g["label"] == "agent-a / default")
    gemm = next(r for r in group["results"] if r["task"][0] == "gemm")
    assert gemm["speedup_ci"] == [1.8, 2.2]
    assert group["geomean_speedup"]["scientific_computing"]["low"] == pytest.approx(
        (1.8 * 3.0 * 1.5 * 4.0) ** 0.25
    )


def plot_of(page: Any) -> dict[str, Any]:
    """What the grade view's timing plot draws, and where the view's side column ends."""
    return page.evaluate("""(() => {
      const plot = document.querySelector('#grade svg.ratio-plot');
      const side = document.querySelector('#grade .side');
      const rights = [side, ...side.querySelectorAll('*')]
        .map((e) => e.getBoundingClientRect().right);
      return {
        svg: plot !== null,
        dots: plot ? plot.querySelectorAll('circle.pair').length : 0,
        band: plot ? plot.querySelectorAll('rect.band').length : 0,
        estimate: plot ? plot.querySelectorAll('line.estimate').length : 0,
        text: plot ? plot.textContent : '',
        side_right: side.getBoundingClientRect().right,
        content_right: Math.max(...rights),
        inner_width: window.innerWidth,
        scroll_width: document.documentElement.scrollWidth,
        speedup: [...document.querySelectorAll('#grade tr')]
          .find((r) => r.cells[0].textContent === 'speedup [95% CI]').cells[1].textContent,
      };
    })()""")


@pytest.mark.skipif(
    not browser.available(), reason="Chromium is not installed (scripts/sysdeps.sh)"
)
def test_a_grades_timing_plot_fits_a_1400_pixel_window(
    judge: tuple[TestClient, Engine, dict], paired: dict[str, int], tmp_path: Path,
) -> None:  # fmt: skip
    app = judge[0].app
    with served(app) as url, browser.Browser(width=1400, height=900) as page:  # type: ignore[arg-type]
        shown = {}
        for name, grade_id in paired.items():
            page.navigate(f"{url}/#grade/{grade_id}")
            page.wait_for(f"document.querySelector('#grade').dataset.id === '{grade_id}'")
            page.screenshot(tmp_path / f"grade-{name}.png")
            shown[name] = plot_of(page)
    for name, plot in shown.items():
        # The whole view, its side column included, within the window: nothing cut off.
        assert plot["side_right"] <= plot["inner_width"], name
        assert plot["content_right"] <= plot["inner_width"], name
        assert plot["scroll_width"] <= plot["inner_width"], name
        assert (plot["svg"], plot["band"], plot["estimate"]) == (True, 1, 1), name
    score, noisy, hidden = shown["score"], shown["noisy"], shown["hidden"]
    assert score["dots"] == 40 and "95% interval [0.990, 1.05]" in score["text"]
    assert "estimate 1.02" in score["text"] and "noisy" not in score["text"]
    assert score["speedup"] == "1.02 [0.990, 1.05]"
    assert noisy["dots"] == 12 and "noisy" in noisy["text"] and "estimate 1.30" in noisy["text"]
    assert noisy["speedup"] == "0.970 [0.970, 1.62] noisy"
    # A hidden grade: the interval and the estimate, no pairs.
    assert hidden["dots"] == 0 and "95% interval [1.80, 2.20]" in hidden["text"]
    assert "hidden inputs" in hidden["text"]
