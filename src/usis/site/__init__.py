"""The explorer: a static site generated from the corpus (`usis site OUT_DIR`) that opens from
file:// or any static host, its data in <script> files (an index first, then the entries in
chunks as they are opened); `serve` shows the same site on 127.0.0.1."""

from __future__ import annotations

import functools
import http.server
import json
import shutil
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2

from usis.api import MODELS, Corpus, leaves, load

# Entries per data file: the largest (nvshmem) chunk stays a few hundred kilobytes, so opening an
# entry loads one small script.
CHUNK_ENTRIES = 64
# The index's flag bits (site.js reads the same names from the index's header).
FLAGS = ("blocking", "collective", "deprecated", "formal")
STATIC_FILES = ("site.css", "site.js", "formal.js")


class SiteError(ValueError):
    """A site that cannot be written: the reason, naming the path or revision."""


@dataclass(frozen=True)
class SiteSummary:
    """What `write_site` wrote: entries, data files, and the size of the site in bytes."""

    entries: int
    chunks: int
    bytes: int
    index_bytes: int


def script(call: str, *values: Any) -> str:
    """A data file: one call of the page's loader with JSON arguments (a script, not a fetch,
    because browsers refuse XHR on file://)."""
    arguments = ",".join(json.dumps(v, ensure_ascii=False, separators=(",", ":")) for v in values)
    return f"USIS.{call}({arguments});\n"


def flags_of(entry: Mapping[str, Any]) -> int:
    execution, identity = entry["execution"], entry["identity"]
    bits = (
        execution["blocking"] is True,
        execution["collective"] is True,
        identity["deprecated_in"] is not None,
        entry["semantics"]["formal"] is not None,
    )
    return sum(1 << index for index, bit in enumerate(bits) if bit)


def chunked(corpus: Corpus) -> list[tuple[str, list[str]]]:
    """(chunk name, keys) per data file: each model's sorted keys in runs of CHUNK_ENTRIES."""
    chunks = []
    for model in corpus.models:
        keys = [key for key in corpus if key.startswith(f"{model}:")]
        for start in range(0, len(keys), CHUNK_ENTRIES):
            chunks.append(
                (f"{model}-{start // CHUNK_ENTRIES}", keys[start : start + CHUNK_ENTRIES])
            )
    return chunks


def index_document(corpus: Corpus, chunks: list[tuple[str, list[str]]]) -> dict[str, Any]:
    """The first data file: one row per entry with what the list, the search and the filters
    need, and each entry's operation (Corpus.operation_of), so that the page lists the
    equivalents in the other models (Corpus.equivalents) without loading them."""
    operations: dict[tuple[str, str], int] = {}
    rows = []
    for chunk, (_, keys) in enumerate(chunks):
        for key in keys:
            entry = corpus.raw(key)
            identity = entry["identity"]
            operation = corpus.operation_of(key)
            op = -1 if operation is None else operations.setdefault(operation, len(operations))
            rows.append([
                key, identity["name"], identity["desc"] or "", identity["api_group"] or "",
                flags_of(entry), " ".join(p["name"] for p in entry["parameters"]), op, chunk,
            ])  # fmt: skip
    return {
        "columns": ["key", "name", "desc", "group", "flags", "params", "op", "chunk"],
        "flags": list(FLAGS),
        "models": corpus.models,
        "chunks": [name for name, _ in chunks],
        "operations": [list(operation) for operation in operations],
        "rows": rows,
    }


def chunk_document(corpus: Corpus, keys: list[str]) -> dict[str, Any]:
    """One data file's entries and their provenance: every record of each entry (a family
    member's linked records resolved), its pointers and records numbered once per file."""
    pointers: dict[str, int] = {}
    records: dict[tuple[str, str, str], int] = {}
    provenance: dict[str, list[int]] = {}
    for key in keys:
        flat: list[int] = []
        for pointer, record in corpus.provenance_records(key).items():
            identity = (record["stage"], record["method"], record["from"])
            flat += [
                pointers.setdefault(pointer, len(pointers)),
                records.setdefault(identity, len(records)),
            ]
        provenance[key] = flat
    return {
        "entries": {key: corpus.raw(key) for key in keys},
        "pointers": list(pointers),
        "records": [list(record) for record in records],
        "provenance": provenance,
    }


def schema_document() -> dict[str, Any]:
    """The schema's $defs as the page renders sections from them: each object's properties in
    the schema's order with their descriptions, and which definition a property refers to."""
    schema = json.loads(
        resources.files("usis").joinpath("schema", "usis-api-schema.json").read_text("utf-8")
    )
    definitions: dict[str, Any] = {}
    for name, definition in schema["$defs"].items():
        properties = {}
        for prop, spec in definition.get("properties", {}).items():
            properties[prop] = {"desc": spec.get("description", ""), "ref": reference_of(spec)}
        definitions[name] = {"desc": definition.get("description", ""), "props": properties}
    return definitions


