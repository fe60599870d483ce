"""Laws of the digit algebra and the plans, over random programs and shapes (hypothesis):
the physical->logical map is a bijection onto the live cells, it agrees with an independent numpy
model of each operation, an operation followed by its inverse is the identity,
plan(from_plan(p)) == p, and ownership matches independent formulas."""

from __future__ import annotations

import json
import os
import re
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from relayout import DistributionPlan, Requests, lower_single_node
from relayout.algebra.digits import gf2_inverse
from relayout.algebra.lower import NodeLayout, run_program, to_pointer_layout
from relayout.algebra.state import PointerState
from relayout.distribution import axis_owners, plan_requests

# RELAYOUT_PROPERTY_EXAMPLES=2000 runs the laws deeper than the default.
EXAMPLES = int(os.environ.get("RELAYOUT_PROPERTY_EXAMPLES", "60"))
SETTINGS = settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


# ---------------------------------------------------------------------------------------------
# Random valid programs, drawn one operation at a time against the current state.


def _state(operations: list[dict[str, Any]], arrays: dict[str, str], sizes: dict[str, int]) -> Any:
    return run_program(Requests.validate({"operations": operations}), arrays, sizes)


def _extent(pointer: PointerState, name: str, sizes: dict[str, int]) -> int:
    digit = pointer.digit(name)
    return int(digit.extent.substitute(dict(pointer.bindings)).evaluate(sizes))


def _fresh(pointer: PointerState, counter: list[int]) -> str:
    counter[0] += 1
    return f"g{counter[0]}"


def draw_operation(
    data: st.DataObject, state: Any, sizes: dict[str, int], counter: list[int]
) -> dict[str, Any] | None:
    candidates = [p for p in state.pointers if not p.sparse]
    if not candidates:
        return None
    pointer = data.draw(st.sampled_from(candidates))
    name = pointer.name
    names = list(pointer.digit_names)
    kinds = ["permute", "block", "pad", "shuffle"]
    if any(len(dim) == 1 for dim in pointer.dims):
        kinds.append("split")
    if pointer.cuts:
        kinds.append("merge")
    if any(_tail(pointer, d, sizes) for d in names):
        kinds.append("unpad")
    if pointer.zip_kind is None and pointer.element == "fp64" and pointer.natural == "fp64":
        kinds.append("cast")
    if not names:
        kinds = ["cast"] if "cast" in kinds else []
    if not kinds:
        return None
    kind = data.draw(st.sampled_from(kinds))
    if kind == "permute":
        return {"action": "permute", "array": name, "order": data.draw(st.permutations(names))}
    if kind == "cast":
        return {
            "action": "cast",
            "array": name,
            "to": data.draw(st.sampled_from(["fp32", "fp16", "bf16"])),
        }
    if kind in ("block", "split"):
        if kind == "block":
            digit = data.draw(st.sampled_from(names))
            extent = _extent(pointer, digit, sizes)
            dim = pointer.digit(digit).dim
            outermost = dim is None or pointer.dims[dim][0] == digit
            factors = [f for f in range(1, 6) if outermost or (extent % f == 0)]
            amount_field, amount = "factor", data.draw(st.sampled_from(factors))
        else:
            whole = [dim[0] for dim in pointer.dims if len(dim) == 1]
            digit = data.draw(st.sampled_from(whole))
            amount_field, amount = "parts", data.draw(st.integers(min_value=1, max_value=5))
        return {
            "action": kind,
            "array": name,
            "digit": digit,
            amount_field: amount,
            "into": [_fresh(pointer, counter), _fresh(pointer, counter)],
        }
    if kind == "pad":
        digit = data.draw(st.sampled_from(names))
        return {
            "action": "pad",
            "array": name,
            "digit": digit,
            "amount": data.draw(st.integers(0, 3)),
        }
    if kind == "unpad":
        digit = data.draw(st.sampled_from([d for d in names if _tail(pointer, d, sizes)]))
        return {
            "action": "unpad",
            "array": name,
            "digit": digit,
            "amount": data.draw(st.integers(1, _tail(pointer, digit, sizes))),
        }
    if kind == "merge":
        cut = data.draw(st.sampled_from(list(pointer.cuts)))
        order = [n for n in names if n not in (cut.outer, cut.inner)]
        position = data.draw(st.integers(0, len(order)))
        order[position:position] = [cut.outer, cut.inner]
        action = "unblock" if cut.kind == "block" else "unsplit"
        amount_field = "factor" if cut.kind == "block" else "parts"
        return {
            "action": "__merge__",
            "permute": {"action": "permute", "array": name, "order": order},
            "merge": {
                "action": action,
                "array": name,
                "digits": [cut.outer, cut.inner],
                amount_field: int(cut.amount.evaluate({})),
                "into": _fresh(pointer, counter),
            },
        }
    # shuffle: a rotation or a reversal of one digit, or an XOR swizzle of a power-of-two digit.
    digit = data.draw(st.sampled_from(names))
    extent = _extent(pointer, digit, sizes)
    power = extent & (extent - 1) == 0 and extent > 1
    style = data.draw(st.sampled_from(["rotate", "reverse", *(["linear"] if power else [])]))
    if style == "rotate":
        k = data.draw(st.integers(0, max(extent - 1, 0)))
        return {
            "action": "shuffle",
            "array": name,
            "digits": [digit],
            "f": [f"({digit} + {k}) % {extent}"],
            "f_inv": [f"({digit} + {extent - k}) % {extent}"],
        }
    # A reversal is its own inverse; it also stands in for a swizzle of a digit whose extent is
    # a power of two only at these sizes.
    reversal = {
        "action": "shuffle",
        "array": name,
        "digits": [digit],
        "f": [f"{extent - 1} - {digit}"],
        "f_inv": [f"{extent - 1} - {digit}"],
    }
    if style == "reverse":
        return reversal
    bits = extent.bit_length() - 1
    matrix = data.draw(invertible_matrices(bits))
    constant = pointer.digit(digit).extent.substitute(dict(pointer.bindings))
    if constant.const_value() is None:
        return reversal
    return {
        "action": "linear_shuffle",
        "array": name,
        "digits": [digit],
        "bits": [bits],
        "matrix": matrix,
    }


