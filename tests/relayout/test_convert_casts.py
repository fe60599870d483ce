"""The C cast kernels round exactly as relayout.dtypes (and so as the rational oracle), bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from relayout.convert.casts import (
    NARROW_PRECISIONS,
    aligned_empty,
    cast_in,
    cast_pairs,
    copy_bytes,
    widen_out,
)
from relayout.dtypes import bits_to_double, double_to_bits, precision
from tests.relayout.convert_support.rounding_reference import (
    TABLE_FORMATS,
    boundary_inputs,
    fp32_structured_inputs,
    random_doubles,
    round_by_table,
)


def inputs_for(name: str, count: int) -> np.ndarray:
    edges = fp32_structured_inputs() if name == "fp32" else boundary_inputs(name)
    return np.concatenate([edges, random_doubles(count, seed=21, name=name)])


def assert_bits_equal(got: np.ndarray, want: np.ndarray, inputs: np.ndarray, name: str) -> None:
    nan = np.isnan(bits_to_double(want, name))
    assert np.array_equal(np.isnan(bits_to_double(got, name)), nan)
    bad = (got != want) & ~nan
    assert not bad.any(), list(zip(inputs[bad][:5], got[bad][:5], want[bad][:5], strict=True))


@pytest.mark.parametrize("name", NARROW_PRECISIONS)
def test_narrowing_kernel_rounds_once_from_double(name: str) -> None:
    inputs = inputs_for(name, 1_000_000)
    got = cast_in(inputs, name).view(precision(name).storage_dtype)
    assert_bits_equal(got, double_to_bits(inputs, name), inputs, name)
    if name in TABLE_FORMATS:
        assert_bits_equal(got, round_by_table(inputs, name), inputs, name)


@pytest.mark.slow
@pytest.mark.parametrize("name", NARROW_PRECISIONS)
def test_narrowing_kernel_ten_million_random(name: str) -> None:
    inputs = random_doubles(10_000_000, seed=22, name=name)
    got = cast_in(inputs, name).view(precision(name).storage_dtype)
    assert_bits_equal(got, double_to_bits(inputs, name), inputs, name)


@pytest.mark.parametrize("name", [n for n in NARROW_PRECISIONS if n != "fp32"])
def test_narrowing_from_fp32_rounds_once(name: str) -> None:
    with np.errstate(over="ignore", invalid="ignore"):
        singles = inputs_for(name, 200_000).astype(np.float32)
    got = cast_in(singles, name).view(precision(name).storage_dtype)
    assert_bits_equal(got, double_to_bits(singles.astype(np.float64), name), singles, name)


@pytest.mark.parametrize("name", TABLE_FORMATS)
def test_widening_kernel_is_exact_on_every_value(name: str) -> None:
    target = precision(name)
    every = np.arange(1 << target.bits, dtype=np.uint64).astype(target.storage_dtype)
    buffer = every.view(target.numpy_dtype)
    for problem in ("fp64", "fp32"):
        out = widen_out(buffer, np.empty(len(every), dtype=precision(problem).numpy_dtype))
        with np.errstate(invalid="ignore"):
            want = bits_to_double(every, name).astype(precision(problem).numpy_dtype)
        assert np.array_equal(out, want, equal_nan=True)
        assert np.array_equal(np.signbit(out), np.signbit(want))


def test_fp32_round_trip_and_widening() -> None:
    inputs = inputs_for("fp32", 100_000)
    narrow = cast_in(inputs, "fp32")
    back = widen_out(narrow, np.empty_like(inputs))
    assert np.array_equal(back, narrow.astype(np.float64), equal_nan=True)


def test_buffers_are_aligned_and_odd_lengths_work() -> None:
    for length in (0, 1, 7, 63, 1001):
        values = np.linspace(-3, 3, length)
        buffer = cast_in(values, "bf16")
        assert length == 0 or buffer.ctypes.data % 64 == 0
        assert np.array_equal(buffer.view(np.uint16), double_to_bits(values, "bf16"))
    assert aligned_empty((3, 5), np.float32).ctypes.data % 64 == 0


def test_copy_kernel_copies() -> None:
    source = np.arange(100_003, dtype=np.uint8)
    out = aligned_empty(source.shape, np.uint8)
    assert copy_bytes(source, out) >= 0
    assert np.array_equal(source, out)


def test_refusals_name_the_problem() -> None:
    with pytest.raises(ValueError, match="no cast kernel from fp16 to fp8_e4m3"):
        cast_in(np.zeros(3, np.float16), "fp8_e4m3")
    with pytest.raises(ValueError, match="C-contiguous"):
        cast_in(np.zeros((4, 4))[:, ::2], "fp32")
    assert ("fp64", "fp32") in cast_pairs() and ("fp32", "fp32") not in cast_pairs()
