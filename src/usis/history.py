"""The release history of the NVIDIA models' headers: which published wheel first declares each
function, read from a series of the vendor's wheels, written as the curated since table
`curated/<model>/header_history.yaml` that classify reads (`usis history --model M`).

A function gets a version only when the history decides it: the first wheel of the series that
declares it, an earlier wheel that does not, every later wheel declaring it too, and the wheel
just before it either of the same minor release or of the minor release just before (so no
unread release lies between the two). A function introduced in a patch release is dated to that
patch (`NCCL-2.28.7`), one introduced with a minor release to the minor release (`NCCL-2.18`).
A function already declared by the series' earliest wheel is not dated: it is older than the
series.
"""

from __future__ import annotations

import shutil
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from usis.curated import HEADER_HISTORY, version_key
from usis.extract import cuda as cuda_extract
from usis.extract import nccl as nccl_extract
from usis.extract import nvshmem as nvshmem_extract
from usis.sources.fetch import cache_dir, pip_download_command, run_command, sha256_file

Runner = Callable[[list[str], Path], None]


@dataclass(frozen=True)
class Wheel:
    """One published wheel of the series."""

    package: str
    version: str

    @property
    def minor(self) -> tuple[int, ...]:
        return version_key(self.version)[:2]


@dataclass(frozen=True)
class Series:
    """The wheels read for one model, oldest first, and what is known of the releases between."""

    model: str
    prefix: str
    headers: str
    read: Callable[[Path], set[str]]
    wheels: tuple[Wheel, ...]
    # Minor releases that follow each other although their numbers do not (a release number
    # that was never used), with the fact that says so.
    adjacent: Mapping[tuple[str, str], str]
    note: str


def wheels(package: str, versions: str) -> tuple[Wheel, ...]:
    return tuple(Wheel(package, version) for version in versions.split())


NCCL_WHEELS = wheels("nvidia-nccl-cu11", "2.13.4 2.14.3 2.15.5") + wheels(
    "nvidia-nccl-cu12",
    "2.16.2 2.16.5 2.17.1 2.18.1 2.18.3 2.19.3 2.20.5 2.21.5 2.22.3 2.23.4 2.24.3 2.25.1 2.26.2 "
    "2.26.5 2.27.3 2.27.5 2.27.6 2.27.7 2.28.3 2.28.7 2.28.9 2.29.2 2.29.3 2.29.7 2.30.3 2.30.4 "
    "2.30.7 2.31.2 2.32.3",
)
CUDA_WHEELS = wheels("nvidia-cuda-runtime-cu11", "11.7.99 11.8.89") + wheels(
    "nvidia-cuda-runtime-cu12",
    "12.0.107 12.0.146 12.1.55 12.1.105 12.2.53 12.2.128 12.2.140 12.3.52 12.3.101 12.4.99 "
    "12.4.127 12.5.39 12.5.82 12.6.37 12.6.68 12.6.77 12.8.57 12.8.90 12.9.37 12.9.79",
)
NVSHMEM_WHEELS = wheels(
    "nvidia-nvshmem-cu12",
    "3.1.7 3.2.5 3.3.9 3.3.20 3.3.24 3.4.5 3.5.19 3.5.21 3.6.5 3.7.0 3.7.1 3.7.2 3.8.0",
)
# Every wheel of the headers PyPI has, oldest first; the note says what each reading covers.
SERIES: dict[str, Series] = {
    "nccl": Series(
        "nccl",
        "NCCL",
        f"{nccl_extract.NCCL_INCLUDE_DIR}/",
        nccl_extract.declared_names,
        NCCL_WHEELS,
        {},
        "Every NCCL release PyPI has from 2.13.4 (nvidia-nccl-cu11 until 2.15, nvidia-nccl-cu12 "
        "from 2.16): nccl.h and the NCCL_EXTERN_C host calls under nccl_device/.",
    ),
    "cuda": Series(
        "cuda",
        "CUDA",
        f"{cuda_extract.CUDA_INCLUDE_DIR}/",
        cuda_extract.declared_names,
        CUDA_WHEELS,
        {
            ("11.8", "12.0"): "CUDA 12.0 followed 11.8; there was no CUDA 11.9",
            ("12.6", "12.8"): "CUDA 12.8 followed 12.6; there was no CUDA 12.7",
        },
        "Every CUDA runtime wheel PyPI has (nvidia-cuda-runtime-cu11 11.7 and 11.8, "
        "nvidia-cuda-runtime-cu12 from 12.0): cuda_runtime_api.h.",
    ),
    "nvshmem": Series(
        "nvshmem",
        "NVSHMEM",
        f"{nvshmem_extract.NVSHMEM_INCLUDE_DIR}/",
        nvshmem_extract.declared_names,
        NVSHMEM_WHEELS,
        {},
        "Every nvidia-nvshmem-cu12 wheel PyPI has (from 3.1.7): nvshmem.h, nvshmemx.h and the "
        "headers they include, read as the corpus's extract reads them (type-generic families by "
        "their {T} key).",
    ),
}


class HistoryError(RuntimeError):
    """A wheel of a series that could not be fetched or read."""


def consecutive(series: Series, before: Wheel, after: Wheel) -> bool:
    """No release of the library lies between two wheels' minor releases unread."""
    if before.minor == after.minor:
        return True
    pair = (".".join(map(str, before.minor)), ".".join(map(str, after.minor)))
    if pair in series.adjacent:
        return True
    return before.minor[0] == after.minor[0] and after.minor[1] == before.minor[1] + 1


