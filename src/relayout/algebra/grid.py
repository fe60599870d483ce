"""Laying arrays out over a processor grid: distribute (a dimension or a digit to a grid
dimension, with its scheme), replicate and place, as functions (state, operation, entry) ->
state; relayout.plan reads the records they leave."""

from __future__ import annotations

from dataclasses import replace

from relayout.algebra.state import (
    AxisRecord,
    ProgramState,
    _find_digit,
    _is_whole,
    user_expr,
    value_of,
)
from relayout.errors import RequestError
from relayout.expr import Const
from relayout.models import (
    Distribute,
    Place,
    Replicate,
)


def _grid_needed(state: ProgramState, action: str, entry: str) -> None:
    if not state.grid:
        raise RequestError(f"{action} needs startup.grid (a distributed run)", entry=entry)


def distribute(state: ProgramState, op: Distribute, entry: str) -> ProgramState:
    _grid_needed(state, "distribute", entry)
    pointer = state.pointer(op.array, entry)
    if op.grid_dim >= len(state.grid):
        raise RequestError(
            f"grid_dim {op.grid_dim} is beyond the {len(state.grid)}-D startup.grid", entry=entry
        )
    if pointer.sparse:
        raise RequestError(
            f"{op.array} is a sparse array ({pointer.sparse}); distributing a sparse format is not implemented (replicate it)",
            entry=entry,
        )
    if pointer.replicated:
        raise RequestError(
            f"{op.array} is replicated; an array is either distributed or replicated", entry=entry
        )
    used = {record.grid_dim: dim for dim, record in pointer.axes}
    if op.grid_dim in used:
        raise RequestError(
            f"grid_dim {op.grid_dim} already distributes dimension {used[op.grid_dim]} of {op.array}",
            entry=entry,
        )
    if op.dim is not None:
        if op.dim >= len(pointer.dims):
            raise RequestError(
                f"dim {op.dim} is beyond the {len(pointer.dims)} dimensions of {op.array}",
                entry=entry,
            )
        names = pointer.dims[op.dim]
        if len(names) != 1 or not _is_whole(pointer, pointer.digit(names[0])):
            raise RequestError(
                f"dimension {op.dim} of {op.array} was cut into digits {list(names)} by earlier operations; "
                "distribute one of its digits (digit form) instead",
                entry=entry,
            )
        dim = op.dim
        digit_name = names[0]
        scheme = op.scheme or "block"
        block_size = (
            user_expr(state, pointer, op.block_size, entry, "block_size")
            if op.block_size is not None
            else Const(1)
        )
        record = AxisRecord(op.grid_dim, scheme, block_size, entry)
    else:
        assert op.digit is not None
        digit = _find_digit(pointer, op.digit, entry)
        digit_name = op.digit
        scheme = op.scheme or "block"
        if digit.dim is None:
            raise RequestError(f"digit {op.digit} cuts no dimension of {op.array}", entry=entry)
        dim = digit.dim
        cut = next((c for c in pointer.cuts if op.digit in (c.outer, c.inner)), None)
        if _is_whole(pointer, digit):
            record = AxisRecord(op.grid_dim, scheme, Const(1), entry)
        elif (
            cut is not None
            and cut.outer == op.digit
            and cut.whole_dimension
            and cut.kind == "split"
        ):
            record = AxisRecord(op.grid_dim, "block", Const(1), entry, parts=cut.amount)
        elif (
            cut is not None
            and cut.outer == op.digit
            and cut.whole_dimension
            and cut.kind == "block"
        ):
            if scheme != "cyclic":
                raise RequestError(
                    f"{op.digit} is a block's coarse digit; dealing it in bands is none of block, cyclic, "
                    "block_cyclic (give scheme cyclic for block_cyclic, or split the dimension for block)",
                    entry=entry,
                )
            factor_value = value_of(state, pointer, cut.amount)
            record = AxisRecord(
                op.grid_dim, "cyclic" if factor_value == 1 else "block_cyclic", cut.amount, entry
            )
        else:
            raise RequestError(
                f"distributing digit {op.digit} does not lower to a plan: only a whole dimension's digit, "
                "the band of a split of a whole dimension, or the coarse digit of a block of a whole "
                "dimension can be distributed",
                entry=entry,
            )
    if any(d == dim for d, _ in pointer.axes):
        raise RequestError(f"dimension {dim} of {op.array} is already distributed", entry=entry)
    digits = tuple(
        replace(d, distributed=True) if d.name == digit_name else d for d in pointer.digits
    )
    return state.with_pointer(replace(pointer, digits=digits, axes=(*pointer.axes, (dim, record))))


def replicate(state: ProgramState, op: Replicate, entry: str) -> ProgramState:
    _grid_needed(state, "replicate", entry)
    pointer = state.pointer(op.array, entry)
    if pointer.axes:
        raise RequestError(
            f"{op.array} is distributed; an array is either distributed or replicated", entry=entry
        )
    return state.with_pointer(replace(pointer, replicated=True))


def place(state: ProgramState, op: Place, entry: str) -> ProgramState:
    _grid_needed(state, "place", entry)
    pointer = state.pointer(op.array, entry)
    return state.with_pointer(replace(pointer, location=op.on))
