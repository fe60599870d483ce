"""Running one request three ways (generated kernels, reference engine, round trip) and comparing."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from relayout import Requests
from relayout.arrays import parse_arrays
from relayout.convert import compile_program
from relayout.convert.reference import ReferenceEngine

SPECIAL_VALUES = np.array(
    [
        0.0,
        -0.0,
        np.inf,
        -np.inf,
        np.nan,
        5e-324,
        1e-310,
        65504.0,
        65520.0,
        448.0,
        464.0,
        1.0 + 2.0**-11,
        1.0 + 2.0**-8,
        3.4e38,
        1e300,
    ]
)


def random_inputs(
    arrays: Mapping[str, str], sizes: Mapping[str, int], seed: int
) -> dict[str, np.ndarray]:
    """Values for every array: scaled normals with the rounding-hard specials mixed in."""
    rng = np.random.default_rng(seed)
    inputs = {}
    for name, spec in parse_arrays(arrays).items():
        shape = tuple(int(e.evaluate(dict(sizes))) for e in spec.extent_exprs)
        values = rng.standard_normal(shape) * np.exp2(rng.integers(-20, 20, shape))
        flat = values.reshape(-1)
        if flat.size:
            picks = rng.integers(0, flat.size, size=min(flat.size, 6))
            flat[picks] = rng.choice(SPECIAL_VALUES, size=len(picks))
        if spec.element.complex:
            values = values + 1j * rng.standard_normal(shape)
        with np.errstate(over="ignore", invalid="ignore"):
            inputs[name] = np.ascontiguousarray(values.astype(spec.element.numpy_dtype))
    return inputs


def as_inout(arrays: Mapping[str, str]) -> dict[str, str]:
    """The same array specs, every one intent inout (so convert_out writes every array back)."""
    return {
        name: text.rsplit(":", 1)[0] + ":inout"
        if text.rstrip().endswith((":in", ":out", ":inout"))
        else text + ":inout"
        for name, text in arrays.items()
    }


def compare_with_reference(
    operations: list[dict[str, Any]],
    arrays: Mapping[str, str],
    sizes: Mapping[str, int],
    seed: int = 0,
    **options: Any,
) -> dict[str, Any]:
    """Kernel buffers and outputs equal the reference's byte for byte; dead cells are zero.

    Returns the inputs, buffers and outputs for further laws."""
    request = Requests.validate({"operations": operations})
    program = compile_program(request, arrays, **options)
    reference = ReferenceEngine(request, arrays, sizes)
    inputs = random_inputs(arrays, sizes, seed)
    buffers = program.convert_in(inputs, sizes)
    expected = reference.convert_in(inputs)
    assert list(buffers) == reference.order, (list(buffers), reference.order)
    for name, want in expected.items():
        got = buffers[name]
        assert got.shape == want.shape, (name, got.shape, want.shape)
        assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
        assert got.ctypes.data % 64 == 0 or got.size == 0
        if got.tobytes() != want.tobytes():
            raw_got = got.view(np.uint8).reshape((*got.shape, -1))
            raw_want = want.view(np.uint8).reshape((*want.shape, -1))
            bad = np.argwhere((raw_got != raw_want).any(axis=-1))[:5]
            raise AssertionError(
                f"{name}: kernel and reference differ at {bad.tolist()}: "
                f"{[got[tuple(i)] for i in bad]} vs {[want[tuple(i)] for i in bad]}"
            )
        pointer = reference.pointers[name]
        for member, origin in pointer.origins.items():
            dead = origin < 0
            values = got if member is None else got[member]
            assert not values[dead].view(np.uint8).any(), f"{name}: a dead cell is not zero"
    outputs = compare_convert_out(program, reference, arrays, inputs, buffers, expected, sizes)
    return {"inputs": inputs, "buffers": buffers, "outputs": outputs, "program": program}


def assert_buffers_equal(
    expected: Mapping[str, np.ndarray],
    buffers: Mapping[str, Any],
    to_host: Callable[[Any, np.dtype[Any]], np.ndarray] | None = None,
) -> None:
    """Every buffer equals the reference's byte for byte, a struct's member by member (its
    padding bytes are not compared); `to_host` first brings a device buffer over."""
    for name, want in expected.items():
        got = buffers[name] if to_host is None else to_host(buffers[name], want.dtype)
        if want.dtype.fields is None:
            assert got.tobytes() == want.tobytes(), name
        else:
            for member in want.dtype.names or ():
                assert got[member].tobytes() == want[member].tobytes(), (name, member)


def compare_convert_out(
    program: Any,
    reference: ReferenceEngine,
    arrays: Mapping[str, str],
    inputs: Mapping[str, np.ndarray],
    buffers: Mapping[str, Any],
    expected: Mapping[str, np.ndarray],
    sizes: Mapping[str, int],
    *,
    every_array: bool = False,
) -> dict[str, np.ndarray]:
    """convert_out of `buffers` writes every output array as the reference does from `expected`;
    the outputs it wrote. `every_array` hands the program a scratch array for each input-only
    array too (what a program that writes back every source needs)."""
    specs = parse_arrays(arrays)
    outputs = {n: np.zeros_like(v) for n, v in inputs.items() if specs[n].intent != "in"}
    expected_outputs = {n: np.zeros_like(v) for n, v in outputs.items()}
    targets = (
        {n: outputs.get(n, np.zeros_like(v)) for n, v in inputs.items()} if every_array else outputs
    )
    program.convert_out(buffers, targets, sizes)
    reference.convert_out(expected, expected_outputs)
    for name in outputs:
        assert outputs[name].tobytes() == expected_outputs[name].tobytes(), f"convert_out {name}"
    return outputs
