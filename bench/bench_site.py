"""The explorer's size and speed: writing the site, its bytes (the index the first page needs, the
largest chunk an entry needs), and in headless Chromium over file:// the time until the first
page lists every entry (target: under a second), until a #model:key address shows its entry, and
of one search. `python -m bench.bench_site --screenshot PATH` also writes the docs' screenshot
of an entry page from the real site."""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

FIRST_PAGE_BOUND_MS = 1000.0
SCREENSHOT_KEY = "mpi:mpi_allreduce"


def measure_browser(site: Path, runs: int) -> dict[str, list[float]] | None:
    """Milliseconds from navigation to the listed index, to an opened entry, and of a search;
    each run in a fresh Chromium (a cold profile, nothing cached). None without Chromium."""
    from tests.browser import Browser, available

    if not available():
        return None
    figures: dict[str, list[float]] = {"first page": [], "entry by address": [], "search": []}
    for _ in range(runs):
        with Browser() as browser:
            browser.navigate((site / "index.html").as_uri() + "#mpi:mpi_bcast")
            browser.wait_for("document.body.dataset.ready === '1'")
            figures["first page"].append(float(browser.evaluate("USIS.state.readyAt")))
            browser.wait_for("USIS.state.openedAt !== null")
            figures["entry by address"].append(float(browser.evaluate("USIS.state.openedAt")))
            figures["search"].append(
                float(
                    browser.evaluate(
                        "(() => { const s = document.querySelector('#search');"
                        " s.value = 'allreduce'; const t = performance.now();"
                        " s.dispatchEvent(new Event('input')); return performance.now() - t; })()"
                    )
                )
            )
    return figures


def write_screenshot(site: Path, path: Path) -> None:
    from tests.browser import Browser

    with Browser(width=1280, height=900) as browser:
        browser.navigate((site / "index.html").as_uri())
        browser.wait_for("document.body.dataset.ready === '1'")
        browser.type("#search", "allreduce")
        browser.navigate((site / "index.html").as_uri() + f"#{SCREENSHOT_KEY}")
        browser.wait_for(f"document.querySelector('#entry').dataset.key === '{SCREENSHOT_KEY}'")
        path.parent.mkdir(parents=True, exist_ok=True)
        browser.screenshot(path)


def main(full: bool, screenshot: Path | None = None) -> int:
    from usis.site import write_site

    with tempfile.TemporaryDirectory(prefix="usis-site-") as folder:
        site = Path(folder)
        started = time.perf_counter()
        summary = write_site(site)
        write_s = time.perf_counter() - started
        largest = max((site / "data").glob("*-*.js"), key=lambda p: p.stat().st_size)
        print(
            f"usis site: {summary.entries} entries in {summary.chunks} chunks written in "
            f"{write_s:.1f} s; site {summary.bytes / 1e6:.1f} MB, index "
            f"{summary.index_bytes / 1e6:.2f} MB, largest chunk {largest.name} "
            f"{largest.stat().st_size / 1e3:.0f} kB"
        )
        figures = measure_browser(site, 5 if full else 1)
        if figures is None:
            print("explorer in Chromium: not measured (Chromium is not installed)")
        else:
            for name, times in figures.items():
                median = statistics.median(times)
                target = (
                    f", target under {FIRST_PAGE_BOUND_MS:.0f} ms "
                    f"({median / FIRST_PAGE_BOUND_MS:.2f} of it)"
                    if name == "first page"
                    else ""
                )
                print(
                    f"explorer {name} over file:// (headless Chromium, cold): median "
                    f"{median:.0f} ms over {len(times)} runs{target}"
                )
        if screenshot is not None:
            write_screenshot(site, screenshot)
            print(f"screenshot of {SCREENSHOT_KEY}: {screenshot}")
    return 0


if __name__ == "__main__":
    arguments = argparse.ArgumentParser(description=__doc__)
    arguments.add_argument("--full", action="store_true")
    arguments.add_argument("--screenshot", type=Path, help="write the docs' screenshot here")
    parsed = arguments.parse_args()
    sys.exit(main(parsed.full, parsed.screenshot))