def reference_of(spec: Mapping[str, Any]) -> str | None:
    """The $defs name a property refers to: its own $ref, its items', or one anyOf branch's."""
    for candidate in (spec, spec.get("items", {}), *spec.get("anyOf", [])):
        ref = candidate.get("$ref") or candidate.get("items", {}).get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            return ref.removeprefix("#/$defs/")
    return None


def diff_document(old: Mapping[str, Any], new: Mapping[str, Any], label: str) -> dict[str, Any]:
    """Entries added, removed and changed field by field between two corpora ({key: entry})."""
    changed: dict[str, list[list[Any]]] = {}
    for key in sorted(set(old) & set(new)):
        before, after = leaves(old[key]), leaves(new[key])
        fields = [
            [path, before.get(path, "(absent)"), after.get(path, "(absent)")]
            for path in sorted(set(before) | set(after))
            if path not in before
            or path not in after
            or before[path] != after[path]
            or type(before[path]) is not type(after[path])
        ]
        if fields:
            changed[key] = fields
    return {
        "against": label,
        "added": sorted(set(new) - set(old)),
        "removed": sorted(set(old) - set(new)),
        "changed": changed,
    }


def entries_of_documents(documents: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    entries: dict[str, Any] = {}
    for document in documents:
        entries.update(document["entries"])
    return entries


def old_corpus(source: str, repository: Path | None = None) -> tuple[dict[str, Any], str]:
    """The entries of an older corpus and its label: a directory of final-<model>-api.json files
    (a `usis build --out` or an unpacked release), or a git revision of this repository (a
    release tag such as v0.1.0, or any commit) whose shipped corpus is read with `git show`."""
    folder = Path(source)
    if folder.is_dir():
        files = sorted(folder.glob("final-*-api.json"))
        if not files:
            raise SiteError(f"--diff {source}: the directory holds no final-<model>-api.json file")
        try:
            documents = [json.loads(path.read_text(encoding="utf-8")) for path in files]
        except json.JSONDecodeError as error:
            raise SiteError(f"--diff {source}: not JSON ({error})") from None
        return entries_of_documents(documents), str(folder)
    if source.startswith("-"):
        raise SiteError(f"--diff {source}: a revision does not start with '-'")
    root = repository or Path(__file__).resolve().parents[3]
    documents = []
    for model in MODELS:
        try:
            shown = subprocess.run(
                ["git", "-C", str(root), "show", f"{source}:src/usis/corpus/final-{model}-api.json"],
                capture_output=True, text=True, check=False,
            )  # fmt: skip
        except OSError as error:
            raise SiteError(
                f"--diff {source}: not a directory, and git cannot run ({error})"
            ) from None
        if shown.returncode == 0:
            documents.append(json.loads(shown.stdout))
    if not documents:
        raise SiteError(
            f"--diff {source}: neither a directory of corpus files nor a git revision of "
            f"{root} with a shipped corpus (src/usis/corpus/final-<model>-api.json)"
        )
    return entries_of_documents(documents), f"revision {source}"


def templates() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("usis", "site/templates"),
        undefined=jinja2.StrictUndefined,
        autoescape=True,
        keep_trailing_newline=True,
    )


def write_site(
    out_dir: Path, corpus: Corpus | None = None, diff: tuple[dict[str, Any], str] | None = None
) -> SiteSummary:
    """Write the explorer of `corpus` (default: every shipped model) to `out_dir`; with `diff`
    (the entries of an older corpus and its label) the diff view too."""
    corpus = corpus if corpus is not None else load()
    out_dir.mkdir(parents=True, exist_ok=True)
    data = out_dir / "data"
    if data.exists():
        shutil.rmtree(data)
    data.mkdir()
    chunks = chunked(corpus)
    index = script("index", index_document(corpus, chunks))
    (data / "index.js").write_text(index, encoding="utf-8")
    (data / "schema.js").write_text(script("schema", schema_document()), encoding="utf-8")
    for position, (name, keys) in enumerate(chunks):
        (data / f"{name}.js").write_text(
            script("chunk", position, chunk_document(corpus, keys)), encoding="utf-8"
        )
    if diff is not None:
        document = diff_document(diff[0], corpus.entries, diff[1])
        (data / "diff.js").write_text(script("diff", document), encoding="utf-8")
    static = resources.files("usis").joinpath("site", "templates")
    for name in STATIC_FILES:
        (out_dir / name).write_text(static.joinpath(name).read_text("utf-8"), encoding="utf-8")
    page = (
        templates()
        .get_template("index.html.j2")
        .render(entries=len(corpus), models=corpus.models, has_diff=diff is not None)
    )
    (out_dir / "index.html").write_text(page, encoding="utf-8")
    size = sum(path.stat().st_size for path in out_dir.rglob("*") if path.is_file())
    return SiteSummary(len(corpus), len(chunks), size, len(index.encode()))


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        return


def serve(directory: Path, port: int) -> None:
    """Serve a written site on 127.0.0.1:`port` until interrupted."""
    handler = functools.partial(QuietHandler, directory=str(directory))
    with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as server:
        print(f"usis serve: http://127.0.0.1:{server.server_address[1]}/index.html", flush=True)
        server.serve_forever()
