"""The digit algebra: each operation is a pure function from the arrays' state to the next, and the
end state lowers to the single-node NodeLayout the conversion kernels consume.

A pointer's state is its physical digits (names and extents, outermost first), the logical
dimension each digit cuts, and its cell maps: for every physical position, which logical index of
which array it holds and under which live conditions (dead cells read zero). Every operation is a
change of variables from the new digits to the old ones, applied by substitution to the cell maps;
extents are expressions over the pointer's logical extents d0, d1, ... (bound to the arrays' size
expressions when the layout is lowered).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np

from relayout import expr as E
from relayout.arrays import ArraySpec, parse_arrays
from relayout.errors import RequestError, entry_label
from relayout.expr import Const, Expr, Sym
from relayout.models import (
    Block,
    Cast,
    Distribute,
    Format,
    LinearShuffle,
    Pad,
    Permute,
    Place,
    Replicate,
    Requests,
    Shuffle,
    Split,
    Unblock,
    Unpad,
    Unsplit,
    Unzip,
    Zip,
)
from relayout.types import ELEMENT_TYPES

__all__ = [
    "BIJECTION_CHECK_LIMIT",
    "AxisRecord",
    "CellMap",
    "NodeLayout",
    "PointerLayout",
    "PointerState",
    "ProgramState",
    "StructType",
    "initial_state",
    "lower_single_node",
    "run_program",
]

# Above this many cells a shuffle's f / f_inv pair is not enumerated (the check is skipped).
BIJECTION_CHECK_LIMIT = 2**20
# Nor once a request's enumerations would pass this many cell-steps in all (cells times the
# steps of f and f_inv, a root counting ROOT_STEPS): this bounds the time a request's checks take,
# whatever its expressions and however many shuffles it has.
BIJECTION_WORK_LIMIT = 2**25
ROOT_STEPS = 8
# The most operations a request may have, and the nodes all its substitutions (each operation's
# change of variables) may visit in all: with the bounds of each expression, these bound the time
# and memory one request's check takes.
MAX_OPERATIONS = 128
SUBSTITUTION_BUDGET = 2**18
ZERO = Const(0)
RESERVED_SYMBOL = re.compile(r"^(P\d*|d\d+)$")


# ---------------------------------------------------------------------------------------------
# Element types of pointers


@dataclass(frozen=True)
class StructType:
    """A C struct of a mixed-type zip: members in request order, natural C alignment."""

    members: tuple[tuple[str, str], ...]

    @property
    def alignment(self) -> int:
        return max(ELEMENT_TYPES[kind].alignment for _, kind in self.members)

    @property
    def offsets(self) -> tuple[int, ...]:
        offsets, position = [], 0
        for _, kind in self.members:
            align = ELEMENT_TYPES[kind].alignment
            position = (position + align - 1) // align * align
            offsets.append(position)
            position += ELEMENT_TYPES[kind].size
        return tuple(offsets)

    @property
    def itemsize(self) -> int:
        last_kind = self.members[-1][1]
        end = self.offsets[-1] + ELEMENT_TYPES[last_kind].size
        return (end + self.alignment - 1) // self.alignment * self.alignment

    def numpy_dtype(self) -> np.dtype[Any]:
        """numpy's aligned structured dtype with the same members (same size and offsets)."""
        return np.dtype(
            [(name, ELEMENT_TYPES[kind].numpy_dtype) for name, kind in self.members], align=True
        )

    def c_typedef(self, name: str) -> str:
        """`typedef struct { float u; double v; } name;` with half/storage types as their bits."""
        members = " ".join(
            f"{ELEMENT_TYPES[kind].storage_c_type} {member};" for member, kind in self.members
        )
        return f"typedef struct {{ {members} }} {name};"

    def member_type(self, member: str) -> str:
        for name, kind in self.members:
            if name == member:
                return kind
        raise KeyError(member)


Element = str | StructType


# ---------------------------------------------------------------------------------------------
# State


@dataclass(frozen=True)
class CellMap:
    """Which logical cell a physical position holds, for one struct member (None: scalar element).

    `index` has one Expr per logical dimension of `array`, over the digit names and size symbols;
    the cell is live when every `live` Expr is non-zero and 0 <= index[d] < extent[d]. `component`
    is 0 / 1 for the real / imaginary part of a complex array unzipped into parts, else None.
    """

    member: str | None
    array: str
    component: int | None
    index: tuple[Expr, ...]
    live: tuple[Expr, ...] = ()

    def substitute(self, mapping: Mapping[str, Expr]) -> CellMap:
        return replace(
            self,
            index=tuple(e.substitute(mapping) for e in self.index),
            live=tuple(e.substitute(mapping) for e in self.live),
        )


@dataclass(frozen=True)
class Digit:
    """A physical digit: its name, extent, the logical dimension it cuts, and its dead tail."""

    name: str
    extent: Expr
    dim: int | None
    dead_tail: Expr = ZERO
    distributed: bool = False


@dataclass(frozen=True)
class Cut:
    """A block or split that made the pair (outer, inner) from `merged`; its inverse needs it."""

    kind: Literal["block", "split"]
    outer: str
    inner: str
    amount: Expr
    merged: Digit
    whole_dimension: bool
    live: Expr | None
    # split only: the band length and remainder, and whether the remainder is known to be 0.
    quotient: Expr = ZERO
    remainder: Expr = ZERO
    exact: bool = False


