"""relayout.dtypes rounds once from double, bit for bit as the rational oracle in convert_support."""

from __future__ import annotations

import warnings

import ml_dtypes
import numpy as np
import pytest

from relayout.dtypes import (
    PRECISIONS,
    bits_to_double,
    double_to_bits,
    precision,
    precision_of_dtype,
    round_from_double,
    widen_to_double,
)
from tests.relayout.convert_support.rounding_reference import (
    FORMATS,
    TABLE_FORMATS,
    boundary_inputs,
    decode,
    fp32_structured_inputs,
    random_doubles,
    round_by_fractions,
    round_by_table,
)


def assert_same_bits(got: np.ndarray, want: np.ndarray, inputs: np.ndarray, name: str) -> None:
    """Equal encodings, except that a NaN only has to be a NaN of the same sign."""
    got_nan = np.isnan(bits_to_double(got, name))
    want_nan = np.isnan(decode(want, name))
    assert np.array_equal(got_nan, want_nan), inputs[got_nan != want_nan][:10]
    sign = np.uint64(1) << np.uint64(FORMATS[name].bits - 1)
    assert np.array_equal(
        got[got_nan].astype(np.uint64) & sign, want[got_nan].astype(np.uint64) & sign
    )
    mismatched = (got != want) & ~want_nan
    assert not mismatched.any(), (
        f"{name}: {np.count_nonzero(mismatched)} inputs round differently, e.g. "
        + ", ".join(
            f"{x!r} -> {g:#x} (want {w:#x})"
            for x, g, w in zip(
                inputs[mismatched][:5], got[mismatched][:5], want[mismatched][:5], strict=True
            )
        )
    )


@pytest.mark.parametrize("name", TABLE_FORMATS)
def test_the_two_oracles_agree(name: str) -> None:
    inputs = boundary_inputs(name)
    sample = inputs[np.random.default_rng(1).choice(len(inputs), 1500, replace=False)]
    sample = np.concatenate([sample, inputs[-30:], inputs[:30]])
    by_fractions = np.array([round_by_fractions(float(x), name) for x in sample])
    by_table = round_by_table(sample, name).astype(np.int64)
    nan = np.isnan(sample)
    assert np.array_equal(by_fractions[~nan], by_table[~nan])


@pytest.mark.parametrize("name", TABLE_FORMATS)
def test_every_value_midpoint_and_threshold_rounds_once(name: str) -> None:
    inputs = boundary_inputs(name)
    assert_same_bits(double_to_bits(inputs, name), round_by_table(inputs, name), inputs, name)


@pytest.mark.parametrize("name", TABLE_FORMATS)
def test_random_doubles_round_once(name: str) -> None:
    inputs = random_doubles(1_000_000, seed=11, name=name)
    assert_same_bits(double_to_bits(inputs, name), round_by_table(inputs, name), inputs, name)


@pytest.mark.slow
@pytest.mark.parametrize("name", TABLE_FORMATS)
def test_ten_million_random_doubles_round_once(name: str) -> None:
    inputs = random_doubles(10_000_000, seed=12, name=name)
    assert_same_bits(double_to_bits(inputs, name), round_by_table(inputs, name), inputs, name)


def test_fp32_every_exponent_and_midpoint_by_fractions() -> None:
    inputs = fp32_structured_inputs()
    want = np.array([round_by_fractions(float(x), "fp32") for x in inputs], dtype=np.uint32)
    assert_fp32_bits(double_to_bits(inputs, "fp32"), want, inputs)


def assert_fp32_bits(got: np.ndarray, want: np.ndarray, inputs: np.ndarray) -> None:
    nan = np.isnan(inputs)
    assert np.isnan(got.view(np.float32)[nan]).all()
    bad = (got != want) & ~nan
    assert not bad.any(), [
        (x, hex(g), hex(w))
        for x, g, w in zip(inputs[bad][:5], got[bad][:5], want[bad][:5], strict=True)
    ]


