"""The one way a classifier builds a USIS entry and the provenance of its values.

An `EntryBuilder` holds the schema's eight sections, each starting from its empty form, and
`build()` gives the entry as a checkpoint stores it; a `Provenance` collects one record per JSON
pointer while the entry is filled. The small functions below make the section objects that
several classifiers share (execution, semantics.memory, binding types, returns, parameters).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from functools import cache
from typing import Any

from usis.curated import check_release_since, cite, header_since, load


class ClassifyError(ValueError):
    """Extracted data or curated facts that a classifier cannot turn into an entry; the message
    names the entry or the curated file and what would be accepted."""


# ---------------------------------------------------------------------------------------------
# Provenance


@dataclass
class Provenance:
    """Provenance records of one entry, keyed by JSON pointer.

    `rules` is the file whose named rules set values (`classify/cuda.py` makes rule `x` read
    `classify/cuda.py rule x`); without it a rule is cited by its own id (MPI's `rule:...` ids).
    """

    rules: str | None = None
    records: dict[str, dict[str, str]] = field(default_factory=dict)

    def note(self, pointer: str, method: str, origin: str, stage: str = "classify") -> None:
        self.records[pointer] = {"stage": stage, "method": method, "from": origin}

    def source(self, pointer: str, origin: str) -> None:
        """A value read from the source by the extract stage."""
        self.note(pointer, "source", origin, stage="extract")

    def rule(self, pointer: str, rule_id: str) -> None:
        self.note(pointer, "rule", f"{self.rules} rule {rule_id}" if self.rules else rule_id)

    def curated(self, pointer: str, origin: str) -> None:
        self.note(pointer, "curated", origin)

    def judgement(self, pointer: str, reason: str) -> None:
        """A value the sources do not settle, decided by the classifier for the stated reason."""
        self.note(pointer, "rule", f"judgement: {reason}")

    def sorted_records(self) -> dict[str, dict[str, str]]:
        """The records in pointer order, as the classify checkpoint stores them."""
        return dict(sorted(self.records.items()))


# ---------------------------------------------------------------------------------------------
# Sections


def null_variants() -> dict[str, str | None]:
    return {
        "nonblocking": None,
        "blocking": None,
        "persistent": None,
        "neighborhood": None,
        "host": None,
        "gpu": None,
    }


def empty_semantics() -> dict[str, Any]:
    return {
        "collective": None,
        "point_to_point": None,
        "one_sided": None,
        "atomic": None,
        "memory": None,
        "formal": None,
    }


def memory(
    local: str,
    remote: str | None,
    reuse: str,
    fence: str = "none",
    *,
    symmetric_heap: bool = False,
    model: str | None = None,
) -> dict[str, Any]:
    """semantics.memory: when the local and remote sides complete and the buffer may be reused."""
    return {
        "local_completion": local,
        "remote_completion": remote,
        "buffer_reuse": reuse,
        "fence_semantics": fence,
        "symmetric_heap": symmetric_heap,
        "memory_model": model,
    }


def execution(
    *,
    blocking: bool,
    launch: str,
    runs_on: str,
    locality: str | None,
    collective: bool = False,
    gpu_scope: str | None = None,
    completion: str | None = None,
    procedure_class: str | None = None,
    thread_safety: str | None = None,
    execute_once: bool = False,
    stages: list[str] | None = None,
) -> dict[str, Any]:
    """The execution section: how the call blocks, where it is launched and runs, what it needs."""
    return {
        "blocking": blocking,
        "execute_once": execute_once,
        "collective": collective,
        "thread_safety": thread_safety,
        "launch": launch,
        "runs_on": runs_on,
        "gpu_scope": gpu_scope,
        "stages": stages,
        "locality": locality,
        "completion": completion,
        "procedure_class": procedure_class,
    }


def binding_type(
    c: str | None,
    *,
    fortran90: str | None = None,
    fortran08: str | None = None,
    lis: str | None = None,
    cpp: str | None = None,
) -> dict[str, str | None]:
    """A value's type in each binding (a parameter's or the return's)."""
    return {"c": c, "fortran90": fortran90, "fortran08": fortran08, "lis": lis, "cpp": cpp}


def c_bindings(header: str, signature: str | None) -> dict[str, Any]:
    """The bindings of a C-only API: the C prototype and the header that declares it."""
    return {
        "c": {"expressible": True, "header": header, "signature": signature},
        "fortran90": None,
        "fortran08": None,
        "lis": None,
        "cpp": None,
    }


def returns(
    kind: str,
    binding: dict[str, str | None],
    *,
    value_kind: str | None = None,
    errors: Iterable[str] = (),
    successes: Iterable[str] = (),
) -> dict[str, Any]:
    """The return section: what kind of value comes back, its type, the codes it may carry."""
    return {
        "kind": kind,
        "value_kind": value_kind,
        "binding_type": binding,
        "possible_errors": list(errors),
        "possible_successes": list(successes),
    }


def c_return(
    c_type: str,
    *,
    kind: str,
    value_kind: str | None = None,
    errors: Iterable[str] = (),
    successes: Iterable[str] = (),
) -> dict[str, Any]:
    """The return of a C function as the NVIDIA classifiers record it: its C type (`void` too: a
    null C type would say the return is not expressible in C), and only a plain value has a value
    kind."""
    return returns(
        kind,
        binding_type(c_type),
        value_kind=value_kind if kind == "value" else None,
        errors=errors,
        successes=successes,
    )


def context_dependency(
    field_path: str, default: str | bool | None, depends_on: Iterable[str], note: str
) -> dict[str, Any]:
    """A field whose value depends on the calling context, with its default and what it hinges on."""
    return {
        "field": field_path,
        "default_value": default,
        "depends_on": list(depends_on),
        "note": note,
    }


# ---------------------------------------------------------------------------------------------
# Parameters


@dataclass
class Parameter:
    """One parameter object of an entry; `as_dict` gives it in the schema's form."""

    name: str | None
    kind: str | None
    direction: str
    desc: str | None
    binding_type: dict[str, str | None]
    asynchronous: bool = False
    constant: bool = False
    pointer: bool | None = None
    array_type: str | None = None
    func_type: str | None = None
    length: int | str | None = None
    parameter_bindings: list[str] = field(default_factory=lambda: ["c"])
    root_only: bool = False
    not_null: bool | None = None
    value_range: str | None = None
    paired_with: str | None = None
    memory_space: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "direction": self.direction,
            "desc": self.desc,
            "binding_type": dict(self.binding_type),
            "asynchronous": self.asynchronous,
            "constant": self.constant,
            "pointer": self.pointer,
            "array_type": self.array_type,
            "func_type": self.func_type,
            "length": self.length,
            "parameter_bindings": list(self.parameter_bindings),
            "root_only": self.root_only,
            "constraints": {
                "not_null": self.not_null,
                "value_range": self.value_range,
                "paired_with": self.paired_with,
            },
            "memory_space": self.memory_space,
        }