def _tail(pointer: PointerState, name: str, sizes: dict[str, int]) -> int:
    return int(pointer.digit(name).dead_tail.substitute(dict(pointer.bindings)).evaluate(sizes))


@st.composite
def invertible_matrices(draw: st.DrawFn, n: int) -> list[list[int]]:
    while True:
        matrix = draw(
            st.lists(st.lists(st.integers(0, 1), min_size=n, max_size=n), min_size=n, max_size=n)
        )
        if gf2_inverse(matrix) is not None:
            return matrix


@st.composite
def shapes(draw: st.DrawFn) -> tuple[dict[str, str], dict[str, int]]:
    sizes = {"N": draw(st.integers(1, 9)), "M": draw(st.integers(1, 6))}
    arrays: dict[str, str] = {}
    count = draw(st.integers(1, 3))
    for k in range(count):
        ndim = draw(st.integers(1, 3))
        extents = draw(
            st.lists(st.sampled_from(["N", "M", "4", "2", "N + 1"]), min_size=ndim, max_size=ndim)
        )
        arrays[f"a{k}"] = f"fp64[{','.join(extents)}]"
    if draw(st.booleans()):
        arrays["z"] = "complex128[N]"
    return arrays, sizes


@st.composite
def programs(
    draw: st.DrawFn, regroup: bool = True
) -> tuple[list[dict[str, Any]], dict[str, str], dict[str, int]]:
    arrays, sizes = draw(shapes())
    data = draw(st.data())
    operations: list[dict[str, Any]] = []
    if not regroup:
        arrays.pop("z", None)
    if regroup and "z" in arrays and draw(st.booleans()):
        operations.append({"action": "unzip", "array": "z", "into": ["z_re", "z_im"]})
    same = [n for n, s in arrays.items() if s.startswith("fp64") and s == arrays.get("a0")]
    if regroup and len(same) >= 2 and draw(st.booleans()):
        operations.append(
            {"action": "zip", "arrays": same[:2], "into": "zipped", "dim": draw(st.integers(0, 1))}
        )
    counter = [0]
    for _ in range(draw(st.integers(2, 8))):
        operation = draw_operation(data, _state(operations, arrays, sizes), sizes, counter)
        if operation is None:
            break
        if operation["action"] == "__merge__":
            operations.extend([operation["permute"], operation["merge"]])
        else:
            operations.append(operation)
    return operations, arrays, sizes


