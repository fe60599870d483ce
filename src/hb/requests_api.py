"""The requests API of the judge (spec requests_api.md): the envelope's requests field, what a
setup allows (RequestAllowances) and what a task offers (RequestActions), the fp64-only cast
refusal, the recorded JSON's version, and the doors to relayout's models and conversion programs."""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    PlainSerializer,
    TypeAdapter,
    WithJsonSchema,
)

from hb.precision import PRECISIONS
from relayout import (
    BIJECTION_CHECK_LIMIT,
    RECORDED_VERSION,
    CheckedArray,
    DistributionPlan,
    RequestError,
    Requests,
    RequestsCheck,
)
from relayout import models as _models
from relayout import requests_schema as _relayout_requests_schema
from relayout import requests_schema_text as _relayout_requests_schema_text
from relayout.convert import compile_program
from relayout.models import Cast

__all__ = [
    "BIJECTION_CHECK_LIMIT",
    "CAPABILITIES",
    "RECORDED_VERSION",
    "REQUESTS_ADAPTER",
    "CheckedArray",
    "DistributionPlan",
    "RequestActions",
    "RequestAllowances",
    "RequestError",
    "Requests",
    "RequestsCheck",
    "RequestsField",
    "cast_refusal",
    "from_recorded",
    "requests_schema_text",
    "to_recorded",
]

# 1 = relayout's request JSON as this checkout writes it; a change of that shape raises it.

CAPABILITIES = ("load", "cast", "layout", "sparse_format", "place", "distribute")
DEFAULT_ALLOW = ("load",)
# The scope of each action is relayout's (relayout.models): these are its sets in its order.
DIGIT_ACTIONS = tuple(a for a in _models.ACTIONS if a in _models.DIGIT_ACTIONS)
REGROUP_ACTIONS = tuple(
    a
    for a in _models.ACTIONS
    if a in _models.SINGLE_NODE_ACTIONS and a not in _models.DIGIT_ACTIONS
)
# Single-node only: refused over a grid.
GRID_ONLY_DIGIT_REFUSED = tuple(a for a in _models.ACTIONS if a in _models.SINGLE_NODE_ACTIONS)
GRID_ACTIONS = tuple(a for a in _models.ACTIONS if a in _models.GRID_ACTIONS)


def requests_schema_text() -> str:
    """relayout's JSON Schema of a request with every $ref inlined, as deterministic text; the
    agent tool ships it as agent/requests_schema.json."""
    return _relayout_requests_schema_text()


def _validate_field(value: Any) -> Requests:
    if value is None:
        return Requests()
    return Requests.validate(value)


def _dump_field(value: Requests) -> dict[str, Any] | None:
    text = value.to_json()
    return json.loads(text) if text else None


# The envelope's requests field: validated by relayout, written as relayout writes it (sorted
# keys, defaults out), described by relayout's inlined schema.
RequestsField = Annotated[
    Requests,
    BeforeValidator(_validate_field),
    PlainSerializer(_dump_field, when_used="always"),
    WithJsonSchema(_relayout_requests_schema()),
]


# The field outside a model: validate_python / validate_json read like Requests.validate (JSON
# text too, relayout's messages naming the entry); dump_python / dump_json write like
# Requests.to_json (sorted keys, defaults out), an empty request as None / null. A model leaves
# an empty request out of its dump itself (envelope.Submission).
REQUESTS_ADAPTER: TypeAdapter[Requests] = TypeAdapter(RequestsField)


def is_empty(requests: Requests) -> bool:
    return requests.to_json() == ""


# ---------------------------------------------------------------------------------------------
# Recorded requests (results_db): the judge's version stamp "v" around relayout's JSON.


def to_recorded(requests: Requests) -> str:
    """The text grades.requests holds: '' for none, else relayout's JSON with "v" stamped in."""
    return requests.to_recorded()


def from_recorded(text: str | None) -> Requests:
    """A recorded request read back (Requests.from_recorded: no "v" is version 0, newer refused)."""
    return Requests.from_recorded(text)


# ---------------------------------------------------------------------------------------------
# What a setup allows (spec §0).