@dataclass(frozen=True)
class AxisRecord:
    """How one logical dimension of an array is distributed, and which entry said so."""

    grid_dim: int
    scheme: str
    block_size: Expr
    entry: str
    parts: Expr | None = None


@dataclass(frozen=True)
class PointerState:
    """Everything the algebra knows about one kernel pointer between two operations."""

    name: str
    intent: str
    element: Element
    natural: str | None  # the element type before any cast (None for a struct)
    digits: tuple[Digit, ...]
    dims: tuple[tuple[str, ...], ...]  # per logical dimension: its digits, most significant first
    dim_extents: tuple[Expr, ...]  # the pointer's logical extents, over d0, d1, ...
    cells: tuple[CellMap, ...]
    sources: tuple[str, ...]
    bindings: tuple[tuple[str, Expr], ...]  # d-symbol -> the arrays' extent expression
    cuts: tuple[Cut, ...] = ()
    zip_kind: Literal["stacked", "struct"] | None = None
    zip_fields: tuple[str, ...] = ()
    stacked_dim: int | None = None
    unzip_of: str | None = None
    sparse: str | None = None
    index: bool = False
    axes: tuple[tuple[int, AxisRecord], ...] = ()
    replicated: bool = False
    location: str | None = None

    def digit(self, name: str) -> Digit:
        for digit in self.digits:
            if digit.name == name:
                return digit
        raise KeyError(name)

    @property
    def digit_names(self) -> tuple[str, ...]:
        return tuple(d.name for d in self.digits)


@dataclass(frozen=True)
class ProgramState:
    """The pointers in the kernel's order, the arrays behind them, and the run's context."""

    arrays: Mapping[str, ArraySpec]
    pointers: tuple[PointerState, ...]
    grid: tuple[Expr, ...]
    env: Mapping[str, int]
    gone: Mapping[str, str] = field(default_factory=dict)  # name -> where it went
    bijection_work: int = 0  # cell-steps the shuffles' bijection checks have spent so far

    def pointer(self, name: str, entry: str) -> PointerState:
        for pointer in self.pointers:
            if pointer.name == name:
                return pointer
        if name in self.gone:
            raise RequestError(f"array {name!r} {self.gone[name]}", entry=entry)
        present = ", ".join(p.name for p in self.pointers) or "none"
        raise RequestError(f"unknown array {name!r}; arrays now: {present}", entry=entry)

    def with_pointer(self, pointer: PointerState) -> ProgramState:
        return replace(
            self, pointers=tuple(pointer if p.name == pointer.name else p for p in self.pointers)
        )


def check_sizes(sizes: Mapping[str, Any] | None) -> dict[str, int]:
    """The sizes as {symbol: int}; RequestError `sizes.N: ...` for a name that is not an identifier
    or is reserved (P, P<k>, d<k>), or a value that is not an integer from 0 (an empty problem) to
    the int64 maximum. Names no extent uses are accepted and ignored: a caller passes a kernel's
    whole size set, scalars' symbols included."""
    if sizes is None:
        return {}
    if not isinstance(sizes, Mapping):
        raise RequestError("sizes must map each size symbol to an integer", entry="sizes")
    checked: dict[str, int] = {}
    for name, value in sizes.items():
        entry = f"sizes.{name}"
        if not isinstance(name, str) or not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name):
            raise RequestError(f"size name {name!r} is not an identifier", entry="sizes")
        if RESERVED_SYMBOL.match(name):
            raise RequestError(
                "P, P<k> and d<k> are reserved for the grid and logical extents, not sizes",
                entry=entry,
            )
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise RequestError(f"{value!r} is not an integer", entry=entry)
        if not 0 <= int(value) <= E.INT64_MAX:
            raise RequestError(
                f"{int(value)} is not a size: a size is an integer from 0 to 2**63 - 1", entry=entry
            )
        checked[name] = int(value)
    return checked


def _check_int64(value: int, what: str, entry: str) -> None:
    if not E.INT64_MIN <= value <= E.INT64_MAX:
        raise RequestError(f"{what} is {value}, outside int64", entry=entry)


def _check_extents(state: ProgramState, pointer: PointerState, entry: str) -> None:
    """Refuse a pointer whose digit extents or cell count the sizes make overflow int64: the
    conversion kernels index its buffer with int64_t."""
    cells = 1
    for digit in pointer.digits:
        try:
            value = value_of(state, pointer, digit.extent)
        except E.ExprError as error:
            raise RequestError(
                f"the extent {E.quote(digit.extent)} of {digit.name}: {error}", entry=entry
            ) from None
        if value is None:
            return
        _check_int64(value, f"the extent {digit.extent} of {digit.name}", entry)
        cells *= max(value, 0)
    _check_int64(cells, f"the cell count of {pointer.name}", entry)