def coverage(layout: NodeLayout, sizes: dict[str, int]) -> dict[str, np.ndarray]:
    """How many live physical cells hold each logical cell (or component) of every array."""
    counts: dict[str, np.ndarray] = {}
    for pointer in layout.pointers:
        for cell, flat in layout.cell_indices(pointer, sizes):
            spec = layout.arrays[cell.array]
            size = int(np.prod([int(e.evaluate(sizes)) for e in spec.extent_exprs]))
            if spec.element.complex:
                size *= 2
            target = counts.setdefault(cell.array, np.zeros(size, dtype=np.int64))
            live = flat[flat >= 0]
            if cell.component is None and spec.element.complex:
                live = np.concatenate([live * 2, live * 2 + 1])
            np.add.at(target, live, 1)
    return counts


def assert_bijection(layout: NodeLayout, sizes: dict[str, int]) -> None:
    for pointer in layout.pointers:
        layout.gather_indices(pointer, sizes)  # raises when two cell maps claim one position
    for array, counts in coverage(layout, sizes).items():
        assert counts.min(initial=1) == 1 and counts.max(initial=1) == 1, (array, counts)
    assert set(coverage(layout, sizes)) == set(layout.arrays)


@SETTINGS
@given(programs())
def test_every_logical_cell_is_held_exactly_once(
    program: tuple[list[dict[str, Any]], dict[str, str], dict[str, int]],
) -> None:
    operations, arrays, sizes = program
    request = {"operations": operations}
    # With the sizes bound (what check sees) and symbolically (what a kernel is built from).
    assert_bijection(lower_single_node(request, arrays, sizes), sizes)
    assert_bijection(lower_single_node(request, arrays), sizes)


def inverse_of(operation: dict[str, Any], before: Any) -> list[dict[str, Any]] | None:
    action = operation["action"]
    name = operation.get("array")
    if action == "permute":
        pointer = next(p for p in before.pointers if p.name == name)
        return [{"action": "permute", "array": name, "order": list(pointer.digit_names)}]
    if action in ("block", "split"):
        amount = "factor" if action == "block" else "parts"
        merge = "unblock" if action == "block" else "unsplit"
        return [
            {
                "action": merge,
                "array": name,
                "digits": operation["into"],
                amount: operation[amount],
                "into": operation["digit"],
            }
        ]
    if action == "pad":
        return [
            {
                "action": "unpad",
                "array": name,
                "digit": operation["digit"],
                "amount": operation["amount"],
            }
        ]
    if action == "shuffle":
        return [{**operation, "f": operation["f_inv"], "f_inv": operation["f"]}]
    if action == "linear_shuffle":
        inverse = gf2_inverse(operation["matrix"])
        return [{**operation, "matrix": inverse}]
    return None


def snapshot(
    operations: list[dict[str, Any]], arrays: dict[str, str], sizes: dict[str, int]
) -> list[tuple[str, list[str], list[int], dict[Any, list[int]]]]:
    layout = lower_single_node({"operations": operations}, arrays, sizes)
    result = []
    for pointer in layout.pointers:
        extents = [int(e.evaluate(sizes)) for e in pointer.extents]
        gathered = {
            member: values.tolist()
            for member, values in layout.gather_indices(pointer, sizes).items()
        }
        result.append((pointer.name, [n for n, _ in pointer.digits], extents, gathered))
    return result


@SETTINGS
@given(programs(), st.data())
def test_an_operation_followed_by_its_inverse_is_the_identity(
    program: tuple[list[dict[str, Any]], dict[str, str], dict[str, int]], data: st.DataObject
) -> None:
    operations, arrays, sizes = program
    before = _state(operations, arrays, sizes)
    operation = draw_operation(data, before, sizes, [100])
    if operation is None or operation["action"] == "__merge__":
        return
    inverse = inverse_of(operation, before)
    if inverse is None:
        return
    assert snapshot(operations, arrays, sizes) == snapshot(
        [*operations, operation, *inverse], arrays, sizes
    )
    # block/split/pad/permute come back structurally too: the same extents and cells.
    if operation["action"] in ("block", "split", "pad", "permute"):
        again = _state([*operations, operation, *inverse], arrays, sizes)
        for old, new in zip(before.pointers, again.pointers, strict=True):
            assert [(d.name, d.extent) for d in old.digits] == [
                (d.name, d.extent) for d in new.digits
            ]
            assert old.cells == new.cells


# ---------------------------------------------------------------------------------------------
# Plans


