"""The task prompt: one Jinja2 template per section (src/hb/agent/templates), filled from the
kernel's manifest and reference, the judge's configuration and what the setup allows, narrowed to
what this task offers (RequestActions, build_context)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import jinja2

from hb import abi, calls, kernels, languages, sparse
from hb.config import Config
from hb.judge.grading import resolve_problem
from hb.kernels import Manifest
from hb.precision import C_TYPES, TOLERANCE_MATRIX, Tolerance, precision_of
from hb.requests_api import GRID_ACTIONS, RequestActions, RequestAllowances

# The sections of a task prompt, in order; requests, mpi and sparse appear only where they apply.
SECTIONS = (
    "intro", "semantics", "correctness", "timing", "delivery", "requests", "mpi", "sparse",
    "response",
)  # fmt: skip

# How the prompt writes each language's name (its fenced blocks take the judge's own name).
LANGUAGE_TITLES = {"c": "C", "cpp": "C++", "fortran": "Fortran", "python": "Python", "cuda": "CUDA"}

_TEMPLATES = jinja2.Environment(
    loader=jinja2.PackageLoader("hb", "agent/templates"),
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
    autoescape=False,
)


def render_section(name: str, **facts: Any) -> str:
    """One section's template filled with `facts` (a fact the template names and `facts` lacks
    is an error, never an empty string)."""
    return _TEMPLATES.get_template(f"{name}.md.j2").render(**facts)


@dataclass(frozen=True)
class TaskContext:
    """What a task's prompt and tools are built from: the offer, and the requests, mpi and sparse
    sections (each empty where it does not apply)."""

    request_actions: RequestActions
    requests_text: str = ""
    mpi_text: str = ""
    sparse_text: str = ""

    @property
    def requests_section(self) -> str:
        """The requests section with the mpi and sparse sections after it, as GET /task shows
        them."""
        return "\n".join(t for t in (self.requests_text, self.mpi_text, self.sparse_text) if t)


def task_actions(
    manifest: Manifest,
    allowances: RequestAllowances,
    distributed: bool = False,
    language: str = "c",
    precision_override: str | None = None,
    precision: str | None = None,
) -> RequestActions:
    """The offer of this task: cast on floating dense arrays of a kernel that takes casts (an
    fp64-only kernel under a grading.precision_override_kernels entry takes them, as the judge
    lets them stand), single-node layouts on dense arrays when not distributed, format on sparse
    arrays."""
    from hb.distributed.signature import mpi_refusal

    has_sparse = any(a.is_sparse for a in manifest.arrays)
    distributable = (
        bool(manifest.distribution)
        and not has_sparse
        and language in languages.LANGUAGES
        and languages.LANGUAGES[language].mpi
        and mpi_refusal(manifest) is None
    )
    return allowances.actions(
        has_floating_dense=any(a.is_floating and not a.is_sparse for a in manifest.arrays),
        has_dense=any(not a.is_sparse for a in manifest.arrays),
        has_sparse=has_sparse,
        distributed=distributed,
        c_abi=language in languages.LANGUAGES,
        fp64_only=manifest.fp64_only and precision_override is None,
        problem_precision=precision,
        distributable=distributable,
        ml_track=manifest.track == "machine_learning",
    )


def task_precision(manifest: Manifest, config: Config) -> tuple[str, str | None]:
    """The precision a task is stated at (grading.datatype where the kernel has it, else its
    first), and the band a grading.precision_override_kernels entry grades it in, or None."""
    datatype = precision_of(config.grading.datatype)
    precision = datatype if datatype in manifest.precisions else manifest.precisions[0]
    resolved = resolve_problem(
        manifest.name, manifest.precisions, datatype, config.grading.precision_override_kernels
    )
    return precision, None if isinstance(resolved, str) else resolved.precision_override


def _mpi_facts(manifest: Manifest, precision: str, offer: RequestActions) -> dict[str, Any] | None:
    """The distributed task's entry point and default distribution (short-form operations)."""
    from hb.distributed.policy import default_grid, default_requests
    from hb.distributed.signature import mpi_prototype, mpi_refusal

    if mpi_refusal(manifest) is not None or not manifest.distribution:
        return None
    default = default_requests(manifest).to_dict()
    return {
        "agent_grid": offer.grid,
        "grid": json.dumps(default_grid(manifest)),
        "prototype": mpi_prototype(manifest, precision),
        "default": json.dumps(default, sort_keys=True),
        "calls": calls.reference_mpi_calls(manifest.name),
    }