def initial_state(
    arrays: Mapping[str, ArraySpec], grid: Sequence[Expr] = (), env: Mapping[str, int] | None = None
) -> ProgramState:
    """Every array whole, on the host, row-major, at its problem precision, digits i0 .. i(n-1)."""
    pointers = []
    for name, spec in arrays.items():
        n = spec.ndim
        extents = spec.extent_exprs
        for extent in extents:
            reserved = sorted(s for s in extent.symbols() if RESERVED_SYMBOL.match(s))
            if reserved:
                raise RequestError(
                    f"extent {extent} uses {reserved}, reserved for grid and logical extents",
                    entry=f"arrays.{name}",
                )
            try:
                value = extent.evaluate(env)
            except E.ExprOverflow as error:
                raise RequestError(f"extent {extent}: {error}", entry=f"arrays.{name}") from None
            except E.ExprError:
                continue
            if value < 0:
                raise RequestError(
                    f"extent {extent} is {value} at these sizes; an extent is at least 0",
                    entry=f"arrays.{name}",
                )
            _check_int64(int(value), f"extent {extent}", f"arrays.{name}")
        d_symbols = tuple(Sym(f"d{k}") for k in range(n))
        pointers.append(
            PointerState(
                name=name,
                intent=spec.intent,
                element=spec.dtype,
                natural=spec.dtype,
                digits=tuple(Digit(f"i{k}", d_symbols[k], k) for k in range(n)),
                dims=tuple((f"i{k}",) for k in range(n)),
                dim_extents=d_symbols,
                cells=(CellMap(None, name, None, tuple(Sym(f"i{k}") for k in range(n))),),
                sources=(name,),
                bindings=tuple((f"d{k}", extents[k]) for k in range(n)),
                sparse=spec.sparse,
                index=spec.index,
            )
        )
    return ProgramState(
        arrays=dict(arrays), pointers=tuple(pointers), grid=tuple(grid), env=dict(env or {})
    )


# ---------------------------------------------------------------------------------------------
# Helpers on expressions in a state


def resolve(pointer: PointerState, expr: Expr) -> Expr:
    """The expression with the pointer's logical extents bound to the arrays' size expressions."""
    return expr.substitute(dict(pointer.bindings))


def value_of(state: ProgramState, pointer: PointerState, expr: Expr) -> int | None:
    """The integer value of an expression when the bound sizes (and grid) determine it; None
    where they do not. ExprOverflow where a step leaves int64, the sizes bound or not (a part
    over constants alone is evaluated either way); ExprTooLarge from resolving it."""
    resolved = resolve(pointer, expr)
    try:
        value = resolved.evaluate(state.env)
    except E.ExprOverflow:
        raise
    except E.ExprError:
        return None
    return int(value)


def user_expr(
    state: ProgramState, pointer: PointerState, value: int | str, entry: str, what: str
) -> Expr:
    parsed = E.parse(value, bitwise=False)
    allowed = set(state.env) | _size_symbols(state) | _grid_symbols(state)
    unknown = sorted(parsed.symbols() - allowed)
    if unknown:
        raise RequestError(
            f"{what} {value!r} names unknown symbol(s) {unknown}; accepted: size symbols "
            f"{sorted(_size_symbols(state))}" + (", grid symbols P, P0, ..." if state.grid else ""),
            entry=entry,
        )
    return parsed


def _size_symbols(state: ProgramState) -> set[str]:
    found: set[str] = set()
    for spec in state.arrays.values():
        for extent in spec.extent_exprs:
            found |= extent.symbols()
    return found


def _grid_symbols(state: ProgramState) -> set[str]:
    if not state.grid:
        return set()
    return {"P", *(f"P{k}" for k in range(len(state.grid)))}


def _prune_live(pointer: PointerState, cells: Sequence[CellMap]) -> tuple[CellMap, ...]:
    """Drop live conditions that always hold (a constant, or `digit < its own extent`) and cell
    maps a constant-false condition kills."""
    extents = {d.name: d.extent for d in pointer.digits}
    kept = []
    for cell in cells:
        live = []
        seen: set[Expr] = set()  # a hashed look-up: a list's would compare every pair of trees
        dead = False
        for condition in cell.live:
            if isinstance(condition, Const):
                if condition.value == 0:
                    dead = True
                continue
            if (
                isinstance(condition, E.Bin)
                and condition.op == "<"
                and isinstance(condition.left, Sym)
                and extents.get(condition.left.name) == condition.right
            ):
                continue
            if condition not in seen:
                seen.add(condition)
                live.append(condition)
        if not dead:
            kept.append(replace(cell, live=tuple(live)))
    return tuple(kept)


def _substituted(pointer: PointerState, mapping: Mapping[str, Expr]) -> tuple[CellMap, ...]:
    return tuple(cell.substitute(mapping) for cell in pointer.cells)


def _drop_cuts(pointer: PointerState, names: Sequence[str]) -> tuple[Cut, ...]:
    touched = set(names)
    return tuple(c for c in pointer.cuts if c.outer not in touched and c.inner not in touched)


def _check_new_names(
    state: ProgramState,
    pointer: PointerState,
    names: Sequence[str],
    entry: str,
    keep: Sequence[str] = (),
) -> None:
    existing = set(pointer.digit_names) - set(keep)
    reserved = _size_symbols(state) | set(state.env)
    for name in names:
        if name in existing:
            raise RequestError(
                f"digit name {name!r} is already a digit of {pointer.name}", entry=entry
            )
        if RESERVED_SYMBOL.match(name) or name in reserved:
            raise RequestError(
                f"digit name {name!r} is reserved (grid symbols P, P0.., extents d0.., sizes)",
                entry=entry,
            )


