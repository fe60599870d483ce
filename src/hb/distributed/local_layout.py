"""How each rank's tile is laid out under a distributed program: the digit operations that are not
distributions (split, block, permute and their inverses kept local) rewritten as a single-node
program over the rank's owned extents, lowered by relayout, and each packed position's owned cell."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from relayout import expr as E
from relayout.errors import RequestError, entry_label
from relayout.layout import NodeLayout, PointerLayout, lower_single_node
from relayout.models import Requests

# The local array's extent along dimension d is this symbol, bound per rank to its owned count.
OWNED_SYMBOL = "owned{dim}"


def owned_symbol(dim: int) -> str:
    """The symbol a local program uses for the owned extent of dimension `dim`."""
    return OWNED_SYMBOL.format(dim=dim)


@dataclass(frozen=True, eq=False)
class LocalLayout:
    """One array's local program and its single-node lowering over the owned extents.

    `operations` are relayout single-node operations (JSON) over an array whose extents are
    owned0, owned1, ... (each rank's owned count per dimension, ascending global order);
    `entries` names, per local operation, the request entry it came from.
    """

    array: str
    ndim: int
    operations: tuple[Mapping[str, Any], ...]
    entries: tuple[str, ...]
    layout: NodeLayout = field(repr=False)

    @classmethod
    def lower(
        cls, array: str, ndim: int, operations: Sequence[Mapping[str, Any]], entries: Sequence[str]
    ) -> LocalLayout:
        """Lower `operations` with relayout's single-node algebra; a refusal names the request
        entry the failing local operation came from."""
        extents = ",".join(owned_symbol(d) for d in range(ndim))
        request = Requests.validate({"operations": list(operations)})
        try:
            layout = lower_single_node(request, {array: f"fp64[{extents}]:inout"})
        except RequestError as error:
            entry = error.entry or ""
            for index, origin in enumerate(entries):
                if entry.startswith(f"operations[{index}] "):
                    raise RequestError(
                        f"{error.reason} (in {array}'s local tile layout)", entry=origin
                    ) from None
            raise RequestError(f"{array}'s local tile layout: {error}", entry=entry) from None
        return cls(array, ndim, tuple(operations), tuple(entries), layout)

    @property
    def pointer(self) -> PointerLayout:
        return self.layout.pointer(self.array)

    @property
    def digits(self) -> tuple[str, ...]:
        """The tile's packed axes, outermost first."""
        return tuple(name for name, _ in self.pointer.digits)

    def extent_exprs(self, display: Mapping[int, E.Expr] | None = None) -> tuple[E.Expr, ...]:
        """The packed extents over owned0, owned1, ... (or over `display`'s expression for a
        dimension, e.g. the kernel's own size symbol)."""
        mapping = {owned_symbol(d): expr for d, expr in (display or {}).items()}
        return tuple(extent.substitute(mapping) for extent in self.pointer.extents)

    def packed_extents(self, owned: Sequence[int]) -> tuple[int, ...]:
        """The packed tile's extents for a rank that owns `owned` cells per dimension."""
        env = self._env(owned)
        return tuple(int(extent.evaluate(env)) for extent in self.pointer.extents)

    def positions(self, owned: Sequence[int]) -> np.ndarray:
        """For every packed position (row-major), the row-major flat index of the owned cell it
        holds in the rank's owned block (ascending global order per dimension), or -1 for a dead
        cell (a kept-local cut's padding)."""
        found = self.layout.gather_indices(self.pointer, self._env(owned))
        return found[None]

    def to_json(self) -> dict[str, Any]:
        return {
            "operations": [dict(op) for op in self.operations],
            "digits": list(self.digits),
            "extents": [str(e) for e in self.pointer.extents],
        }

    def _env(self, owned: Sequence[int]) -> dict[str, int]:
        if len(owned) != self.ndim:
            raise ValueError(
                f"{self.array}: {len(owned)} owned extents for a {self.ndim}-D local layout"
            )
        return {owned_symbol(d): int(extent) for d, extent in enumerate(owned)}


def _amount(value: int | str, env: Mapping[str, int], entry: str, what: str) -> int:
    """A factor or parts expression evaluated at the run's sizes and grid (the local program is
    single-node and knows neither the grid symbols nor the global sizes)."""
    try:
        return int(E.parse(value, bitwise=False).evaluate(dict(env)))
    except E.ExprError as error:
        raise RequestError(
            f"{what} {value!r} cannot be evaluated for the local tile layout: {error} (bind the sizes)",
            entry=entry,
        ) from None


@dataclass
class _ArrayWalk:
    """The translation state of one array: local names of global digits, distributed bands that
    vanish from the tile, and cyclic-dealt blocks not yet cut locally."""

    name: str
    ndim: int
    alias: dict[str, str] = field(default_factory=dict)
    dropped: set[str] = field(default_factory=set)
    # (coarse, fine) of a block whose coarse digit is dealt cyclically -> (local digit, factor):
    # the rank holds its blocks in order, one local axis, until an operation names either digit.
    pending: dict[tuple[str, str], tuple[str, int]] = field(default_factory=dict)
    operations: list[dict[str, Any]] = field(default_factory=list)
    entries: list[str] = field(default_factory=list)

    def local(self, name: str) -> str:
        return self.alias.get(name, name)

    def emit(self, operation: dict[str, Any], entry: str) -> None:
        self.operations.append({"array": self.name, **operation})
        self.entries.append(entry)

    def materialize(self, names: Sequence[str], entry: str) -> None:
        """Cut every pending cyclic-dealt block whose coarse or fine digit is in `names`."""
        for pair, (merged, factor) in list(self.pending.items()):
            if set(pair) & set(names):
                self.emit(
                    {"action": "block", "digit": merged, "factor": factor, "into": list(pair)},
                    entry,
                )
                del self.pending[pair]

    def local_order(self, order: Sequence[str], entry: str) -> list[str]:
        """A permute's order on the local digits: dealt bands left out; a pending block kept as
        one axis where its coarse digit is followed by its fine digit, else cut first."""
        kept = [name for name in order if name not in self.dropped]
        for pair in list(self.pending):
            coarse, fine = pair
            at = kept.index(coarse) if coarse in kept else -1
            if not (0 <= at < len(kept) - 1 and kept[at + 1] == fine):
                self.materialize(pair, entry)
        local: list[str] = []
        skip_fine = False
        for position, name in enumerate(kept):
            if skip_fine:
                skip_fine = False
                continue
            following = kept[position + 1] if position + 1 < len(kept) else None
            pending = self.pending.get((name, following)) if following is not None else None
            if pending is not None:
                local.append(pending[0])
                skip_fine = True
            else:
                local.append(self.local(name))
        return local

    def rename(self, old: str, new: Sequence[str]) -> None:
        self.alias.pop(old, None)
        for name in new:
            self.alias.pop(name, None)


def _dealt_later(operations: Sequence[Any], start: int, array: str, digit: str) -> bool:
    return any(
        later.action == "distribute"
        and later.array == array
        and getattr(later, "digit", None) == digit
        for later in operations[start:]
    )


def local_layouts(
    requests: Requests,
    dimensions: Mapping[str, int],
    env: Mapping[str, int],
) -> dict[str, LocalLayout]:
    """Each array's LocalLayout under a distributed program whose operations leave its tile laid
    out other than row-major in ascending global order; arrays they leave so are not listed.

    `dimensions` gives each array's number of dimensions, `env` the sizes and grid symbols (P,
    P0, ...) the program's amounts are evaluated with. The rewriting, per operation:

    - a split whose band a later distribute deals out is the block scheme: the band vanishes
      (one value per rank) and the offset is the rank's whole owned dimension;
    - a block whose coarse digit a later distribute deals cyclically: the rank holds its blocks
      in order, one axis, until a later operation names the coarse or fine digit; then the owned
      dimension is cut locally by the factor (its last block padded with dead cells);
    - distribute (either form), replicate, place and cast shape nothing local;
    - every other split, block, unsplit, unblock and permute is kept local, on the local names.
    """
    walks = {name: _ArrayWalk(name, ndim) for name, ndim in dimensions.items()}
    operations = list(requests.operations)
    for index, operation in enumerate(operations):
        entry = entry_label(index, operation.action)
        walk = walks.get(getattr(operation, "array", ""))
        if walk is None or operation.action in ("cast", "place", "replicate", "distribute"):
            continue
        action = operation.action
        if action == "split":
            band, offset = operation.into
            if _dealt_later(operations, index + 1, walk.name, band):
                walk.dropped.add(band)
                merged = walk.local(operation.digit)
                walk.rename(operation.digit, [band, offset])
                walk.alias[offset] = merged
                continue
            walk.materialize([operation.digit], entry)
            parts = _amount(operation.parts, env, entry, "parts")
            walk.emit(
                {"action": "split", "digit": walk.local(operation.digit), "parts": parts,
                 "into": [band, offset]},
                entry,
            )  # fmt: skip
            walk.rename(operation.digit, operation.into)
        elif action == "block":
            coarse, fine = operation.into
            factor = _amount(operation.factor, env, entry, "factor")
            walk.materialize([operation.digit], entry)
            merged = walk.local(operation.digit)
            walk.rename(operation.digit, operation.into)
            if _dealt_later(operations, index + 1, walk.name, coarse):
                walk.pending[(coarse, fine)] = (merged, factor)
                continue
            walk.emit(
                {"action": "block", "digit": merged, "factor": factor, "into": [coarse, fine]},
                entry,
            )
        elif action in ("unsplit", "unblock"):
            walk.materialize(operation.digits, entry)
            amount = operation.parts if action == "unsplit" else operation.factor
            key = "parts" if action == "unsplit" else "factor"
            walk.emit(
                {"action": action, "digits": [walk.local(d) for d in operation.digits],
                 key: _amount(amount, env, entry, key), "into": operation.into},
                entry,
            )  # fmt: skip
            for name in operation.digits:
                walk.alias.pop(name, None)
            walk.alias.pop(operation.into, None)
        elif action == "permute":
            walk.emit(
                {"action": "permute", "order": walk.local_order(operation.order, entry)}, entry
            )
        else:
            raise RequestError(
                f"{action} is not a digit operation a distributed tile can take", entry=entry
            )
    layouts: dict[str, LocalLayout] = {}
    for walk in walks.values():
        if not walk.operations:
            continue
        lowered = LocalLayout.lower(walk.name, walk.ndim, walk.operations, walk.entries)
        if _identity(lowered):
            continue
        layouts[walk.name] = lowered
    return layouts


def _identity(layout: LocalLayout) -> bool:
    """The layout is the owned block itself, whatever its digits are called (a permute that
    changed nothing, an unsplit of a kept-local split)."""
    pointer = layout.pointer
    return (
        len(pointer.cells) == 1
        and not pointer.cells[0].live
        and pointer.cells[0].index == tuple(E.Sym(name) for name in layout.digits)
        and pointer.extents == tuple(E.Sym(owned_symbol(d)) for d in range(layout.ndim))
    )


__all__ = ["LocalLayout", "local_layouts", "owned_symbol"]