def build_context(
    manifest: Manifest,
    allowances: RequestAllowances,
    precision: str = "fp64",
    distributed: bool = False,
    language: str = "c",
    precision_override: str | None = None,
) -> TaskContext:
    """The task's offer and the prompt's requests section, with the mpi section where the
    distribution is offered and the sparse section where format is (all empty when nothing is
    offered); `precision_override` is the band a grading.precision_override_kernels entry grades
    in."""
    offer = task_actions(manifest, allowances, distributed, language, precision_override, precision)
    if offer.empty:
        return TaskContext(offer, "")
    grid_actions = [a for a in GRID_ACTIONS if a in offer.actions]
    facts: dict[str, Any] = {
        "distributed": distributed,
        "signature": abi.default_signature(manifest, precision),
        "mpi_prototype": "",
        "load": offer.load,
        "libraries": languages.offered_libraries(language),
        "casts": ", ".join(f"{p} → `{C_TYPES[p]} *`" for p in offer.precisions)
        if "cast" in offer.actions
        else "",
        "band_precision": precision_override or precision,
        "layouts": [a for a in offer.actions if a not in ("cast", "format", *GRID_ACTIONS)],
        "format": "format" in offer.actions,
        "grid_actions": grid_actions,
        "mpi": _mpi_facts(manifest, precision, offer) if grid_actions else None,
    }
    if distributed:
        from hb.distributed.signature import mpi_prototype

        facts["mpi_prototype"] = mpi_prototype(manifest, precision)
    sparse_text = (
        sparse.sparse_prompt_section(manifest, precision) if "format" in offer.actions else ""
    )
    mpi_text = render_section("mpi", mpi=facts["mpi"]) if facts["mpi"] else ""
    return TaskContext(offer, render_section("requests", **facts), mpi_text, sparse_text)


@dataclass(frozen=True)
class TaskPrompt:
    """A task's whole prompt: its sections in SECTIONS' order (only those that apply)."""

    sections: dict[str, str]

    @property
    def text(self) -> str:
        return "\n".join(self.sections.values())


def _graded_band(
    manifest: Manifest, config: Config, precision: str, band_precision: str
) -> tuple[Tolerance, str | None]:
    """The band the judge grades this task in (grading.resolve_problem, the manifest's own bands
    included), and the manifest's reason where its band widens TOLERANCE_MATRIX's."""
    resolved = resolve_problem(
        manifest.name,
        manifest.precisions,
        precision_of(config.grading.datatype),
        config.grading.precision_override_kernels,
        manifest.tolerance_bands(),
    )
    if isinstance(resolved, str):
        band = manifest.tolerance_bands().get(band_precision, TOLERANCE_MATRIX[band_precision])
    else:
        band = resolved.band
    widened = manifest.tolerance is not None and band != TOLERANCE_MATRIX[band_precision]
    return band, manifest.tolerance.reason if widened and manifest.tolerance else None


def _number(value: float) -> str:
    return str(value) if isinstance(value, int) else f"{value:g}"


def _array_rows(manifest: Manifest, precision: str) -> list[dict[str, str]]:
    rows = []
    for array in manifest.arrays:
        element = C_TYPES[precision] if array.is_floating else f"{array.dtype}_t"
        rows.append({
            "name": array.name,
            "kind": f"sparse ({array.format}: `{array.name}_data`, `_indices`, `_indptr`)"
            if array.is_sparse
            else "array",
            "shape": "[" + "][".join(str(e) for e in array.shape) + "]",
            "element": element,
            "intent": array.intent,
        })  # fmt: skip
    return rows


