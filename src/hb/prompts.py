"""The requests section of a task prompt (build_context): what the setup allows, narrowed to what
this task offers (RequestActions), the cast precisions with their C types, the libraries, the
C signature of the default request and, where format is offered, the sparse formats' C ABI."""

from __future__ import annotations

import json
from dataclasses import dataclass

from hb import abi, languages, sparse
from hb.kernels import Manifest
from hb.precision import C_TYPES
from hb.requests_api import GRID_ACTIONS, RequestActions, RequestAllowances


@dataclass(frozen=True)
class TaskContext:
    """What a task's prompt and tools are built from."""

    request_actions: RequestActions
    requests_section: str


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
    from hb import mpi_driver

    has_sparse = any(a.is_sparse for a in manifest.arrays)
    distributable = (
        bool(manifest.distribution)
        and not has_sparse
        and language == "c"
        and mpi_driver.DistributedKernel.from_manifest(manifest).refusal() is None
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
    )


def _mpi_lines(manifest: Manifest, precision: str, offer: RequestActions) -> list[str]:
    """The distributed task's entry point and default distribution (short-form operations)."""
    from hb import mpi_descriptor, mpi_driver

    kernel = mpi_driver.DistributedKernel.from_manifest(manifest)
    if kernel.refusal() is not None or not manifest.distribution:
        return []
    default = mpi_descriptor.json_of(mpi_descriptor.default_requests(manifest))
    grid = mpi_descriptor.default_grid(manifest)
    who = (
        "you set startup.grid (extents over the rank count P)"
        if offer.grid
        else f"the judge sets the grid {json.dumps(grid)}; leave startup.grid out"
    )
    return [
        f"- the kernel runs on MPI ranks; {who}. Each rank calls\n\n"
        f"    {kernel.c_prototype(precision)};\n\n"
        "  on its own tiles. A size symbol arrives local (the rank's own extent) when every axis "
        "it sizes is split the same way, global otherwise; POST /requests/check says which.",
        f"- the default distribution: {json.dumps(default, sort_keys=True)}",
    ]


def build_context(
    manifest: Manifest,
    allowances: RequestAllowances,
    precision: str = "fp64",
    distributed: bool = False,
    language: str = "c",
    precision_override: str | None = None,
) -> TaskContext:
    """The task's offer and the prompt's requests section (empty when nothing is offered);
    `precision_override` is the band a grading.precision_override_kernels entry grades in."""
    offer = task_actions(manifest, allowances, distributed, language, precision_override, precision)
    if offer.empty:
        return TaskContext(offer, "")
    lines = [
        "## Requests",
        "",
        "Your submission may carry a `requests` object that changes how the data reaches your kernel.",
    ]
    if distributed:
        from hb import mpi_driver

        kernel = mpi_driver.DistributedKernel.from_manifest(manifest)
        lines.append(
            "Every grade runs on MPI ranks; without a request (the task's default distribution) "
            f"each rank calls:\n\n    {kernel.c_prototype(precision)};"
        )
    else:
        lines.append(
            f"Without one, the kernel is called as:\n\n    {abi.default_signature(manifest, precision)}"
        )
    lines.append("")
    if offer.load:
        offered = languages.offered_libraries(language)
        lines.append(
            f"- startup.load: libraries the judge links for you: {', '.join(offered) or 'none'}."
        )
    if "cast" in offer.actions:
        types = ", ".join(f"{p} → `{C_TYPES[p]} *`" for p in offer.precisions)
        lines.append(
            "- cast: an array's element type. Conversions are timed apart and not scored, but the "
            f"outputs are graded in {precision_override or precision}'s tolerance band. Allowed: {types}."
        )
    layouts = [a for a in offer.actions if a not in ("cast", "format", *GRID_ACTIONS)]
    if layouts:
        where = (
            "over the processor grid (each must feed a distribute)"
            if distributed
            else "on one node"
        )
        lines.append(f"- layout operations {where}: {', '.join(layouts)}.")
    if "format" in offer.actions:
        lines.append("- format: a sparse array's storage format (Sparse formats, below).")
    if any(a in offer.actions for a in GRID_ACTIONS):
        offered = [a for a in GRID_ACTIONS if a in offer.actions]
        graded = "" if distributed else " (a request with startup.grid is graded on MPI ranks)"
        lines.append(f"- distribution over the processor grid{graded}: {', '.join(offered)}.")
        lines += _mpi_lines(manifest, precision, offer)
    lines.append("")
    lines.append("POST /requests/check shows the pointers and the C signature a request gives.")
    section = "\n".join(lines) + "\n"
    if "format" in offer.actions:
        section += "\n" + sparse.sparse_prompt_section(manifest, precision)
    return TaskContext(offer, section)