def _as_list(value: list[str] | str | None) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        if value.strip().startswith("["):
            # A list written out (JSON, or a YAML flow list such as [load, layout]).
            try:
                parsed = yaml.safe_load(value)
            except yaml.YAMLError as error:
                raise ValueError(f"not a list: {value!r} ({error})") from None
            if not isinstance(parsed, list):
                raise ValueError(f"not a list: {value!r}")
            return [str(part).strip() for part in parsed if str(part).strip()]
        return [part.strip() for part in value.split(",") if part.strip()]
    return [str(part).strip() for part in value]


class RequestAllowances(BaseModel):
    """The ONE resolved set of capabilities a setup allows, with cast's precisions and who sets
    the grid; the judge refuses by it, the prompt states it and the tools offer it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    allow: frozenset[str] = frozenset(DEFAULT_ALLOW)
    precisions: tuple[str, ...] = ()
    grid: Literal["agent", "task"] = "agent"

    @classmethod
    def resolve(
        cls,
        allow: list[str] | str | None,
        precisions: list[str] | str | None,
        grid: Literal["agent", "task"] = "agent",
        grade_distributed: bool = False,
    ) -> RequestAllowances:
        """Validated allowances: unknown capabilities and precisions are refused by name, and
        precisions are set exactly when cast is allowed."""
        names = _as_list(allow)
        capabilities = set(DEFAULT_ALLOW if names is None else names)
        unknown = sorted(capabilities - set(CAPABILITIES))
        if unknown:
            raise ValueError(f"requests.allow: unknown {unknown}; accepted: {list(CAPABILITIES)}")
        if grade_distributed:
            capabilities.add("distribute")
        chosen = _as_list(precisions) or []
        bad = [p for p in chosen if p not in PRECISIONS]
        if bad:
            raise ValueError(f"requests.precisions: unknown {bad}; accepted: {list(PRECISIONS)}")
        if "cast" in capabilities and not chosen:
            raise ValueError(
                "requests.precisions: cast is allowed, so list the precisions it may target"
            )
        if chosen and "cast" not in capabilities:
            raise ValueError("requests.precisions: set only when requests.allow includes cast")
        return cls(allow=frozenset(capabilities), precisions=tuple(chosen), grid=grid)

    @classmethod
    def from_config(cls, config: Any) -> RequestAllowances:
        """From config.yaml's requests: section, the environment's HPCAGENT_BENCH_REQUESTS_ALLOW /
        _PRECISIONS winning where set, and mpi.grade_distributed."""
        env: Mapping[str, str] = getattr(config, "environment", None) or os.environ
        section = config.requests
        allow = env.get("HPCAGENT_BENCH_REQUESTS_ALLOW", section.allow)
        precisions = env.get("HPCAGENT_BENCH_REQUESTS_PRECISIONS", section.precisions)
        return cls.resolve(allow, precisions, section.grid, config.mpi.grade_distributed)

    def refusal(self, requests: Requests, distributed: bool | None = None) -> str | None:
        """Why this setup refuses `requests`, naming the entry, or None when it allows it.
        `distributed`: whether it runs over a grid (default: it names startup.grid; the judge
        says so for a grid it injected under requests.grid: task)."""
        startup = requests.startup
        allowed = sorted(self.allow)
        if startup.load and "load" not in self.allow:
            return f"startup.load: this setup does not allow loading libraries (requests.allow: {allowed})"
        if startup.grid:
            if "distribute" not in self.allow:
                return f"startup.grid: this setup does not allow a processor grid (requests.allow: {allowed})"
            if self.grid == "task":
                return (
                    "startup.grid: this setup sets the processor grid itself (requests.grid: task); "
                    "leave startup.grid out and lay the arrays out over the task's grid"
                )
        if distributed is None:
            distributed = bool(startup.grid)
        for index, operation in enumerate(requests.operations):
            action = operation.action
            label = f"operations[{index}] ({action})"
            needed = _capability_for(action, distributed)
            if needed not in self.allow:
                return f"{label}: this setup does not allow {needed} requests (requests.allow: {allowed})"
            if isinstance(operation, Cast) and operation.to not in self.precisions:
                return (
                    f"{label}: this setup does not allow casts to {operation.to} "
                    f"(requests.precisions: {list(self.precisions)})"
                )
        return None

    def actions(
        self,
        has_floating_dense: bool,
        has_dense: bool,
        has_sparse: bool,
        distributed: bool,
        c_abi: bool = True,
        fp64_only: bool = False,
        problem_precision: str | None = None,
        distributable: bool | None = None,
        ml_track: bool = False,
    ) -> RequestActions:
        """What a task offers, exactly what the judge accepts for it: this setup's allowances
        narrowed to what the task's arrays and delivery can take. `distributed`: every grade runs
        on MPI ranks (mpi.grade_distributed); without it a kernel that can be distributed
        (`distributable`, default: it has dense arrays only) still offers the distribution, since
        a request naming startup.grid is graded on ranks. The problem's own precision is never a
        cast target (the judge refuses that cast)."""
        if distributable is None:
            distributable = has_dense and not has_sparse
        on_grid = distributable and c_abi and "distribute" in self.allow
        offered: list[str] = []
        precisions = tuple(p for p in self.precisions if p != problem_precision)
        # The machine_learning track's distributed grades take no cast (cast_refusal).
        castable = has_floating_dense and c_abi and not fp64_only and not (ml_track and distributed)
        if "cast" in self.allow and castable and precisions:
            offered.append("cast")
        if "layout" in self.allow and has_dense and not distributed and c_abi:
            offered += [*DIGIT_ACTIONS, *REGROUP_ACTIONS]
        if "sparse_format" in self.allow and has_sparse:
            offered.append("format")
        if on_grid and "distribute" in self.allow:
            offered += ["distribute", "replicate"]
            offered += [a for a in DIGIT_ACTIONS if a not in GRID_ONLY_DIGIT_REFUSED]
        if on_grid and "place" in self.allow:
            offered.append("place")
        return RequestActions(
            actions=tuple(dict.fromkeys(offered)),
            load="load" in self.allow,
            grid=on_grid and "distribute" in self.allow and self.grid == "agent",
            precisions=precisions if "cast" in offered else (),
        )


def _capability_for(action: str, distributed: bool) -> str:
    if action == "cast":
        return "cast"
    if action == "format":
        return "sparse_format"
    if action == "place":
        return "place"
    if action in ("distribute", "replicate"):
        return "distribute"
    return "distribute" if distributed else "layout"


class RequestActions(BaseModel):
    """What one task's tools offer: the operations' actions, startup.load, startup.grid and the
    cast precisions. Nothing offered hides the requests field."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    actions: tuple[str, ...] = ()
    load: bool = False
    grid: bool = False
    precisions: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.actions or self.load or self.grid)

    def to_env(self) -> str:
        """$HPCAGENT_BENCH_REQUEST_ACTIONS: comma-separated, with load and grid as words and cast
        carrying its precisions as `cast:fp32|fp16` (from_env reads it back)."""
        words = [
            f"cast:{'|'.join(self.precisions)}" if a == "cast" and self.precisions else a
            for a in self.actions
        ]
        words += (["load"] if self.load else []) + (["grid"] if self.grid else [])
        return ",".join(words)

    @classmethod
    def from_env(cls, text: str | None) -> RequestActions | None:
        """The offer read back from its variable; None when it is unset (nothing is shown)."""
        if text is None:
            return None
        words = [w.strip() for w in text.split(",") if w.strip()]
        actions: list[str] = []
        precisions: tuple[str, ...] = ()
        for word in words:
            if word in ("load", "grid"):
                continue
            action, _, targets = word.partition(":")
            if action == "cast" and targets:
                precisions = tuple(p.strip() for p in targets.split("|") if p.strip())
            actions.append(action)
        return cls(
            actions=tuple(actions),
            load="load" in words,
            grid="grid" in words,
            precisions=precisions,
        )

    def filter_schema(self, schema: Mapping[str, Any]) -> dict[str, Any] | None:
        """The request's JSON Schema cut down to this offer (None: show no requests field)."""
        if self.empty:
            return None
        filtered = copy.deepcopy(dict(schema))
        properties = filtered.get("properties", {})
        operations = properties.get("operations")
        if operations is not None:
            variants = _operation_variants(operations)
            if variants is not None:
                kept = [v for v in variants if _variant_action(v) in self.actions]
                for variant in kept:
                    if _variant_action(variant) == "cast" and self.precisions:
                        _narrow_cast_targets(variant, self.precisions)
                if kept:
                    _set_operation_variants(operations, kept)
                else:
                    properties.pop("operations")
        startup = properties.get("startup")
        if isinstance(startup, dict):
            startup_properties = startup.get("properties", {})
            if not self.load:
                startup_properties.pop("load", None)
            if not self.grid:
                startup_properties.pop("grid", None)
            if not startup_properties:
                properties.pop("startup")
        return filtered