@pytest.mark.parametrize("name", ["fp32", "fp16"])
def test_numpy_agrees_bit_for_bit(name: str) -> None:
    inputs = np.concatenate(
        [
            fp32_structured_inputs() if name == "fp32" else boundary_inputs(name),
            random_doubles(1_000_000, seed=13, name=name),
        ]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        by_numpy = inputs.astype(precision(name).numpy_dtype).view(precision(name).storage_dtype)
    ours = double_to_bits(inputs, name)
    nan = np.isnan(inputs)
    assert np.array_equal(ours[~nan], by_numpy[~nan])
    assert np.isnan(round_from_double(inputs[nan], name).astype(np.float64)).all()


@pytest.mark.parametrize("name", ["bf16", "fp8_e4m3", "fp8_e5m2"])
def test_ml_dtypes_differs_only_where_it_rounds_twice(name: str) -> None:
    """ml_dtypes (before 0.7) goes float64 -> float32 -> narrow: where that double rounding changes
    the answer it may disagree with one rounding, and only there, giving the twice-rounded value;
    elsewhere it agrees bit for bit. (Newer releases round some of those cases once.)"""
    inputs = np.concatenate([boundary_inputs(name), random_doubles(1_000_000, seed=14, name=name)])
    inputs = inputs[~np.isnan(inputs)]
    target = precision(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        by_ml_dtypes = inputs.astype(target.numpy_dtype).view(target.storage_dtype)
        through_float32 = inputs.astype(np.float32).astype(np.float64)
    once = round_by_table(inputs, name)
    twice = round_by_table(through_float32, name)
    double_rounding = once != twice
    ours = double_to_bits(inputs, name)
    nan_out = np.isnan(decode(once, name))
    assert np.array_equal(ours[~nan_out], once[~nan_out])
    agree = by_ml_dtypes == once
    nan_both = nan_out & np.isnan(decode(by_ml_dtypes, name))
    disagreements = ~agree & ~nan_both
    # The midpoint +- 1 ulp inputs are where double rounding bites: there are such cases, every
    # disagreement is one of them, and there ml_dtypes gives the twice-rounded value.
    assert np.count_nonzero(double_rounding & ~nan_both) > 0
    assert not np.any(disagreements & ~double_rounding)
    assert np.array_equal(by_ml_dtypes[disagreements], twice[disagreements])
    print(f"{name}: ml_dtypes rounds twice on {np.count_nonzero(disagreements)} of {len(inputs)}")


@pytest.mark.parametrize("name", TABLE_FORMATS)
def test_widening_is_exact_and_round_trips(name: str) -> None:
    target = precision(name)
    every = np.arange(1 << target.bits, dtype=np.uint64).astype(target.storage_dtype)
    widened = bits_to_double(every, name)
    expected = decode(every, name)
    assert np.array_equal(widened, expected, equal_nan=True)
    finite = ~np.isnan(widened)
    assert np.array_equal(double_to_bits(widened[finite], name), every[finite])
    assert np.array_equal(widen_to_double(every.view(target.numpy_dtype)), widened, equal_nan=True)


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("fp8_e4m3", 448.0, 448.0),
        ("fp8_e4m3", 464.0, 448.0),  # the tie goes to 448, whose mantissa is even
        ("fp8_e4m3", np.nextafter(464.0, np.inf), np.nan),
        ("fp8_e4m3", np.inf, np.nan),
        ("fp8_e4m3", -(2.0**-10), -0.0),  # half the smallest subnormal 2**-9: a tie, to even 0
        ("fp8_e4m3", -np.nextafter(2.0**-10, 1), -(2.0**-9)),
        ("fp16", 65519.99, 65504.0),
        ("fp16", 65520.0, np.inf),
        ("fp16", -(2.0**-25), -0.0),
        ("fp16", np.nextafter(2.0**-25, 1), 2.0**-24),
        ("bf16", -np.inf, -np.inf),
        ("fp8_e5m2", 61440.0, np.inf),
        ("fp8_e5m2", np.nextafter(61440.0, 0), 57344.0),
    ],
)
def test_thresholds(name: str, value: float, expected: float) -> None:
    got = float(bits_to_double(double_to_bits(np.array([value]), name), name)[0])
    if np.isnan(expected):
        assert np.isnan(got)
    else:
        assert got == expected and np.signbit(got) == np.signbit(expected)


def test_names_and_dtypes() -> None:
    assert list(PRECISIONS) == ["fp64", "fp32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2"]
    assert precision_of_dtype(ml_dtypes.bfloat16).storage_c_type == "uint16_t"
    assert precision("fp8_e4m3").max_finite == 448.0
    assert precision("fp16").max_finite == 65504.0
    with pytest.raises(ValueError, match=r"unknown precision 'fp4'.*fp64, fp32"):
        precision("fp4")
    with pytest.raises(ValueError, match="int32 is not a relayout precision"):
        precision_of_dtype(np.int32)


@pytest.mark.parametrize("name", list(PRECISIONS))
def test_the_tables_bit_layouts_are_ml_dtypes(name: str) -> None:
    """relayout.types' layout of each precision is the one ml_dtypes (and numpy) implements."""
    p = precision(name)
    info = ml_dtypes.finfo(p.numpy_dtype)
    assert (p.bits, p.exponent_bits, p.mantissa_bits) == (info.bits, info.nexp, info.nmant)
    assert 1 - p.bias == info.minexp
    assert p.max_finite == float(info.max)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        has_inf = bool(np.isinf(np.array([np.inf]).astype(p.numpy_dtype).astype(np.float64))[0])
    assert p.finite_only == (not has_inf)
