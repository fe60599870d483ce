"""The explorer in a real headless Chromium, opened from file:// with every shipped entry: search,
filters, an entry page (signature, sections, parameters, nulls, provenance, equivalents side by
side, the formal picture), following a relationship link, a direct #model:key address, the diff
view, and a screenshot. What the page computes (equivalents, the record governing a value) is
checked against the Python API."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser import Browser, BrowserError, available
from usis.api import Corpus, load
from usis.cli import main
from usis.provenance.records import record_for

pytestmark = pytest.mark.skipif(
    not available(), reason="Chromium is not installed (scripts/sysdeps.sh installs it)"
)

CORPUS_FILES = Path(__file__).parents[2] / "src" / "usis" / "corpus"


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return load()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The whole shipped corpus, with a diff against a copy of it in which one nccl entry is
    missing and one MPI description differs."""
    old = tmp_path_factory.mktemp("old-corpus")
    for path in CORPUS_FILES.glob("final-*-api.json"):
        shutil.copy(path, old / path.name)
    nccl = json.loads((old / "final-nccl-api.json").read_text())
    del nccl["entries"]["nccl:ncclAllReduce"]
    (old / "final-nccl-api.json").write_text(json.dumps(nccl))
    mpi = json.loads((old / "final-mpi-api.json").read_text())
    mpi["entries"]["mpi:mpi_bcast"]["identity"]["desc"] = "An older description."
    (old / "final-mpi-api.json").write_text(json.dumps(mpi))
    out = tmp_path_factory.mktemp("site")
    assert main(["site", str(out), "--diff", str(old)]) == 0
    return out


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with Browser(width=1280, height=900) as opened:
        yield opened


def open_page(browser: Browser, site: Path, fragment: str = "") -> None:
    browser.navigate((site / "index.html").as_uri() + fragment)
    browser.wait_for("document.body.dataset.ready === '1'")


def open_entry(browser: Browser, site: Path, key: str) -> None:
    open_page(browser, site, f"#{key}")
    wait_entry(browser, key)


def wait_entry(browser: Browser, key: str) -> None:
    browser.wait_for(
        f"document.querySelector('#entry').dataset.key === {json.dumps(key)}"
        " && !document.querySelector('#entry').hidden"
    )


def text(browser: Browser, selector: str) -> Any:
    return browser.evaluate(f"document.querySelector({json.dumps(selector)}).textContent")


def listed(browser: Browser) -> list[str]:
    keys: list[str] = browser.evaluate(
        "[...document.querySelectorAll('#results a')].map(a => a.dataset.key)"
    )
    return keys


def test_the_first_page_lists_every_entry(browser: Browser, site: Path, corpus: Corpus) -> None:
    open_page(browser, site)
    assert text(browser, "#count") == f"{len(corpus)} of {len(corpus)} entries"
    assert browser.evaluate("USIS.state.rows.length") == len(corpus)
    assert "index.html#mpi:mpi_bcast" in text(browser, "#welcome")


def test_search_then_open_an_entry_then_follow_a_relationship(
    browser: Browser, site: Path, corpus: Corpus
) -> None:
    open_page(browser, site)
    browser.type("#search", "allreduce")
    browser.wait_for(
        f"!document.querySelector('#count').textContent.startsWith('{len(corpus)} of')"
    )
    found = listed(browser)
    assert "mpi:mpi_allreduce" in found and "nccl:ncclAllReduce" in found
    assert all("allreduce" in browser.evaluate(
        f"USIS.state.byKey.get({json.dumps(k)}).haystack") for k in found[:50])  # fmt: skip
    browser.click('#results a[data-key="mpi:mpi_allreduce"]')
    wait_entry(browser, "mpi:mpi_allreduce")
    entry = corpus.raw("mpi:mpi_allreduce")
    assert text(browser, "#entry h2") == "MPI_Allreduce"
    assert text(browser, "#sec-signature pre") == entry["bindings"]["c"]["signature"]
    names = browser.evaluate(
        "[...document.querySelectorAll('#sec-parameters tr[data-parameter]')]"
        ".map(r => r.dataset.parameter)"
    )
    assert names == [p["name"] for p in entry["parameters"]]
    # A null section reads "not applicable".
    assert (
        text(browser, '#sec-semantics tr[data-field="/semantics/point_to_point"] td + td')
        == "not applicable"
    )
    # Every section of the schema, in its order.
    assert browser.evaluate(
        "[...document.querySelectorAll('#entry section[id^=sec-]')].map(s => s.id)"
    ) == ["sec-signature", "sec-identity", "sec-bindings", "sec-execution", "sec-semantics",
          "sec-parameters", "sec-return", "sec-tool_integration", "sec-relationships",
          "sec-provenance"]  # fmt: skip
    nonblocking = entry["relationships"]["variants"]["nonblocking"]
    assert nonblocking == "mpi:mpi_iallreduce"
    browser.click(f'#sec-relationships a[href="#{nonblocking}"]')
    wait_entry(browser, nonblocking)
    assert browser.evaluate("location.hash") == f"#{nonblocking}"
    assert text(browser, "#entry h2") == corpus.raw(nonblocking)["identity"]["name"]