def _operation_variants(operations: dict[str, Any]) -> list[dict[str, Any]] | None:
    items = operations.get("items", {})
    for key in ("oneOf", "anyOf"):
        if key in items:
            return list(items[key])
    return None


def _set_operation_variants(operations: dict[str, Any], variants: list[dict[str, Any]]) -> None:
    items = operations["items"]
    for key in ("oneOf", "anyOf"):
        if key in items:
            items[key] = variants


def _narrow_cast_targets(variant: dict[str, Any], precisions: tuple[str, ...]) -> None:
    """The cast variant's `to` enum cut to the offered precisions (the judge refuses the rest)."""
    target = variant.get("properties", {}).get("to")
    if isinstance(target, dict) and "enum" in target:
        target["enum"] = [p for p in target["enum"] if p in precisions]


def _variant_action(variant: Mapping[str, Any]) -> str | None:
    action = variant.get("properties", {}).get("action", {})
    if "const" in action:
        return str(action["const"])
    if "enum" in action and len(action["enum"]) == 1:
        return str(action["enum"][0])
    return None


def cast_refusal(
    requests: Requests,
    kernel: str,
    fp64_only: bool,
    override_kernels: Iterable[str] = (),
    datatype: str = "fp64",
    track: str = "",
    distributed: bool = False,
) -> str | None:
    """Why a cast cannot stand on this kernel: an fp64-only kernel's band stays fp64's, so every
    cast would fail its grade (a grading.precision_override_kernels entry run under fp32 lifts
    it); the machine_learning track's distributed grades take no cast (spec §1: its ranks
    generate their own shards)."""
    if track == "machine_learning" and distributed:
        for index, operation in enumerate(requests.operations):
            if isinstance(operation, Cast):
                return (
                    f"operations[{index}] (cast): {kernel} is of the machine_learning track, whose "
                    f"distributed grades take no cast (its ranks generate their own shards); cast "
                    f"{operation.array} in a single-node grade"
                )
    if not fp64_only:
        return None
    if kernel in set(override_kernels) and datatype == "fp32":
        return None
    for index, operation in enumerate(requests.operations):
        if isinstance(operation, Cast):
            return (
                f"operations[{index}] (cast): {kernel} runs in fp64 only and is graded in fp64's "
                f"band, so a cast of {operation.array} to {operation.to} cannot pass; leave it in fp64"
            )
    return None


# ---------------------------------------------------------------------------------------------
# relayout's conversion programs, compiled into a chosen cache directory.


def compile_conversions(requests_json: str, arrays: Mapping[str, str], cache_dir: Path) -> Any:
    """relayout's host conversion program for the request over the kernel's arrays (relayout
    ArraySpec texts), its libraries built or found in `cache_dir`."""
    from relayout import parse_arrays

    requests = Requests.validate(requests_json)
    cache_dir.mkdir(parents=True, exist_ok=True)
    return compile_program(
        requests, parse_arrays(dict(arrays)), target="host", cache_dir=cache_dir.resolve()
    )


def build_conversions(requests_json: str, arrays: Mapping[str, str], cache_dir: Path) -> Path:
    """The host library of the request's conversion program, built (or found) in `cache_dir` for
    the supervisor that converts, and not loaded into the calling process."""
    from relayout import parse_arrays
    from relayout.convert import build_host_library

    cache_dir.mkdir(parents=True, exist_ok=True)
    return build_host_library(
        Requests.validate(requests_json), parse_arrays(dict(arrays)), cache_dir=cache_dir.resolve()
    )