@st.composite
def plans(draw: st.DrawFn) -> tuple[DistributionPlan, dict[str, str]]:
    grid_rank = draw(st.integers(1, 3))
    cyclic_allowed = draw(st.booleans())
    if cyclic_allowed:
        edge = draw(st.integers(1, 3))
        grid = [edge] * grid_rank
    else:
        grid = draw(st.lists(st.integers(1, 4), min_size=grid_rank, max_size=grid_rank))
    arrays: dict[str, Any] = {}
    specs: dict[str, str] = {}
    for k in range(draw(st.integers(1, 3))):
        ndim = draw(st.integers(1, 3))
        specs[f"x{k}"] = f"fp64[{','.join(['N'] * ndim)}]"
        location = draw(st.sampled_from([None, "host", "device"]))
        if draw(st.integers(0, 3)) == 0:
            arrays[f"x{k}"] = {"replicated": True, **({"location": location} if location else {})}
            continue
        free_grid = draw(st.permutations(list(range(grid_rank))))
        axes = []
        used = 0
        for dim in range(ndim):
            if used < len(free_grid) and (dim == 0 or draw(st.booleans())):
                scheme = draw(
                    st.sampled_from(
                        ["block", "cyclic", "block_cyclic"] if cyclic_allowed else ["block"]
                    )
                )
                axis: dict[str, Any] = {"grid_dim": free_grid[used]}
                used += 1
                if scheme != "block":
                    axis["scheme"] = scheme
                if scheme == "block_cyclic":
                    axis["block_size"] = draw(st.integers(1, 8))
                axes.append(axis)
            else:
                axes.append({"grid_dim": None})
        arrays[f"x{k}"] = {"axes": axes, **({"location": location} if location else {})}
    return DistributionPlan.model_validate({"grid": grid, "arrays": arrays}), specs


@SETTINGS
@given(plans(), st.integers(1, 40))
def test_plan_of_from_plan_is_the_plan(
    drawn: tuple[DistributionPlan, dict[str, str]], n: int
) -> None:
    plan, specs = drawn
    ranks = int(np.prod(plan.grid))
    requests = Requests.from_plan(plan)
    assert plan_requests(requests, specs, {"N": n}, ranks) == plan
    assert json.loads(json.dumps(plan.model_dump(mode="json"))) == plan.model_dump(mode="json")
    # The plan's JSON reads back into the same plan.
    assert DistributionPlan.model_validate(plan.model_dump(mode="json")) == plan


def numroc(n: int, nb: int, iproc: int, nprocs: int) -> int:
    """ScaLAPACK's count of the rows a process owns under block-cyclic(nb), source process 0."""
    blocks = n // nb
    count = (blocks // nprocs) * nb
    extra = blocks % nprocs
    if iproc < extra:
        count += nb
    elif iproc == extra:
        count += n % nb
    return count


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 200), st.integers(1, 9), st.integers(1, 12))
def test_ownership_matches_independent_formulas(n: int, ranks: int, block_size: int) -> None:
    owners = axis_owners("block_cyclic", block_size, n, ranks)
    assert [int((owners == r).sum()) for r in range(ranks)] == [
        numroc(n, block_size, r, ranks) for r in range(ranks)
    ]
    cyclic = axis_owners("cyclic", 1, n, ranks)
    assert [int((cyclic == r).sum()) for r in range(ranks)] == [
        numroc(n, 1, r, ranks) for r in range(ranks)
    ]
    bands = axis_owners("block", 1, n, ranks)
    expected = np.concatenate(
        [np.full(len(part), r) for r, part in enumerate(np.array_split(np.arange(n), ranks))]
    )
    assert bands.tolist() == expected.astype(int).tolist()