def is_pointer(c_type: str) -> bool:
    return c_type.endswith("*")


def default_direction(c_type: str) -> str:
    """In for values and pointers to const; out for pointers to non-const (C's own contract)."""
    if not is_pointer(c_type):
        return "in"
    return "in" if c_type.startswith("const ") and c_type.count("*") == 1 else "out"


@dataclass(frozen=True)
class DocumentedDirection:
    """A parameter direction the vendor's documentation states, and where it states it."""

    direction: str
    origin: str


@cache
def documented_directions(path: str) -> Callable[[str, str], DocumentedDirection | None]:
    """The lookup of a curated directions table (`nccl/directions.yaml`: `{"source",
    "directions": [{"match", "param", "direction", "note"?}]}`, `match` a regular expression
    searched in the function name): the first item naming the parameter of a matching function
    wins; None where the documentation is silent."""
    table = load(path)
    items = [
        (re.compile(item["match"]), item["param"], item["direction"], item.get("note"))
        for item in table["directions"]
    ]

    def lookup(function: str, parameter: str) -> DocumentedDirection | None:
        for pattern, name, direction, note in items:
            if name == parameter and pattern.search(function):
                return DocumentedDirection(
                    direction, cite(path, f"{function}.{parameter} ({note or table['source']})")
                )
        return None

    return lookup


def note_direction(provenance: Provenance, index: int, documented: DocumentedDirection) -> None:
    """Provenance of a direction the documentation states; where it is silent the classifier's
    rule record (const-ness, the role of the name) stands."""
    provenance.curated(f"/parameters/{index}/direction", documented.origin)


@dataclass
class ParameterFacts:
    """What a classifier decided about one C parameter, beyond what its declaration says."""

    kind: str | None
    direction: str
    desc: str | None
    memory_space: str | None = None
    length: int | str | None = None
    asynchronous: bool = False
    root_only: bool = False
    not_null: bool | None = None
    value_range: str | None = None
    paired_with: str | None = None


