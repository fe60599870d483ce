"""A catalog kernel on MPI ranks: whether the driver can take it, the C prototype of its MPI entry
point, the rule that says which size symbols arrive local to a rank, and what /task and
/requests/check show of it under a relayout Distribution."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hb.kernels import Manifest
from hb.precision import C_TYPES
from relayout.distribution import Distribution, owned_count, rank_coords
from relayout.expr import Sym, parse
from relayout.models import Requests
from relayout.plan import Axis


def mpi_refusal(kernel: Manifest) -> str | None:
    """Why the MPI driver cannot grade this kernel, or None: its tiles are dense arrays at the
    problem precision (spec §3.2: a sparse kernel with a startup.grid is refused)."""
    for array in kernel.arrays:
        if array.format != "dense":
            return (
                f"startup.grid: {kernel.name}.{array.name} is sparse ({array.format}); distributing "
                f"a sparse format is not implemented, so send the request without startup.grid"
            )
        if array.dtype != "float":
            return (
                f"startup.grid: {kernel.name}.{array.name} is {array.dtype}; the MPI driver "
                f"distributes floating arrays only"
            )
    return None


def mpi_entry_point(kernel: Manifest, precision: str) -> str:
    """The MPI entry point's name: <kernel>_mpi_<precision>."""
    return f"{kernel.name}_mpi_{precision}"


def mpi_prototype(
    kernel: Manifest,
    precision: str,
    casts: Mapping[str, str] | None = None,
    tiles: Mapping[str, str] | None = None,
) -> str:
    """`void <kernel>_mpi_<precision>(local tiles..., sizes and scalars..., MPI_Comm comm,
    void *workspace, int64_t workspace_bytes)`; input-only tiles are const, a cast tile
    (`casts`: array -> precision) has the cast's C type, and `tiles` (array -> text, e.g.
    `[ceil(N/4)][4]`) writes a tile's packed extents as a comment after its pointer."""
    from hb.abi import c_prototype, pointer_declaration

    casts = casts or {}
    tiles = tiles or {}
    pointers = [
        pointer_declaration(a.name, C_TYPES[casts.get(a.name, precision)], a.intent)
        + (f" /* {tiles[a.name]} */" if a.name in tiles else "")
        for a in kernel.arrays
    ]
    return c_prototype(
        mpi_entry_point(kernel, precision), pointers, kernel, precision, extra=("MPI_Comm comm",)
    )


# ---------------------------------------------------------------------------------------------
# Size symbols: local or global


@dataclass(frozen=True)
class SymbolArrival:
    """How a size symbol reaches the kernel: local (each rank's own count) or global, and why."""

    symbol: str
    local: bool
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {
            "symbol": self.symbol,
            "arrives": "local" if self.local else "global",
            "reason": self.reason,
        }


def symbol_arrivals(kernel: Manifest, plan: Any) -> dict[str, SymbolArrival]:
    """For each size symbol, whether it arrives local under `plan`.

    The rule: a symbol arrives local when every array axis it sizes is exactly that symbol and is
    split over the grid the same way (same grid dimension, scheme and block size); then every
    rank's tiles have one common extent along those axes and the rank gets that extent. A symbol
    that sizes an axis kept whole (or a replicated array), an axis through an expression (N + 2),
    or axes split differently arrives global.
    """
    distribution = Distribution.of(plan)
    arrivals: dict[str, SymbolArrival] = {}
    for symbol in kernel.sizes:
        splits: list[tuple[str, Axis]] = []
        reason = ""
        for array in kernel.arrays:
            entry = distribution.arrays.get(array.name)
            for dim, text in enumerate(array.shape):
                expression = parse(str(text))
                if symbol not in expression.symbols():
                    continue
                where = f"{array.name} dim {dim}"
                if expression != Sym(symbol):
                    reason = reason or f"{where} is sized by the expression {text!r}"
                    continue
                if entry is None:
                    reason = reason or f"{array.name} is not in the plan"
                    continue
                if entry.replicated:
                    reason = reason or f"{array.name} is replicated"
                    continue
                axis = entry.axes[dim]
                if axis.grid_dim is None:
                    reason = reason or f"{where} is kept whole"
                    continue
                splits.append((where, axis))
        if not reason and not splits:
            reason = "it sizes no array axis"
        if not reason:
            first_where, first = splits[0]
            for where, axis in splits[1:]:
                if not axis.same_split(first):
                    reason = f"{where} is split differently from {first_where}"
                    break
        if reason:
            arrivals[symbol] = SymbolArrival(symbol, False, reason)
        else:
            dims = ", ".join(where for where, _ in splits)
            arrivals[symbol] = SymbolArrival(
                symbol, True, f"every axis it sizes ({dims}) is split the same way"
            )
    return arrivals


def _local_symbol_axis(kernel: Manifest, plan: Distribution, symbol: str) -> Axis:
    for array in kernel.arrays:
        entry = plan.arrays.get(array.name)
        if entry is None or entry.replicated:
            continue
        for dim, text in enumerate(array.shape):
            if parse(str(text)) == Sym(symbol):
                return entry.axes[dim]
    raise KeyError(symbol)