def _find_digit(pointer: PointerState, name: str, entry: str) -> Digit:
    try:
        return pointer.digit(name)
    except KeyError:
        raise RequestError(
            f"unknown digit {name!r} of {pointer.name}; its digits: {', '.join(pointer.digit_names) or 'none'}",
            entry=entry,
        ) from None


def _dense_for_digits(state: ProgramState, pointer: PointerState, entry: str) -> None:
    if pointer.sparse:
        raise RequestError(
            f"{pointer.name} is a sparse array ({pointer.sparse}); it takes format, replicate and place, never a digit operation",
            entry=entry,
        )


def _not_distributed(pointer: PointerState, names: Sequence[str], entry: str) -> None:
    for name in names:
        if pointer.digit(name).distributed:
            raise RequestError(
                f"digit {name!r} of {pointer.name} is distributed; it can only be permuted",
                entry=entry,
            )


def _replace_digit(pointer: PointerState, old: str, new: Sequence[Digit]) -> tuple[Digit, ...]:
    digits: list[Digit] = []
    for digit in pointer.digits:
        digits.extend(new if digit.name == old else [digit])
    return tuple(digits)


def _replace_in_dims(
    pointer: PointerState, old: str, new: Sequence[str]
) -> tuple[tuple[str, ...], ...]:
    dims = []
    for names in pointer.dims:
        updated: list[str] = []
        for name in names:
            updated.extend(new if name == old else [name])
        dims.append(tuple(updated))
    return tuple(dims)


def _is_whole(pointer: PointerState, digit: Digit) -> bool:
    """The digit is its dimension's only digit and spans exactly its logical extent."""
    return (
        digit.dim is not None
        and pointer.dims[digit.dim] == (digit.name,)
        and digit.extent == pointer.dim_extents[digit.dim]
    )


def _amount(
    state: ProgramState,
    pointer: PointerState,
    value: int | str,
    entry: str,
    what: str,
    least: int,
) -> tuple[Expr, int | None]:
    """A factor, parts or amount of an operation and its value where the sizes fix it; refused
    when that value is below `least`."""
    amount = user_expr(state, pointer, value, entry, what)
    try:
        amount_value = value_of(state, pointer, amount)
    except E.ExprOverflow as error:
        raise RequestError(f"{what} {value!r}: {error}", entry=entry) from None
    if amount_value is not None:
        _check_int64(amount_value, f"{what} {value!r}", entry)
    if amount_value is not None and amount_value < least:
        raise RequestError(
            f"{what} {value!r} is {amount_value}; it must be at least {least}", entry=entry
        )
    return amount, amount_value


def _and_live(cells: Sequence[CellMap], live: Expr | None) -> tuple[CellMap, ...]:
    """The cell maps with one more live condition (none when `live` is None)."""
    if live is None:
        return tuple(cells)
    return tuple(replace(c, live=(*c.live, live)) for c in cells)


def _with_cells(
    state: ProgramState, pointer: PointerState, cells: Sequence[CellMap]
) -> ProgramState:
    """The state with `pointer` holding `cells`, their always-true conditions pruned."""
    return state.with_pointer(replace(pointer, cells=_prune_live(pointer, cells)))


def _single_node_only(state: ProgramState, action: str, entry: str) -> None:
    if state.grid:
        raise RequestError(
            f"{action} is single-node only; it is refused with startup.grid", entry=entry
        )


# ---------------------------------------------------------------------------------------------
# One function per operation: (state, operation, entry) -> state


def cast(state: ProgramState, op: Cast, entry: str) -> ProgramState:
    pointer = state.pointer(op.array, entry)
    if pointer.sparse:
        raise RequestError(
            f"{op.array} is a sparse array ({pointer.sparse}); a cast of sparse values is not supported (casts apply to dense floating arrays)",
            entry=entry,
        )
    if pointer.index:
        raise RequestError(
            f"{op.array} is an index array; casts apply to dense floating arrays", entry=entry
        )
    if pointer.zip_kind or not isinstance(pointer.element, str) or pointer.natural is None:
        raise RequestError(f"{op.array} is a zip; cast its fields before the zip", entry=entry)
    natural = ELEMENT_TYPES[pointer.natural]
    if not natural.floating:
        raise RequestError(
            f"{op.array} is {pointer.natural}, not a floating array; casts apply to fp64, fp32, fp16, "
            "bf16, fp8 arrays"
            + (" (unzip a complex array into parts first)" if natural.complex else ""),
            entry=entry,
        )
    if op.to == pointer.natural:
        raise RequestError(
            f"{op.array} already is {op.to}, its problem dtype; cast to another precision or drop the cast",
            entry=entry,
        )
    return state.with_pointer(replace(pointer, element=op.to))


def format_sparse(state: ProgramState, op: Format, entry: str) -> ProgramState:
    pointer = state.pointer(op.array, entry)
    if not pointer.sparse:
        raise RequestError(
            f"{op.array} is a dense array; format applies only to sparse arrays", entry=entry
        )
    if pointer.intent != "in":
        raise RequestError(
            f"{op.array} is written by the kernel (intent {pointer.intent}); only an input-only "
            "sparse array takes another format",
            entry=entry,
        )
    return state.with_pointer(replace(pointer, sparse=op.to))


