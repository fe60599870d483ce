"""The parallel-programming calls a built submission makes: the undefined symbols of its object
(read with the toolchain's `nm`, in a box), each mapped to its usis entry, and the findings usis
supports about them (a deprecated call, a model the grade does not offer, a blocking collective in
the timed region, a call that changes the judge's thread settings)."""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import re
import shutil
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from hb.execution.sandbox import Limits
    from usis.api import Corpus

FindingKind = Literal[
    "deprecated", "unknown", "model_not_offered", "blocking_collective_timed", "thread_settings"
]

# The prefix of a linked name and the usis model whose corpus names it; the profiling forms
# (PMPI_) name the same entries as the MPI_ ones. Longest prefixes first.
SYMBOL_MODELS: tuple[tuple[str, str], ...] = (
    ("PMPI_", "mpi"),
    ("MPI_", "mpi"),
    ("omp_", "openmp"),
    ("nvshmemx_", "nvshmem"),
    ("nvshmem_", "nvshmem"),
    ("shmemx_", "shmem"),
    ("shmem_", "shmem"),
    ("nccl", "nccl"),
    ("cuda", "cuda"),
)

# OpenMP calls that override, for the whole process, what the judge sets for a timed run
# (OMP_NUM_THREADS from sandbox.threads, and a fixed team size: OMP_DYNAMIC unset is false).
# OpenMP 5.2 §18.2 (thread team routines) defines each as changing the ICV named here.
THREAD_SETTING_CALLS: dict[str, str] = {
    "openmp:omp_set_num_threads": "nthreads-var, which OMP_NUM_THREADS sets",
    "openmp:omp_set_dynamic": "dyn-var, which OMP_DYNAMIC sets",
    "openmp:omp_set_max_active_levels": "max-active-levels-var, which OMP_MAX_ACTIVE_LEVELS sets",
    "openmp:omp_set_nested": "max-active-levels-var, which OMP_NESTED sets",
}

# The judge times the kernel's entry point as one call: no manifest names a narrower region, so
# every call the submission's object makes runs inside the timed region.
TIMED_REGION = "the kernel's entry point, which the judge times as one call"

NM_LINE = re.compile(r"^\s*U\s+(\S+)$")


class PpmCall(BaseModel):
    """One parallel-programming call of a submission, as usis describes it."""

    model_config = ConfigDict(extra="forbid")

    symbol: str
    key: str | None
    name: str
    model: str
    api_group: str | None = None
    blocking: bool | None = None
    collective: bool | None = None
    desc: str | None = None
    deprecated_in: str | None = None
    superseded_by: str | None = None


class Finding(BaseModel):
    """Something usis says about a call that a reader of the grade should know; `source` is the
    usis provenance of the value it rests on (or the judge's own rule)."""

    model_config = ConfigDict(extra="forbid")

    kind: FindingKind
    symbol: str
    key: str | None
    message: str
    source: str


class CallReport(BaseModel):
    """The calls of one submission's object and the findings about them."""

    model_config = ConfigDict(extra="forbid")

    calls: list[PpmCall]
    findings: list[Finding]

    def to_record(self) -> str:
        """The grades.ppm_calls column: this report as JSON text."""
        return json.dumps(self.model_dump(mode="json"), sort_keys=True)

    @classmethod
    def from_record(cls, text: str | None) -> CallReport | None:
        if not text:
            return None
        return cls.model_validate(json.loads(text))

    def refusal(self, refused_kinds: Iterable[str]) -> str | None:
        """The reason a setup's grading.refuse_findings fails this grade, or None."""
        refused = set(refused_kinds)
        hits = [f for f in self.findings if f.kind in refused]
        if not hits:
            return None
        named = "; ".join(f"{f.kind}: {f.message}" for f in hits)
        return f"refused by grading.refuse_findings: {named}"


def nm_path() -> str:
    """The toolchain's nm (binutils, beside gcc)."""
    return shutil.which("nm") or "/usr/bin/nm"


def parse_undefined(nm_output: str) -> list[str]:
    """The undefined symbols of `nm --undefined-only` output, without their version suffix
    (`omp_set_num_threads@OMP_1.0`), sorted and unique."""
    found = set()
    for line in nm_output.splitlines():
        match = NM_LINE.match(line)
        if match:
            found.add(match.group(1).split("@", 1)[0])
    return sorted(found)


def model_of_symbol(symbol: str) -> str | None:
    return next((model for prefix, model in SYMBOL_MODELS if symbol.startswith(prefix)), None)


@functools.cache
def corpus_of(model: str) -> Corpus:
    from usis.api import load

    return load(model)