def rank_sizes(kernel: Manifest, plan: Any, sizes: Mapping[str, int], rank: int) -> dict[str, int]:
    """The size symbols' values `rank` is called with: its own count for a local symbol, the
    global value otherwise."""
    distribution = Distribution.of(plan)
    arrivals = symbol_arrivals(kernel, distribution)
    coords = rank_coords(rank, distribution.grid)
    values: dict[str, int] = {}
    for symbol in kernel.sizes:
        value = int(sizes[symbol])
        if arrivals[symbol].local:
            axis = _local_symbol_axis(kernel, distribution, symbol)
            assert axis.grid_dim is not None
            value = owned_count(
                axis, value, distribution.grid[axis.grid_dim], coords[axis.grid_dim]
            )
        values[symbol] = value
    return values


def local_sizes_table(
    kernel: Manifest, plan: Any, sizes: Mapping[str, int]
) -> list[dict[str, int]]:
    """rank_sizes for every rank of the plan's grid, in rank order."""
    distribution = Distribution.of(plan)
    return [rank_sizes(kernel, distribution, sizes, rank) for rank in range(distribution.ranks)]


def workspace_bytes_at(kernel: Manifest, sizes: Mapping[str, int]) -> int:
    """The workspace a rank gets: the manifest's expression over that rank's size values."""
    value = int(parse(kernel.workspace_bytes).evaluate(dict(sizes)))
    if value < 0:
        raise ValueError(
            f"{kernel.name}: workspace_bytes {kernel.workspace_bytes!r} is negative ({value})"
        )
    return value


def grid_at(grid: Sequence[str | int], ranks: int) -> tuple[tuple[int, ...] | None, str | None]:
    """startup.grid evaluated at `ranks` (relayout's Requests.grid_at): (extents, None), or
    (None, why the grid does not span that rank count) — root(P, 2) needs a perfect square, and
    the extents must multiply to P."""
    try:
        requests = Requests.validate({"startup": {"grid": [str(e) for e in grid]}})
        return tuple(int(e) for e in requests.grid_at(ranks)), None
    except ValueError as error:
        return None, f"startup.grid {[str(e) for e in grid]} does not span P = {ranks}: {error}"


def rank_coordinates_table(plan: Any) -> list[tuple[int, ...]]:
    """Each rank's grid coordinates in rank order (row-major), for documentation and checks."""
    distribution = Distribution.of(plan)
    return [rank_coords(rank, distribution.grid) for rank in range(distribution.ranks)]


def tile_extent_texts(kernel: Manifest, plan: Any) -> dict[str, str]:
    """Each locally laid-out tile's packed extents as C-style text (`[ceil(N/4)][4]`), for the
    entry point's comments. An owned extent is written as the kernel's size symbol where the rank
    is called with exactly that value (a symbol arriving local, or a dimension held whole), else
    as `owned<d>` (the rank's owned count along dimension d)."""
    distribution = Distribution.of(plan)
    arrivals = symbol_arrivals(kernel, distribution)
    texts: dict[str, str] = {}
    for array in kernel.arrays:
        layout = distribution.local.get(array.name)
        if layout is None:
            continue
        entry = distribution.arrays[array.name]
        display: dict[int, Any] = {}
        for dim, text in enumerate(array.shape):
            expression = parse(str(text))
            whole = entry.replicated or entry.axes[dim].grid_dim is None
            local_symbol = (
                isinstance(expression, Sym)
                and expression.name in arrivals
                and arrivals[expression.name].local
            )
            if whole or local_symbol:
                display[dim] = expression
        extents = "".join(f"[{e}]" for e in layout.extent_exprs(display))
        texts[array.name] = f"{extents} digits {', '.join(layout.digits)}"
    return texts


def describe_plan(
    kernel: Manifest, plan: Any, sizes: Mapping[str, int] | None = None
) -> dict[str, Any]:
    """What /task/{kernel} and /requests/check show of a plan: the plan's JSON, which size symbols
    arrive local (with the reason), each local tile layout (its single-node program over the
    owned extents, digits and packed extents) and, given the global sizes, per rank its grid
    coordinates, packed tile extents (`tiles`), owned extents where a local layout differs
    (`owned`) and size values."""
    distribution = Distribution.of(plan)
    answer: dict[str, Any] = {
        "plan": distribution.to_json(),
        "rank_order": "row-major: rank = c0 * P1 + c1 on a 2-D grid",
        "symbols": {s: a.to_json() for s, a in symbol_arrivals(kernel, distribution).items()},
    }
    if distribution.local:
        texts = tile_extent_texts(kernel, distribution)
        answer["local_layouts"] = {
            name: {**layout.to_json(), "tile": texts[name]}
            for name, layout in distribution.local.items()
        }
    if sizes is not None:
        ranks = []
        for rank in range(distribution.ranks):
            described: dict[str, Any] = {
                "rank": rank,
                "coords": list(rank_coords(rank, distribution.grid)),
                "sizes": rank_sizes(kernel, distribution, sizes, rank),
                "tiles": {
                    a.name: list(distribution.tile_extents(a.name, kernel.shape_of(a, sizes), rank))
                    for a in kernel.arrays
                },
            }
            if distribution.local:
                described["owned"] = {
                    name: list(distribution.owned_shape(name, kernel.shape_of(name, sizes), rank))
                    for name in distribution.local
                }
            ranks.append(described)
        answer["ranks"] = ranks
    return answer


def entry_signature(kernel: Manifest, precision: str, casts: Mapping[str, str], plan: Any) -> str:
    """The MPI entry point as the submission must define it under `plan`, each locally laid-out
    tile's packed extents in a comment after its pointer."""
    return mpi_prototype(kernel, precision, casts, tile_extent_texts(kernel, plan)) + ";"