def permute(state: ProgramState, op: Permute, entry: str) -> ProgramState:
    pointer = state.pointer(op.array, entry)
    _dense_for_digits(state, pointer, entry)
    current = pointer.digit_names
    if sorted(op.order) != sorted(current):
        missing = sorted(set(current) - set(op.order))
        unknown = sorted(set(op.order) - set(current))
        repeated = sorted({n for n in op.order if op.order.count(n) > 1})
        details = "; ".join(
            part
            for part in (
                f"missing {missing}" if missing else "",
                f"unknown {unknown}" if unknown else "",
                f"repeated {repeated}" if repeated else "",
            )
            if part
        )
        raise RequestError(
            f"order must name each current digit of {op.array} once ({', '.join(current)}): {details}",
            entry=entry,
        )
    by_name = {d.name: d for d in pointer.digits}
    return state.with_pointer(replace(pointer, digits=tuple(by_name[n] for n in op.order)))


def block(state: ProgramState, op: Block, entry: str) -> ProgramState:
    pointer = state.pointer(op.array, entry)
    _dense_for_digits(state, pointer, entry)
    digit = _find_digit(pointer, op.digit, entry)
    _not_distributed(pointer, [op.digit], entry)
    coarse_name, fine_name = op.into
    _check_new_names(state, pointer, op.into, entry, keep=[op.digit])
    factor, factor_value = _amount(state, pointer, op.factor, entry, "factor", least=1)
    extent_value = value_of(state, pointer, digit.extent)
    outermost = digit.dim is None or pointer.dims[digit.dim][0] == digit.name
    divides = (
        extent_value is not None and factor_value is not None and extent_value % factor_value == 0
    )
    if not outermost and extent_value is not None and factor_value is not None and not divides:
        raise RequestError(
            f"factor {factor_value} does not divide the extent {extent_value} of {op.digit}, an inner "
            f"digit of its dimension (only a dimension's outermost digit pads to a multiple)",
            entry=entry,
        )
    coarse_extent = (
        E.floordiv(digit.extent, factor) if divides else E.ceil_div(digit.extent, factor)
    )
    merged = E.add(E.mul(Sym(coarse_name), factor), Sym(fine_name))
    live = None if divides else E.binary("<", merged, digit.extent)
    cells = _and_live(_substituted(pointer, {op.digit: merged}), live)
    new_digits = [Digit(coarse_name, coarse_extent, digit.dim), Digit(fine_name, factor, digit.dim)]
    cut = Cut("block", coarse_name, fine_name, factor, digit, _is_whole(pointer, digit), live)
    updated = replace(
        pointer,
        digits=_replace_digit(pointer, op.digit, new_digits),
        dims=_replace_in_dims(pointer, op.digit, [coarse_name, fine_name]),
        cuts=(*_drop_cuts(pointer, [op.digit]), cut),
    )
    return _with_cells(state, updated, cells)


def _the_cut(
    pointer: PointerState,
    kind: str,
    digits: Sequence[str],
    amount: Expr,
    state: ProgramState,
    entry: str,
) -> Cut:
    outer, inner = digits
    for cut in pointer.cuts:
        if cut.kind == kind and cut.outer == outer and cut.inner == inner:
            made_with = value_of(state, pointer, cut.amount)
            same = cut.amount == amount or (
                made_with is not None and made_with == value_of(state, pointer, amount)
            )
            if not same:
                word = "factor" if kind == "block" else "parts"
                raise RequestError(
                    f"{outer}, {inner} were made with {word} {cut.amount}, not {amount}",
                    entry=entry,
                )
            return cut
    pairs = [f"[{c.outer}, {c.inner}]" for c in pointer.cuts if c.kind == kind]
    raise RequestError(
        f"[{outer}, {inner}] is not a pair a {kind} made (or one of its digits changed since); "
        f"{kind} pairs of {pointer.name} now: {', '.join(pairs) or 'none'}",
        entry=entry,
    )


def _merge_pair(
    pointer: PointerState, cut: Cut, into: str, entry: str
) -> tuple[tuple[Digit, ...], tuple[tuple[str, ...], ...]]:
    names = list(pointer.digit_names)
    position = names.index(cut.outer)
    if position + 1 >= len(names) or names[position + 1] != cut.inner:
        raise RequestError(
            f"{cut.outer} and {cut.inner} are not adjacent (digits: {', '.join(names)}); permute them "
            f"next to each other, {cut.outer} first, before merging",
            entry=entry,
        )
    merged = replace(cut.merged, name=into)
    digits = (*pointer.digits[:position], merged, *pointer.digits[position + 2 :])
    dims = []
    for dim_names in pointer.dims:
        updated: list[str] = []
        for name in dim_names:
            if name == cut.outer:
                updated.append(into)
            elif name != cut.inner:
                updated.append(name)
        dims.append(tuple(updated))
    return digits, tuple(dims)