def task_prompt(
    manifest: Manifest,
    config: Config,
    allowances: RequestAllowances,
    precision: str,
    signature: str,
    precision_override: str | None = None,
    language: str = "c",
    on_ranks: bool = False,
) -> TaskPrompt:
    """The prompt of `manifest` under `config` at the problem `precision`; `signature` is the
    entry point the judge calls (`on_ranks`: the MPI one, every grade on ranks)."""
    distributed = config.mpi.grade_distributed
    context = build_context(
        manifest, allowances, precision, distributed, language, precision_override
    )
    lang = languages.language(language)
    band_precision = precision_override or precision
    band, band_reason = _graded_band(manifest, config, precision, band_precision)
    grading = config.grading
    scalar_names = [
        s.name for s in manifest.scalars if any(s.name in v for v in manifest.presets.values())
    ]
    columns = [*manifest.sizes, *scalar_names]
    common = {"kernel": manifest.name, "symbol": abi.symbol(manifest, precision),
              "language_name": language, "language_title": LANGUAGE_TITLES.get(language, language),
              "precision": precision}  # fmt: skip
    sections = {
        "intro": render_section(
            "intro",
            **common,
            python_delivery=lang.delivery == "python",
            summary=manifest.summary,
            track=manifest.track,
            dwarf=manifest.dwarf,
            tags=manifest.tags,
            source=manifest.source,
            transformation=manifest.transformation,
            precisions=manifest.precisions,
        ),
        "semantics": render_section(
            "semantics",
            reference_source=(kernels.CATALOG_DIR / manifest.name / "reference.py").read_text(),
            arrays=_array_rows(manifest, precision),
            sizes=manifest.sizes,
            scalars=[
                {
                    "name": s.name,
                    "value": _number(s.value),
                    "element": C_TYPES[precision] if s.type == "float" else "int64_t",
                }
                for s in manifest.scalars
            ],
            graded_preset=grading.preset,
            preset_columns=columns,
            presets=[
                {
                    "name": name,
                    "cells": [_number(values[c]) if c in values else "-" for c in columns],
                }
                for name, values in manifest.presets.items()
            ],
            workspace_bytes=manifest.workspace_bytes,
        ),
        "correctness": render_section(
            "correctness",
            precision=precision,
            band_precision=band_precision,
            rtol=f"{band.rtol:g}",
            atol=f"{band.atol:g}",
            band_reason=band_reason,
        ),
        "timing": render_section(
            "timing",
            warmup=grading.warmup,
            reps=grading.reps,
            timing_mode=grading.timing,
            mannwhitney_p=grading.mannwhitney_p,
            baseline_flags=" ".join(languages.compile_flags(languages.language("c"))),
            max_relative_ci=f"{grading.max_relative_ci:g}",
            max_pairs=grading.max_pairs,
            box_pairs=grading.box_pairs,
            suspect_above=f"{grading.speedup_suspect_above:g}",
        ),
        "delivery": render_section(
            "delivery",
            language_name=language,
            compiler=lang.compiler,
            flags=" ".join(lang.flags),
            python_delivery=lang.delivery == "python",
            prelude=lang.prelude,
            signature=signature,
            signature_note="on every MPI rank, on its own tiles" if on_ranks else "",
            libraries=languages.offered_libraries(language),
            memory_mb=config.sandbox.memory_mb,
            timeout_s=f"{config.sandbox.timeout_s:g}",
            threads=config.sandbox.threads,
        ),
    }
    if context.requests_text:
        sections["requests"] = context.requests_text
    if context.mpi_text:
        sections["mpi"] = context.mpi_text
    if context.sparse_text:
        sections["sparse"] = context.sparse_text
    sections["response"] = render_section(
        "response", **common, offered=not context.request_actions.empty
    )
    return TaskPrompt(sections)