def digit_owners(
    request: dict[str, Any], n: int, ranks: int, digit: str, modulo: bool
) -> np.ndarray:
    """The owner of each index of a 1-D array as the digit program says: the distributed digit's
    value (mod the ranks when it is dealt cyclic) at the physical cell holding the index."""
    state = run_program(Requests.validate(request), {"x": "fp64[N]"}, {"N": n}, (ranks,), ranks)
    layout = NodeLayout(pointers=(to_pointer_layout(state.pointers[0]),), arrays=state.arrays)
    pointer = layout.pointers[0]
    extents = [int(e.evaluate({"N": n, "P0": ranks})) for e in pointer.extents]
    positions = np.indices(extents).reshape(len(extents), -1)
    position = [name for name, _ in pointer.digits].index(digit)
    values = positions[position] % ranks if modulo else positions[position]
    ((_, flat),) = layout.cell_indices(pointer, {"N": n, "P0": ranks})
    owners = np.full(n, -1)
    owners[flat[flat >= 0]] = values[flat >= 0]
    return owners


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 60), st.integers(1, 6), st.integers(1, 7))
def test_digit_programs_own_what_their_schemes_say(n: int, ranks: int, block_size: int) -> None:
    split = {
        "startup": {"grid": ["P"]},
        "operations": [
            {
                "action": "split",
                "array": "x",
                "digit": "i0",
                "parts": "P0",
                "into": ["band", "offset"],
            },
            {"action": "distribute", "array": "x", "grid_dim": 0, "digit": "band"},
        ],
    }
    assert (
        digit_owners(split, n, ranks, "band", False).tolist()
        == axis_owners("block", 1, n, ranks).tolist()
    )
    blocked = {
        "startup": {"grid": ["P"]},
        "operations": [
            {
                "action": "block",
                "array": "x",
                "digit": "i0",
                "factor": block_size,
                "into": ["coarse", "fine"],
            },
            {
                "action": "distribute",
                "array": "x",
                "grid_dim": 0,
                "digit": "coarse",
                "scheme": "cyclic",
            },
        ],
    }
    assert (
        digit_owners(blocked, n, ranks, "coarse", True).tolist()
        == axis_owners("block_cyclic", block_size, n, ranks).tolist()
    )
    # And the plans they lower to name those schemes; the short forms lower to the same plans.
    plan = plan_requests(Requests.validate(blocked), {"x": "fp64[N]"}, {"N": n}, ranks)
    assert plan.arrays["x"].axes[0].scheme == ("cyclic" if block_size == 1 else "block_cyclic")
    short = Requests.from_plan(plan)
    assert plan_requests(short, {"x": "fp64[N]"}, {"N": n}, ranks) == plan
    split_plan = plan_requests(Requests.validate(split), {"x": "fp64[N]"}, {"N": n}, ranks)
    assert split_plan.model_dump(mode="json") == {
        "grid": [ranks],
        "arrays": {"x": {"axes": [{"grid_dim": 0}]}},
    }


# ---------------------------------------------------------------------------------------------
# An independent model: each operation applied with numpy to an array of logical indices.


def _cut(values: np.ndarray, axis: int, pieces: list[np.ndarray], length: int) -> np.ndarray:
    """Stack pieces (slices along `axis`) as a new axis, each padded with -1 to `length`."""
    padded = []
    for piece in pieces:
        widths = [(0, 0)] * piece.ndim
        widths[axis] = (0, length - piece.shape[axis])
        padded.append(np.pad(piece, widths, constant_values=-1))
    return np.stack(padded, axis=axis)


