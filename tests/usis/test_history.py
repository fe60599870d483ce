"""The header history of the NVIDIA models: which wheel first declares a function dates it only
when no unread release lies before it, the curated tables agree with the shipped corpora, a
release-note version that contradicts a header fails the build, and the wheels are fetched once
with pip and only their headers kept."""

from __future__ import annotations

import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.usis.corpus import shipped, shipped_provenance
from usis.curated import HEADER_HISTORY, check_release_since, load, release_key
from usis.entry_builder import ClassifyError, Provenance, apply_since
from usis.history import (
    SERIES,
    Series,
    Wheel,
    fetch_headers,
    first_declarations,
    history_document,
)


def series(versions: str, adjacent: dict[tuple[str, str], str] | None = None) -> Series:
    return Series(
        model="demo",
        prefix="DEMO",
        headers="demo/include/",
        read=lambda root: set(),
        wheels=tuple(Wheel("demo-lib", version) for version in versions.split()),
        adjacent=adjacent or {},
        note="a test series",
    )


def declared(demo: Series, *names: Sequence[str]) -> list[tuple[Wheel, set[str]]]:
    return [(wheel, set(found)) for wheel, found in zip(demo.wheels, names, strict=True)]


def test_a_function_new_in_a_minor_release_is_dated_to_that_release() -> None:
    demo = series("1.4.2 1.5.0 1.5.3")
    dated, undated = first_declarations(demo, declared(demo, ["a"], ["a", "b"], ["a", "b"]))
    assert dated == {
        "b": {"since": "DEMO-1.5", "first": "demo-lib 1.5.0", "before": "demo-lib 1.4.2"}
    }
    assert undated == {}


def test_a_function_new_in_a_patch_release_is_dated_to_that_patch() -> None:
    demo = series("2.8.3 2.8.7")
    dated, _ = first_declarations(demo, declared(demo, [], ["revoke"]))
    assert dated["revoke"]["since"] == "DEMO-2.8.7"


def test_the_earliest_wheel_dates_nothing() -> None:
    demo = series("1.0.0 1.1.0")
    dated, undated = first_declarations(demo, declared(demo, ["old"], ["old"]))
    assert dated == {} and undated == {}


def test_an_unread_release_between_two_wheels_leaves_the_function_undated() -> None:
    demo = series("1.2.0 1.4.0")
    dated, undated = first_declarations(demo, declared(demo, [], ["x"]))
    assert dated == {}
    assert "leaves a release unread" in undated["x"]


def test_a_release_number_never_used_can_be_declared_adjacent() -> None:
    demo = series("11.8.0 12.0.0", {("11.8", "12.0"): "there was no 11.9"})
    dated, _ = first_declarations(demo, declared(demo, [], ["x"]))
    assert dated["x"]["since"] == "DEMO-12.0"


def test_a_function_a_later_wheel_drops_is_undated() -> None:
    demo = series("1.0.0 1.1.0 1.2.0")
    dated, undated = first_declarations(demo, declared(demo, [], ["x"], []))
    assert dated == {}
    assert "not by the later demo-lib 1.2.0" in undated["x"]


def test_a_family_is_dated_only_when_its_members_share_the_release() -> None:
    demo = series("1.0.0 1.1.0 1.2.0")
    found = declared(
        demo,
        ["f_{T}", "f_int"],
        ["f_{T}", "f_int", "g_{T}", "g_int", "g_long"],
        ["f_{T}", "f_int", "f_half", "g_{T}", "g_int", "g_long"],
    )
    document = history_document(
        demo,
        found,
        [],
        families={"f_{T}": ["f_int", "f_half"], "g_{T}": ["g_int", "g_long"]},
    )
    assert document["since"]["g_{T}"]["since"] == "DEMO-1.1"
    assert "f_{T}" not in document["since"]
    assert document["since"]["f_half"]["since"] == "DEMO-1.2"
    assert document["earliest"] == "DEMO-1.0.0"


def test_each_series_reads_its_releases_oldest_first() -> None:
    for model, known in SERIES.items():
        versions = [release_key(f"X-{wheel.version}") for wheel in known.wheels]
        assert versions == sorted(versions), model
        assert len(set(versions)) == len(versions), model


