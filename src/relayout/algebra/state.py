"""The digit algebra's state: a pointer's physical digits, the logical dimension each cuts, its
cell maps (for every physical position, which logical index of which array it holds, and under
which live conditions), the program's state over all pointers, and the helpers every operation
uses on expressions in a state. Extents are expressions over the pointer's logical extents d0,
d1, ... (bound to the arrays' size expressions when the layout is lowered)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np

from relayout import expr as E
from relayout.arrays import ArraySpec
from relayout.errors import RequestError
from relayout.expr import Const, Expr, Sym
from relayout.types import ELEMENT_TYPES

# Above this many cells a shuffle's f / f_inv pair is not enumerated (the check is skipped).
BIJECTION_CHECK_LIMIT = 2**20
# Nor once a request's enumerations would pass this many cell-steps in all (cells times the
# steps of f and f_inv, a root counting ROOT_STEPS): this bounds the time a request's checks take,
# whatever its expressions and however many shuffles it has.
BIJECTION_WORK_LIMIT = 2**25
ROOT_STEPS = 8
# The nodes all of a request's substitutions (each operation's change of variables) may visit in
# all: with the bounds of each expression and the most operations a request may have
# (relayout.models.MAX_OPERATIONS), this bounds the time and memory one request's check takes.
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
