"""The shape catalog (curated/shapes.json): formal-layer templates with typed slots, checked on load."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from usis.curated import load
from usis.schema import definition_validator

PLACEHOLDER = re.compile(r"\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}")
SLOT_KINDS = (
    "buffer_slot",
    "extent_slot",
    "selector_slot",
    "operation_slot",
    "handle_slot",
    "index_slot",
    "literal_slot",
)


class ShapeError(ValueError):
    """A shape catalog that breaks its own rules; the message names the shape and the problem."""


@dataclass(frozen=True)
class Slot:
    name: str
    kind: str
    optional: bool


@dataclass(frozen=True)
class Shape:
    id: str
    slots: tuple[Slot, ...]
    template: dict[str, Any]

    def slot(self, name: str) -> Slot | None:
        return next((slot for slot in self.slots if slot.name == name), None)


def placeholders(value: Any) -> Iterator[str]:
    """Every slot name a `{{...}}` placeholder mentions anywhere inside a JSON value."""
    if isinstance(value, str):
        yield from PLACEHOLDER.findall(value)
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from placeholders(item)
    elif isinstance(value, list):
        for item in value:
            yield from placeholders(item)


# A typed slot's placeholder stands where the schema wants an object or an enum value, so a shape is
# checked with every slot replaced by a representative value of its kind; literal slots can stand
# for anything, so schema complaints exactly at their positions are not held against the shape.
SAMPLE_BINDINGS: dict[str, Any] = {
    "buffer_slot": "param:buffer",
    "extent_slot": {"count_ref": "param:count", "datatype_ref": "param:datatype"},
    "selector_slot": "self",
    "operation_slot": "param:op",
    "handle_slot": "param:handle",
    "index_slot": "0",
    "literal_slot": "literal",
}


def sample_instance(raw: Mapping[str, Any]) -> dict[str, Any]:
    kinds = {slot.get("name"): slot.get("kind") for slot in raw.get("slots", [])}

    def fill(value: Any) -> Any:
        if isinstance(value, Mapping):
            return {name: fill(item) for name, item in value.items()}
        if isinstance(value, list):
            return [fill(item) for item in value]
        if isinstance(value, str):
            whole = re.fullmatch(PLACEHOLDER, value)
            if whole:
                return SAMPLE_BINDINGS.get(str(kinds.get(whole.group(1))), value)
            return PLACEHOLDER.sub(
                lambda match: str(SAMPLE_BINDINGS.get(str(kinds.get(match.group(1))), "x")), value
            )
        return value

    return {**raw, "template": fill(raw.get("template"))}


def literal_placeholder_paths(raw: Mapping[str, Any]) -> Iterator[tuple[str | int, ...]]:
    literal_slots = {s.get("name") for s in raw.get("slots", []) if s.get("kind") == "literal_slot"}

    def walk(value: Any, path: tuple[str | int, ...]) -> Iterator[tuple[str | int, ...]]:
        if isinstance(value, Mapping):
            for name, item in value.items():
                yield from walk(item, (*path, name))
        elif isinstance(value, list):
            for index, item in enumerate(value):
                yield from walk(item, (*path, index))
        elif isinstance(value, str):
            whole = re.fullmatch(PLACEHOLDER, value)
            if whole and whole.group(1) in literal_slots:
                yield path

    yield from walk(raw.get("template"), ())


class ShapeCatalog:
    """Shapes by id, each validated against the schema's $defs/shape_template."""

    def __init__(self, document: Mapping[str, Any], origin: str = "shapes.json") -> None:
        self.origin = origin
        self.shapes: dict[str, Shape] = {}
        validator = definition_validator("shape_template")
        for index, raw in enumerate(document.get("shapes", [])):
            where = f"{origin}: shapes[{index}] ({raw.get('id', '?')})"
            errors = sorted(validator.iter_errors(sample_instance(raw)), key=lambda e: list(e.path))
            literal_paths = set(literal_placeholder_paths(raw))
            errors = [
                error for error in errors if tuple(error.absolute_path)[1:] not in literal_paths
            ]
            if errors:
                path = "/".join(str(part) for part in errors[0].absolute_path)
                raise ShapeError(f"{where}: {path}: {errors[0].message}")
            shape = Shape(
                id=raw["id"],
                slots=tuple(Slot(s["name"], s["kind"], s["optional"]) for s in raw["slots"]),
                template=raw["template"],
            )
            if shape.id in self.shapes:
                raise ShapeError(f"{where}: duplicate shape id {shape.id!r}")
            declared = [slot.name for slot in shape.slots]
            if len(declared) != len(set(declared)):
                raise ShapeError(f"{where}: a slot name is declared twice: {declared}")
            used = set(placeholders(shape.template))
            if used - set(declared):
                raise ShapeError(
                    f"{where}: template uses undeclared slots {sorted(used - set(declared))}; "
                    f"declared: {declared}"
                )
            if set(declared) - used:
                raise ShapeError(f"{where}: slots {sorted(set(declared) - used)} are never used")
            self.shapes[shape.id] = shape

    def __getitem__(self, shape_id: str) -> Shape:
        try:
            return self.shapes[shape_id]
        except KeyError:
            raise KeyError(
                f"unknown shape_ref {shape_id!r} in {self.origin}; known: {sorted(self.shapes)}"
            ) from None

    def __contains__(self, shape_id: object) -> bool:
        return shape_id in self.shapes

    def __len__(self) -> int:
        return len(self.shapes)


@cache
def load_catalog() -> ShapeCatalog:
    """The shipped shape catalog (src/usis/curated/shapes.json)."""
    return ShapeCatalog(load("shapes.json"), origin="curated/shapes.json")


def shape_ids() -> frozenset[str]:
    """The ids of the shipped catalog's shapes, read without checking the shapes (what a classifier
    asks before it assigns a shape that the assign stage will then check)."""
    return frozenset(str(shape["id"]) for shape in load("shapes.json")["shapes"])


def curated_bindings(
    bindings: Mapping[str, Any],
    datatype: str,
    atomic_operation: str | None = None,
    reduction: str | None = None,
) -> dict[str, Any]:
    """The slot bindings of a curated assignment rule made concrete for one routine (the OpenSHMEM
    and NVSHMEM formal.yaml files): `{count_ref: X}` becomes an extent of `datatype`,
    `{atomic_operation}` and `{reduction}` the operator as `op:NAME`, and `{datatype}` inside a
    string the datatype reference. A placeholder with no value for this routine is a ShapeError."""
    concrete: dict[str, Any] = {}
    for slot, value in bindings.items():
        if isinstance(value, Mapping):
            concrete[slot] = {"count_ref": value["count_ref"], "datatype_ref": datatype}
        elif value in ("{atomic_operation}", "{reduction}"):
            operator = atomic_operation if value == "{atomic_operation}" else reduction
            if operator is None:
                raise ShapeError(f"slot {slot!r} binds {value} for a routine that has none")
            concrete[slot] = f"op:{operator}"
        else:
            concrete[slot] = value.replace("{datatype}", datatype)
    return concrete