def first_declarations(
    series: Series, declared: Sequence[tuple[Wheel, set[str]]]
) -> tuple[dict[str, dict[str, str]], dict[str, str]]:
    """(dated, undated) from the names each wheel declares, oldest wheel first: dated maps a
    function to {since, first, before}; undated maps a function the history sees appear but
    cannot date to the reason."""
    dated: dict[str, dict[str, str]] = {}
    undated: dict[str, str] = {}
    names = set().union(*(found for _, found in declared)) if declared else set()
    for name in sorted(names):
        present = [name in found for _, found in declared]
        first = present.index(True)
        if first == 0:
            continue
        wheel, previous = declared[first][0], declared[first - 1][0]
        if not all(present[first:]):
            gone = next(declared[i][0] for i in range(first, len(present)) if not present[i])
            undated[name] = f"declared by {label(wheel)} but not by the later {label(gone)}"
        elif not consecutive(series, previous, wheel):
            undated[name] = (
                f"first declared by {label(wheel)}; the wheel before it, {label(previous)}, "
                "leaves a release unread between them"
            )
        else:
            version = (
                wheel.version if previous.minor == wheel.minor else ".".join(map(str, wheel.minor))
            )
            dated[name] = {
                "since": f"{series.prefix}-{version}",
                "first": label(wheel),
                "before": label(previous),
            }
    return dated, undated


def label(wheel: Wheel) -> str:
    return f"{wheel.package} {wheel.version}"


def history_dir(root: Path | None = None) -> Path:
    return (root or cache_dir()) / "history"


def fetch_headers(
    series: Series, wheel: Wheel, root: Path | None = None, runner: Runner = run_command
) -> tuple[Path, str]:
    """(unpacked headers, sha256 of the wheel) of one wheel of the series, downloaded with pip
    into the cache once; only the header folder is kept, the wheel itself is deleted."""
    folder = history_dir(root) / wheel.package / wheel.version
    stamp = folder / "wheel.sha256"
    if stamp.is_file():
        return folder, stamp.read_text(encoding="utf-8").split()[0]
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="usis-history-", dir=folder) as scratch:
        scratch_path = Path(scratch)
        runner(pip_download_command(wheel.package, wheel.version, scratch_path), scratch_path)
        found = sorted(scratch_path.glob("*.whl"))
        if len(found) != 1:
            raise HistoryError(
                f"{label(wheel)}: expected one wheel after pip download, found {found}"
            )
        digest = sha256_file(found[0])
        unpacked = folder / "unpacked"
        shutil.rmtree(unpacked, ignore_errors=True)
        with zipfile.ZipFile(found[0]) as archive:
            members = [name for name in archive.namelist() if name.startswith(series.headers)]
            if not members:
                raise HistoryError(f"{label(wheel)}: no {series.headers} in {found[0].name}")
            archive.extractall(unpacked, members)
    stamp.write_text(f"{digest}  {found[0].name}\n", encoding="utf-8")
    return folder, digest


def read_series(
    series: Series, root: Path | None = None, runner: Runner = run_command
) -> tuple[list[tuple[Wheel, set[str]]], list[list[str]]]:
    """The names each wheel of the series declares, and [package, version, sha256] of each."""
    declared: list[tuple[Wheel, set[str]]] = []
    read: list[list[str]] = []
    for wheel in series.wheels:
        folder, digest = fetch_headers(series, wheel, root, runner)
        try:
            names = series.read(folder / "unpacked")
        except (ValueError, FileNotFoundError) as error:
            raise HistoryError(f"{label(wheel)}: {error}") from error
        declared.append((wheel, names))
        read.append([wheel.package, wheel.version, digest])
    return declared, read


def history_document(
    series: Series,
    declared: Sequence[tuple[Wheel, set[str]]],
    read: Iterable[list[str]],
    keep: set[str] | None = None,
    families: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, Any]:
    """The curated table: the wheels read, the earliest, and the dated and undated functions
    (only those in `keep`, the corpus's function keys, when given). A type-generic family
    (`families`: family key -> its members' names) is dated only when every member of it is
    dated to the same release, since its members share its entry's version."""
    dated, undated = first_declarations(series, declared)
    for family, members in (families or {}).items():
        if family not in dated:
            continue
        versions = {dated.get(member, {}).get("since") for member in members}
        if versions != {dated[family]["since"]}:
            del dated[family]
            undated[family] = "its members were first declared by different releases"
    if keep is not None:
        dated = {name: fact for name, fact in dated.items() if name in keep}
        undated = {name: why for name, why in undated.items() if name in keep}
    return {
        "note": series.note,
        "earliest": f"{series.prefix}-{series.wheels[0].version}",
        "wheels": [list(item) for item in read],
        "since": dated,
        "undated": undated,
    }


HEADER_COMMENT = """\
# Generated by `usis history --model {model}`; do not edit by hand. Source: the headers of the
# published wheels listed under `wheels` (package, version, sha256 of the wheel as pip
# downloaded it), read as the model's extract reads its pinned wheel. `since` maps
# a function to the first release whose header declares it (`first`) and the wheel before it
# that does not (`before`); `undated` lists the functions the series sees appear but cannot
# date, with the reason. A function declared by the earliest wheel (`earliest`) is older than
# the series and not listed. See src/usis/history.py.
"""


def write_history(model: str, document: Mapping[str, Any], curated_root: Path) -> Path:
    path = curated_root / HEADER_HISTORY.format(model=model)
    text = yaml.safe_dump(dict(document), sort_keys=True, width=100, allow_unicode=True)
    path.write_text(HEADER_COMMENT.format(model=model) + text, encoding="utf-8")
    return path