def _undo_cut(
    state: ProgramState, op: Unblock | Unsplit, entry: str
) -> tuple[PointerState, Cut, tuple[CellMap, ...]]:
    """What unblock and unsplit share: find the block or split that made op.digits, merge the
    pair back into op.into, and drop the live condition the cut added. Returns the pointer with
    its merged digits (cells not yet rewritten), the cut, and the cells to substitute into."""
    if isinstance(op, Unblock):
        kind, what, value = "block", "factor", op.factor
    else:
        kind, what, value = "split", "parts", op.parts
    pointer = state.pointer(op.array, entry)
    _dense_for_digits(state, pointer, entry)
    for name in op.digits:
        _find_digit(pointer, name, entry)
    _not_distributed(pointer, op.digits, entry)
    amount = user_expr(state, pointer, value, entry, what)
    cut = _the_cut(pointer, kind, op.digits, amount, state, entry)
    _check_new_names(state, pointer, [op.into], entry, keep=op.digits)
    digits, dims = _merge_pair(pointer, cut, op.into, entry)
    cells = tuple(replace(c, live=tuple(x for x in c.live if x != cut.live)) for c in pointer.cells)
    updated = replace(pointer, digits=digits, dims=dims, cuts=_drop_cuts(pointer, op.digits))
    return updated, cut, cells


def unblock(state: ProgramState, op: Unblock, entry: str) -> ProgramState:
    updated, cut, cells = _undo_cut(state, op, entry)
    x = Sym(op.into)
    mapping = {cut.outer: E.floordiv(x, cut.amount), cut.inner: E.mod(x, cut.amount)}
    return _with_cells(state, updated, tuple(c.substitute(mapping) for c in cells))


def split(state: ProgramState, op: Split, entry: str) -> ProgramState:
    pointer = state.pointer(op.array, entry)
    _dense_for_digits(state, pointer, entry)
    digit = _find_digit(pointer, op.digit, entry)
    _not_distributed(pointer, [op.digit], entry)
    if digit.dim is None or pointer.dims[digit.dim] != (digit.name,):
        others = pointer.dims[digit.dim] if digit.dim is not None else ()
        raise RequestError(
            f"split cuts a whole dimension; {op.digit} is one of the digits {list(others)} of its "
            "dimension (merge them first)",
            entry=entry,
        )
    band, offset = op.into
    _check_new_names(state, pointer, op.into, entry, keep=[op.digit])
    parts, parts_value = _amount(state, pointer, op.parts, entry, "parts", least=1)
    extent_value = value_of(state, pointer, digit.extent)
    exact = parts_value is not None and extent_value is not None and extent_value % parts_value == 0
    quotient = E.floordiv(digit.extent, parts)
    remainder = E.mod(digit.extent, parts)
    band_start = (
        E.mul(Sym(band), quotient)
        if exact
        else E.add(E.mul(Sym(band), quotient), E.call("min", (Sym(band), remainder)))
    )
    merged = E.add(band_start, Sym(offset))
    live = (
        None
        if exact
        else E.binary("<", Sym(offset), E.add(quotient, E.binary("<", Sym(band), remainder)))
    )
    cells = _and_live(_substituted(pointer, {op.digit: merged}), live)
    offset_extent = quotient if exact else E.ceil_div(digit.extent, parts)
    new_digits = [Digit(band, parts, digit.dim), Digit(offset, offset_extent, digit.dim)]
    cut = Cut(
        "split",
        band,
        offset,
        parts,
        digit,
        _is_whole(pointer, digit),
        live,
        quotient,
        remainder,
        exact,
    )
    updated = replace(
        pointer,
        digits=_replace_digit(pointer, op.digit, new_digits),
        dims=_replace_in_dims(pointer, op.digit, [band, offset]),
        cuts=(*_drop_cuts(pointer, [op.digit]), cut),
    )
    return _with_cells(state, updated, cells)


def unsplit(state: ProgramState, op: Unsplit, entry: str) -> ProgramState:
    updated, cut, cells = _undo_cut(state, op, entry)
    x = Sym(op.into)
    q, r = cut.quotient, cut.remainder
    if cut.exact:
        mapping = {cut.outer: E.floordiv(x, q), cut.inner: E.mod(x, q)}
    else:
        # The first r bands are q + 1 long, the rest q: which band x falls in, and where in it.
        long_span = E.mul(r, E.add(q, Const(1)))
        in_long = E.binary("<", x, long_span)
        band_of_x = E.add(
            E.mul(in_long, E.floordiv(x, E.add(q, Const(1)))),
            E.mul(
                E.sub(Const(1), in_long),
                E.add(r, E.floordiv(E.sub(x, long_span), E.call("max", (q, Const(1))))),
            ),
        )
        start = E.add(E.mul(band_of_x, q), E.call("min", (band_of_x, r)))
        mapping = {cut.outer: band_of_x, cut.inner: E.sub(x, start)}
    return _with_cells(state, updated, tuple(c.substitute(mapping) for c in cells))


def pad(state: ProgramState, op: Pad, entry: str) -> ProgramState:
    pointer = state.pointer(op.array, entry)
    _dense_for_digits(state, pointer, entry)
    digit = _find_digit(pointer, op.digit, entry)
    amount, _ = _amount(state, pointer, op.amount, entry, "amount", least=0)
    live = E.binary("<", Sym(op.digit), digit.extent)
    padded = replace(
        digit, extent=E.add(digit.extent, amount), dead_tail=E.add(digit.dead_tail, amount)
    )
    updated = replace(
        pointer,
        digits=_replace_digit(pointer, op.digit, [padded]),
        cuts=_drop_cuts(pointer, [op.digit]),
    )
    return _with_cells(state, updated, _and_live(pointer.cells, live))