@pytest.mark.parametrize("model", sorted(SERIES))
def test_every_dated_function_ships_with_its_dated_version(model: str) -> None:
    document = load(HEADER_HISTORY.format(model=model))
    entries = shipped(model, "final")["entries"]
    records = shipped_provenance(model)
    assert document["earliest"] == f"{SERIES[model].prefix}-{SERIES[model].wheels[0].version}"
    assert [item[:2] for item in document["wheels"]] == [
        [wheel.package, wheel.version] for wheel in SERIES[model].wheels
    ]
    assert document["since"], model
    for name, fact in document["since"].items():
        key = f"{model}:{name}"
        assert key in entries, key
        assert entries[key]["identity"]["since"] == fact["since"], key
        record = records[key]["/identity/since"]
        assert record["method"] == "curated", key
        assert fact["first"] in record["from"] and fact["before"] in record["from"], key


def test_the_headers_correct_the_per_call_config_collectives_to_nccl_2_31() -> None:
    entries = shipped("nccl", "final")["entries"]
    assert entries["nccl:ncclAllReduceConfig"]["identity"]["since"] == "NCCL-2.31"
    assert entries["nccl:ncclSetEncryption"]["identity"]["since"] == "NCCL-2.32"
    assert entries["nccl:ncclCommSplit"]["identity"]["since"] == "NCCL-2.18"
    assert entries["nccl:ncclCommRevoke"]["identity"]["since"] == "NCCL-2.28.7"


def test_a_release_note_version_is_checked_against_the_headers() -> None:
    assert check_release_since("nccl", "ncclCommSplit", "NCCL-2.18") is None
    assert "dates it" in str(check_release_since("nccl", "ncclCommSplit", "NCCL-2.19"))
    # ncclAllReduce is in the earliest wheel (2.13.4): it cannot be newer than that.
    assert check_release_since("nccl", "ncclAllReduce", "NCCL-1.0") is None
    assert "already declares it" in str(check_release_since("nccl", "ncclAllReduce", "NCCL-2.20"))


def entry_stub(model: str) -> dict[str, Any]:
    return {"identity": {"model": model, "since": None}}


def test_a_contradicting_release_note_fails_the_classifier() -> None:
    with pytest.raises(ClassifyError, match="contradicts the header"):
        apply_since(
            "ncclCommSplit",
            entry_stub("nccl"),
            Provenance(),
            ("NCCL-2.20", "a wrong note"),
            lambda source: source,
        )


def test_the_history_wins_and_a_release_note_fills_what_it_cannot_date() -> None:
    dated, notes = entry_stub("nccl"), Provenance()
    apply_since("ncclCommSplit", dated, notes, ("NCCL-2.18", "note"), lambda source: source)
    assert dated["identity"]["since"] == "NCCL-2.18"
    assert "nvidia-nccl-cu12 2.18.1" in notes.sorted_records()["/identity/since"]["from"]
    older, notes = entry_stub("nccl"), Provenance()
    apply_since("ncclSend", older, notes, ("NCCL-2.7", "2.7 notes"), lambda source: source)
    assert older["identity"]["since"] == "NCCL-2.7"
    assert notes.sorted_records()["/identity/since"]["from"] == "2.7 notes"


def test_a_wheel_is_fetched_once_and_only_its_headers_are_kept(tmp_path: Path) -> None:
    demo = series("1.0.0")
    calls: list[list[str]] = []

    def runner(command: list[str], workdir: Path) -> None:
        calls.append(command)
        with zipfile.ZipFile(workdir / "demo_lib-1.0.0-py3-none-any.whl", "w") as archive:
            archive.writestr("demo/include/demo.h", "int demo(void);\n")
            archive.writestr("demo/lib/libdemo.so", "binary")

    folder, digest = fetch_headers(demo, demo.wheels[0], tmp_path, runner)
    assert (folder / "unpacked/demo/include/demo.h").is_file()
    assert not (folder / "unpacked/demo/lib").exists()
    assert not list(folder.rglob("*.whl"))
    assert len(digest) == 64
    assert "pip" in calls[0] and "--no-deps" in calls[0] and "demo-lib==1.0.0" in calls[0]
    again = fetch_headers(demo, demo.wheels[0], tmp_path, runner)
    assert again == (folder, digest) and len(calls) == 1
