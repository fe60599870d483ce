"""The build: extract -> classify -> assign -> assemble -> validate -> provenance -> split, per model.

Each stage is a pure function from one JSON checkpoint to the next; `run_model` runs them in order,
can stop after any stage and write every checkpoint on the way, and reports progress on stderr.
A model whose extract or classify module does not exist yet is skipped with a note.
"""

from __future__ import annotations

import importlib
import json
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from usis.assemble import assemble
from usis.formal.assign import assign
from usis.provenance import provenance_stage
from usis.sources.fetch import available_path
from usis.sources.manifest import Source, load_manifest
from usis.split import dump_json, split, write_files
from usis.validate import ValidationFailed, validate_entries

MODELS: tuple[str, ...] = ("mpi", "openmp", "shmem", "nccl", "nvshmem", "cuda")
STAGES: tuple[str, ...] = (
    "extract",
    "classify",
    "assign",
    "assemble",
    "validate",
    "provenance",
    "split",
)
PACKAGE_CORPUS_DIR = Path(__file__).resolve().parent / "corpus"

Progress = Callable[[str], None]


class BuildError(RuntimeError):
    """A model that cannot be built; the message says which model, which stage and why."""


def stderr_progress(line: str) -> None:
    print(f"usis build: {line}", file=sys.stderr, flush=True)


def quiet(line: str) -> None:
    del line


@dataclass(frozen=True)
class ModelPipeline:
    """A model's extract and classify modules (`usis.extract.<model>`, `usis.classify.<model>`)."""

    model: str
    extract: ModuleType
    classify: ModuleType


def find_pipeline(model: str) -> ModelPipeline | str:
    """The model's modules, or a note saying why the model is skipped."""
    modules = {}
    for stage in ("extract", "classify"):
        name = f"usis.{stage}.{model}"
        try:
            modules[stage] = importlib.import_module(name)
        except ModuleNotFoundError as error:
            if error.name != name:
                raise
            return f"{model}: skipped, {name} does not exist yet"
    return ModelPipeline(model, modules["extract"], modules["classify"])


def json_roundtrip(value: Any) -> Any:
    """A deep copy through JSON, so that every stage sees exactly what a checkpoint file holds.

    Compact on purpose: with an indent, the json module falls back to its pure-Python encoder,
    which costs seconds per stage on the larger corpora; key order does not matter here because
    every file is written with sorted keys."""
    return json.loads(json.dumps(value, ensure_ascii=False, allow_nan=False))


def validate_stage(assembled: dict[str, Any], known_keys: Iterable[str] = ()) -> dict[str, Any]:
    """The checkpoint unchanged when it has no findings; raises ValidationFailed otherwise."""
    findings = validate_entries(assembled["entries"], known_keys)
    if findings:
        raise ValidationFailed(findings)
    return assembled


def source_paths(pipeline: ModelPipeline, manifest: Mapping[str, Source]) -> dict[str, Path]:
    """Where each source the extract reads is available (fetched cache or pinned installed copy)."""
    paths = {}
    for name in getattr(pipeline.extract, "SOURCES", ()):
        source = manifest.get(name)
        if source is None:
            continue
        path = available_path(source)
        if path is not None:
            paths[name] = path
    return paths


@dataclass
class ModelBuild:
    """What building one model produced: the last checkpoint and, after split, the files."""

    model: str
    checkpoints: dict[str, Any] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)


