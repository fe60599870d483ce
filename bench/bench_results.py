"""The results' speed on a database of many grades: hb.metrics' leaderboards, GET /leaderboard and
hb report's report.md and plots (target: a leaderboard under a second at 10,000 grades), and in
headless Chromium the time until the page at / has rendered. `python -m bench.bench_results
--screenshot DIR` also writes the docs' screenshots (docs/images/results-*.png) from the demo
grades of tests/hb/results_support.py (and its paired ones, for a grade's timing plot)."""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

LEADERBOARD_BOUND_S = 1.0
AGENTS = ("agent-a", "agent-b", "agent-c", "agent-d")


def many_grades(engine: object, count: int) -> None:
    """`count` submit grades over the catalog's tasks and four agents, a third with a cast."""
    import random

    from hb import kernels, results_db

    names = kernels.kernel_names()
    rng = random.Random(0)
    cast = {"operations": [{"action": "cast", "array": "A", "to": "fp32"}]}
    for index in range(count):
        correct = rng.random() < 0.8
        speedup = rng.lognormvariate(0.3, 0.6) if correct else 0.0
        results_db.add_grade(
            engine,  # type: ignore[arg-type]
            {"kernel": names[index % len(names)], "preset": "S", "datatype": "fp64",
             "language": "c", "route": "submit", "correct": correct, "speedup": speedup,
             "native_ns": 10**6, "convert_in_ns": 10**4 if index % 3 == 0 else 0,
             "agent_id": AGENTS[index % len(AGENTS)], "experiment": "bench", "setup": "default",
             "judge_id": "bench"},
            cast if index % 3 == 0 else None,
        )  # fmt: skip


def write_screenshots(directory: Path) -> list[Path]:
    from fastapi.testclient import TestClient

    from hb import results_db
    from hb.service import create_app
    from tests.browser import Browser
    from tests.hb.conftest import make_config
    from tests.hb.results_support import KERNELS, record_demo, record_paired, served

    written = []
    with tempfile.TemporaryDirectory(prefix="hb-results-") as folder:
        config = make_config(
            Path(folder), service={"judge_id": "judge-demo", "tasks": list(KERNELS)},
            requests={"allow": ["load", "cast", "layout"], "precisions": ["fp32"]},
        )  # fmt: skip
        engine = results_db.connect(config.database_url)
        ids = record_demo(engine)
        with (
            TestClient(create_app(config)) as client,
            served(client.app) as url,  # type: ignore[arg-type]
            Browser(width=1400, height=640) as page,
        ):
            grade = record_paired(engine, ids)["score"]
            page.navigate(f"{url}/")
            page.wait_for("document.body.dataset.ready === '1'")
            directory.mkdir(parents=True, exist_ok=True)
            written.append(page.screenshot(directory / "results-leaderboard.png"))
            page.navigate(f"{url}/#grade/{grade}")
            page.wait_for(f"document.querySelector('#grade').dataset.id === '{grade}'")
            written.append(page.screenshot(directory / "results-grade.png"))
    return written


def main(full: bool, screenshot: Path | None = None) -> int:
    from fastapi.testclient import TestClient

    from hb import metrics, report, results_db
    from hb.service import create_app
    from tests.browser import Browser, available
    from tests.hb.conftest import make_config
    from tests.hb.results_support import served

    count = 10_000 if full else 1_000
    status = 0
    with tempfile.TemporaryDirectory(prefix="hb-results-") as folder:
        config = make_config(Path(folder))
        engine = results_db.connect(config.database_url)
        started = time.perf_counter()
        many_grades(engine, count)
        print(f"results: {count} grades recorded in {time.perf_counter() - started:.1f} s")
        rows = results_db.list_grades(engine, limit=None)
        started = time.perf_counter()
        boards = metrics.leaderboards(rows)
        metrics_s = time.perf_counter() - started
        with TestClient(create_app(config)) as client:
            started = time.perf_counter()
            assert client.get("/leaderboard").status_code == 200
            route_s = time.perf_counter() - started
            print(
                f"leaderboard of {len(boards[0].groups)} groups over {count} grades: metrics "
                f"{metrics_s:.2f} s, GET /leaderboard {route_s:.2f} s (target < "
                f"{LEADERBOARD_BOUND_S:g} s at 10,000: ratio {route_s / LEADERBOARD_BOUND_S:.2f})"
            )
            if full and route_s > LEADERBOARD_BOUND_S:
                status = 1
            started = time.perf_counter()
            report.write_report(engine, Path(folder) / "report")
            print(f"hb report (report.md and 3 plots): {time.perf_counter() - started:.2f} s")
            if not available():
                print("results page in Chromium: not measured (Chromium is not installed)")
            else:
                with served(client.app) as url, Browser() as page:  # type: ignore[arg-type]
                    started = time.perf_counter()
                    page.navigate(f"{url}/")
                    page.wait_for("document.body.dataset.ready === '1'", timeout_s=60)
                    print(
                        f"results page in Chromium: rendered in {time.perf_counter() - started:.2f}"
                        " s (tasks, 50 recent grades, the leaderboard)"
                    )
    if screenshot is not None:
        for path in write_screenshots(screenshot):
            print(f"wrote {path}")
    return status


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--full", action="store_true")
    parser.add_argument("--screenshot", type=Path, help="the directory of the docs' screenshots")
    arguments = parser.parse_args()
    sys.exit(main(arguments.full, arguments.screenshot))
