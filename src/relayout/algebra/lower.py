"""Running a request's program over the digit algebra (one operation after another, with the
bounds on what one request may cost) and lowering the end state to the single-node NodeLayout the
conversion kernels consume."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from relayout import expr as E
from relayout.algebra.digits import (
    block,
    cast,
    format_sparse,
    linear_shuffle,
    pad,
    permute,
    shuffle,
    split,
    unblock,
    unpad,
    unsplit,
)
from relayout.algebra.grid import distribute, place, replicate
from relayout.algebra.regroup import unzip, zip_arrays
from relayout.algebra.state import (
    SUBSTITUTION_BUDGET,
    CellMap,
    Element,
    PointerState,
    ProgramState,
    StructType,
    _check_extents,
    _single_node_only,
    check_sizes,
    initial_state,
)
from relayout.arrays import ArraySpec, parse_arrays
from relayout.errors import RequestError, entry_label
from relayout.expr import Expr
from relayout.models import (
    Requests,
)

OPERATIONS: dict[str, Any] = {
    "cast": cast,
    "format": format_sparse,
    "distribute": distribute,
    "replicate": replicate,
    "split": split,
    "unsplit": unsplit,
    "block": block,
    "unblock": unblock,
    "permute": permute,
    "pad": pad,
    "unpad": unpad,
    "shuffle": shuffle,
    "linear_shuffle": linear_shuffle,
    "zip": zip_arrays,
    "unzip": unzip,
    "place": place,
}
SINGLE_NODE_ONLY = ("pad", "unpad", "shuffle", "linear_shuffle", "zip", "unzip")


def apply_operation(state: ProgramState, operation: Any, index: int) -> ProgramState:
    """The state after one operation; RequestError naming `operations[index] (action)`."""
    entry = entry_label(index, operation.action)
    if operation.action in SINGLE_NODE_ONLY:
        _single_node_only(state, operation.action, entry)
    try:
        result: ProgramState = OPERATIONS[operation.action](state, operation, entry)
    except E.ExprError as error:
        raise RequestError(str(error), entry=entry) from None
    except RecursionError:
        raise RequestError(
            "its expressions nest too deeply as the operations compose", entry=entry
        ) from None
    for pointer in result.pointers:
        _check_extents(result, pointer, entry)
    return result


def run_program(
    requests: Requests,
    arrays: Mapping[str, Any],
    sizes: Mapping[str, int] | None = None,
    grid: Sequence[int] | None = None,
    ranks: int | None = None,
) -> ProgramState:
    """Run every operation from the initial state; the end state, or RequestError naming the entry.

    `sizes` binds size symbols (N = 64); `grid` / `ranks` bind P and P0, P1, ... for the checks
    that need values. A distributed program must leave every array distributed or replicated.
    """
    specs = parse_arrays(arrays)
    env = check_sizes(sizes)
    with E.substitution_budget(SUBSTITUTION_BUDGET):
        return _run_program(requests, specs, env, grid, ranks)


def _run_program(
    requests: Requests,
    specs: Mapping[str, ArraySpec],
    env: dict[str, int],
    grid: Sequence[int] | None,
    ranks: int | None,
) -> ProgramState:
    grid_exprs = tuple(E.parse(g, bitwise=False) for g in requests.startup.grid)
    if grid is not None:
        env.update({f"P{k}": int(v) for k, v in enumerate(grid)})
    if ranks is not None:
        env["P"] = int(ranks)
    state = initial_state(specs, grid_exprs, env)
    for pointer in state.pointers:
        _check_extents(state, pointer, f"arrays.{pointer.name}")
    for index, operation in enumerate(requests.operations):
        state = apply_operation(state, operation, index)
    if state.grid:
        for pointer in state.pointers:
            if not pointer.axes and not pointer.replicated:
                raise RequestError(
                    f"array {pointer.name} is left neither distributed nor replicated; a distributed "
                    "run needs a distribute or replicate operation for every array",
                    entry="operations",
                )
    return state


# ---------------------------------------------------------------------------------------------
# The single-node lowering


@dataclass(frozen=True)
class PointerLayout:
    """One kernel pointer as the conversion kernels see it.

    `digits` are the packed row-major buffer's axes (outermost first) with extents over the
    arrays' size symbols; `cells` say, per struct member, which logical cell each physical position
    holds (see CellMap). `element` is a scalar type name (after casts) or a StructType. A sparse
    array has `sparse` set and no digits or cells: its storage is its format's.
    """

    name: str
    intent: str
    element: Element
    digits: tuple[tuple[str, Expr], ...]
    cells: tuple[CellMap, ...]
    sources: tuple[str, ...]
    sparse: str | None = None

    @property
    def members(self) -> tuple[str | None, ...]:
        if isinstance(self.element, StructType):
            return tuple(name for name, _ in self.element.members)
        return (None,)

    @property
    def extents(self) -> tuple[Expr, ...]:
        return tuple(extent for _, extent in self.digits)


@dataclass(frozen=True)
class NodeLayout:
    """The single-node lowering of a request: every kernel pointer in the kernel's order.

    `pointers` follow the arrays' (manifest) order; a zip's pointer sits where its first field was,
    an unzip's parts where the array was, in `into` order. `arrays` holds each source array's
    ArraySpec (problem dtype, extents, intent).
    """

    pointers: tuple[PointerLayout, ...]
    arrays: Mapping[str, ArraySpec]

    def pointer(self, name: str) -> PointerLayout:
        for pointer in self.pointers:
            if pointer.name == name:
                return pointer
        raise KeyError(name)

    def cell_indices(
        self, pointer: str | PointerLayout, sizes: Mapping[str, int]
    ) -> list[tuple[CellMap, np.ndarray]]:
        """Per cell map: for every physical position (row-major), the flat logical index into its
        array (element index * 2 + component for a complex component), or -1 where not live."""
        layout = self.pointer(pointer) if isinstance(pointer, str) else pointer
        env = {name: int(value) for name, value in sizes.items()}
        extents = [int(extent.evaluate(env)) for extent in layout.extents]
        count = int(np.prod(extents)) if extents else 1
        positions = (
            np.indices(tuple(extents), dtype=np.int64).reshape(len(extents), -1)
            if extents
            else np.zeros((0, 1), dtype=np.int64)
        )
        bound = {**env, **{name: positions[k] for k, (name, _) in enumerate(layout.digits)}}
        results = []
        for cell in layout.cells:
            spec = self.arrays[cell.array]
            array_extents = [int(e.evaluate(env)) for e in spec.extent_exprs]
            live = np.ones(count, dtype=bool)
            flat = np.zeros(count, dtype=np.int64)
            for condition in cell.live:
                live &= np.broadcast_to(np.asarray(condition.evaluate(bound)), (count,)) != 0
            for index_expr, extent in zip(cell.index, array_extents, strict=True):
                value = np.broadcast_to(
                    np.asarray(index_expr.evaluate(bound), dtype=np.int64), (count,)
                )
                live &= (value >= 0) & (value < extent)
                flat = flat * extent + np.where(live, value, 0)
            if cell.component is not None:
                flat = flat * 2 + cell.component
            results.append((cell, np.where(live, flat, -1)))
        return results

    def gather_indices(
        self, pointer: str | PointerLayout, sizes: Mapping[str, int]
    ) -> dict[str | None, np.ndarray]:
        """Per member, the flat logical index each physical cell holds, -1 for a dead cell.

        The index runs over the member's source arrays concatenated in order of first appearance
        in its cell maps, each flattened row-major (a complex array split into components counts
        as its real view: element e's component c at 2e + c). ValueError if two live cell maps
        claim one position.
        """
        layout = self.pointer(pointer) if isinstance(pointer, str) else pointer
        env = {name: int(value) for name, value in sizes.items()}
        result: dict[str | None, np.ndarray] = {}
        offsets: dict[str | None, dict[tuple[str, bool], int]] = {}
        totals: dict[str | None, int] = {}
        for cell, flat in self.cell_indices(layout, sizes):
            member_offsets = offsets.setdefault(cell.member, {})
            key = (cell.array, cell.component is not None)
            if key not in member_offsets:
                spec = self.arrays[cell.array]
                cells = int(np.prod([int(e.evaluate(env)) for e in spec.extent_exprs]))
                member_offsets[key] = totals.get(cell.member, 0)
                totals[cell.member] = member_offsets[key] + cells * (2 if key[1] else 1)
            current = result.setdefault(cell.member, np.full(flat.shape, -1, dtype=np.int64))
            claimed = flat >= 0
            if np.any(claimed & (current >= 0)):
                raise ValueError(
                    f"two cell maps of {layout.name} claim one position (member {cell.member})"
                )
            current[claimed] = flat[claimed] + member_offsets[key]
        return result


def to_pointer_layout(pointer: PointerState) -> PointerLayout:
    bindings = dict(pointer.bindings)
    digits = tuple((d.name, d.extent.substitute(bindings)) for d in pointer.digits)
    cells = tuple(cell.substitute(bindings) for cell in pointer.cells)
    return PointerLayout(
        name=pointer.name,
        intent=pointer.intent,
        element=pointer.element,
        digits=() if pointer.sparse else digits,
        cells=() if pointer.sparse else cells,
        sources=pointer.sources,
        sparse=pointer.sparse,
    )


def lower_single_node(
    requests: Requests | Any, arrays: Mapping[str, Any], sizes: Mapping[str, int] | None = None
) -> NodeLayout:
    """The NodeLayout of a request without startup.grid over `arrays`; RequestError as check().

    Without `sizes` the layout holds at every size (live conditions guard every round-up); with
    `sizes` it is specialised to them (a factor that divides there leaves no round-up), and a
    shuffle is checked to be a bijection at them.
    """
    requests = Requests.validate(requests)
    if requests.startup.grid:
        raise RequestError(
            "a request with startup.grid has no single-node layout", entry="startup.grid"
        )
    try:
        specs = parse_arrays(arrays)
    except ValueError as error:
        raise RequestError(str(error), entry="arrays") from None
    state = run_program(requests, specs, sizes)
    try:
        pointers = tuple(to_pointer_layout(p) for p in state.pointers)
    except E.ExprError as error:
        # Binding the logical extents grows an expression past the bounds of expr.substitute.
        raise RequestError(str(error), entry="operations") from None
    return NodeLayout(pointers=pointers, arrays=specs)
