"""Generated conversion kernels: one C function per pointer and direction, from the layout's cell maps.

A kernel walks the packed physical buffer (the last two digits in cache tiles, everything outside
them flattened into one OpenMP loop), computes each member's logical index from its cell maps,
bounds-checks it (an index outside its array is skipped and counted), and casts with the exact
routines of ccode.py. On the host two shapes get kernels of their own: a pointer that is one array
with its whole digits reordered (a transpose) moves 8x8 blocks through registers within tiles that
let the side read stream a few long rows, rows of whole cache lines written with streaming stores
past the last-level cache; a zip's whole or an unzip's part (stacking) streams each part front to
back. Every host loop is scheduled statically over its tiles or runs. The same general body
compiles as C with OpenMP for the host and as a CUDA kernel (one thread per physical cell) for a
device.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from relayout.algebra.lower import NodeLayout, PointerLayout
from relayout.algebra.state import CellMap, StructType
from relayout.arrays import ArraySpec
from relayout.convert.casts import STREAM_BYTES
from relayout.convert.ccode import CAST_PRELUDE, convert_expression
from relayout.dtypes import PRECISIONS
from relayout.expr import C_CHECKED, C_PRELUDE, Bin, Call, Const, Expr, Neg, Sym, c_proof, walk
from relayout.types import ELEMENT_TYPES

# Cache tile of the two innermost physical digits. Square tiles of 32 measured best for transposes
# of 8-byte elements (the strided side's 32 lines and pages stay cached); contiguous runs do not
# mind the short rows.
TILE_OUTER = 32
TILE_INNER = 32
# A permutation kernel's tile, rows of the buffer (its digit a) by columns (digit b). Where the side
# read has its rows along one of the two digits (convert_in of a transpose of the last dimension,
# or runs along it on both sides), the tile is PERMUTE_FEW of those rows by PERMUTE_LONG along
# them: the read side then streams a few long runs, which the prefetchers follow, and the side
# written takes whole cache lines (past the cache with streaming stores, see HOST_STORES). For
# convert_in of the 4096x4096 fp32 transpose widened to fp64, on two threads, tiles of 1024 x 16
# read at 12.7-20.7 GB/s where 128 x 128 read at 6.4-11.8 (timed in turns in the same runs).
# Elsewhere square tiles of PERMUTE_SQUARE (one thread: 1.4-1.6 times the rate of 32 x 32).
PERMUTE_FEW = 16
PERMUTE_LONG = 1024
PERMUTE_SQUARE = 128

FLOAT_PRECISIONS = tuple(PRECISIONS)


@dataclass(frozen=True)
class Scalar:
    """The scalar kind a member is moved as: its precision name (or integer type) and lane count."""

    name: str
    lanes: int  # 2 for a complex element moved as (re, im)

    @property
    def c_storage(self) -> str:
        """The C type a lane is read and written as (bits for the half and fp8 types)."""
        return ELEMENT_TYPES[self.name].storage_c_type


def scalar_of(type_name: str) -> Scalar:
    element = ELEMENT_TYPES[type_name]
    if element.complex:
        assert element.real_part is not None
        return Scalar(element.real_part, 2)
    return Scalar(type_name, 1)


@dataclass(frozen=True)
class MemberSlot:
    """Where a member lives in one buffer element: byte offset and scalar kind."""

    member: str | None
    offset: int
    scalar: Scalar


def element_itemsize(element: str | StructType) -> int:
    if isinstance(element, StructType):
        return int(element.itemsize)
    return int(ELEMENT_TYPES[element].size)


def buffer_dtype(element: str | StructType) -> np.dtype[Any]:
    """The numpy dtype of a kernel buffer element (ml_dtypes for bf16/fp8, aligned struct)."""
    if isinstance(element, StructType):
        return element.numpy_dtype()
    return ELEMENT_TYPES[element].numpy_dtype


def member_slots(pointer: PointerLayout) -> list[MemberSlot]:
    element = pointer.element
    if isinstance(element, StructType):
        return [
            MemberSlot(name, offset, scalar_of(kind))
            for (name, kind), offset in zip(element.members, element.offsets, strict=True)
        ]
    return [MemberSlot(None, 0, scalar_of(element))]


def size_symbols(layout: NodeLayout, pointers: Sequence[PointerLayout]) -> tuple[str, ...]:
    """Every size symbol the kernels of `pointers` read, sorted: the order of the symbols argument."""
    digit_names = {name for p in pointers for name, _ in p.digits}
    found: set[str] = set()
    for pointer in pointers:
        for _, extent in pointer.digits:
            found |= extent.symbols()
        for cell in pointer.cells:
            for e in (*cell.index, *cell.live):
                found |= e.symbols()
        for source in pointer.sources:
            for extent in layout.arrays[source].extent_exprs:
                found |= extent.symbols()
    return tuple(sorted(found - digit_names))


def _c_names(pointer: PointerLayout, symbols: Sequence[str]) -> dict[str, str]:
    names = {name: f"dg_{name}" for name, _ in pointer.digits}
    names.update({symbol: f"sz_{symbol}" for symbol in symbols})
    return names


def _source_scalar(spec: ArraySpec) -> Scalar:
    return scalar_of(spec.dtype)


def scalar_convert(source: Scalar, target: Scalar, value: str) -> str:
    """C text converting one lane from `source` to `target` (one rounding for floats)."""
    if source.name == target.name:
        return value
    if source.name in FLOAT_PRECISIONS and target.name in FLOAT_PRECISIONS:
        return convert_expression(source.name, target.name, value)
    raise ValueError(f"no conversion from {source.name} to {target.name}")


def scalar_size(scalar: Scalar) -> int:
    """Bytes of one lane of `scalar`."""
    return int(ELEMENT_TYPES[scalar.name].size)


@dataclass(frozen=True)
class KernelSpec:
    """One generated kernel: its C name, pointer, direction and the arrays it reads or writes."""

    name: str
    pointer: str
    direction: str  # "in" or "out"
    sources: tuple[str, ...]  # the `arrays` argument, in order


def _cell_index(
    cell: CellMap, spec: ArraySpec, names: Mapping[str, str], k: int, checked: bool
) -> tuple[str, list[str], list[str], str]:
    """C text locating one cell map's logical cell: its live condition (a step that does not
    evaluate in int64 sets live_bad), the statements computing each index j0, j1, ... (index_bad),
    the per-index bounds checks against source k's extents, and the row-major flat index.

    The flat index is plain arithmetic: with every index inside its extent it is below the array's
    cell count, which relayout's check at these sizes bounds by int64 (every conversion runs that
    check first), so it cannot overflow. Unchecked (`checked` false), the text has no flags: it is
    the fast path the kernel takes where its prologue has proved no step needs them."""

    def render(expr: Expr, flag: str) -> str:
        return expr.to_c(names, flag) if checked else expr.to_c_unchecked(names)

    live = " && ".join(f"(({render(e, 'live_bad')}) != 0)" for e in cell.live) or "1"
    index_lines = []
    checks = []
    flat = "INT64_C(0)"
    for d, expression in enumerate(cell.index):
        index_lines.append(f"const int64_t j{d} = {render(expression, 'index_bad')};")
        bound = _source_extent(k, d)
        checks.append(f"j{d} >= 0 && j{d} < {bound}")
        flat = f"({flat}) * {bound} + j{d}" if d else f"j{d}"
    if len(cell.index) != len(spec.extent_exprs):
        raise ValueError(f"cell map of {cell.array} has {len(cell.index)} indices")
    return live, index_lines, checks, flat


def _flags(live: str, index_lines: Sequence[str]) -> tuple[str, bool, bool]:
    """The declaration of the flags a cell map's C text sets, and whether its live condition and
    its indices use them (where they use none, the text leaves them out, so that the compiler
    sees the same code as without checks)."""
    live_checked = "&live_bad" in live
    index_checked = any("&index_bad" in line for line in index_lines)
    flags = [
        name for name, used in (("live_bad", live_checked), ("index_bad", index_checked)) if used
    ]
    declaration = f"int {' = 0, '.join(flags)} = 0;" if flags else ""
    return declaration, live_checked, index_checked


def _source_extent(k: int, d: int) -> str:
    """The C name of extent d of source array k (computed once, in the prologue)."""
    return f"src{k}_extent{d}"


def _cell_block(
    layout: NodeLayout,
    pointer: PointerLayout,
    slot: MemberSlot,
    cell: CellMap,
    names: Mapping[str, str],
    source_index: Mapping[str, int],
    direction: str,
    itemsize: int,
    checked: bool,
) -> str:
    """C statements handling one cell map of one member at one physical position."""
    spec = layout.arrays[cell.array]
    source = _source_scalar(spec)
    k = source_index[cell.array]
    live, index_lines, checks, flat = _cell_index(cell, spec, names, k, checked)
    in_bounds = " && ".join(checks) or "1"
    if source.lanes == 2 and cell.component is not None:
        lanes = [(f"2 * flat + {cell.component}", 0)]
    elif source.lanes == 2:
        lanes = [("2 * flat", 0), ("2 * flat + 1", 1)]
    else:
        lanes = [("flat", 0)]
    target = slot.scalar
    stored_type = target.c_storage
    lane_size = scalar_size(target)
    moves = []
    for source_lane, buffer_lane in lanes:
        slot_address = (
            f"(({stored_type} *)(buffer_bytes + position * {itemsize} + "
            f"{slot.offset + buffer_lane * lane_size}))"
        )
        if direction == "in":
            value = scalar_convert(source, target, f"src{k}[{source_lane}]")
            moves.append(f"{slot_address}[0] = {value};")
        else:
            value = scalar_convert(target, source, f"{slot_address}[0]")
            moves.append(f"dst{k}[{source_lane}] = {value};")
    moves_text = "\n                        ".join(moves)
    index_text = "\n                    ".join(index_lines)
    # A live condition or an index that does not evaluate in int64 counts as an error, like an
    # index outside the array: the cell is skipped.
    declaration, live_checked, index_checked = _flags(live, index_lines)
    opening = "if (live) {"
    if live_checked:
        opening = (
            "if (live_bad) {\n                    errors += 1;\n                } else if (live) {"
        )
    usable = f"!index_bad && {in_bounds}" if index_checked else in_bounds
    return f"""\
            if (!done) {{
                {declaration}
                const int live = {live};
                {opening}
                    {index_text}
                    if ({usable}) {{
                        const int64_t flat = {flat};
                        {moves_text}
                        done = 1;
                    }} else {{
                        errors += 1;
                    }}
                }}
            }}"""


def _single_cell_in(
    layout: NodeLayout,
    slot: MemberSlot,
    cell: CellMap,
    names: Mapping[str, str],
    source_index: Mapping[str, int],
    itemsize: int,
    checked: bool,
) -> str:
    """A member filled from one cell map, written without branches so that the loop vectorises:
    the index is clamped to 0 where the cell is dead or out of bounds, and the load is conditional."""
    spec = layout.arrays[cell.array]
    source = _source_scalar(spec)
    k = source_index[cell.array]
    live, lines, checks, flat = _cell_index(cell, spec, names, k, checked)
    lane = f"2 * flat + {cell.component or 0}" if source.lanes == 2 else "flat"
    target = slot.scalar
    value = scalar_convert(source, target, f"src{k}[{lane}]")
    index_text = "\n            ".join(lines)
    address = f"(({target.c_storage} *)(buffer_bytes + position * {itemsize} + {slot.offset}))"
    declaration, live_checked, index_checked = _flags(live, lines)
    inside = " && ".join(checks) or "1"
    if index_checked:
        inside = f"!index_bad & ({inside})"
    # A live condition that does not evaluate counts as an error, like a live cell whose index
    # does not evaluate or lies outside the array.
    counted = "live_bad | (live & !inside)" if live_checked else "live && !inside"
    usable = "!live_bad & live & inside" if live_checked else "live && inside"
    return f"""\
        {{
            {declaration}
            {index_text}
            const int live = {live};
            const int inside = {inside};
            errors += {counted};
            const int usable = {usable};
            const int64_t flat = usable ? {flat} : 0;
            {address}[0] = usable ? {value} : ({target.c_storage})0;
        }}"""


def _zero_slot(slot: MemberSlot, itemsize: int) -> str:
    size = slot.scalar.lanes * scalar_size(slot.scalar)
    return f"memset(buffer_bytes + position * {itemsize} + {slot.offset}, 0, {size});"


def _body(
    layout: NodeLayout,
    pointer: PointerLayout,
    names: Mapping[str, str],
    source_index: Mapping[str, int],
    direction: str,
    writable: set[str],
    proven: bool = False,
) -> str:
    """The statements for one physical position. With `proven` (the prologue sets `proven` where
    no step of the cell maps can leave int64, divide by zero or shift too far), two versions:
    unchecked where `proven` holds, checked otherwise; the test is loop-invariant, so the
    compiler moves it out of the loops."""
    if proven:
        fast = _body_version(layout, pointer, names, source_index, direction, writable, False)
        slow = _body_version(layout, pointer, names, source_index, direction, writable, True)
        return f"        if (proven) {{\n{fast}\n        }} else {{\n{slow}\n        }}"
    return _body_version(layout, pointer, names, source_index, direction, writable, True)


def _body_version(
    layout: NodeLayout,
    pointer: PointerLayout,
    names: Mapping[str, str],
    source_index: Mapping[str, int],
    direction: str,
    writable: set[str],
    checked: bool,
) -> str:
    itemsize = element_itemsize(pointer.element)
    blocks = []
    for slot in member_slots(pointer):
        cells = [
            c
            for c in pointer.cells
            if c.member == slot.member and (direction == "in" or c.array in writable)
        ]
        if direction == "in" and len(cells) == 1 and slot.scalar.lanes == 1:
            blocks.append(
                _single_cell_in(layout, slot, cells[0], names, source_index, itemsize, checked)
            )
            continue
        parts = [
            _cell_block(
                layout, pointer, slot, cell, names, source_index, direction, itemsize, checked
            )
            for cell in cells
        ]
        dead = (
            f"""
            if (!done) {{
                {_zero_slot(slot, itemsize)}
            }}"""
            if direction == "in"
            else ""
        )
        blocks.append(
            "        {\n            int done = 0;\n" + "\n".join(parts) + dead + "\n        }"
        )
    return "\n".join(blocks)


def _hoisted(pointer: PointerLayout) -> tuple[PointerLayout, list[Expr]]:
    """The pointer with every largest part of its cell maps that names no digit (a function of
    the sizes alone, such as N // 3) replaced by the symbol `#k`, and those parts in order.

    The prologue computes each part once: the per-cell code would recompute it, and a checked
    step (which sets its flag) is not always hoisted out of the loops by the compiler."""
    digits = {name for name, _ in pointer.digits}
    parts: dict[Expr, str] = {}

    def hoist(expr: Expr) -> Expr:
        if isinstance(expr, Const | Sym):
            return expr
        return Sym(parts.setdefault(expr, f"#{len(parts)}"))

    def rewrite(expr: Expr) -> tuple[Expr, bool]:
        """The rewritten expression, and whether it names a digit (else it is left whole, for
        the caller to hoist with its siblings' parts)."""
        if isinstance(expr, Const):
            return expr, False
        if isinstance(expr, Sym):
            return expr, expr.name in digits
        if isinstance(expr, Neg):
            children: list[Expr] = [expr.operand]
        elif isinstance(expr, Bin):
            children = [expr.left, expr.right]
        else:
            assert isinstance(expr, Call)
            children = list(expr.args)
        rewritten = [rewrite(child) for child in children]
        if not any(named for _, named in rewritten):
            return expr, False
        kept = [part if named else hoist(part) for part, named in rewritten]
        if isinstance(expr, Neg):
            return Neg(kept[0]), True
        if isinstance(expr, Bin):
            return Bin(expr.op, kept[0], kept[1]), True
        assert isinstance(expr, Call)
        return Call(expr.function, tuple(kept)), True

    def whole(expr: Expr) -> Expr:
        part, named = rewrite(expr)
        return part if named else hoist(part)

    cells = tuple(
        replace(
            cell,
            index=tuple(whole(e) for e in cell.index),
            live=tuple(whole(e) for e in cell.live),
        )
        for cell in pointer.cells
    )
    return replace(pointer, cells=cells), list(parts)


@dataclass(frozen=True)
class _Prologue:
    """A kernel's first statements and what its body needs from them."""

    text: str
    names: dict[str, str]  # symbol -> C variable
    source_index: dict[str, int]  # source array -> k of src<k> / dst<k>
    pointer: PointerLayout  # its cell maps reading the hoisted parts
    proven: bool  # the text sets `proven`: see _body


def _needs_checks(exprs: Sequence[Expr]) -> bool:
    """Some step of `exprs` has a checked helper in C (it can overflow or not evaluate)."""
    for expr in exprs:
        for node in walk(expr):
            if isinstance(node, Neg) or (isinstance(node, Bin) and node.op in C_CHECKED):
                return True
            if isinstance(node, Call) and node.function == "root":
                return True
    return False


def _prologue(
    layout: NodeLayout,
    pointer: PointerLayout,
    symbols: Sequence[str],
    sources: Sequence[str],
    direction: str,
) -> _Prologue:
    """The kernel's first statements: the sizes, the source arrays and their extents, the
    pointer's digit extents and the size-only parts of its cell maps (see _hoisted), each
    evaluated with the checked helpers into extent_bad; then `extents_fit`, false where one of
    those does not evaluate in int64 or an extent lies outside 0 .. EXTENT_LIMIT, and `empty`,
    true where an extent is 0; and, where the cell maps have checked steps, `proven`, true where
    the bounds of c_proof show that none of them can fail over the digits' extents."""
    names = _c_names(pointer, symbols)
    lines = [f"const int64_t sz_{s} = symbols[{k}];" for k, s in enumerate(symbols)]
    lines.append("int extent_bad = 0;")
    source_index = {}
    extents = []
    for k, array in enumerate(sources):
        kind = _source_scalar(layout.arrays[array]).c_storage
        if direction == "in":
            lines.append(f"const {kind} *restrict src{k} = (const {kind} *)arrays[{k}];")
        else:
            lines.append(f"{kind} *restrict dst{k} = ({kind} *)arrays[{k}];")
        source_index[array] = k
        for d, extent in enumerate(layout.arrays[array].extent_exprs):
            lines.append(
                f"const int64_t {_source_extent(k, d)} = {extent.to_c(names, 'extent_bad')};"
            )
    for d, (_, extent) in enumerate(pointer.digits):
        lines.append(f"const int64_t extent{d} = {extent.to_c(names, 'extent_bad')};")
        extents.append(f"extent{d}")
    pointer, parts = _hoisted(pointer)
    for k, part in enumerate(parts):
        lines.append(f"const int64_t hoisted{k} = {part.to_c(names, 'extent_bad')};")
        names[f"#{k}"] = f"hoisted{k}"
    lines.extend(_extent_guards(extents))
    exprs = [e for cell in pointer.cells for e in (*cell.index, *cell.live)]
    proof = None
    if _needs_checks(exprs):
        ranges = {name: f"extent{d}" for d, (name, _) in enumerate(pointer.digits)}
        proof = c_proof(exprs, names, ranges, "bound")
    if proof is not None:
        proof_lines, holds = proof
        lines.extend(proof_lines)
        lines.append(f"const int proven = {holds};")
    return _Prologue("\n    ".join(lines), names, source_index, pointer, proof is not None)


# The largest extent a kernel takes: loop bounds and tile arithmetic (a tile start plus a tile)
# then stay inside int64 with room to spare, and no buffer that large can exist anyway.
EXTENT_LIMIT = "(INT64_C(9223372036854775807) - 1024)"


def _extent_guards(extents: Sequence[str]) -> list[str]:
    """`extents_fit` and `empty` over the named extents. Where every extent fits and none is 0,
    every product of extents is at most the buffer's cell count, which relayout's check bounds
    by int64, so the kernels' position and tile arithmetic cannot overflow."""
    fits = " && ".join(f"{e} >= 0 && {e} <= {EXTENT_LIMIT}" for e in extents) or "1"
    empty = " || ".join(f"{e} == 0" for e in extents) or "0"
    return [
        f"const int extents_fit = !extent_bad && {fits};",
        f"const int empty = {empty};",
    ]


def kernel_sources(pointer: PointerLayout, direction: str, layout: NodeLayout) -> tuple[str, ...]:
    if direction == "in":
        return tuple(pointer.sources)
    return tuple(s for s in pointer.sources if layout.arrays[s].intent in ("out", "inout"))


def host_kernel(
    layout: NodeLayout,
    pointer: PointerLayout,
    direction: str,
    symbols: Sequence[str],
    function: str,
) -> str:
    """The C function `int64_t function(void *const *arrays, void *buffer, const int64_t *symbols)`:
    returns the number of cells whose index was out of bounds or did not evaluate in int64 (they
    are skipped), or -1 (touching nothing) where the extents do not evaluate or fit. Where the
    prologue can prove the cell maps' steps safe, the loops come twice: unchecked where `proven`
    holds, checked otherwise."""
    sources = kernel_sources(pointer, direction, layout)
    start = _prologue(layout, pointer, symbols, sources, direction)
    prologue, names, pointer = start.text, start.names, start.pointer
    writable = set(sources)

    def version(checked: bool) -> str:
        return _body_version(
            layout, pointer, names, start.source_index, direction, writable, checked
        )

    digits = [names[name] for name, _ in pointer.digits]
    buffer_qualifier = "" if direction == "in" else "const "
    header = f"""
int64_t {function}(void *const *arrays, {buffer_qualifier}void *buffer, const int64_t *symbols) {{
    {prologue}
    if (!extents_fit) return -1;
    if (empty) return 0;
    {buffer_qualifier}unsigned char *restrict buffer_bytes = ({buffer_qualifier}unsigned char *)buffer;
    int64_t errors = 0;
"""
    if start.proven:
        loops = (
            f"    if (proven) {{\n{_host_loops(digits, version(False))}    }} else {{\n"
            f"{_host_loops(digits, version(True))}    }}\n"
        )
    else:
        loops = _host_loops(digits, version(True))
    return header + loops + "    return errors;\n}\n"


def _host_loops(digits: Sequence[str], body: str) -> str:
    """The host kernel's loops over the physical positions, `body` at each."""
    count = len(digits)
    if count == 0:
        return f"""    {{
        const int64_t position = 0;
{body}
    }}
"""
    if count == 1:
        return f"""    #pragma omp parallel for reduction(+:errors) schedule(static) if(extent0 >= {PARALLEL_CELLS})
    for (int64_t {digits[0]} = 0; {digits[0]} < extent0; ++{digits[0]}) {{
        const int64_t position = {digits[0]};
{body}
    }}
"""
    a, b = count - 2, count - 1
    outer_extents = " * ".join(f"extent{d}" for d in range(a)) or "1"
    decompose = []
    for d in reversed(range(a)):
        decompose.append(f"const int64_t {digits[d]} = rest % extent{d}; rest /= extent{d};")
    decompose_text = "\n        ".join(decompose)
    position = "0"
    for d in range(count):
        position = f"({position}) * extent{d} + {digits[d]}" if d else digits[0]
    return f"""    {{
    const int64_t tiles_a = (extent{a} + {TILE_OUTER - 1}) / {TILE_OUTER};
    const int64_t tiles_b = (extent{b} + {TILE_INNER - 1}) / {TILE_INNER};
    const int64_t outer_count = {outer_extents};
    const int64_t steps = outer_count * tiles_a * tiles_b;
    #pragma omp parallel for reduction(+:errors) schedule(static) if(outer_count * extent{a} * extent{b} >= {PARALLEL_CELLS})
    for (int64_t step = 0; step < steps; ++step) {{
        const int64_t tile_b = step % tiles_b;
        const int64_t tile_a = (step / tiles_b) % tiles_a;
        int64_t rest = step / (tiles_b * tiles_a);
        {decompose_text}
        (void)rest;
        const int64_t a_stop = relayout_min((tile_a + 1) * {TILE_OUTER}, extent{a});
        const int64_t b_stop = relayout_min((tile_b + 1) * {TILE_INNER}, extent{b});
        for (int64_t {digits[a]} = tile_a * {TILE_OUTER}; {digits[a]} < a_stop; ++{digits[a]}) {{
            for (int64_t {digits[b]} = tile_b * {TILE_INNER}; {digits[b]} < b_stop; ++{digits[b]}) {{
                const int64_t position = {position};
{body}
            }}
        }}
    }}
    }}
"""


def device_kernel(
    layout: NodeLayout,
    pointer: PointerLayout,
    direction: str,
    symbols: Sequence[str],
    function: str,
) -> str:
    """The CUDA kernel `function(arrays, buffer, symbols, errors)`: one thread per physical cell,
    grid-stride; out-of-bounds indices and ones that do not evaluate in int64 are skipped and
    counted into `errors`, which is set to all ones where the extents do not evaluate or fit."""
    sources = kernel_sources(pointer, direction, layout)
    start = _prologue(layout, pointer, symbols, sources, direction)
    prologue, names, pointer = start.text, start.names, start.pointer
    body = _body(layout, pointer, names, start.source_index, direction, set(sources), start.proven)
    digits = [names[name] for name, _ in pointer.digits]
    count = len(digits)
    total = " * ".join(f"extent{d}" for d in range(count)) or "1"
    decompose = ["int64_t rest = position;"]
    for d in reversed(range(count)):
        decompose.append(f"const int64_t {digits[d]} = rest % extent{d}; rest /= extent{d};")
    decompose_text = "\n        ".join(decompose)
    buffer_qualifier = "" if direction == "in" else "const "
    return f"""
extern "C" __global__ void {function}(void *const *arrays, {buffer_qualifier}void *buffer, const int64_t *symbols, unsigned long long *error_count) {{
    {prologue}
    if (!extents_fit) {{
        if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(error_count, ~0ULL);
        return;
    }}
    if (empty) return;
    {buffer_qualifier}unsigned char *__restrict__ buffer_bytes = ({buffer_qualifier}unsigned char *)buffer;
    const int64_t total = {total};
    int64_t errors = 0;
    for (int64_t position = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; position < total;
         position += (int64_t)gridDim.x * blockDim.x) {{
        {decompose_text}
        (void)rest;
{body}
    }}
    if (errors) atomicAdd(error_count, (unsigned long long)errors);
}}
"""


# Below this many cells a host kernel runs on the calling thread: waking a team costs more than
# the copy, and on a busy machine a descheduled team member holds the whole region for a slice.
PARALLEL_CELLS = 1 << 15

# A written row of a micro tile: one cache line stored with streaming stores where `stream` says
# so and the line is 16-byte aligned (SSE2, every x86-64), else a plain copy.
STREAM_LINE = 64
HOST_STORES = f"""\
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
static inline void relayout_store_row(void *dst, const void *row, size_t bytes, int stream) {{
#if defined(__SSE2__)
    if (stream && bytes == {STREAM_LINE} && (uintptr_t)dst % 16 == 0) {{
        for (int k = 0; k < {STREAM_LINE // 16}; ++k)
            _mm_stream_si128((__m128i *)dst + k, _mm_loadu_si128((const __m128i *)row + k));
        return;
    }}
#endif
    memcpy(dst, row, bytes);
}}
static inline void relayout_store_fence(int stream) {{
#if defined(__SSE2__)
    if (stream) _mm_sfence();
#else
    (void)stream;
#endif
}}
"""
HOST_HEADER = "#include <omp.h>\n#include <stdint.h>\n#include <string.h>\n"

DEVICE_HEADER = """\
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
#define INT64_C(c) c##LL
#define restrict __restrict__
"""


def kernel_function_name(index: int, pointer: PointerLayout, direction: str) -> str:
    safe = "".join(ch if ch.isalnum() else "_" for ch in pointer.name)
    return f"relayout_{direction}_{index}_{safe}"


def program_source(
    layout: NodeLayout, target: str = "host"
) -> tuple[str, list[KernelSpec], tuple[str, ...]]:
    """The whole translation unit for a layout: source text, its kernels, and the size symbols."""
    pointers = [p for p in layout.pointers if p.sparse is None]
    symbols = size_symbols(layout, pointers)
    kernels: list[KernelSpec] = []
    functions = []
    generate = host_kernel if target == "host" else device_kernel
    for index, pointer in enumerate(pointers):
        for direction in ("in", "out"):
            sources = kernel_sources(pointer, direction, layout)
            if direction == "out" and not sources:
                continue
            name = kernel_function_name(index, pointer, direction)
            permutation = digit_permutation(layout, pointer) if target == "host" else None
            stack = stacking(layout, pointer) if target == "host" else None
            if permutation is not None:
                functions.append(
                    permutation_kernel(layout, pointer, direction, symbols, name, permutation)
                )
            elif stack is not None:
                functions.append(stacking_kernel(layout, pointer, direction, symbols, name, stack))
            else:
                functions.append(generate(layout, pointer, direction, symbols, name))
            kernels.append(KernelSpec(name, pointer.name, direction, sources))
    if target == "host":
        prelude = HOST_HEADER + CAST_PRELUDE + C_PRELUDE + HOST_STORES
    else:
        device_prelude = C_PRELUDE.replace("static inline", "static __device__ __forceinline__")
        device_casts = (
            CAST_PRELUDE.replace("#include <stdint.h>\n", "")
            .replace("#include <string.h>\n", "")
            .replace("#include <math.h>\n", "")
        )
        prelude = (
            DEVICE_HEADER
            + device_casts
            + device_prelude
            + "#define memset(p, v, n) relayout_zero_bytes(p, n)\n"
            + "static __device__ __forceinline__ void relayout_zero_bytes(unsigned char *p, int n) "
            + "{ for (int k = 0; k < n; ++k) p[k] = 0; }\n"
        )
    return prelude + "".join(functions), kernels, symbols


def _lone_plain_cell(pointer: PointerLayout) -> CellMap | None:
    """The pointer's only cell map when it has one and that one moves whole elements of one array
    with no live condition (no struct member, no complex component); else None."""
    if len(pointer.cells) != 1 or isinstance(pointer.element, StructType):
        return None
    cell = pointer.cells[0]
    if cell.member is not None or cell.component is not None or cell.live:
        return None
    return cell


def identity_cell(pointer: PointerLayout, spec: ArraySpec) -> bool:
    """The pointer is its one source array, row-major and whole: a plain cast or copy will do."""
    cell = _lone_plain_cell(pointer)
    if cell is None:
        return False
    digit_names = [name for name, _ in pointer.digits]
    if cell.index != tuple(Sym(name) for name in digit_names):
        return False
    extents = [str(extent) for _, extent in pointer.digits]
    return extents == [str(e) for e in spec.extent_exprs]


def evaluate_extents(extents: Sequence[Expr], sizes: Mapping[str, int]) -> tuple[int, ...]:
    return tuple(int(e.evaluate(dict(sizes))) for e in extents)


def digit_permutation(layout: NodeLayout, pointer: PointerLayout) -> list[int] | None:
    """For a pointer that is one array with its digits reordered (each digit a whole dimension,
    nothing dead): the logical dimension of each physical digit; else None."""
    cell = _lone_plain_cell(pointer)
    if cell is None:
        return None
    spec = layout.arrays[cell.array]
    if scalar_of(spec.dtype).lanes != 1 or scalar_of(str(pointer.element)).lanes != 1:
        return None
    names = [name for name, _ in pointer.digits]
    if len(names) < 2 or len(cell.index) != len(names):
        return None
    if not all(isinstance(e, Sym) and e.name in names for e in cell.index):
        return None
    carried = [names.index(e.name) for e in cell.index if isinstance(e, Sym)]
    if len(set(carried)) != len(names):
        return None
    for dim, physical in enumerate(carried):
        if str(pointer.digits[physical][1]) != str(spec.extent_exprs[dim]):
            return None
    return [carried.index(k) for k in range(len(names))]


MICRO = 8


@dataclass(frozen=True)
class _TileSide:
    """One side of a permutation kernel's copy (the array or the buffer), as its C text."""

    scalar: Scalar
    c_type: str
    name: str
    cell: str  # the index of cell (a0 + j, b0 + i) of a micro tile
    row: tuple[str, str]  # the loop variable that picks this side's row of a tile, and its start
    point: str  # the index of cell (a, b)
    run: str  # the index where a contiguous run of the tile's row a starts


def _permutation_tile(dims_of_digits: Sequence[int], ndim: int, direction: str) -> tuple[int, int]:
    """The (digit a, digit b) extents of a permutation kernel's tile: few rows of the side read,
    long along them (see PERMUTE_FEW)."""
    a, b = len(dims_of_digits) - 2, len(dims_of_digits) - 1
    if dims_of_digits[b] == ndim - 1:
        return PERMUTE_FEW, PERMUTE_LONG  # runs along digit b on both sides
    if dims_of_digits[a] == ndim - 1 and direction == "in":
        # The array's rows run along digit a: convert_in reads few of them, far along.
        return PERMUTE_LONG, PERMUTE_FEW
    # convert_out of a transpose writes the array's rows: few far along left more lines partly
    # written at once than square tiles do (5-9 against 6-11 GB/s, in turns, same runs).
    return PERMUTE_SQUARE, PERMUTE_SQUARE


def permutation_kernel(
    layout: NodeLayout,
    pointer: PointerLayout,
    direction: str,
    symbols: Sequence[str],
    function: str,
    dims_of_digits: Sequence[int],
) -> str:
    """A digit permutation (transpose) as cache tiles of 8x8 blocks staged through registers, so
    both the strided and the contiguous side move whole cache lines; contiguous inner runs (the
    last digit is the array's last dimension) copy straight."""
    cell = pointer.cells[0]
    spec = layout.arrays[cell.array]
    source = _source_scalar(spec)
    stored = scalar_of(str(pointer.element))
    names = _c_names(pointer, symbols)
    count = len(pointer.digits)
    ndim = len(spec.extent_exprs)
    lines = [f"const int64_t sz_{s} = symbols[{k}];" for k, s in enumerate(symbols)]
    lines.append("int extent_bad = 0;")
    for d, extent in enumerate(spec.extent_exprs):
        lines.append(f"const int64_t array_extent{d} = {extent.to_c(names, 'extent_bad')};")
    for k, (_, extent) in enumerate(pointer.digits):
        lines.append(f"const int64_t extent{k} = {extent.to_c(names, 'extent_bad')};")
    lines.extend(_extent_guards([f"extent{k}" for k in range(count)]))
    lines.append("if (!extents_fit) return -1;")
    lines.append("if (empty) return 0;")
    checks = " || ".join(f"extent{k} != array_extent{dims_of_digits[k]}" for k in range(count))
    total = " * ".join(f"extent{k}" for k in range(count))
    # Every digit spans its whole dimension by construction; confirm it before any access. The
    # strides are then products of nonzero digit extents, at most the cell count.
    lines.append(f"if ({checks}) return {total};")
    lines.append(f"const int64_t array_stride{ndim - 1} = 1;")
    for d in reversed(range(ndim - 1)):
        lines.append(f"const int64_t array_stride{d} = array_stride{d + 1} * array_extent{d + 1};")
    for k in range(count):
        lines.append(f"const int64_t stride{k} = array_stride{dims_of_digits[k]};")
    array_type, buffer_type = source.c_storage, stored.c_storage
    a, b = count - 2, count - 1
    # Both directions move the same tiles between the same two places; only which is read and
    # which is written differs. Per side: its scalar, its C names, where cell (a0 + j, b0 + i)
    # of a micro tile lies, where the tile's row of that side starts (the array's rows run along
    # digit a on the path that uses them, the buffer's along b), where cell (a, b) lies, and
    # where a contiguous run starts.
    array_side = _TileSide(
        source,
        array_type,
        "array",
        f"array_base + (a0 + j) * stride{a} + (b0 + i) * stride{b}",
        ("i", f"array + array_base + (b0 + i) * stride{b} + a0"),
        f"array_base + a * stride{a} + b * stride{b}",
        "array_at",
    )
    buffer_side = _TileSide(
        stored,
        buffer_type,
        "buf",
        f"buffer_base + (a0 + j) * extent{b} + b0 + i",
        ("j", f"buf + buffer_base + (a0 + j) * extent{b} + b0"),
        f"buffer_base + a * extent{b} + b",
        "buffer_at",
    )
    if direction == "in":
        lines.append(f"const {array_type} *restrict array = (const {array_type} *)arrays[0];")
        lines.append(f"{buffer_type} *restrict buf = ({buffer_type} *)buffer;")
        read, written = array_side, buffer_side
    else:
        lines.append(f"{array_type} *restrict array = ({array_type} *)arrays[0];")
        lines.append(f"const {buffer_type} *restrict buf = (const {buffer_type} *)buffer;")
        read, written = buffer_side, array_side
    # p walks the rows of the side read, q those of the side written.
    p, q = read.row[0], written.row[0]

    def convert(value: str) -> str:
        return scalar_convert(read.scalar, written.scalar, value)

    move_run = f"{written.name}[{written.run} + b] = {convert(f'{read.name}[{read.run} + b]')};"
    stage = f"""\
                    {written.c_type} tile[{MICRO}][{MICRO}];
                    for (int {p} = 0; {p} < {MICRO}; ++{p})
                        for (int {q} = 0; {q} < {MICRO}; ++{q})
                            tile[{p}][{q}] = {convert(f"{read.name}[{read.cell}]")};
                    for (int {q} = 0; {q} < {MICRO}; ++{q})
                        for (int {p} = 0; {p} < {MICRO}; ++{p})
                            {written.name}[{written.cell}] = tile[{p}][{q}];"""
    single = f"{written.name}[{written.point}] = {convert(f'{read.name}[{read.point}]')};"
    # Each written row of the micro tile gathered from the rows read and stored whole: GCC keeps
    # the gather in registers (staging the tile in memory first ran at half the speed in AVX2).
    rows_stage = f"""\
                    #pragma GCC unroll {MICRO}
                    for (int {q} = 0; {q} < {MICRO}; ++{q}) {{
                        {written.c_type} column[{MICRO}];
                        #pragma GCC unroll {MICRO}
                        for (int {p} = 0; {p} < {MICRO}; ++{p}) {{
                            const {read.c_type} *row = {read.row[1]};
                            column[{p}] = {convert(f"row[{q}]")};
                        }}
                        relayout_store_row({written.row[1]}, column, sizeof column, stream);
                    }}"""
    outer_extents = " * ".join(f"extent{k}" for k in range(count - 2)) or "1"
    tile_a, tile_b = _permutation_tile(dims_of_digits, ndim, direction)
    # Rows of whole cache lines written past the last-level cache skip reading the lines first.
    moved_bytes = scalar_size(read.scalar) + scalar_size(written.scalar)
    streams = (
        f"({total}) > {STREAM_BYTES // moved_bytes}"
        if MICRO * scalar_size(written.scalar) == STREAM_LINE
        else "0"
    )
    decompose = []
    for k in reversed(range(count - 2)):
        decompose.append(
            f"{{ const int64_t digit = rest % extent{k}; rest /= extent{k}; array_base += digit * stride{k}; }}"
        )
    decompose_text = "\n        ".join(decompose)
    prologue = "\n    ".join(lines)
    return f"""
int64_t {function}(void *const *arrays, {"" if direction == "in" else "const "}void *buffer, const int64_t *symbols) {{
    {prologue}
    const int64_t tiles_a = (extent{a} + {tile_a - 1}) / {tile_a};
    const int64_t tiles_b = (extent{b} + {tile_b - 1}) / {tile_b};
    const int64_t outer_count = {outer_extents};
    const int64_t steps = outer_count * tiles_a * tiles_b;
    const int stream = {streams};
    #pragma omp parallel for schedule(static) if(outer_count * extent{a} * extent{b} >= {PARALLEL_CELLS})
    for (int64_t step = 0; step < steps; ++step) {{
        const int64_t tile_b = step % tiles_b;
        const int64_t tile_a = (step / tiles_b) % tiles_a;
        const int64_t outer = step / (tiles_b * tiles_a);
        int64_t rest = outer, array_base = 0;
        {decompose_text}
        const int64_t buffer_base = outer * extent{a} * extent{b};
        const int64_t a_start = tile_a * {tile_a}, b_start = tile_b * {tile_b};
        const int64_t a_stop = relayout_min(a_start + {tile_a}, extent{a});
        const int64_t b_stop = relayout_min(b_start + {tile_b}, extent{b});
        if (stride{b} == 1) {{
            for (int64_t a = a_start; a < a_stop; ++a) {{
                const int64_t array_at = array_base + a * stride{a} + b_start;
                const int64_t buffer_at = buffer_base + a * extent{b} + b_start;
                for (int64_t b = 0; b < b_stop - b_start; ++b) {move_run}
            }}
            continue;
        }}
        for (int64_t a0 = a_start; a0 < a_stop; a0 += {MICRO}) {{
            for (int64_t b0 = b_start; b0 < b_stop; b0 += {MICRO}) {{
                if (a0 + {MICRO} <= a_stop && b0 + {MICRO} <= b_stop && stride{a} == 1) {{
{rows_stage}
                }} else if (a0 + {MICRO} <= a_stop && b0 + {MICRO} <= b_stop) {{
{stage}
                }} else {{
                    for (int64_t a = a0; a < relayout_min(a0 + {MICRO}, a_stop); ++a)
                        for (int64_t b = b0; b < relayout_min(b0 + {MICRO}, b_stop); ++b)
                            {single}
                }}
            }}
        }}
        relayout_store_fence(stream);  /* this thread's streaming stores of the tile, done */
    }}
    return 0;
}}
"""


@dataclass(frozen=True)
class Stacking:
    """A pointer that stacks whole arrays along one of its digits (a zip's whole: `parts` the
    array at each index of digit `dim`), or that is one index of one array's dimension (an
    unzip's part: `parts` that one array, `index` the index of its dimension `dim`)."""

    dim: int
    parts: tuple[str, ...]
    index: int | None = None


def _same_extents(first: Sequence[Expr], second: Sequence[Expr]) -> bool:
    return [str(e) for e in first] == [str(e) for e in second]


def stacking(layout: NodeLayout, pointer: PointerLayout) -> Stacking | None:
    """The pointer's Stacking when it is a zip's whole or an unzip's part with nothing else done
    to it (no permutation, block or struct after it), each element moved as one lane; else None."""
    if isinstance(pointer.element, StructType) or scalar_of(str(pointer.element)).lanes != 1:
        return None
    cells = pointer.cells
    if not cells or any(c.member is not None or c.component is not None for c in cells):
        return None
    if any(scalar_of(layout.arrays[c.array].dtype).lanes != 1 for c in cells):
        return None
    names = [name for name, _ in pointer.digits]
    extents = [extent for _, extent in pointer.digits]
    if len(cells) == 1 and not cells[0].live:
        # An unzip's part: the digits in order, one constant index of the array put among them.
        cell = cells[0]
        spec = layout.arrays[cell.array]
        constants = [d for d, e in enumerate(cell.index) if isinstance(e, Const)]
        if len(constants) != 1 or len(cell.index) != len(names) + 1:
            return None
        dim = constants[0]
        rest = [e for d, e in enumerate(cell.index) if d != dim]
        picked = cell.index[dim]
        assert isinstance(picked, Const)
        kept_extents = [e for d, e in enumerate(spec.extent_exprs) if d != dim]
        if rest != [Sym(n) for n in names] or not _same_extents(kept_extents, extents):
            return None
        if int(picked.value) < 0:
            return None
        return Stacking(dim, (cell.array,), int(picked.value))
    # A zip's whole: cell p is live where the stacked digit is p, and its array is the other
    # digits, whole and in order.
    parts: dict[int, str] = {}
    stacked: str | None = None
    for cell in cells:
        if len(cell.live) != 1:
            return None
        live = cell.live[0]
        if not (
            isinstance(live, Bin)
            and live.op == "=="
            and isinstance(live.left, Sym)
            and isinstance(live.right, Const)
        ):
            return None
        if stacked is None:
            stacked = live.left.name
        if live.left.name != stacked or int(live.right.value) in parts:
            return None
        parts[int(live.right.value)] = cell.array
    if stacked not in names:
        return None
    dim = names.index(stacked)
    count = extents[dim]
    if not isinstance(count, Const) or sorted(parts) != list(range(int(count.value))):
        return None
    if len(set(parts.values())) != len(parts):
        return None  # an array at two indices: its kernel argument is one part
    others = [n for n in names if n != stacked]
    other_extents = [e for d, e in enumerate(extents) if d != dim]
    for cell in cells:
        if cell.index != tuple(Sym(n) for n in others):
            return None
        if not _same_extents(layout.arrays[cell.array].extent_exprs, other_extents):
            return None
    return Stacking(dim, tuple(parts[p] for p in sorted(parts)))


# Elements one step of a stacking kernel's runs moves at most (a run longer than this is split,
# so that a few long runs still spread over the threads).
STACK_PIECE = 1 << 14


def stacking_kernel(
    layout: NodeLayout,
    pointer: PointerLayout,
    direction: str,
    symbols: Sequence[str],
    function: str,
    stack: Stacking,
) -> str:
    """A zip's whole or an unzip's part as streams: the buffer seen as [outer][K][inner] (K the
    stacked or split extent, outer and inner the extents before and after it), each part as
    [outer][inner]. Where inner is 1 (stacked last) one statically scheduled loop over outer
    moves element o of every part; otherwise each (o, part) run of inner contiguous elements is
    copied straight, in pieces of STACK_PIECE. Every part is read or written front to back."""
    names = _c_names(pointer, symbols)
    stored = scalar_of(str(pointer.element))
    buffer_type = stored.c_storage
    lines = [f"const int64_t sz_{s} = symbols[{k}];" for k, s in enumerate(symbols)]
    lines.append("int extent_bad = 0;")
    for d, (_, extent) in enumerate(pointer.digits):
        lines.append(f"const int64_t extent{d} = {extent.to_c(names, 'extent_bad')};")
    count = len(pointer.digits)
    zipped = stack.index is None
    sources = kernel_sources(pointer, direction, layout)
    if zipped:
        # The buffer's own digits: [before dim][K][after dim].
        before = [f"extent{d}" for d in range(stack.dim)]
        after = [f"extent{d}" for d in range(stack.dim + 1, count)]
        stacked = f"extent{stack.dim}"
    else:
        # The array's dimensions: [before dim][its extent at dim][after dim]; the buffer's
        # digits are the others, whole.
        array = layout.arrays[stack.parts[0]]
        for d, extent in enumerate(array.extent_exprs):
            lines.append(f"const int64_t array_extent{d} = {extent.to_c(names, 'extent_bad')};")
        before = [f"array_extent{d}" for d in range(stack.dim)]
        after = [f"array_extent{d}" for d in range(stack.dim + 1, len(array.extent_exprs))]
        stacked = f"array_extent{stack.dim}"
    guarded = [f"extent{d}" for d in range(count)]
    if not zipped:
        guarded.append(stacked)
    lines.extend(_extent_guards(guarded))
    total = " * ".join(f"extent{d}" for d in range(count)) or "1"
    lines.append("if (!extents_fit) return -1;")
    lines.append("if (empty) return 0;")
    if not zipped:
        # The index exists at these sizes; the other extents are the digits' by construction.
        lines.append(f"if ({stack.index} >= {stacked}) return {total};")
    lines.append(f"const int64_t outer = {' * '.join(before) or '1'};")
    lines.append(f"const int64_t inner = {' * '.join(after) or '1'};")
    lines.append(f"const int64_t stacked = {stacked};")
    qualifier = "" if direction == "in" else "const "
    lines.append(f"{qualifier}{buffer_type} *restrict buf = ({qualifier}{buffer_type} *)buffer;")
    # (part's C name, its scalar, its index along the stacked extent) of each part moved.
    moved: list[tuple[str, Scalar, str]] = []
    for k, name in enumerate(sources):
        scalar = _source_scalar(layout.arrays[name])
        kind = scalar.c_storage
        part_qualifier = "const " if direction == "in" else ""
        lines.append(
            f"{part_qualifier}{kind} *restrict part{k} = ({part_qualifier}{kind} *)arrays[{k}];"
        )
        at = str(stack.parts.index(name)) if zipped else str(stack.index)
        moved.append((f"part{k}", scalar, at))

    def move(part: str, scalar: Scalar, buffer_at: str, part_at: str) -> str:
        if direction == "in":
            return f"buf[{buffer_at}] = {scalar_convert(scalar, stored, f'{part}[{part_at}]')};"
        return f"{part}[{part_at}] = {scalar_convert(stored, scalar, f'buf[{buffer_at}]')};"

    if zipped:
        lanes = "\n            ".join(move(p, s, f"o * stacked + {at}", "o") for p, s, at in moved)
    else:
        lanes = "\n            ".join(move(p, s, "o", f"o * stacked + {at}") for p, s, at in moved)
    runs = len(moved)
    run_cases = []
    for k, (part, scalar, at) in enumerate(moved):
        buffer_run = f"(o * stacked + {at}) * inner" if zipped else "o * inner"
        part_run = "o * inner" if zipped else f"(o * stacked + {at}) * inner"
        step = move(part, scalar, f"{buffer_run} + i", f"{part_run} + i")
        run_cases.append(
            f"            case {k}: for (int64_t i = start; i < stop; ++i) {step} break;"
        )
    run_text = "\n".join(run_cases)
    prologue = "\n    ".join(lines)
    return f"""
int64_t {function}(void *const *arrays, {qualifier}void *buffer, const int64_t *symbols) {{
    {prologue}
    if (inner == 1) {{
        #pragma omp parallel for simd schedule(static) if(outer * stacked >= {PARALLEL_CELLS})
        for (int64_t o = 0; o < outer; ++o) {{
            {lanes}
        }}
        return 0;
    }}
    const int64_t pieces = (inner + {STACK_PIECE - 1}) / {STACK_PIECE};
    const int64_t steps = outer * {runs} * pieces;
    #pragma omp parallel for schedule(static) if(outer * stacked * inner >= {PARALLEL_CELLS})
    for (int64_t step = 0; step < steps; ++step) {{
        const int64_t piece = step % pieces;
        const int64_t run = (step / pieces) % {runs};
        const int64_t o = step / (pieces * {runs});
        const int64_t start = piece * {STACK_PIECE};
        const int64_t stop = relayout_min(start + {STACK_PIECE}, inner);
        switch (run) {{
{run_text}
            default: break;
        }}
    }}
    return 0;
}}
"""