def simulate(
    operations: list[dict[str, Any]], arrays: dict[str, str], sizes: dict[str, int]
) -> dict[str, np.ndarray]:
    """The logical index each physical cell holds (-1 dead), by reshaping numpy arrays."""
    from relayout import parse_arrays

    state: dict[str, tuple[list[str], np.ndarray]] = {}
    for name, spec in parse_arrays(arrays).items():
        shape = [int(e.evaluate(sizes)) for e in spec.extent_exprs]
        state[name] = (
            [f"i{k}" for k in range(len(shape))],
            np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape),
        )
    cuts: dict[tuple[str, str], int] = {}  # (outer, inner) -> the merged digit's extent
    for op in operations:
        action = op["action"]
        if action == "cast":
            continue
        names, values = state[op["array"]]
        if action == "permute":
            values = np.transpose(values, [names.index(n) for n in op["order"]])
            names = list(op["order"])
        elif action in ("block", "split"):
            axis = names.index(op["digit"])
            extent = values.shape[axis]
            if action == "block":
                factor = int(op["factor"])
                count = -(-extent // factor)
                pieces = [
                    np.take(values, range(b * factor, min((b + 1) * factor, extent)), axis=axis)
                    for b in range(count)
                ]
                values = _cut(values, axis, pieces, factor)
            else:
                parts = int(op["parts"])
                bands = np.array_split(np.arange(extent), parts)
                pieces = [np.take(values, band, axis=axis) for band in bands]
                values = _cut(values, axis, pieces, -(-extent // parts))
            cuts[tuple(op["into"])] = extent
            names[axis : axis + 1] = list(op["into"])
        elif action in ("unblock", "unsplit"):
            outer, inner = op["digits"]
            axis = names.index(outer)
            extent = cuts.pop((outer, inner))
            rows = [np.take(values, b, axis=axis) for b in range(values.shape[axis])]
            kept = []
            for row in rows:
                if action == "unsplit":
                    band_length = len(
                        np.array_split(np.arange(extent), int(op["parts"]))[len(kept)]
                    )
                    row = np.take(row, range(band_length), axis=axis)
                kept.append(row)
            values = np.concatenate(kept, axis=axis)
            values = np.take(values, range(extent), axis=axis)
            names[axis : axis + 2] = [op["into"]]
        elif action == "pad":
            axis = names.index(op["digit"])
            widths = [(0, 0)] * values.ndim
            widths[axis] = (0, int(op["amount"]))
            values = np.pad(values, widths, constant_values=-1)
        elif action == "unpad":
            axis = names.index(op["digit"])
            values = np.take(values, range(values.shape[axis] - int(op["amount"])), axis=axis)
        elif action == "shuffle":
            from relayout.expr import parse

            axes = [names.index(n) for n in op["digits"]]
            grid = np.indices(values.shape)
            env = {**sizes, **{n: grid[a] for n, a in zip(op["digits"], axes, strict=True)}}
            source = list(grid)
            for a, text in zip(axes, op["f_inv"], strict=True):
                source[a] = np.broadcast_to(parse(text).evaluate(env), values.shape)
            values = values[tuple(source)]
        elif action == "linear_shuffle":
            (digit,), (bits,) = op["digits"], op["bits"]
            axis = names.index(digit)
            matrix = np.array(op["matrix"])
            moved = np.empty_like(values)
            for logical in range(2**bits):
                vector = np.array([(logical >> (bits - 1 - w)) & 1 for w in range(bits)])
                stored_bits = (matrix @ vector) % 2
                stored = int(sum(int(b) << (bits - 1 - w) for w, b in enumerate(stored_bits)))
                index = [slice(None)] * values.ndim
                target = list(index)
                index[axis], target[axis] = logical, stored
                moved[tuple(target)] = values[tuple(index)]
            values = moved
        else:
            raise AssertionError(f"the model has no {action}")
        state[op["array"]] = (names, values)
    return {name: values for name, (_, values) in state.items()}


@SETTINGS
@given(programs(regroup=False))
def test_the_layout_agrees_with_an_independent_numpy_model(
    program: tuple[list[dict[str, Any]], dict[str, str], dict[str, int]],
) -> None:
    operations, arrays, sizes = program
    expected = simulate(operations, arrays, sizes)
    for layout in (
        lower_single_node({"operations": operations}, arrays, sizes),
        lower_single_node({"operations": operations}, arrays),
    ):
        for pointer in layout.pointers:
            extents = [int(e.evaluate(sizes)) for e in pointer.extents]
            got = layout.gather_indices(pointer, sizes)[None].reshape(extents)
            assert got.tolist() == expected[pointer.name].tolist(), operations


@pytest.mark.parametrize(
    ("plan", "message"),
    [
        (
            {"grid": [2], "arrays": {"A": {"axes": [{"grid_dim": 1}]}}},
            "arrays.A.axes[0]: grid_dim 1",
        ),
        (
            {"grid": [2], "arrays": {"A": {"axes": [{"grid_dim": 0}], "replicated": True}}},
            "arrays.A: a replicated array takes no axes",
        ),
        ({"grid": [0], "arrays": {"A": {"replicated": True}}}, "grid[0]: 0 ranks"),
        ({"grid": [], "arrays": {"A": {"replicated": True}}}, "grid: a plan's grid"),
        ({"grid": [2], "arrays": {"A": {"axes": [{"grid_dim": None}]}}}, "arrays.A: neither"),
        ({"grid": [2], "arrays": {"A": {}}}, "arrays.A: neither"),
        (
            {"grid": [2, 2], "arrays": {"A": {"axes": [{"grid_dim": 0}, {"grid_dim": 0}]}}},
            "arrays.A.axes[1]: grid_dim 0 distributes two axes",
        ),
        (
            {"grid": [2, 3], "arrays": {"A": {"axes": [{"grid_dim": 0, "scheme": "cyclic"}]}}},
            "arrays.A.axes[0]: a cyclic axis needs an equal-edge grid",
        ),
    ],
)
def test_a_plan_that_no_request_plans_to_is_refused(plan: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        DistributionPlan.parse(plan)