def declared_parameter(declared: Mapping[str, Any], facts: ParameterFacts) -> Parameter:
    """The parameter of one C declaration (`{type, name, array}`) with the classifier's facts: an
    array is a pointer of variable length unless the facts give one."""
    c_type = declared["type"]
    length = facts.length
    if declared.get("array") and length is None:
        length = "*"
    return Parameter(
        name=declared["name"],
        kind=facts.kind,
        direction=facts.direction,
        desc=facts.desc,
        binding_type=binding_type(c_type + ("*" if declared.get("array") else "")),
        asynchronous=facts.asynchronous,
        constant=c_type.startswith("const ") or " const" in c_type,
        pointer=True if is_pointer(c_type) or declared.get("array") else None,
        array_type=None if length is None else ("fixed" if isinstance(length, int) else "variable"),
        length=length,
        root_only=facts.root_only,
        not_null=facts.not_null,
        value_range=facts.value_range,
        paired_with=facts.paired_with,
        memory_space=facts.memory_space,
    )


def note_declared_parameter(provenance: Provenance, index: int, where: str, rule_id: str) -> None:
    """Provenance of a `declared_parameter`: what the declaration says is source, the rest rule."""
    base = f"/parameters/{index}"
    for name in ("name", "binding_type/c", "constant", "pointer"):
        provenance.source(f"{base}/{name}", where)
    for name in ("kind", "direction", "desc", "memory_space", "length", "asynchronous"):
        provenance.rule(f"{base}/{name}", rule_id)


# ---------------------------------------------------------------------------------------------
# The entry


@dataclass
class Identity:
    model: str
    name: str
    api_group: str | None = None
    since: str | None = None
    deprecated_in: str | None = None
    standard_refs: list[str] = field(default_factory=list)
    desc: str | None = None
    type_family: list[str] | None = None


@dataclass
class ToolIntegration:
    profiling_name: str | None = None
    invariants: list[str] = field(default_factory=list)
    buffer_aliasing: str | None = None
    context_dependencies: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Relationships:
    variants: dict[str, str | None] = field(default_factory=null_variants)
    superseded_by: str | None = None
    # Never hand-authored: assemble sets it to the inversion of the superseded_by edges.
    supersedes: list[str] = field(default_factory=list)


@dataclass
class EntryBuilder:
    """One entry while a classifier fills it: every section of the schema, each starting from its
    empty form (semantics all null, no parameters, no variants)."""

    identity: Identity
    bindings: dict[str, Any]
    execution: dict[str, Any]
    returns: dict[str, Any]
    parameters: list[Parameter] = field(default_factory=list)
    semantics: dict[str, Any] = field(default_factory=empty_semantics)
    tool_integration: ToolIntegration = field(default_factory=ToolIntegration)
    relationships: Relationships = field(default_factory=Relationships)

    def build(self) -> dict[str, Any]:
        """The entry as the classify checkpoint stores it, sections in the schema's order."""
        return {
            "identity": asdict(self.identity),
            "bindings": self.bindings,
            "execution": self.execution,
            "semantics": self.semantics,
            "parameters": [parameter.as_dict() for parameter in self.parameters],
            "return": self.returns,
            "tool_integration": asdict(self.tool_integration),
            "relationships": asdict(self.relationships),
        }


def apply_since(
    name: str,
    entry: dict[str, Any],
    notes: Provenance,
    release: tuple[str, str] | None,
    origin: Callable[[str], str],
) -> None:
    """identity.since of one function of an NVIDIA model: the date its header history gives
    (curated/<model>/header_history.yaml), else the release-note version `release`
    ((since, source), cited by `origin(source)`), else null. Where both speak they must agree,
    and a release-note version must not be newer than a wheel that already declares it."""
    model = entry["identity"]["model"]
    if release is not None:
        conflict = check_release_since(model, name, release[0])
        if conflict is not None:
            raise ClassifyError(
                f"{model}:{name}: curated since {release[0]} ({release[1]}) contradicts the "
                f"header: {conflict}"
            )
    dated = header_since(model).get(name)
    if dated is not None:
        entry["identity"]["since"] = dated[0]
        notes.curated("/identity/since", dated[1])
    elif release is not None:
        entry["identity"]["since"] = release[0]
        notes.curated("/identity/since", origin(release[1]))
