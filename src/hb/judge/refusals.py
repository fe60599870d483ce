"""The judge's refusals before any build, as one ordered list (REFUSALS): each check named and
run in the spec's order, at the graded sizes, by every route that grades or checks a request
(/requests/check, /score, /submit, hb submit, hb scale); the first that refuses is the answer."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hb import abi, languages, sparse
from hb.config import Config
from hb.distributed.grade import distributed_refusal, lower_plan
from hb.execution import sandbox
from hb.kernels import Manifest
from hb.precision import C_NAMES, precision_of
from hb.requests_api import (
    RequestAllowances,
    RequestError,
    Requests,
    RequestsCheck,
    cast_refusal,
)
from relayout.distribution import Distribution

# Where a shuffle's bijection is checked besides the graded sizes (the smallest preset).
SHUFFLE_PRESET = "S"


@dataclass(frozen=True)
class Call:
    """What the checks read of one call: the request as submitted and as granted (a task grid
    added), the kernel, the language, the setup, the problem's precision and the graded sizes
    (`label` names them: "preset M", "the given sizes")."""

    submitted: Requests
    granted: Requests
    manifest: Manifest
    language: str
    allowances: RequestAllowances
    config: Config
    precision: str
    sizes: dict[str, int]
    label: str
    # What checking lowered, kept for the grade that follows (relayout's answers, the plan).
    _lowered: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def distributed(self) -> bool:
        """Graded on MPI ranks: the request has a grid, or the setup grades every call so."""
        return bool(self.granted.startup.grid) or self.config.mpi.grade_distributed

    def relayout_answer(self, at_sizes: bool = False) -> RequestsCheck:
        """relayout's answer for the granted request over the kernel's arrays, symbolic or at the
        graded sizes; lowered once per call (RequestError where relayout raises one)."""
        key = ("relayout", at_sizes)
        if key not in self._lowered:
            sizes = self.sizes if at_sizes else None
            self._lowered[key] = relayout_check(self.granted, self.manifest, self.precision, sizes)
        answer: RequestsCheck = self._lowered[key]
        return answer

    def distribution(self) -> Distribution:
        """The granted request lowered over the grid at mpi.ranks and the graded sizes; lowered
        once per call (RequestError or ValueError naming the entry where it does not lower)."""
        if "distribution" not in self._lowered:
            self._lowered["distribution"] = lower_plan(
                self.granted, self.manifest, self.precision, self.config.mpi.ranks, self.sizes
            )
        distribution: Distribution = self._lowered["distribution"]
        return distribution


@dataclass(frozen=True)
class Refusal:
    """One check of the list: its name, which calls it applies to, and the check itself."""

    name: str
    applies: Callable[[Call], bool]
    check: Callable[[Call], str | None]


def _always(_: Call) -> bool:
    return True


def _single_node(call: Call) -> bool:
    return not call.distributed


def _language(call: Call) -> str | None:
    unbuilt = languages.refusal(call.language)
    return None if unbuilt is None else f"language: {unbuilt}"


def _allowances(call: Call) -> str | None:
    # Judged on the request as submitted: a grid the judge injected under requests.grid: task is
    # no fault of the submitter.
    return call.allowances.refusal(call.submitted, distributed=bool(call.granted.startup.grid))


def _cast(call: Call) -> str | None:
    return cast_refusal(
        call.granted,
        call.manifest.name,
        call.manifest.fp64_only,
        call.config.grading.precision_override_kernels,
        # The override is written for the precision, however the datatype is spelled (float32
        # and fp32 alike).
        precision_of(call.config.grading.datatype),
        track=call.manifest.track,
        distributed=call.distributed,
    )


def _load(call: Call) -> str | None:
    return sandbox.catalog_refusal(call.language, list(call.granted.startup.load))


def _distributed(call: Call) -> str | None:
    # The grid's checks replace the single-node ones: relayout lowers the request at mpi.ranks
    # and the graded sizes.
    return distributed_request_refusal(call)


def _sparse(call: Call) -> str | None:
    if not sparse.has_sparse(call.manifest):
        return None
    return sparse.sparse_refusal(call.granted, call.manifest)


def _relayout(call: Call) -> str | None:
    """relayout's refusal of the request: the names it gives (never a kernel's scalar, size
    symbol or pointer), symbolically, then at the graded sizes, and the buffers it makes there
    (together no larger than the box's memory)."""
    if not call.granted.operations:
        return None
    refusal = name_refusal(call.granted, call.manifest)
    if refusal is not None:
        return refusal
    try:
        answer = call.relayout_answer()
        if answer.accepted and not sparse.has_sparse(call.manifest):
            at_sizes = call.relayout_answer(at_sizes=True)
            if not at_sizes.accepted:
                return f"{at_sizes.refusal} (at {call.label}: {call.sizes})"
            memory = call.config.sandbox.memory_mb << 20
            return buffer_refusal(
                call.granted, call.manifest, at_sizes, call.sizes, call.label, memory
            )
    except RequestError as error:
        return str(error)
    return None if answer.accepted else str(answer.refusal)


def _shuffle(call: Call) -> str | None:
    """A shuffle whose f and f_inv are not inverse bijections at the graded sizes (relayout checks
    them exhaustively once every extent is a constant, up to BIJECTION_CHECK_LIMIT cells); where
    the graded box is past that limit, at preset S's sizes too, so the pair is always checked
    somewhere before the build."""
    if not any(op.action == "shuffle" for op in call.granted.operations):
        return None
    smallest = call.manifest.preset_sizes(SHUFFLE_PRESET)
    checks: list[tuple[str, dict[str, int] | None]] = [(call.label, None)]
    if smallest != call.sizes:
        checks.append((f"preset {SHUFFLE_PRESET}", smallest))
    for where, at in checks:
        try:
            answer = (
                call.relayout_answer(at_sizes=True)
                if at is None
                else relayout_check(call.granted, call.manifest, call.precision, at)
            )
        except RequestError as error:
            return str(error)
        if not answer.accepted:
            return f"{answer.refusal} (checked at {where}: {at or call.sizes})"
    return None


# The spec's order: what the setup offers, the fp64-only cast, the startup.load catalog, then
# either the distributed checks or the kernel's own (sparse, relayout's, the shuffle's bijection).
REFUSALS: tuple[Refusal, ...] = (
    Refusal("language", _always, _language),
    Refusal("allowances", _always, _allowances),
    Refusal("cast", _always, _cast),
    Refusal("startup.load", _always, _load),
    Refusal("distributed", lambda call: call.distributed, _distributed),
    Refusal("sparse", _single_node, _sparse),
    Refusal("relayout", _single_node, _relayout),
    Refusal("shuffle", _single_node, _shuffle),
)


def first_refusal(call: Call, refusals: tuple[Refusal, ...] | None = None) -> str | None:
    """The first refusal of the list (default REFUSALS) that applies to `call` and refuses it,
    or None."""
    for refusal in REFUSALS if refusals is None else refusals:
        if refusal.applies(call):
            found = refusal.check(call)
            if found is not None:
                return found
    return None


def distributed_request_refusal(call: Call) -> str | None:
    """Why a distributed grade (startup.grid, or any request under mpi.grade_distributed) cannot
    go ahead: a C delivery, a grid, then distributed_refusal (the kernel's arrays, the
    grid spanning mpi.ranks, the lowering, the plan's allowlists, place and residency (device
    tiles need a CUDA device) and the casts). A kernel with a sparse array is refused first, with the grid or without it:
    distributing a sparse format is not implemented yet (spec §3.2)."""
    requests, manifest, language, mpi = call.granted, call.manifest, call.language, call.config.mpi
    if sparse.has_sparse(manifest):
        refusal = None if mpi.grade_distributed else sparse.sparse_refusal(requests, manifest)
        if refusal is None:
            # Under mpi.grade_distributed every grade is distributed (a grid the judge injected
            # is no fault of the submitter), so no request of this kernel can be graded.
            names = ", ".join(sparse.sparse_arrays(manifest))
            refusal = (
                f"startup.grid: this setup grades distributed (mpi.grade_distributed), and "
                f"{manifest.name} has the sparse array(s) {names}: distributing a sparse format "
                "is not implemented yet, so this setup cannot grade it"
            )
        return refusal
    if not requests.startup.grid:
        return (
            "startup.grid: this setup grades distributed (mpi.grade_distributed), so the request "
            "needs startup.grid and a distribute or replicate operation for every array"
        )
    if not languages.language(language).mpi:
        built = sorted(name for name, lang in languages.LANGUAGES.items() if lang.mpi)
        return (
            f"language: a distributed grade links the submission with the generated MPI driver, "
            f"which builds {', '.join(built)} (got {language!r})"
        )
    return distributed_refusal(
        requests,
        manifest,
        call.precision,
        ranks=mpi.ranks,
        replicatable_allowlist=mpi.replicatable_allowlist,
        layout_flexible_allowlist=mpi.layout_flexible_allowlist,
        residency=mpi.residency,
        lowered=call.distribution,
        label=call.label,
    )


def name_refusal(requests: Requests, manifest: Manifest) -> str | None:
    """A name the request gives (a zip's `into`, an unzip's parts, a split's or block's digits)
    that is already a scalar, a size symbol or another array of the kernel: the C signature
    would have two parameters of one name, or an expression would read the wrong symbol."""
    taken = {
        **{name: "a size symbol" for name in manifest.sizes},
        **{scalar.name: "a scalar" for scalar in manifest.scalars},
    }
    arrays = {array.name for array in manifest.arrays}
    for index, operation in enumerate(requests.operations):
        given = getattr(operation, "into", None)
        names = [given] if isinstance(given, str) else list(given or [])
        for name in names:
            what = taken.get(name)
            if what is None and operation.action in ("zip", "unzip") and name in arrays:
                consumed = set(
                    getattr(operation, "arrays", None) or [getattr(operation, "array", "")]
                )
                what = None if name in consumed else "an array"
            if what is not None:
                return (
                    f"operations[{index}] ({operation.action}): into {name!r} is {what} of "
                    f"{manifest.name}; choose a name the kernel does not use"
                )
    return None


def buffer_refusal(
    requests: Requests, manifest: Manifest, answer: RequestsCheck, sizes: dict[str, int],
    label: str, memory_bytes: int,
) -> str | None:  # fmt: skip
    """The pointers the request makes, at the graded sizes, together larger than the box's
    memory: refused before anything is allocated, naming the pointer and its last operation."""
    from relayout import expr as E

    total = 0
    shapes = {array.name: manifest.shape_of(array, sizes) for array in manifest.arrays}
    for name, spec in (answer.arrays or {}).items():
        source = (spec.zips or [name])[0] if getattr(spec, "zips", None) else name
        dims = shapes.get(source, ())
        env = {f"d{i}": int(extent) for i, extent in enumerate(dims)} | dict(sizes)
        count = 1
        try:
            for extent in spec.extents:
                count *= max(int(E.parse(str(extent)).evaluate(env)), 0)
                if count > 2**62:
                    break
        except (E.ExprError, ValueError, TypeError):
            continue  # an extent the judge cannot evaluate here is relayout's to refuse
        itemsize = _itemsize(spec)
        total += count * itemsize
        if total > memory_bytes:
            last = max(
                (i for i, op in enumerate(requests.operations)
                 if name in {getattr(op, "array", None), getattr(op, "into", None)}),
                default=None,
            )  # fmt: skip
            where = (
                f"operations[{last}] ({requests.operations[last].action})"
                if last is not None
                else name
            )
            return (
                f"{where}: at {label} ({sizes}) the buffers reach {total} bytes at {name}, more "
                f"than the box's memory ({memory_bytes} bytes)"
            )
    return None


def _itemsize(spec: Any) -> int:
    """The bytes of one element of a checked pointer: a struct's, or its element type's."""
    from relayout.algebra.state import StructType
    from relayout.types import element_type

    if getattr(spec, "struct", None):
        return int(StructType(tuple(spec.struct.items())).itemsize)
    try:
        return int(element_type(str(spec.dtype)).size)
    except (KeyError, ValueError):
        return 8


def relayout_check(
    requests: Requests, manifest: Manifest, precision: str, sizes: dict[str, int] | None = None
) -> RequestsCheck:
    """relayout's answer for the request over the kernel's arrays, with the kernel's C signature
    (none for a kernel with a sparse array: relayout writes no sparse pointers, hb.sparse does)."""
    from relayout.check import check_requests

    answer: RequestsCheck = check_requests(
        requests,
        abi.relayout_arrays(manifest, precision),
        sizes,
        kernel=None if sparse.has_sparse(manifest) else abi.symbol(manifest, precision),
        scalars=abi.abi_scalars(manifest, precision),
        c_names=C_NAMES,
    )
    return answer