def test_filters_select_what_the_python_api_finds(
    browser: Browser, site: Path, corpus: Corpus
) -> None:
    open_page(browser, site)
    browser.evaluate(
        "(() => { for (const [id, v] of [['#filter-model', 'mpi'], ['#filter-collective', '1'],"
        " ['#filter-blocking', '0']]) { const s = document.querySelector(id); s.value = v;"
        " s.dispatchEvent(new Event('change')); } })()"
    )
    expected = corpus.find(model="mpi", collective=True, blocking=False)
    assert text(browser, "#count") == f"{len(expected)} of {len(corpus)} entries"
    assert sorted(listed(browser)) == expected
    browser.evaluate(
        "(() => { const s = document.querySelector('#filter-deprecated'); s.value = '1';"
        " document.querySelector('#filter-collective').value = '';"
        " document.querySelector('#filter-blocking').value = '';"
        " s.dispatchEvent(new Event('change')); })()"
    )
    deprecated = [k for k in corpus.find(model="mpi") if corpus.raw(k)["identity"]["deprecated_in"]]
    assert sorted(listed(browser)) == deprecated and "mpi:mpi_info_get" in deprecated


def test_an_address_opens_its_entry_directly(browser: Browser, site: Path) -> None:
    open_entry(browser, site, "mpi:mpi_bcast")
    assert text(browser, "#entry h2") == "MPI_Bcast"
    assert browser.evaluate("document.querySelector('#welcome').hidden") is True
    open_page(browser, site, "#mpi:no_such_call")
    assert "No entry mpi:no_such_call" in text(browser, "#welcome")


def test_provenance_shown_is_the_record_the_api_gives(
    browser: Browser, site: Path, corpus: Corpus
) -> None:
    key = "mpi:mpi_info_get"
    open_entry(browser, site, key)
    records = corpus.provenance_records(key)
    for pointer in ("/identity/deprecated_in", "/identity/desc", "/parameters/1/kind",
                    "/semantics/collective", "/execution/blocking", "/bindings/c/signature"):  # fmt: skip
        shown = browser.evaluate(
            f"USIS.provenanceOf({json.dumps(key)}).then(r => USIS.recordFor(r, {json.dumps(pointer)}))"
        )
        assert shown == record_for(records, pointer), pointer
    badge = browser.evaluate(
        "document.querySelector('#sec-identity tr[data-field=\"/identity/deprecated_in\"] .prov')"
        ".title"
    )
    assert "curated/mpi/deprecations.yaml" in badge and badge.startswith("curated, classify stage")
    assert browser.evaluate("document.querySelectorAll('#sec-provenance tr').length") == (
        len(records) + 1
    )
    assert text(browser, '#sec-relationships a[href="#mpi:mpi_info_get_string"]') == (
        "mpi:mpi_info_get_string"
    )


def test_equivalents_stand_side_by_side(browser: Browser, site: Path, corpus: Corpus) -> None:
    key = "mpi:mpi_allreduce"
    open_entry(browser, site, key)
    assert browser.evaluate(f"USIS.equivalentsOf({json.dumps(key)})") == corpus.equivalents(key)
    columns = browser.evaluate(
        "[...document.querySelectorAll('#equivalents .side-by-side > div')].map(d => d.dataset.model)"
    )
    models = sorted({k.split(":")[0] for k in corpus.equivalents(key)})
    assert columns == ["mpi", *models]
    assert "ncclAllReduce" in text(browser, '#equivalents div[data-model="nccl"] h4')


def test_the_formal_block_is_drawn_as_who_sends_what_to_whom(
    browser: Browser, site: Path, corpus: Corpus
) -> None:
    key = "mpi:mpi_bcast"
    open_entry(browser, site, key)
    formal = corpus.raw(key)["semantics"]["formal"]
    participants = browser.evaluate(
        "[...new Set([...document.querySelectorAll('svg.formal rect.participant')]"
        ".map(r => r.dataset.participant))]"
    )
    assert participants == [p["id"] for p in formal["participants"]] == ["root", "members"]
    # The root's one read, and a write in each of the three instances drawn for the members.
    accesses = browser.evaluate(
        "[...document.querySelectorAll('svg.formal g.access')].map(g => g.dataset.participant)"
    )
    assert accesses == ["root", "members", "members", "members"]
    # One arrow from the root's buffer to each member's.
    assert browser.evaluate("document.querySelectorAll('svg.formal path.flow').length") == 3
    open_entry(browser, site, "mpi:mpi_comm_rank")
    assert corpus.raw("mpi:mpi_comm_rank")["semantics"]["formal"] is None
    assert browser.evaluate("document.querySelector('svg.formal')") is None


def test_the_diff_view_names_what_changed(browser: Browser, site: Path) -> None:
    open_page(browser, site, "#diff")
    browser.wait_for("!document.querySelector('#diff').hidden")
    assert text(browser, "#diff-summary") == "1 added, 0 removed, 1 changed"
    assert browser.evaluate(
        "[...document.querySelectorAll('#diff details')].map(d => d.dataset.key)"
    ) == ["mpi:mpi_bcast"]
    assert "An older description." in text(browser, '#diff details[data-key="mpi:mpi_bcast"]')
    browser.click('#diff a[href="#nccl:ncclAllReduce"]')
    wait_entry(browser, "nccl:ncclAllReduce")


def test_an_entry_page_screenshot(browser: Browser, site: Path, tmp_path: Path) -> None:
    open_entry(browser, site, "mpi:mpi_allreduce")
    shot = browser.screenshot(tmp_path / "entry.png")
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (1280, 900)


def test_the_driver_names_what_failed(browser: Browser, site: Path) -> None:
    open_page(browser, site)
    with pytest.raises(BrowserError, match="threw: ReferenceError"):
        browser.evaluate("no_such_name + 1")
    with pytest.raises(BrowserError, match="did not hold within the time allowed"):
        browser.wait_for("false", timeout_s=0.2)
    with pytest.raises(BrowserError, match="no element matches '#nothing-here'"):
        browser.click("#nothing-here")
    assert browser.evaluate("Promise.resolve(6 * 7)") == 42