def run_model(
    pipeline: ModelPipeline,
    paths: Mapping[str, Path],
    until: str = "split",
    checkpoint_dir: Path | None = None,
    known_keys: Iterable[str] = (),
    progress: Progress = stderr_progress,
) -> ModelBuild:
    """Run the stages up to and including `until`; write each checkpoint under checkpoint_dir."""
    if until not in STAGES:
        raise BuildError(f"unknown stage {until!r}; stages: {', '.join(STAGES)}")
    model = pipeline.model
    build = ModelBuild(model)
    known = list(known_keys)
    stage_functions: dict[str, Callable[[Any], Any]] = {
        "extract": lambda _: pipeline.extract.extract(paths),
        "classify": pipeline.classify.classify,
        "assign": assign,
        "assemble": assemble,
        "validate": lambda checkpoint: validate_stage(checkpoint, known),
        "provenance": provenance_stage,
        "split": split,
    }
    checkpoint: Any = None
    for number, stage in enumerate(STAGES, start=1):
        started = time.perf_counter()
        progress(f"{model}: {stage} ...")
        try:
            checkpoint = json_roundtrip(stage_functions[stage](checkpoint))
        except ValidationFailed:
            progress(f"{model}: {stage} failed")
            raise
        except (KeyError, ValueError, OSError) as error:
            raise BuildError(f"{model}: {stage}: {type(error).__name__}: {error}") from error
        build.checkpoints[stage] = checkpoint
        if checkpoint_dir is not None:
            target = checkpoint_dir / model
            target.mkdir(parents=True, exist_ok=True)
            (target / f"{number}-{stage}.json").write_text(dump_json(checkpoint), encoding="utf-8")
        progress(
            f"{model}: {stage} done, {summary(stage, checkpoint)} ({time.perf_counter() - started:.1f} s)"
        )
        if stage == until:
            break
    if until == "split":
        build.files = checkpoint
    return build


def summary(stage: str, checkpoint: Any) -> str:
    if stage == "extract":
        return f"{len(checkpoint.get('records', []))} records"
    if stage == "split":
        return ", ".join(f"{name} ({len(text)} bytes)" for name, text in sorted(checkpoint.items()))
    entries = checkpoint.get("entries", {})
    with_formal = sum(1 for entry in entries.values() if entry["semantics"]["formal"] is not None)
    return f"{len(entries)} entries, {with_formal} with a formal block"


def shipped_keys(corpus_dir: Path, exclude: str) -> set[str]:
    """Keys of the other models' shipped corpora, which cross-references may name."""
    keys: set[str] = set()
    for path in sorted(corpus_dir.glob("final-*-api.json")):
        if path.name != f"final-{exclude}-api.json":
            keys.update(json.loads(path.read_text(encoding="utf-8")).get("entries", {}))
    return keys


def build(
    models: Iterable[str] | None = None,
    until: str = "split",
    out_dir: Path | None = None,
    checkpoint_dir: Path | None = None,
    progress: Progress = stderr_progress,
) -> dict[str, ModelBuild]:
    """Build the named models (all known ones by default) and, after split, write their files into
    out_dir (default: the package's corpus folder). A model asked for by name that cannot be built
    is an error; when building every model, one without modules or sources is skipped with a note."""
    explicit = models is not None
    chosen = list(models) if models is not None else list(MODELS)
    unknown = sorted(set(chosen) - set(MODELS))
    if unknown:
        raise BuildError(f"unknown models {unknown}; known: {', '.join(MODELS)}")
    manifest = load_manifest()
    corpus_dir = out_dir or PACKAGE_CORPUS_DIR
    results = {}
    for model in chosen:
        pipeline = find_pipeline(model)
        if isinstance(pipeline, str):
            if explicit:
                raise BuildError(pipeline)
            progress(pipeline)
            continue
        paths = source_paths(pipeline, manifest)
        missing = [name for name in getattr(pipeline.extract, "SOURCES", ()) if name not in paths]
        if missing:
            note = f"sources {missing} not fetched (run `usis fetch --model {model}`)"
            if explicit:
                raise BuildError(f"{model}: {note}")
            progress(f"{model}: skipped, {note}")
            continue
        result = run_model(
            pipeline,
            paths,
            until=until,
            checkpoint_dir=checkpoint_dir,
            known_keys=shipped_keys(corpus_dir, model),
            progress=progress,
        )
        if until == "split":
            for path in write_files(result.files, corpus_dir):
                progress(f"{model}: wrote {path}")
        results[model] = result
    return results
