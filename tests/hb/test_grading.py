"""Grading laws: the tolerance matrix, NaN and inf positions, the maximum relative error, the
precision override for fp64-only kernels, the speedup (min_of_k and Mann-Whitney), and the
per-rep seeds."""

from __future__ import annotations

import numpy as np

from hb.judge.grading import (
    compare,
    compare_outputs,
    mannwhitney_speedup,
    rep_seed,
    resolve_problem,
    speedup,
)
from hb.precision import TOLERANCE_MATRIX, Tolerance, precision_casts


def test_tolerance_matrix_is_the_issue_table() -> None:
    assert TOLERANCE_MATRIX == {
        "fp64": (1e-9, 1e-11),
        "fp32": (1e-3, 1e-5),
        "fp16": (1e-2, 1e-3),
        "bf16": (3e-2, 1e-2),
        "fp8_e4m3": (1e-1, 0.125),
        "fp8_e5m2": (2e-1, 0.25),
    }


def test_within_and_outside_the_band() -> None:
    want = np.array([1.0, -2.0, 0.0])
    band = TOLERANCE_MATRIX["fp64"]
    assert compare("y", want * (1 + 5e-10), want, band).correct
    failed = compare("y", want * (1 + 5e-9), want, band)
    assert (
        not failed.correct
        and "y:" in (failed.reason or "")
        and "rtol=1e-09" in (failed.reason or "")
    )
    assert abs(failed.max_relative_error - 5e-9) < 1e-12


def test_nan_and_inf_positions_must_match() -> None:
    band = Tolerance(1e-3, 1e-5)
    want = np.array([1.0, np.nan, np.inf])
    assert compare("y", want.copy(), want, band).correct
    assert "NaN positions" in (
        compare("y", np.array([np.nan, 1.0, np.inf]), want, band).reason or ""
    )
    assert "inf positions" in (
        compare("y", np.array([1.0, np.nan, -np.inf]), want, band).reason or ""
    )


def test_a_narrow_output_is_graded_in_the_problem_band() -> None:
    want = np.linspace(-1, 1, 101)
    as_fp32 = want.astype(np.float32).astype(np.float64)  # a cast output, upcast by the judge
    assert not compare_outputs({"y": as_fp32}, {"y": want}, TOLERANCE_MATRIX["fp64"]).correct
    assert compare_outputs({"y": as_fp32}, {"y": want}, TOLERANCE_MATRIX["fp32"]).correct


def test_missing_output_and_shape() -> None:
    band = TOLERANCE_MATRIX["fp64"]
    assert "no output" in (compare_outputs({}, {"y": np.zeros(2)}, band).reason or "")
    assert "shape" in (compare("y", np.zeros(3), np.zeros(2), band).reason or "")


def test_precision_override_for_listed_fp64_only_kernels() -> None:
    listed = resolve_problem("channel_flow", ["fp64"], "fp32", ["channel_flow"])
    assert not isinstance(listed, str)
    assert listed.precision == "fp64" and listed.band == TOLERANCE_MATRIX["fp32"]
    assert listed.precision_override == "fp32"
    assert isinstance(resolve_problem("channel_flow", ["fp64"], "fp32", []), str)


def test_precision_casts_leave_out_the_problem_dtype() -> None:
    assert precision_casts("fp64", ["fp64", "fp32", "bf16"]).targets == ("fp32", "bf16")


def test_precision_casts_round_once_and_widen_exactly() -> None:
    casts = precision_casts("fp64", ["fp32", "fp16"])
    values = np.random.default_rng(1).uniform(-1e3, 1e3, 1000)
    narrowed = casts.cast_in(values, "fp16")
    assert narrowed.dtype == np.float16 and np.array_equal(narrowed, values.astype(np.float16))
    back = np.empty_like(values)
    casts.widen_out(narrowed, back)
    assert np.array_equal(back, narrowed.astype(np.float64))


def test_speedup() -> None:
    assert speedup(200, 100) == 2.0
    assert speedup(200, 0) == 0.0


def test_mannwhitney_credits_only_a_gain_it_can_defend() -> None:
    rng = np.random.default_rng(0)
    baseline = list(1000 + rng.normal(0, 10, 20))
    twice = list(500 + rng.normal(0, 5, 20))
    # A real 2x win is credited as a little less than 2 (the gain the test still defends).
    assert 1.8 < mannwhitney_speedup(twice, baseline) < 2.0
    # Noise earns nothing: the same distribution, or 1% slower, is at most 1.
    assert mannwhitney_speedup(baseline, baseline) == 1.0
    assert mannwhitney_speedup([b * 1.01 for b in baseline], baseline) < 1.0
    # Two reps each can never reach p < 0.1: no gain is credited however fast.
    assert mannwhitney_speedup([1, 2], [1000, 1001]) == 1.0
    assert mannwhitney_speedup([], baseline) == 0.0


def test_every_rep_has_a_seed_of_its_own() -> None:
    seeds = {rep_seed(7, rep) for rep in range(50)}
    assert len(seeds) == 50 and rep_seed(7, 3) == rep_seed(7, 3) != rep_seed(8, 3)
    assert all(0 <= s < 2**63 for s in seeds)
