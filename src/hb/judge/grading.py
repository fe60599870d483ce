"""Grading: outputs against the reference at the problem precision's tolerance (NaN and inf
positions must match), the maximum relative error, and the speedup against the baseline."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from hb.precision import TOLERANCE_MATRIX, Tolerance

if TYPE_CHECKING:
    from hb.execution.runner import RunResult


@dataclass(frozen=True)
class Problem:
    """The precision a grade's arrays live in, the band it is judged in, and the override if any."""

    precision: str
    band: Tolerance
    precision_override: str | None = None


def resolve_problem(
    kernel: str,
    allowed_precisions: list[str],
    datatype: str,
    override_kernels: list[str],
    bands: Mapping[str, Tolerance] | None = None,
) -> Problem | str:
    """The problem a sweep's datatype gives this kernel, or the reason it cannot run.

    `bands` is the kernel's manifest tolerance override (a band per precision it widens); other
    precisions take TOLERANCE_MATRIX's. grading.precision_override_kernels: a listed fp64-only
    kernel under fp32 keeps its fp64 problem and is graded in the fp32 band, or in its own fp64
    band where that is wider.
    """
    own = dict(bands or {})
    if datatype in allowed_precisions:
        return Problem(datatype, own.get(datatype, TOLERANCE_MATRIX[datatype]))
    if datatype == "fp32" and allowed_precisions == ["fp64"] and kernel in override_kernels:
        fp32, fp64 = TOLERANCE_MATRIX["fp32"], own.get("fp64", TOLERANCE_MATRIX["fp64"])
        band = Tolerance(max(fp32.rtol, fp64.rtol), max(fp32.atol, fp64.atol))
        return Problem("fp64", band, precision_override="fp32")
    return f"{kernel} runs at {allowed_precisions}, not {datatype}"


@dataclass(frozen=True)
class Comparison:
    correct: bool
    max_relative_error: float
    reason: str | None = None


def compare(name: str, got: np.ndarray, want: np.ndarray, band: Tolerance) -> Comparison:
    """One output against its reference: shapes equal, NaN and ±inf where the reference has them,
    and |got - want| <= atol + rtol |want| on every finite cell."""
    if got.shape != want.shape:
        return Comparison(False, float("inf"), f"{name}: shape {got.shape}, expected {want.shape}")
    got64 = got.astype(np.float64, copy=False)
    want64 = want.astype(np.float64, copy=False)
    got_nan, want_nan = np.isnan(got64), np.isnan(want64)
    if not np.array_equal(got_nan, want_nan):
        where = np.argwhere(got_nan != want_nan)[0]
        return Comparison(
            False, float("inf"), f"{name}: NaN positions differ (first at {tuple(where)})"
        )
    got_inf, want_inf = np.isinf(got64), np.isinf(want64)
    if not np.array_equal(got_inf, want_inf) or not np.array_equal(
        got64[want_inf], want64[want_inf]
    ):
        where = np.argwhere((got_inf != want_inf) | (got_inf & (got64 != want64)))[0]
        return Comparison(
            False, float("inf"), f"{name}: inf positions differ (first at {tuple(where)})"
        )
    finite = ~(want_nan | want_inf)
    error = np.abs(got64[finite] - want64[finite])
    scale = np.abs(want64[finite])
    relative = error / np.maximum(scale, np.finfo(np.float64).tiny)
    max_relative = float(relative.max()) if relative.size else 0.0
    bad = error > band.atol + band.rtol * scale
    if bad.any():
        index = np.argwhere(finite)[int(np.argmax(bad))]
        got_value, want_value = got64[tuple(index)], want64[tuple(index)]
        return Comparison(
            False,
            max_relative,
            f"{name}: {int(bad.sum())} of {bad.size} values outside rtol={band.rtol:g} atol={band.atol:g} "
            f"(first at {tuple(int(i) for i in index)}: got {got_value!r}, expected {want_value!r})",
        )
    return Comparison(True, max_relative)


def compare_outputs(
    got: dict[str, np.ndarray], want: dict[str, np.ndarray], band: Tolerance
) -> Comparison:
    """Every output against the reference; the first failure is the reason."""
    worst = 0.0
    for name, expected in want.items():
        if name not in got:
            return Comparison(False, float("inf"), f"{name}: no output returned")
        result = compare(name, got[name], expected, band)
        if not result.correct:
            return result
        worst = max(worst, result.max_relative_error)
    return Comparison(True, worst)


def rep_seed(seed: int, rep: int) -> int:
    """The seed of rep `rep`'s inputs under a grade's seed: every rep (warm-ups included) gets
    inputs of its own, so an answer remembered from an earlier rep is a wrong answer."""
    return int(np.random.SeedSequence([seed, rep]).generate_state(1, np.uint64)[0] >> 1)


def speedup(baseline_ns: int, native_ns: int) -> float:
    """How many times faster than the baseline the credited rep was (0 without a timing)."""
    return baseline_ns / native_ns if native_ns > 0 and baseline_ns > 0 else 0.0


TIMING_MODES = ("min_of_k", "mannwhitney")


def mannwhitney_speedup(candidate: list[int], baseline: list[int], p: float = 0.1) -> float:
    """The speedup a Mann–Whitney U test can defend: the largest gain 1/(1-x), x in [0, 1), for
    which the candidate's times are still significantly (one-sided, at `p`) below the baseline's
    scaled by (1-x). Without a significant win it is the ratio of medians, at most 1: noise
    earns nothing, a slower kernel still shows as slower."""
    from scipy.stats import mannwhitneyu

    if not candidate or not baseline:
        return 0.0
    ratio = float(np.median(baseline)) / max(float(np.median(candidate)), 1.0)

    def faster(x: float) -> bool:
        scaled = [b * (1.0 - x) for b in baseline]
        return bool(mannwhitneyu(candidate, scaled, alternative="less").pvalue < p)

    if not faster(0.0):
        return min(ratio, 1.0)
    low, high = 0.0, 1.0 - 1.0 / max(ratio, 1.0) + 1e-9
    high = min(max(high * 2, 1e-6), 0.999999)
    while faster(high) and high < 0.999999:
        high = min(1.0 - (1.0 - high) / 2, 0.999999)
    for _ in range(40):  # bisection on the largest significant x
        middle = (low + high) / 2
        low, high = (middle, high) if faster(middle) else (low, middle)
    return 1.0 / (1.0 - low)


@dataclass(frozen=True)
class RepProblem:
    """One rep's problem: its inputs at the problem precision and the reference's outputs."""

    inputs: dict[str, np.ndarray]
    expected: dict[str, np.ndarray]


def compare_reps(run: RunResult, problems: list[RepProblem], band: Any) -> Comparison:
    """Every rep's outputs against the reference for that rep's own inputs: correct only when
    each is; the first failure (with its rep) is the reason, the error the worst of all."""
    worst = 0.0
    for index, (outputs, problem) in enumerate(zip(run.rep_outputs, problems, strict=True)):
        result = compare_outputs(outputs, problem.expected, band)
        worst = max(worst, result.max_relative_error)
        if not result.correct:
            label = "the warm-up" if index < run.warmup else f"rep {index - run.warmup + 1}"
            reason = f"{result.reason} (on the inputs of {label})"
            return Comparison(False, result.max_relative_error, reason)
    return Comparison(True, worst)
