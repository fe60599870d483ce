"""Downloads the pinned sources with the registries' own clients, checks their sha256 and unpacks them.

The cache lives under $USIS_CACHE_DIR (default ~/.cache/usis): `<name>/<version>/<file>` is the
archive as downloaded and `<name>/<version>/unpacked/` holds the members the extract needs, with
the archive's own folder structure. A shipped corpus never needs any of this.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Iterable
from importlib import util as import_util
from pathlib import Path

from usis.sources.manifest import Source

Runner = Callable[[list[str], Path], None]


class FetchError(RuntimeError):
    """A source that could not be downloaded, failed its checksum or could not be unpacked."""


def cache_dir() -> Path:
    """Where fetched sources live: $USIS_CACHE_DIR, or ~/.cache/usis."""
    configured = os.environ.get("USIS_CACHE_DIR")
    return Path(configured) if configured else Path.home() / ".cache" / "usis"


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def source_dir(source: Source, root: Path | None = None) -> Path:
    return (root or cache_dir()) / source.name / source.version


def unpacked_dir(source: Source, root: Path | None = None) -> Path:
    return source_dir(source, root) / "unpacked"


def run_command(command: list[str], workdir: Path) -> None:
    completed = subprocess.run(command, cwd=workdir, capture_output=True, text=True, check=False)
    if completed.returncode != 0:
        raise FetchError(
            f"`{' '.join(command)}` failed with exit {completed.returncode}: "
            f"{(completed.stderr or completed.stdout).strip()[-800:]}"
        )


def pip_download_command(package: str, version: str, target: Path) -> list[str]:
    """pip's command that downloads one wheel of a PyPI package, without its dependencies."""
    return [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        f"{package}=={version}",
        "-d",
        str(target),
    ]


def download_command(source: Source, target: Path) -> list[str]:
    """The registry client command that downloads one source's archive into `target`."""
    if source.registry == "pypi":
        return pip_download_command(source.package, source.version, target)
    return ["apt-get", "download", f"{source.package}={source.version}"]


def download(source: Source, root: Path | None = None, runner: Runner = run_command) -> Path:
    """The archive of `source` in the cache, downloaded when absent; raises on a checksum mismatch."""
    folder = source_dir(source, root)
    archive = folder / source.file
    if archive.is_file() and sha256_file(archive) == source.sha256:
        return archive
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="usis-fetch-", dir=folder) as scratch:
        scratch_path = Path(scratch)
        command = download_command(source, scratch_path)
        try:
            runner(command, scratch_path)
        except FetchError as error:
            if source.registry != "debian":
                raise
            # apt-get download needs package lists; refresh them once, then try again.
            runner(["apt-get", "update"], scratch_path)
            runner(command, scratch_path)
            del error
        downloaded = scratch_path / source.file
        if not downloaded.is_file():
            found = sorted(path.name for path in scratch_path.iterdir())
            raise FetchError(f"{source.name}: expected {source.file} after download, found {found}")
        actual = sha256_file(downloaded)
        if actual != source.sha256:
            raise FetchError(
                f"{source.name}: {source.file} has sha256 {actual}, the manifest pins {source.sha256}"
            )
        shutil.move(str(downloaded), archive)
    return archive


def wanted(member: str, patterns: Iterable[str] | None) -> bool:
    if patterns is None:
        return True
    return any(member == p or (p.endswith("/") and member.startswith(p)) for p in patterns)


def unpack_stamp(source: Source) -> str:
    """What `.complete` holds once a source is unpacked: the archive's sha256 and the members
    unpacked, so that a pin that names more members unpacks again."""
    return f"{source.sha256}\n{json.dumps(source.unpack)}\n"


def unpack(source: Source, archive: Path, root: Path | None = None) -> Path:
    """Unpack the members `source.unpack` names (everything when null) into the cache; returns
    the folder that mirrors the archive's structure."""
    target = unpacked_dir(source, root)
    marker = target / ".complete"
    if marker.is_file() and marker.read_text() == unpack_stamp(source):
        return target
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    if archive.suffix in (".whl", ".zip"):
        with zipfile.ZipFile(archive) as bundle:
            for member in bundle.namelist():
                if wanted(member, source.unpack) and not member.endswith("/"):
                    destination = (target / member).resolve()
                    if not destination.is_relative_to(target.resolve()):
                        raise FetchError(f"{archive.name}: member {member!r} escapes the folder")
                    destination.parent.mkdir(parents=True, exist_ok=True)
                    destination.write_bytes(bundle.read(member))
    elif archive.suffix == ".deb":
        with tempfile.TemporaryDirectory(prefix="usis-deb-") as scratch:
            run_command(["dpkg-deb", "-x", str(archive), scratch], Path(scratch))
            for path in sorted(Path(scratch).rglob("*")):
                member = path.relative_to(scratch).as_posix()
                if path.is_file() and wanted(member, source.unpack):
                    destination = target / member
                    destination.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(path, destination)
    else:
        raise FetchError(f"{archive.name}: unknown archive type; expected .whl, .zip or .deb")
    marker.write_text(unpack_stamp(source))
    return target


def fetch(source: Source, root: Path | None = None, runner: Runner = run_command) -> Path:
    """Download (when needed), check and unpack one source; returns its unpacked folder."""
    return unpack(source, download(source, root, runner), root)


def installed_file(source: Source) -> Path | None:
    """The installed package's copy of the source's one member, when its sha256 is the pinned one."""
    if source.installed is None:
        return None
    spec = import_util.find_spec(source.installed["package"])
    if spec is None or not spec.submodule_search_locations:
        return None
    package_root = Path(next(iter(spec.submodule_search_locations))).parent
    candidate = package_root / source.installed["member"]
    if candidate.is_file() and sha256_file(candidate) == source.installed["sha256"]:
        return package_root
    return None


def available_path(source: Source, root: Path | None = None) -> Path | None:
    """Where the extract should read `source` from without downloading: the unpacked cache, or an
    installed package whose pinned member matches; None when neither is there."""
    target = unpacked_dir(source, root)
    marker = target / ".complete"
    if marker.is_file() and marker.read_text() == unpack_stamp(source):
        return target
    return installed_file(source)
