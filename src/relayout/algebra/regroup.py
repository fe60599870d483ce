"""Regrouping arrays: zip (several arrays into one of structs) and unzip (one array into parts
along a dimension), as functions (state, operation, entry) -> state."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import replace

from relayout import expr as E
from relayout.algebra.state import (
    CellMap,
    Digit,
    PointerState,
    ProgramState,
    StructType,
    _drop_cuts,
    _prune_live,
    _single_node_only,
    resolve,
)
from relayout.errors import RequestError
from relayout.expr import Const, Sym
from relayout.models import (
    Unzip,
    Zip,
)
from relayout.types import ELEMENT_TYPES


def _in_initial_layout(pointer: PointerState) -> bool:
    """The pointer's digits and cells are still those of initial_state (digit operations undone
    by their inverses count as untouched)."""
    n = len(pointer.dim_extents)
    return pointer.digits == tuple(
        Digit(f"i{k}", pointer.dim_extents[k], k) for k in range(n)
    ) and pointer.cells == (
        CellMap(None, pointer.name, None, tuple(Sym(f"i{k}") for k in range(n))),
    )


def _union_intent(intents: Sequence[str]) -> str:
    kinds = set(intents)
    if kinds == {"in"}:
        return "in"
    if kinds == {"out"}:
        return "out"
    return "inout"


def zip_arrays(state: ProgramState, op: Zip, entry: str) -> ProgramState:
    _single_node_only(state, "zip", entry)
    fields = [state.pointer(name, entry) for name in op.arrays]
    for pointer in fields:
        if pointer.sparse or pointer.index:
            kind = "a sparse" if pointer.sparse else "an index"
            raise RequestError(
                f"{pointer.name} is {kind} array; only dense arrays zip", entry=entry
            )
        if pointer.unzip_of is not None:
            raise RequestError(
                f"{pointer.name} is a part of an unzip of {pointer.unzip_of}; a zip takes no unzip's part",
                entry=entry,
            )
        if pointer.zip_kind is not None:
            raise RequestError(
                f"{pointer.name} is already a zip; zip the arrays in one zip", entry=entry
            )
        if not _in_initial_layout(pointer):
            raise RequestError(
                f"{pointer.name} was laid out by earlier digit operations; zip first, then lay the zip out",
                entry=entry,
            )
    shapes = [tuple(str(resolve(p, e)) for e in p.dim_extents) for p in fields]
    if len(set(shapes)) != 1:
        listed = ", ".join(f"{p.name}[{', '.join(s)}]" for p, s in zip(fields, shapes, strict=True))
        raise RequestError(f"zip needs arrays of one logical shape; got {listed}", entry=entry)
    if op.into in {p.name for p in state.pointers} - set(op.arrays):
        raise RequestError(f"{op.into!r} already names an array", entry=entry)
    first = fields[0]
    n = len(first.digits)
    elements = [p.element for p in fields]
    intent = _union_intent([p.intent for p in fields])
    sources = tuple(itertools.chain.from_iterable(p.sources for p in fields))
    if len(set(elements)) == 1:
        dim = n if op.dim is None else op.dim
        if dim > n:
            raise RequestError(
                f"dim {dim} is beyond the {n + 1} dimensions of the stacked zip", entry=entry
            )
        names = [f"i{k}" for k in range(n + 1)]
        field_digit_names = names[:dim] + names[dim + 1 :]
        renaming = {f"i{k}": Sym(field_digit_names[k]) for k in range(n)}
        stack = Sym(names[dim])
        cells = []
        for k, pointer in enumerate(fields):
            for cell in pointer.cells:
                moved = cell.substitute(renaming)
                cells.append(replace(moved, live=(*moved.live, E.Bin("==", stack, Const(k)))))
        dim_extents = list(first.dim_extents)
        dim_extents.insert(dim, Const(len(fields)))
        digits = tuple(Digit(names[k], dim_extents[k], k) for k in range(n + 1))
        zipped = PointerState(
            name=op.into,
            intent=intent,
            element=elements[0],
            natural=fields[0].natural if len({p.natural for p in fields}) == 1 else None,
            digits=digits,
            dims=tuple((name,) for name in names),
            dim_extents=tuple(dim_extents),
            cells=tuple(cells),
            sources=sources,
            bindings=first.bindings,
            zip_kind="stacked",
            zip_fields=tuple(op.arrays),
            stacked_dim=dim,
        )
    else:
        if op.dim is not None:
            raise RequestError(
                "dim applies to a stacked zip (fields of one element type); fields of different "
                f"element types ({', '.join(f'{p.name}: {p.element}' for p in fields)}) become a struct",
                entry=entry,
            )
        struct = StructType(tuple((p.name, str(p.element)) for p in fields))
        cells = [replace(cell, member=p.name) for p in fields for cell in p.cells]
        zipped = replace(
            first,
            name=op.into,
            intent=intent,
            element=struct,
            natural=None,
            cells=tuple(cells),
            sources=sources,
            zip_kind="struct",
            zip_fields=tuple(op.arrays),
        )
    order: list[PointerState] = []
    for pointer in state.pointers:
        if pointer.name == op.arrays[0]:
            order.append(zipped)
        elif pointer.name not in op.arrays:
            order.append(pointer)
    gone = {**state.gone, **{name: f"was zipped into {op.into!r} at {entry}" for name in op.arrays}}
    return replace(state, pointers=tuple(order), gone=gone)


def _part_along(pointer: PointerState, dim: int, k: int, name: str) -> PointerState:
    digit_name = pointer.dims[dim][0]
    cells = tuple(c.substitute({digit_name: Const(k)}) for c in pointer.cells)
    digits = tuple(
        replace(d, dim=(d.dim - 1 if d.dim is not None and d.dim > dim else d.dim))
        for d in pointer.digits
        if d.name != digit_name
    )
    part = replace(
        pointer,
        name=name,
        digits=digits,
        dims=pointer.dims[:dim] + pointer.dims[dim + 1 :],
        dim_extents=pointer.dim_extents[:dim] + pointer.dim_extents[dim + 1 :],
        cuts=_drop_cuts(pointer, [digit_name]),
        unzip_of=pointer.name,
        stacked_dim=None,
        zip_kind=None if pointer.stacked_dim == dim else pointer.zip_kind,
        zip_fields=() if pointer.stacked_dim == dim else pointer.zip_fields,
    )
    if pointer.stacked_dim is not None and pointer.stacked_dim != dim:
        part = replace(
            part, stacked_dim=pointer.stacked_dim - (1 if pointer.stacked_dim > dim else 0)
        )
    part = replace(part, cells=_prune_live(part, cells))
    arrays_left = tuple(dict.fromkeys(c.array for c in part.cells))
    return replace(part, sources=arrays_left)


def unzip(state: ProgramState, op: Unzip, entry: str) -> ProgramState:
    _single_node_only(state, "unzip", entry)
    pointer = state.pointer(op.array, entry)
    if pointer.sparse or pointer.index:
        kind = "sparse" if pointer.sparse else "index"
        raise RequestError(f"{op.array} is a {kind} array; only dense arrays unzip", entry=entry)
    existing = {p.name for p in state.pointers}
    clashes = sorted(n for n in op.into if n in existing and n != op.array)
    if clashes:
        raise RequestError(f"{clashes} already name arrays", entry=entry)

    def count_check(expected: int, what: str) -> None:
        if len(op.into) != expected:
            raise RequestError(
                f"into needs {expected} names ({what}), got {len(op.into)}", entry=entry
            )

    dim = op.dim
    if dim is None and pointer.zip_kind == "stacked":
        dim = pointer.stacked_dim
    parts: list[PointerState]
    if dim is not None:
        if dim >= len(pointer.dims):
            raise RequestError(
                f"dim {dim} is beyond the {len(pointer.dims)} dimensions of {op.array}", entry=entry
            )
        names = pointer.dims[dim]
        extent = resolve(pointer, pointer.dim_extents[dim])
        if not isinstance(extent, Const):
            raise RequestError(
                f"dimension {dim} of {op.array} has extent {extent}, not a constant; unzip splits only "
                "along a dimension of constant extent",
                entry=entry,
            )
        if len(names) != 1 or resolve(pointer, pointer.digit(names[0]).extent) != extent:
            raise RequestError(
                f"dimension {dim} of {op.array} is laid out as digits {list(names)}; merge it back to "
                "one whole digit before the unzip",
                entry=entry,
            )
        count_check(extent.value, f"the extent of dimension {dim}")
        parts = [_part_along(pointer, dim, k, name) for k, name in enumerate(op.into)]
        if pointer.stacked_dim == dim:
            parts = [
                replace(p, natural=p.element if isinstance(p.element, str) else None) for p in parts
            ]
    elif isinstance(pointer.element, StructType):
        struct = pointer.element
        count_check(len(struct.members), "one per struct member")
        parts = []
        for (member, kind), name in zip(struct.members, op.into, strict=True):
            cells = tuple(replace(c, member=None) for c in pointer.cells if c.member == member)
            parts.append(
                replace(
                    pointer,
                    name=name,
                    element=kind,
                    natural=kind,
                    cells=cells,
                    sources=tuple(dict.fromkeys(c.array for c in cells)),
                    zip_kind=None,
                    zip_fields=(),
                    unzip_of=pointer.name,
                )
            )
    elif isinstance(pointer.element, str) and ELEMENT_TYPES[pointer.element].complex:
        count_check(2, "the real and imaginary parts")
        real = ELEMENT_TYPES[pointer.element].real_part
        assert real is not None
        if any(c.component is not None for c in pointer.cells):
            raise RequestError(f"{op.array} is already a component of a complex array", entry=entry)
        parts = [
            replace(
                pointer,
                name=name,
                element=real,
                natural=real,
                cells=tuple(replace(c, component=k) for c in pointer.cells),
                unzip_of=pointer.name,
            )
            for k, name in enumerate(op.into)
        ]
    else:
        raise RequestError(
            f"{op.array} is neither a zip nor a complex array; give dim to unzip it along a dimension of "
            "constant extent",
            entry=entry,
        )
    parts = [
        replace(part, intent=_union_intent([state.arrays[a].intent for a in part.sources]))
        for part in parts
    ]
    order: list[PointerState] = []
    for existing_pointer in state.pointers:
        order.extend(parts if existing_pointer.name == op.array else [existing_pointer])
    gone = {**state.gone, op.array: f"was unzipped into {list(op.into)} at {entry}"}
    return replace(state, pointers=tuple(order), gone=gone)