@functools.cache
def names_of(model: str) -> dict[str, str]:
    """{linked name: usis key} of one model's corpus."""
    corpus = corpus_of(model)
    return {corpus.raw(key)["identity"]["name"]: key for key in corpus}


def entry_key(symbol: str) -> tuple[str, str | None] | None:
    """(model, usis key or None when usis has no entry) of a linked name, or None when the name
    belongs to no model usis describes. A PMPI_ name is its MPI_ entry, an MPI `_c` (large
    count) name is the entry of its base name."""
    model = model_of_symbol(symbol)
    if model is None:
        return None
    name = "MPI_" + symbol[len("PMPI_") :] if symbol.startswith("PMPI_") else symbol
    names = names_of(model)
    key = names.get(name)
    if key is None and model == "mpi" and name.endswith("_c"):
        key = names.get(name[: -len("_c")])
    return model, key


def describe_calls(symbols: Iterable[str]) -> list[PpmCall]:
    """The parallel-programming calls among `symbols`, each with what usis says of it."""
    calls = []
    for symbol in sorted(set(symbols)):
        located = entry_key(symbol)
        if located is None:
            continue
        model, key = located
        if key is None:
            calls.append(PpmCall(symbol=symbol, key=None, name=symbol, model=model))
            continue
        entry = corpus_of(model).raw(key)
        identity, execution = entry["identity"], entry["execution"]
        calls.append(
            PpmCall(
                symbol=symbol, key=key, name=identity["name"], model=model,
                api_group=identity["api_group"], blocking=execution["blocking"],
                collective=execution["collective"], desc=identity["desc"],
                deprecated_in=identity["deprecated_in"],
                superseded_by=entry["relationships"]["superseded_by"],
            )
        )  # fmt: skip
    return calls


def provenance_of(key: str, pointer: str) -> str:
    """Where usis's value at `pointer` of entry `key` came from, as one line."""
    model = key.split(":", 1)[0]
    record = corpus_of(model).provenance(key, pointer)
    if record is None:
        return f"usis {key}{pointer}"
    return f"usis {key}{pointer}: {record['method']} ({record['from']})"


def findings_of(calls: Sequence[PpmCall], offered: Iterable[str]) -> list[Finding]:
    """Every finding about `calls` in a grade whose setup offers the models `offered`."""
    offered = set(offered)
    findings: list[Finding] = []
    for call in calls:
        key = call.key
        # (kind, message, source) of each finding about this call.
        found: list[tuple[FindingKind, str, str]] = []
        if call.model not in offered:
            models = ", ".join(sorted(offered)) or "no parallel model"
            where = provenance_of(key, "/identity/model") if key else "hb.calls.SYMBOL_MODELS"
            found.append((
                "model_not_offered",
                f"{call.name} is a {call.model} call; this grade offers {models}", where,
            ))  # fmt: skip
        if key is None:
            found.append((
                "unknown",
                f"{call.name} has a {call.model} name but no usis entry: removed from the "
                "standard usis follows, or the implementation's own",
                f"usis corpus of {call.model} (no entry named {call.name})",
            ))  # fmt: skip
        else:
            if call.deprecated_in:
                instead = f"; use {call.superseded_by}" if call.superseded_by else ""
                found.append((
                    "deprecated", f"{call.name} is deprecated in {call.deprecated_in}{instead}",
                    provenance_of(key, "/identity/deprecated_in"),
                ))  # fmt: skip
            if call.blocking and call.collective:
                found.append((
                    "blocking_collective_timed",
                    f"{call.name} is a blocking collective inside {TIMED_REGION}: every rank "
                    "waits for the slowest there",
                    provenance_of(key, "/execution/blocking"),
                ))  # fmt: skip
            if key in THREAD_SETTING_CALLS:
                found.append((
                    "thread_settings",
                    f"{call.name} changes {THREAD_SETTING_CALLS[key]}: the timed run no longer "
                    "uses the judge's thread settings",
                    f"hb.calls.THREAD_SETTING_CALLS (OpenMP 5.2 §18.2); {provenance_of(key, '')}",
                ))  # fmt: skip
        findings += [
            Finding(kind=kind, symbol=call.symbol, key=key, message=message, source=source)
            for kind, message, source in found
        ]
    return findings


def report_of(symbols: Iterable[str], offered: Iterable[str]) -> CallReport:
    calls = describe_calls(symbols)
    return CallReport(calls=calls, findings=findings_of(calls, offered))


