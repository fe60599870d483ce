"""The pinned-source manifest and the fetch: registry commands, sha256 checks, unpacking, the cache."""

from __future__ import annotations

import hashlib
import io
import re
import zipfile
from pathlib import Path

import pytest

from usis.sources.fetch import (
    FetchError,
    available_path,
    download_command,
    fetch,
    installed_file,
)
from usis.sources.manifest import ManifestError, load_manifest, parse_manifest, sources_for_model


def wheel_bytes() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as bundle:
        bundle.writestr("pkg/data/apis.json", '{"x": 1}')
        bundle.writestr("pkg/other.py", "print()")
    return buffer.getvalue()


def source_record(sha: str, registry: str = "pypi") -> dict[str, object]:
    return {
        "name": "pkg",
        "models": ["mpi"],
        "registry": registry,
        "package": "pkg",
        "version": "1.0",
        "file": "pkg-1.0-py3-none-any.whl",
        "sha256": sha,
        "unpack": ["pkg/data/"],
    }


def test_shipped_manifest_parses_and_pins_mpi() -> None:
    manifest = load_manifest()
    assert "pympistandard" in manifest
    assert [s.name for s in sources_for_model("mpi", manifest)] == ["pympistandard"]
    assert manifest["pympistandard"].pin() == [
        "pympistandard",
        "0.2.0",
        "104fbaa99aadc82d8c65cbb59f9460485cd662f0ebd72aaa4eb2121d9ea04177",
    ]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"sha256": "abc"}, "64 lowercase hex"),
        ({"registry": "conda"}, "registry 'conda'"),
    ],
)
def test_manifest_entries_are_checked(change: dict[str, str], message: str) -> None:
    with pytest.raises(ManifestError, match=message):
        parse_manifest({"sources": [{**source_record("0" * 64), **change}]})
    incomplete = source_record("0" * 64)
    del incomplete["version"]
    with pytest.raises(ManifestError, match="missing \\['version'\\]"):
        parse_manifest({"sources": [incomplete]})


def test_download_commands_are_the_registries_clients() -> None:
    pypi = parse_manifest({"sources": [source_record("0" * 64)]})["pkg"]
    command = download_command(pypi, Path("/d"))
    assert command[1:5] == ["-m", "pip", "download", "--no-deps"] and "pkg==1.0" in command
    debian = parse_manifest(
        {"sources": [{**source_record("0" * 64, "debian"), "file": "pkg_1.0_amd64.deb"}]}
    )["pkg"]
    assert download_command(debian, Path("/d")) == ["apt-get", "download", "pkg=1.0"]


def test_fetch_checks_the_sha256_unpacks_and_caches(tmp_path: Path) -> None:
    data = wheel_bytes()
    source = parse_manifest({"sources": [source_record(hashlib.sha256(data).hexdigest())]})["pkg"]
    calls: list[list[str]] = []

    def fake_pip(command: list[str], workdir: Path) -> None:
        calls.append(command)
        (workdir / source.file).write_bytes(data)

    unpacked = fetch(source, tmp_path, runner=fake_pip)
    assert (unpacked / "pkg/data/apis.json").read_text() == '{"x": 1}'
    assert not (unpacked / "pkg/other.py").exists(), "only the members the extract needs"
    assert available_path(source, tmp_path) == unpacked
    fetch(source, tmp_path, runner=fake_pip)
    assert len(calls) == 1, "a cached, checked archive is not downloaded again"


def test_fetch_refuses_a_checksum_mismatch(tmp_path: Path) -> None:
    source = parse_manifest({"sources": [source_record("1" * 64)]})["pkg"]

    def fake_pip(command: list[str], workdir: Path) -> None:
        (workdir / source.file).write_bytes(wheel_bytes())

    with pytest.raises(FetchError, match="the manifest pins 1111"):
        fetch(source, tmp_path, runner=fake_pip)
    assert available_path(source, tmp_path) is None


def test_fetch_reports_a_missing_download(tmp_path: Path) -> None:
    source = parse_manifest({"sources": [source_record("1" * 64)]})["pkg"]
    with pytest.raises(
        FetchError, match=re.escape("expected pkg-1.0-py3-none-any.whl after download")
    ):
        fetch(source, tmp_path, runner=lambda command, workdir: None)


def test_installed_package_stands_in_only_when_its_sha256_matches() -> None:
    pinned = load_manifest()["pympistandard"]
    assert installed_file(pinned) is not None
    assert (installed_file(pinned) / "pympistandard/data/apis.json").is_file()
    record = source_record("0" * 64)
    record["installed"] = {
        "package": "pympistandard",
        "member": "pympistandard/data/apis.json",
        "sha256": "f" * 64,
    }
    assert installed_file(parse_manifest({"sources": [record]})["pkg"]) is None
