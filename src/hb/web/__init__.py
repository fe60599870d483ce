"""The judge's read-only results page: the static page at `/` (index.html, app.js and style.css,
shipped as package data, no build step) and the JSON routes it reads beside /tasks and /grades:
/offers (each task with its offer), /leaderboard (hb.metrics per experiment) and /grades/{id}
(with the grade's timing pairs and 95% interval for the page's plot)."""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, HTTPException
from fastapi.responses import HTMLResponse, Response

from hb import kernels, metrics, prompts, results_db
from hb.calls import CallReport
from hb.judge.outcome import public_row

if TYPE_CHECKING:
    from hb.service import JudgeHandler

# The page's files and their media types: nothing else is served from the package.
ASSETS = {"app.js": "text/javascript", "style.css": "text/css"}


def asset(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def shown_row(row: dict[str, Any]) -> dict[str, Any]:
    """A recorded grade as the judge's routes show it (outcome.public_row, its time as ISO text)."""
    return public_row({**row, "created_at": row["created_at"].isoformat()})


def reps_of(text: Any) -> list[int]:
    """A recorded list of rep times ("123,456"), as integers; none for an empty one."""
    return [int(part) for part in str(text or "").split(",") if part.strip()]


def pair_timing(row: Mapping[str, Any]) -> dict[str, Any]:
    """A shown grade's pairs as the answer of /score gives them: its reps, the baseline's, each
    pair's ratio baseline / submission and the pairs in its estimate. No reps where the row shows
    none of its own (a hidden grade's), and no ratios without the baseline's reps beside them."""
    reps = reps_of(row.get("rep_ns"))
    baseline = reps_of(row.get("baseline_rep_ns")) if reps else []
    paired = len(baseline) == len(reps) and all(rep > 0 for rep in reps)
    return {
        "reps_ns": reps,
        "baseline_reps_ns": baseline,
        "ratios": [b / r for b, r in zip(baseline, reps, strict=True)] if paired else [],
        "pairs": int(row.get("pairs") or 0),
    }


def grade_page(handler: JudgeHandler, grade_id: int) -> dict[str, Any] | None:
    """One grade as GET /grades shows it, with its request's typed rows, its parallel calls and
    usis's findings about them, its 95% interval (`speedup_ci`, null without one), whether it
    was noisy, and its pairs (`timing`); None where no grade has that id."""
    row = results_db.get_grade(handler.engine, grade_id)
    if row is None:
        return None
    report = CallReport.from_record(row.get("ppm_calls"))
    shown = shown_row(row)
    shown.pop("ppm_calls", None)
    interval = metrics.interval_of(shown) if shown.get("correct") else None
    return {
        **shown,
        "speedup_ci": list(interval) if interval else None,
        "noisy": bool(shown.get("noisy")),
        "timing": pair_timing(shown),
        "request_rows": [
            {key: entry[key] for key in ("position", "kind", "name", "array", "entry")}
            for entry in results_db.rows_of_grade(handler.engine, grade_id)
        ],
        "ppm_calls": [call.model_dump(mode="json") for call in report.calls] if report else [],
        "findings": [finding.model_dump(mode="json") for finding in report.findings]
        if report
        else [],
    }


def offers(handler: JudgeHandler) -> list[dict[str, Any]]:
    """Every task this judge serves with its precision and its offer (the request actions a
    submission may use, as $HPCAGENT_BENCH_REQUEST_ACTIONS writes them)."""
    listed = []
    for task in handler.tasks():
        manifest = kernels.load_manifest(task["kernel"])
        precision, override = prompts.task_precision(manifest, handler.config)
        offer = prompts.task_actions(
            manifest, handler.allowances, handler.config.mpi.grade_distributed, "c", override,
            precision,
        )  # fmt: skip
        listed.append({**task, "precision": precision, "offer": offer.to_env(),
                       "request_actions": offer.model_dump(mode="json")})  # fmt: skip
    return listed


def mount(app: FastAPI, handler: JudgeHandler) -> None:
    """Add the page and its read-only routes to the judge's application."""
    cached_offers: list[dict[str, Any]] = []

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    def page() -> HTMLResponse:
        return HTMLResponse(asset("index.html"))

    @app.get("/web/{name}", include_in_schema=False)
    def page_asset(name: str) -> Response:
        if name not in ASSETS:
            return Response(f"no such file: {name}", status_code=404, media_type="text/plain")
        return Response(asset(name), media_type=ASSETS[name])

    @app.get("/offers")
    def task_offers() -> list[dict[str, Any]]:
        """Every task this judge serves, with its track, precision and offer."""
        if not cached_offers:  # the allowances are the judge's, fixed at its start
            cached_offers.extend(offers(handler))
        return cached_offers

    @app.get("/leaderboard")
    def leaderboard(experiment: str | None = None) -> list[dict[str, Any]]:
        """hb.metrics' leaderboard of every experiment (or one) over the database's grades."""
        rows = results_db.list_grades(handler.engine, limit=None, experiment=experiment)
        boards = metrics.leaderboards(public_row(row) for row in rows)
        return [board.model_dump(mode="json") for board in boards]

    @app.get("/grades/{grade_id}")
    def grade(grade_id: int) -> dict[str, Any]:
        """One grade: what GET /grades shows, its request's rows, parallel calls and findings."""
        shown = grade_page(handler, grade_id)
        if shown is None:
            raise HTTPException(404, f"grade {grade_id}: no such grade")
        return shown
