"""The digit operations, one pure function (state, operation, entry) -> state each: cast and
format, and the changes of variables from new digits to old ones (permute, block, split, pad,
shuffle, linear_shuffle and their inverses), applied by substitution to the cell maps."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from relayout import expr as E
from relayout.algebra.state import (
    BIJECTION_CHECK_LIMIT,
    BIJECTION_WORK_LIMIT,
    ROOT_STEPS,
    CellMap,
    Cut,
    Digit,
    PointerState,
    ProgramState,
    _amount,
    _and_live,
    _check_new_names,
    _dense_for_digits,
    _drop_cuts,
    _find_digit,
    _is_whole,
    _not_distributed,
    _replace_digit,
    _replace_in_dims,
    _single_node_only,
    _size_symbols,
    _substituted,
    _with_cells,
    resolve,
    user_expr,
    value_of,
)
from relayout.errors import RequestError
from relayout.expr import Const, Expr, Sym
from relayout.models import (
    Block,
    Cast,
    Format,
    LinearShuffle,
    Pad,
    Permute,
    Shuffle,
    Split,
    Unblock,
    Unpad,
    Unsplit,
)
from relayout.types import ELEMENT_TYPES

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