def unpad(state: ProgramState, op: Unpad, entry: str) -> ProgramState:
    pointer = state.pointer(op.array, entry)
    _dense_for_digits(state, pointer, entry)
    digit = _find_digit(pointer, op.digit, entry)
    amount, amount_value = _amount(state, pointer, op.amount, entry, "amount", least=0)
    tail_value = value_of(state, pointer, digit.dead_tail)
    provably_dead = amount == digit.dead_tail or (
        amount_value is not None and tail_value is not None and amount_value <= tail_value
    )
    if not provably_dead:
        raise RequestError(
            f"unpad of {op.amount} would drop live cells: only the last {digit.dead_tail} cells of "
            f"{op.digit} are known dead (from pad)",
            entry=entry,
        )
    trimmed = replace(
        digit, extent=E.sub(digit.extent, amount), dead_tail=E.sub(digit.dead_tail, amount)
    )
    updated = replace(
        pointer,
        digits=_replace_digit(pointer, op.digit, [trimmed]),
        cuts=_drop_cuts(pointer, [op.digit]),
    )
    return _with_cells(state, updated, pointer.cells)


def _shuffled_extents(
    state: ProgramState, pointer: PointerState, names: Sequence[str]
) -> list[int] | None:
    values = [value_of(state, pointer, pointer.digit(name).extent) for name in names]
    if any(v is None for v in values):
        return None
    return [int(v) for v in values if v is not None]


def bijection_work(extents: Sequence[int], functions: Sequence[Expr]) -> int:
    """The cell-steps check_bijection spends on a box of `extents`: each of f and f_inv is
    evaluated twice over every cell (once on the box, once on the other's image); 0 where it
    enumerates nothing (an empty box, or one past BIJECTION_CHECK_LIMIT cells)."""
    count = int(np.prod(extents, dtype=object)) if extents else 1
    if count > BIJECTION_CHECK_LIMIT or count == 0:
        return 0
    steps = 0
    for function in functions:
        for node in E.walk(function):
            steps += ROOT_STEPS if isinstance(node, E.Call) and node.function == "root" else 1
    return 2 * count * steps


def check_bijection(
    names: Sequence[str],
    extents: Sequence[int],
    forward: Sequence[Expr],
    inverse: Sequence[Expr],
    env: Mapping[str, int],
) -> str | None:
    """None when forward and inverse are inverse bijections of the box `extents` (or the box is
    empty or past BIJECTION_CHECK_LIMIT cells, where nothing is enumerated), else a witness. A
    step of either that leaves int64 at any cell makes them no bijections, and says so."""
    count = int(np.prod(extents, dtype=object)) if extents else 1
    if count > BIJECTION_CHECK_LIMIT or count == 0:
        return None
    grid = np.indices(tuple(extents), dtype=np.int64).reshape(len(extents), -1)
    position = {name: grid[k] for k, name in enumerate(names)}

    def apply(functions: Sequence[Expr], at: Mapping[str, Any]) -> list[np.ndarray]:
        values = []
        for function in functions:
            value = function.evaluate({**env, **at})
            values.append(np.broadcast_to(np.asarray(value, dtype=np.int64), (count,)))
        return values

    def describe(k: int) -> str:
        return ", ".join(f"{name}={int(grid[j][k])}" for j, name in enumerate(names))

    def failure(what: str, error: E.ExprError) -> str:
        at = (
            f" at ({describe(error.cell)})" if error.cell is not None and error.cell < count else ""
        )
        if isinstance(error, E.ExprOverflow):
            return f"{what} overflows int64{at}: {error}"
        return f"{what} does not evaluate{at}: {error}"

    for label, first, second in (("f", forward, inverse), ("f_inv", inverse, forward)):
        try:
            image = apply(first, position)
        except E.ExprError as error:
            return failure(label, error)
        for j, name in enumerate(names):
            outside = np.nonzero((image[j] < 0) | (image[j] >= extents[j]))[0]
            if outside.size:
                k = int(outside[0])
                return f"{label}({describe(k)}) gives {name}={int(image[j][k])}, outside 0..{extents[j] - 1}"
        try:
            back = apply(second, {name: image[j] for j, name in enumerate(names)})
        except E.ExprError as error:
            other = "f_inv" if label == "f" else "f"
            return failure(f"{other}({label}(...))", error)
        wrong = np.zeros(count, dtype=bool)
        for j in range(len(names)):
            wrong |= back[j] != grid[j]
        if wrong.any():
            k = int(np.nonzero(wrong)[0][0])
            other = "f_inv" if label == "f" else "f"
            return f"{other}({label}({describe(k)})) is not ({describe(k)})"
    return None


