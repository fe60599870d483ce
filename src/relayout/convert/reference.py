"""The reference engine: every single-node request executed directly with numpy, slowly and plainly.

It never reads the layout's cell maps: each operation is applied to an array of origins (which
logical cell of which array every physical position holds, -1 where dead) with the numpy operation it
names (block = pad + reshape, split = balanced bands padded to the longest, permute = transpose, pad =
np.pad, shuffle = a gather through f_inv on an index grid, linear_shuffle = the GF(2) inverse on bit
vectors, zip = stack or struct, unzip = take along a dimension or struct fields). Comparing the
generated kernels with it therefore tests the layout algebra as well as the code generator.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from relayout import expr as expressions
from relayout.arrays import ArraySpec, parse_arrays
from relayout.dtypes import PRECISIONS, double_to_bits, precision
from relayout.models import Requests
from relayout.types import ELEMENT_TYPES

DEAD = -1
# origin code = array number * ARRAY_STRIDE + flat index * 4 + part (0 whole, 1 real, 2 imaginary)
ARRAY_STRIDE = 1 << 44


@dataclass(frozen=True)
class RefPointer:
    """One pointer in the reference engine: digit names and, per member, the origin array."""

    name: str
    element: str | tuple[tuple[str, str], ...]  # a type name, or struct members (name, type)
    digits: tuple[str, ...]
    dims: tuple[tuple[str, ...], ...]  # per logical dimension: its digits
    origins: Mapping[str | None, npt.NDArray[np.int64]]
    cuts: Mapping[tuple[str, str], int] = field(default_factory=dict)
    stacked_dim: int | None = None

    def axis(self, digit: str) -> int:
        return self.digits.index(digit)

    @property
    def shape(self) -> tuple[int, ...]:
        """The physical shape (every member's origin array has it)."""
        return tuple(self.origins[next(iter(self.origins))].shape)


def _value(text: int | str, env: Mapping[str, int]) -> int:
    return int(expressions.parse(text, bitwise=False).evaluate(dict(env)))


def _map_origins(pointer: RefPointer, function: Any) -> dict[str | None, npt.NDArray[np.int64]]:
    return {member: function(origin) for member, origin in pointer.origins.items()}


def _replace_in_dims(
    dims: Sequence[tuple[str, ...]], old: Sequence[str], new: Sequence[str]
) -> tuple[tuple[str, ...], ...]:
    result = []
    for names in dims:
        updated: list[str] = []
        for name in names:
            if name == old[0]:
                updated.extend(new)
            elif name not in old:
                updated.append(name)
        result.append(tuple(updated))
    return tuple(result)


def _pad_axis(origin: npt.NDArray[np.int64], axis: int, amount: int) -> npt.NDArray[np.int64]:
    widths = [(0, 0)] * origin.ndim
    widths[axis] = (0, amount)
    return np.pad(origin, widths, constant_values=DEAD)


def _cut(
    p: RefPointer,
    digit: str,
    into: Sequence[str],
    cut: Callable[[npt.NDArray[np.int64]], npt.NDArray[np.int64]],
) -> RefPointer:
    """Digit `digit` cut into the pair `into` by `cut` (one origin array to the next); the pair
    remembers the digit's extent for its merge."""
    axis = p.axis(digit)
    return replace(
        p,
        digits=(*p.digits[:axis], *into, *p.digits[axis + 1 :]),
        origins=_map_origins(p, cut),
        cuts={**p.cuts, (into[0], into[1]): p.shape[axis]},
        dims=_replace_in_dims(p.dims, [digit], into),
    )


def block(p: RefPointer, digit: str, factor: int, into: Sequence[str]) -> RefPointer:
    axis = p.axis(digit)
    extent = p.shape[axis]
    coarse = -(-extent // factor)

    def cut(origin: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        padded = _pad_axis(origin, axis, coarse * factor - extent)
        shape = (*padded.shape[:axis], coarse, factor, *padded.shape[axis + 1 :])
        return padded.reshape(shape)

    return _cut(p, digit, into, cut)


def _merge(
    p: RefPointer, digits: Sequence[str], into: str, positions: npt.NDArray[np.int64]
) -> RefPointer:
    """Merge two adjacent digits; merged cell x takes the flat (outer, inner) cell positions[x]."""
    axis = p.axis(digits[0])

    def merge(origin: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        shape = origin.shape
        flat = origin.reshape((*shape[:axis], shape[axis] * shape[axis + 1], *shape[axis + 2 :]))
        return np.take(flat, positions, axis=axis)

    new_digits = (*p.digits[:axis], into, *p.digits[axis + 2 :])
    cuts = {k: v for k, v in p.cuts.items() if k != tuple(digits)}
    return replace(
        p,
        digits=new_digits,
        origins=_map_origins(p, merge),
        cuts=cuts,
        dims=_replace_in_dims(p.dims, digits, [into]),
    )


def unblock(p: RefPointer, digits: Sequence[str], into: str) -> RefPointer:
    extent = p.cuts[(digits[0], digits[1])]
    return _merge(p, digits, into, np.arange(extent, dtype=np.int64))


def _bands(extent: int, parts: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], int]:
    """numpy.array_split's partition: each band's start and length, and the longest length."""
    pieces = np.array_split(np.arange(extent), parts)
    starts = np.array([piece[0] if len(piece) else 0 for piece in pieces], dtype=np.int64)
    lengths = np.array([len(piece) for piece in pieces], dtype=np.int64)
    return starts, lengths, int(lengths.max()) if parts else 0


def split(p: RefPointer, digit: str, parts: int, into: Sequence[str]) -> RefPointer:
    axis = p.axis(digit)
    extent = p.shape[axis]
    starts, lengths, longest = _bands(extent, parts)
    band, offset = np.meshgrid(np.arange(parts), np.arange(longest), indexing="ij")
    live = offset < lengths[band]
    source = np.where(live, starts[band] + offset, 0)

    def cut(origin: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        taken = np.take(origin, source, axis=axis)
        mask_shape = [1] * origin.ndim
        mask_shape[axis : axis + 1] = [parts, longest]
        return np.where(live.reshape(mask_shape), taken, DEAD)

    return _cut(p, digit, into, cut)


def unsplit(p: RefPointer, digits: Sequence[str], parts: int, into: str) -> RefPointer:
    extent = p.cuts[(digits[0], digits[1])]
    starts, lengths, longest = _bands(extent, parts)
    band_of = np.repeat(np.arange(parts), lengths)
    positions = band_of * longest + (np.arange(extent) - starts[band_of])
    return _merge(p, digits, into, positions.astype(np.int64))


def pad(p: RefPointer, digit: str, amount: int) -> RefPointer:
    axis = p.axis(digit)
    return replace(p, origins=_map_origins(p, lambda o: _pad_axis(o, axis, amount)))


def unpad(p: RefPointer, digit: str, amount: int) -> RefPointer:
    axis = p.axis(digit)

    def trim(origin: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        keep = origin.shape[axis] - amount
        return np.take(origin, np.arange(keep), axis=axis)

    return replace(p, origins=_map_origins(p, trim))


def _gather(
    p: RefPointer, logical: Mapping[str, npt.NDArray[np.int64]]
) -> dict[str | None, npt.NDArray[np.int64]]:
    """Stored position q holds the old cell at `logical` (per digit, over q's grid); outside -> dead."""
    shape = p.shape
    grid = np.indices(shape, dtype=np.int64)
    coordinates = []
    inside = np.ones(shape, dtype=bool)
    for axis, name in enumerate(p.digits):
        values = np.broadcast_to(logical.get(name, grid[axis]), shape).astype(np.int64)
        inside &= (values >= 0) & (values < shape[axis])
        coordinates.append(np.where(inside, values, 0))
    index = tuple(np.where(inside, c, 0) for c in coordinates)
    return _map_origins(p, lambda o: np.where(inside, o[index], DEAD))


def shuffle(
    p: RefPointer, digits: Sequence[str], f_inv: Sequence[str | int], env: Mapping[str, int]
) -> RefPointer:
    shape = p.shape
    grid = np.indices(shape, dtype=np.int64)
    bound = {**env, **{name: grid[axis] for axis, name in enumerate(p.digits)}}
    logical = {
        name: np.asarray(expressions.parse(text).evaluate(bound), dtype=np.int64)
        for name, text in zip(digits, f_inv, strict=True)
    }
    return replace(p, origins=_gather(p, logical))


def gf2_inverse(matrix: Sequence[Sequence[int]]) -> npt.NDArray[np.uint8]:
    """Gauss-Jordan over GF(2) on a numpy matrix (written apart from the layout's)."""
    n = len(matrix)
    work = np.concatenate([np.array(matrix, dtype=np.uint8) & 1, np.eye(n, dtype=np.uint8)], axis=1)
    for column in range(n):
        pivots = np.nonzero(work[column:, column])[0]
        if pivots.size == 0:
            raise ValueError("singular matrix over GF(2)")
        pivot = column + int(pivots[0])
        work[[column, pivot]] = work[[pivot, column]]
        rows = np.nonzero(work[:, column])[0]
        for row in rows:
            if row != column:
                work[row] ^= work[column]
    return work[:, n:]


def linear_shuffle(
    p: RefPointer, digits: Sequence[str], bits: Sequence[int], matrix: Sequence[Sequence[int]]
) -> RefPointer:
    shape = p.shape
    grid = np.indices(shape, dtype=np.int64)
    stored_bits: list[npt.NDArray[np.int64]] = []
    for name, width in zip(digits, bits, strict=True):
        values = grid[p.axis(name)]
        stored_bits.extend((values >> (width - 1 - w)) & 1 for w in range(width))
    vector = np.stack(stored_bits)  # (total bits, *shape), digits in order, MSB first
    inverse = gf2_inverse(matrix).astype(np.int64)
    logical_bits = np.tensordot(inverse, vector, axes=(1, 0)) % 2
    logical: dict[str, npt.NDArray[np.int64]] = {}
    start = 0
    for name, width in zip(digits, bits, strict=True):
        value = np.zeros(shape, dtype=np.int64)
        for w in range(width):
            value = (value << 1) | logical_bits[start + w]
        logical[name] = value
        start += width
    return replace(p, origins=_gather(p, logical))


def initial(name: str, number: int, spec: ArraySpec, sizes: Mapping[str, int]) -> RefPointer:
    shape = tuple(_value(e, sizes) for e in spec.extents)
    flat = np.arange(int(np.prod(shape, dtype=np.int64)), dtype=np.int64).reshape(shape)
    origin = number * ARRAY_STRIDE + flat * 4
    digits = tuple(f"i{k}" for k in range(len(shape)))
    return RefPointer(name, spec.dtype, digits, tuple((d,) for d in digits), {None: origin})


class ReferenceEngine:
    """A request over arrays at given sizes, run with numpy: the buffers it implies, both ways."""

    def __init__(
        self, requests: Requests | Any, arrays: Mapping[str, Any], sizes: Mapping[str, int]
    ):
        self.requests = Requests.validate(requests)
        self.specs = parse_arrays(arrays)
        self.sizes = {k: int(v) for k, v in sizes.items()}
        self.names = list(self.specs)
        pointers = [initial(n, k, s, self.sizes) for k, (n, s) in enumerate(self.specs.items())]
        for operation in self.requests.operations:
            pointers = self._apply(pointers, operation)
        self.pointers = {p.name: p for p in pointers}
        self.order = [p.name for p in pointers]

    def _apply(self, pointers: list[RefPointer], op: Any) -> list[RefPointer]:
        env = self.sizes
        by_name = {p.name: p for p in pointers}
        action = op.action
        if action == "zip":
            return self._zip(pointers, op)
        if action == "unzip":
            return self._unzip(pointers, op)
        p = by_name[op.array]
        if action == "cast":
            p = replace(p, element=op.to)
        elif action == "permute":
            axes = [p.axis(name) for name in op.order]
            p = replace(
                p, digits=tuple(op.order), origins=_map_origins(p, lambda o: np.transpose(o, axes))
            )
        elif action == "block":
            p = block(p, op.digit, _value(op.factor, env), op.into)
        elif action == "unblock":
            p = unblock(p, op.digits, op.into)
        elif action == "split":
            p = split(p, op.digit, _value(op.parts, env), op.into)
        elif action == "unsplit":
            p = unsplit(p, op.digits, _value(op.parts, env), op.into)
        elif action == "pad":
            p = pad(p, op.digit, _value(op.amount, env))
        elif action == "unpad":
            p = unpad(p, op.digit, _value(op.amount, env))
        elif action == "shuffle":
            p = shuffle(p, op.digits, op.f_inv, env)
        elif action == "linear_shuffle":
            p = linear_shuffle(p, op.digits, op.bits, op.matrix)
        else:
            raise ValueError(f"the reference engine runs single-node programs; {action} is not one")
        return [p if q.name == p.name else q for q in pointers]

    def _zip(self, pointers: list[RefPointer], op: Any) -> list[RefPointer]:
        fields = [next(p for p in pointers if p.name == name) for name in op.arrays]
        elements = [f.element for f in fields]
        if len(set(elements)) == 1:
            n = len(fields[0].digits)
            dim = n if op.dim is None else op.dim
            stacked = np.stack([f.origins[None] for f in fields], axis=dim)
            digits = tuple(f"i{k}" for k in range(n + 1))
            zipped = RefPointer(
                op.into,
                elements[0],
                digits,
                tuple((d,) for d in digits),
                {None: stacked},
                stacked_dim=dim,
            )
        else:
            members = tuple((f.name, str(f.element)) for f in fields)
            zipped = replace(
                fields[0],
                name=op.into,
                element=members,
                origins={f.name: f.origins[None] for f in fields},
            )
        result: list[RefPointer] = []
        for p in pointers:
            if p.name == op.arrays[0]:
                result.append(zipped)
            elif p.name not in op.arrays:
                result.append(p)
        return result

    def _unzip(self, pointers: list[RefPointer], op: Any) -> list[RefPointer]:
        p = next(q for q in pointers if q.name == op.array)
        dim = op.dim if op.dim is not None else p.stacked_dim
        parts: list[RefPointer] = []
        if dim is not None:
            digit = p.dims[dim][0]
            axis = p.axis(digit)
            for k, name in enumerate(op.into):
                stacked = (
                    None
                    if p.stacked_dim is None or p.stacked_dim == dim
                    else p.stacked_dim - (p.stacked_dim > dim)
                )
                parts.append(
                    replace(
                        p,
                        name=name,
                        digits=tuple(d for d in p.digits if d != digit),
                        dims=p.dims[:dim] + p.dims[dim + 1 :],
                        origins=_map_origins(p, lambda o, k=k: np.take(o, k, axis=axis)),
                        stacked_dim=stacked,
                        cuts={c: v for c, v in p.cuts.items() if digit not in c},
                    )
                )
        elif isinstance(p.element, tuple):
            for (member, kind), name in zip(p.element, op.into, strict=True):
                parts.append(replace(p, name=name, element=kind, origins={None: p.origins[member]}))
        else:
            real = ELEMENT_TYPES[p.element].real_part
            assert real is not None
            for k, name in enumerate(op.into):
                origin = p.origins[None]
                parts.append(
                    replace(
                        p,
                        name=name,
                        element=real,
                        origins={None: np.where(origin >= 0, origin + k + 1, DEAD)},
                    )
                )
        result: list[RefPointer] = []
        for q in pointers:
            result.extend(parts if q.name == op.array else [q])
        return result

    # -- values

    def shape(self, name: str) -> tuple[int, ...]:
        return tuple(self.pointers[name].origins[next(iter(self.pointers[name].origins))].shape)

    def dtype(self, name: str) -> np.dtype[Any]:
        element = self.pointers[name].element
        if isinstance(element, tuple):
            return np.dtype([(m, ELEMENT_TYPES[k].numpy_dtype) for m, k in element], align=True)
        return ELEMENT_TYPES[element].numpy_dtype

    def member_types(self, name: str) -> dict[str | None, str]:
        element = self.pointers[name].element
        if isinstance(element, tuple):
            return dict(element)
        return {None: element}

    def convert_in(self, inputs: Mapping[str, npt.NDArray[Any]]) -> dict[str, npt.NDArray[Any]]:
        """The kernel-side buffer of every pointer: live cells converted once, dead cells zero."""
        buffers = {}
        for name in self.order:
            pointer = self.pointers[name]
            buffer = np.zeros(self.shape(name), dtype=self.dtype(name))
            for member, kind in self.member_types(name).items():
                origin = pointer.origins[member]
                live = origin >= 0
                values = self._gather_values(inputs, origin[live])
                target = buffer if member is None else buffer[member]
                target[live] = convert_values(values, kind)
            buffers[name] = buffer
        return buffers

    def _gather_values(
        self, inputs: Mapping[str, npt.NDArray[Any]], codes: npt.NDArray[np.int64]
    ) -> npt.NDArray[Any]:
        """The input values the origin codes name (a complex part's real or imaginary value)."""
        numbers = codes // ARRAY_STRIDE
        flat = (codes % ARRAY_STRIDE) // 4
        part = codes % 4
        pieces: list[tuple[npt.NDArray[np.bool_], npt.NDArray[Any]]] = []
        for number in np.unique(numbers):
            array = np.asarray(inputs[self.names[int(number)]]).reshape(-1)
            chosen = numbers == number
            picked = array[flat[chosen]]
            if np.iscomplexobj(picked) and (part[chosen] != 0).any():
                picked = np.where(part[chosen] == 2, picked.imag, picked.real)
            pieces.append((chosen, picked))
        if not pieces:
            return np.zeros(0)
        out = np.zeros(len(codes), dtype=pieces[0][1].dtype)
        for chosen, picked in pieces:
            out[chosen] = picked
        return out

    def convert_out(
        self, buffers: Mapping[str, npt.NDArray[Any]], outputs: Mapping[str, npt.NDArray[Any]]
    ) -> None:
        """Write every live cell of every pointer back to the outputs (out / inout arrays) in place."""
        for name in self.order:
            pointer = self.pointers[name]
            for member, _kind in self.member_types(name).items():
                origin = pointer.origins[member]
                stored = buffers[name] if member is None else buffers[name][member]
                live = origin >= 0
                codes = origin[live]
                values = stored[live]
                for number in np.unique(codes // ARRAY_STRIDE):
                    array_name = self.names[int(number)]
                    if array_name not in outputs or self.specs[array_name].intent == "in":
                        continue
                    target = outputs[array_name].reshape(-1)
                    chosen = codes // ARRAY_STRIDE == number
                    flat = (codes[chosen] % ARRAY_STRIDE) // 4
                    part = codes[chosen] % 4
                    problem = self.specs[array_name].dtype
                    element = ELEMENT_TYPES[problem]
                    if element.complex:
                        assert element.real_part is not None
                        chosen_values = values[chosen]
                        if np.iscomplexobj(chosen_values):
                            target[flat] = convert_values(chosen_values, problem)
                        else:
                            converted = convert_values(chosen_values, element.real_part)
                            real_view = target.view(converted.dtype).reshape(-1, 2)
                            real_view[flat, part - 1] = converted
                    else:
                        target[flat] = convert_values(values[chosen], problem)


def exact_doubles(values: npt.NDArray[Any]) -> npt.NDArray[np.float64]:
    """Float values of any relayout precision as exact doubles."""
    return np.asarray(values).astype(np.float64)


def convert_values(values: npt.NDArray[Any], kind: str) -> npt.NDArray[Any]:
    """`values` as element type `kind`: one rounding from the exact value for floating kinds."""
    element = ELEMENT_TYPES[kind]
    values = np.asarray(values)
    if kind in PRECISIONS:
        if np.iscomplexobj(values):
            raise ValueError(f"complex values do not convert to {kind}")
        bits = double_to_bits(exact_doubles(values), kind)
        return bits.view(precision(kind).numpy_dtype)
    if element.complex:
        real = element.real_part
        assert real is not None
        result = np.empty(values.shape, dtype=element.numpy_dtype)
        result.real = convert_values(np.real(values), real).astype(np.float64)
        result.imag = convert_values(np.imag(values), real).astype(np.float64)
        return result
    return values.astype(element.numpy_dtype)