def _nm_in_box(argv_before: Sequence[Sequence[str]], target: str, dynamic: bool,
               files: dict[str, bytes | str], boxes: Path, limits: Limits,
               path: str = "/usr/bin:/bin") -> list[str] | None:  # fmt: skip
    """The undefined symbols of `target` after `argv_before` ran in one box with `files`; None
    when a step failed (the object is the submission's: nm reads it in the box too)."""
    from hb.execution import sandbox

    boxes.mkdir(parents=True, exist_ok=True, mode=0o700)
    nm = [nm_path(), "--undefined-only", *(["-D"] if dynamic else []), target]
    try:
        with sandbox.Box(boxes, limits) as box:
            for name, data in files.items():
                box.write(name, data)
            for argv in [*argv_before, nm]:
                result = box.run(list(argv), env={"PATH": path})
                if result.failure("reading the calls") is not None:
                    return None
    except (sandbox.SandboxUnavailable, OSError):
        return None
    return parse_undefined(result.stdout)


REMEMBERED = 4096  # reports kept per cache; a full cache starts again


def remember(cache: dict[Any, CallReport], key: Any, report: CallReport) -> CallReport:
    if len(cache) >= REMEMBERED:
        cache.clear()
    cache[key] = report
    return report


# The build cache names a library by the digest of its source, flags and compiler, so one path
# is one object: its report is read once per judge (a failed read is tried again).
_LIBRARY_REPORTS: dict[tuple[Path, tuple[str, ...]], CallReport] = {}


def library_calls(
    library: Path, offered: Iterable[str], boxes: Path, limits: Limits
) -> CallReport | None:
    """The calls of a built shared library (a single-node grade's), or None when nm failed."""
    cache_key = (library, tuple(sorted(offered)))
    if cache_key not in _LIBRARY_REPORTS:
        files: dict[str, bytes | str] = {"object.so": library.read_bytes()}
        symbols = _nm_in_box([], "object.so", True, files, boxes, limits)
        if symbols is None:
            return None
        return remember(_LIBRARY_REPORTS, cache_key, report_of(symbols, cache_key[1]))
    return _LIBRARY_REPORTS[cache_key]


# A distributed grade's report by the digest of its source, compiler, flags and offer.
_SOURCE_REPORTS: dict[str, CallReport] = {}


def source_calls(
    source: str, compiler: str, flags: Sequence[str], offered: Iterable[str], boxes: Path,
    limits: Limits,
) -> CallReport | None:  # fmt: skip
    """The calls of a submission compiled alone to an object (a distributed grade links it into
    the driver's program, whose own calls are not the submission's), or None when it fails."""
    offer = tuple(sorted(offered))
    digest = hashlib.sha256("\0".join([source, compiler, *flags, *offer]).encode()).hexdigest()
    if digest not in _SOURCE_REPORTS:
        compile_argv = [compiler, *flags, "-c", "submission.c", "-o", "submission.o"]
        symbols = _nm_in_box(
            [compile_argv], "submission.o", False, {"submission.c": source}, boxes, limits,
            path=f"{Path(compiler).parent}:/usr/bin:/bin",
        )  # fmt: skip
        if symbols is None:
            return None
        return remember(_SOURCE_REPORTS, digest, report_of(symbols, offer))
    return _SOURCE_REPORTS[digest]


def reference_mpi_calls(kernel: str) -> list[PpmCall]:
    """The MPI calls the kernel's reference MPI solution makes, as usis describes them. The
    catalog's own source is read, not built: every name written as a call that usis knows."""
    from hb.kernels import CATALOG_DIR

    path = CATALOG_DIR / kernel / "solution_mpi.c"
    if not path.is_file():
        return []
    named = re.findall(r"\b(MPI_[A-Za-z0-9_]+)\s*\(", path.read_text(encoding="utf-8"))
    return [call for call in describe_calls(named) if call.key is not None]


def offered_models(distributed: bool = False) -> tuple[str, ...]:
    """The models a grade offers: OpenMP in every C build (the judge compiles with -fopenmp), MPI
    where the grade runs on ranks."""
    return ("mpi", "openmp") if distributed else ("openmp",)


def distributed_calls(source: str, boxes: Path, limits: Limits) -> CallReport | None:
    """The calls of a distributed grade's submission, compiled alone with MPICH's mpicc and the
    flags the driver's build gives it (build_driver's own)."""
    from hb.distributed.driver import build_driver, mpicc_path

    flags: tuple[str, ...] = inspect.signature(build_driver).parameters["extra_flags"].default
    return source_calls(
        source, mpicc_path(), flags, offered_models(distributed=True), boxes, limits
    )