def shuffle(state: ProgramState, op: Shuffle, entry: str) -> ProgramState:
    _single_node_only(state, "shuffle", entry)
    pointer = state.pointer(op.array, entry)
    _dense_for_digits(state, pointer, entry)
    for name in op.digits:
        _find_digit(pointer, name, entry)
    forward = [E.parse(text) for text in op.f]
    # Checked as written: folding may drop a step that overflows ((x * c) // c is x).
    written = [E.parse(text) for text in op.f_inv]
    # Folded once here, so that later substitutions compare equal to these expressions.
    inverse = [function.substitute({}) for function in written]
    allowed = set(op.digits) | _size_symbols(state) | set(state.env)
    for label, functions in (("f", forward), ("f_inv", inverse)):
        for function in functions:
            unknown = sorted(function.symbols() - allowed)
            if unknown:
                raise RequestError(
                    f"{label} expression {function} names {unknown}; it may name only the shuffled "
                    f"digits {list(op.digits)} and size symbols",
                    entry=entry,
                )
    sizes_only = {name: value for name, value in state.env.items() if name not in op.digits}
    for label, functions in (("f", forward), ("f_inv", written)):
        for function in functions:
            # The parts over constants (and sizes) alone, evaluated whether or not the
            # digits' extents are known: one that leaves int64 is refused here.
            try:
                function.evaluate(sizes_only)
            except E.ExprOverflow as error:
                raise RequestError(
                    f"f and f_inv are not inverse bijections: {label} expression "
                    f"{E.quote(function)} overflows int64: {error}",
                    entry=entry,
                ) from None
            except E.ExprError:
                pass
    extents = _shuffled_extents(state, pointer, op.digits)
    work = 0 if extents is None else bijection_work(extents, [*forward, *inverse])
    if extents is not None and work and state.bijection_work + work <= BIJECTION_WORK_LIMIT:
        witness = check_bijection(op.digits, extents, forward, written, state.env)
        if witness:
            raise RequestError(f"f and f_inv are not inverse bijections: {witness}", entry=entry)
    else:
        work = 0
    mapping = dict(zip(op.digits, inverse, strict=True))
    digits = tuple(
        replace(d, dead_tail=Const(0)) if d.name in op.digits else d for d in pointer.digits
    )
    updated = replace(pointer, digits=digits, cuts=_drop_cuts(pointer, op.digits))
    spent = replace(state, bijection_work=state.bijection_work + work)
    return _with_cells(spent, updated, _substituted(pointer, mapping))


def gf2_inverse(matrix: Sequence[Sequence[int]]) -> list[list[int]] | None:
    """The inverse of a square 0/1 matrix over GF(2), or None when it is singular."""
    n = len(matrix)
    rows = [
        [int(v) & 1 for v in row] + [1 if i == j else 0 for j in range(n)]
        for i, row in enumerate(matrix)
    ]
    for column in range(n):
        pivot = next((r for r in range(column, n) if rows[r][column]), None)
        if pivot is None:
            return None
        rows[column], rows[pivot] = rows[pivot], rows[column]
        for r in range(n):
            if r != column and rows[r][column]:
                rows[r] = [a ^ b for a, b in zip(rows[r], rows[column], strict=True)]
    return [row[n:] for row in rows]


def linear_shuffle(state: ProgramState, op: LinearShuffle, entry: str) -> ProgramState:
    _single_node_only(state, "linear_shuffle", entry)
    pointer = state.pointer(op.array, entry)
    _dense_for_digits(state, pointer, entry)
    for name, bits in zip(op.digits, op.bits, strict=True):
        digit = _find_digit(pointer, name, entry)
        extent = resolve(pointer, digit.extent)
        if not isinstance(extent, Const) or extent.value != 2**bits:
            raise RequestError(
                f"digit {name} has extent {extent}, not 2**{bits} = {2**bits}; linear_shuffle needs "
                "constant power-of-two extents (block the digit by 2**bits first)",
                entry=entry,
            )
    inverse = gf2_inverse(op.matrix)
    if inverse is None:
        raise RequestError(
            "matrix is singular over GF(2); linear_shuffle needs an invertible matrix", entry=entry
        )
    # Bit j of the vector: which digit, and its shift (each digit's bits most significant first).
    positions = [
        (name, bits - 1 - w)
        for name, bits in zip(op.digits, op.bits, strict=True)
        for w in range(bits)
    ]

    def stored_bit(j: int) -> Expr:
        name, shift = positions[j]
        shifted = E.Bin(">>", Sym(name), Const(shift)) if shift else Sym(name)
        return E.Bin("&", shifted, Const(1))

    mapping: dict[str, Expr] = {}
    start = 0
    for name, bits in zip(op.digits, op.bits, strict=True):
        rows = inverse[start : start + bits]
        identity = all(row[start + w] == 1 and sum(row) == 1 for w, row in enumerate(rows))
        if not identity:
            value: Expr | None = None
            for w, row in enumerate(rows):
                terms = [stored_bit(j) for j, v in enumerate(row) if v]
                bit: Expr = terms[0]
                for term in terms[1:]:
                    bit = E.Bin("^", bit, term)
                shift = bits - 1 - w
                placed = E.Bin("<<", bit, Const(shift)) if shift else bit
                value = placed if value is None else E.Bin("|", value, placed)
            assert value is not None
            mapping[name] = value
        start += bits
    updated = replace(pointer, cuts=_drop_cuts(pointer, op.digits))
    return state.with_pointer(replace(updated, cells=_substituted(pointer, mapping)))


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
    if len(requests.operations) > MAX_OPERATIONS:
        raise RequestError(
            f"a request has at most {MAX_OPERATIONS} operations, this one has "
            f"{len(requests.operations)}",
            entry="operations",
        )
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
