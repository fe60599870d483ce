"""The paired timing's statistics: a grade's speedup as the Hodges–Lehmann estimate over the log
ratios of its pairs (baseline rep time over submission rep time, timed back to back on the same
inputs), with the distribution-free interval of the Wilcoxon signed-rank test, and the rule that
decides whether a grade is too noisy to credit at its estimate.

The interval holds at its stated level whenever the log ratios are independent draws from a
distribution symmetric about the true log speedup; nothing else of that distribution is assumed.
Pairing is what makes symmetry plausible: both halves of a pair see the same moment of the
machine, so its slow-downs cancel in the ratio rather than skew it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

# Pairs past this count use the signed-rank statistic's normal approximation (its exact
# distribution below is a table of n(n+1)/2 + 1 counts).
EXACT_UP_TO = 60
LEVEL = 0.95


@functools.cache
def _signed_rank_counts(n: int) -> tuple[int, ...]:
    """How many of the 2^n sign patterns give each value t = 0 .. n(n+1)/2 of the signed-rank
    statistic (the sum of the ranks of the positive differences)."""
    counts = [1]
    for rank in range(1, n + 1):
        grown = counts + [0] * rank
        for t, count in enumerate(counts):
            grown[t + rank] += count
        counts = grown
    return tuple(counts)


def lower_tail(n: int, t: int) -> float:
    """P(T <= t) for the signed-rank statistic T of n pairs under the null hypothesis."""
    if t < 0:
        return 0.0
    if n <= EXACT_UP_TO:
        counts = _signed_rank_counts(n)
        return sum(counts[: t + 1]) / 2.0**n
    mean, sd = n * (n + 1) / 4, math.sqrt(n * (n + 1) * (2 * n + 1) / 24)
    return 0.5 * math.erfc(-((t + 0.5 - mean) / sd) / math.sqrt(2))


def interval_rank(n: int, level: float = LEVEL) -> tuple[int, float]:
    """The order k (1-based) of the Walsh averages that bound the interval, [W_(k), W_(M+1-k)],
    and the interval's exact coverage 1 - 2 P(T <= k-1). Where n pairs cannot reach `level`
    (fewer than 6 at 95%) k is 1, the whole range, and the coverage says what it is."""
    alpha = (1.0 - level) / 2
    k = 1
    while lower_tail(n, k) <= alpha:  # P(T <= (k+1) - 1)
        k += 1
    return k, 1.0 - 2.0 * lower_tail(n, k - 1)


@dataclass(frozen=True)
class Estimate:
    """A speedup, its interval, and the interval's exact coverage (below LEVEL only when there
    were too few pairs to reach it)."""

    speedup: float
    low: float
    high: float
    coverage: float
    pairs: int

    @property
    def relative_width(self) -> float:
        """The interval's width relative to the estimate (inf without an estimate)."""
        return (self.high - self.low) / self.speedup if self.speedup > 0 else math.inf


def ratios(baseline_ns: Sequence[int], submission_ns: Sequence[int]) -> list[float]:
    """Each pair's speedup: the baseline's time over the submission's, rep by rep."""
    return [b / max(s, 1) for b, s in zip(baseline_ns, submission_ns, strict=True)]


def hodges_lehmann(pair_ratios: Sequence[float], level: float = LEVEL) -> Estimate:
    """The Hodges–Lehmann estimate of the speedup (the median of the Walsh averages of the log
    ratios, exponentiated) and its signed-rank interval at `level`."""
    logs = sorted(math.log(r) for r in pair_ratios if r > 0)
    n = len(logs)
    if n == 0:
        return Estimate(0.0, 0.0, 0.0, 0.0, 0)
    walsh = sorted((logs[i] + logs[j]) / 2 for i in range(n) for j in range(i, n))
    m = len(walsh)
    middle = (walsh[(m - 1) // 2] + walsh[m // 2]) / 2
    k, coverage = interval_rank(n, level)
    return Estimate(math.exp(middle), math.exp(walsh[k - 1]), math.exp(walsh[m - k]), coverage, n)


def credited(estimate: Estimate, max_relative_ci: float) -> tuple[float, bool]:
    """The speedup a grade is credited and whether it is noisy: the estimate when its interval
    is within `max_relative_ci` of it, else the interval's lower bound (noise earns nothing)."""
    noisy = estimate.relative_width > max_relative_ci
    return (estimate.low if noisy else estimate.speedup), noisy


@dataclass
class Pairs:
    """A paired grade's pairs in the order they were timed: each side's time, the CPU the two
    boxes' threads waited for and the host's steal over the pair, and when each call began."""

    baseline_ns: list[int] = field(default_factory=list)
    submission_ns: list[int] = field(default_factory=list)
    wait_ns: list[int] = field(default_factory=list)
    steal_ns: list[int] = field(default_factory=list)
    started_ns: list[tuple[int, int]] = field(default_factory=list)
    # The two boxes' cgroup CPU pressure over the pair (cgroup v2; None where there is none).
    pressure_ns: list[int | None] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.submission_ns)

    def add(self, baseline_ns: int, submission_ns: int, wait_ns: int, steal_ns: int,
            baseline_started_ns: int = 0, submission_started_ns: int = 0,
            pressure_ns: int | None = None) -> None:  # fmt: skip
        self.pressure_ns.append(pressure_ns)
        self.baseline_ns.append(baseline_ns)
        self.submission_ns.append(submission_ns)
        self.wait_ns.append(wait_ns)
        self.steal_ns.append(steal_ns)
        self.started_ns.append((baseline_started_ns, submission_started_ns))

    @property
    def ratios(self) -> list[float]:
        return ratios(self.baseline_ns, self.submission_ns)

    def disturbed(self, max_wait: float) -> list[int]:
        """The pairs whose boxes waited for a CPU (or lost it to the host) for more than
        `max_wait` of their two calls' time beyond what the grade's pairs typically wait: a
        burst of contention inside one pair, which pairing cannot cancel (contention that lasts
        slows both halves of every pair alike, and the ratios cancel it)."""
        if not self:
            return []
        waits = [w + st for w, st in zip(self.wait_ns, self.steal_ns, strict=True)]
        typical = float(np.median(waits))
        return [
            index
            for index, (b, s, waited) in enumerate(
                zip(self.baseline_ns, self.submission_ns, waits, strict=True)
            )
            if waited - typical > max_wait * (b + s)
        ]

    def used(self, max_wait: float) -> list[int]:
        """The pairs the estimate rests on: the undisturbed ones, or every pair where fewer than
        two are undisturbed (contention throughout is then what the interval shows)."""
        disturbed = set(self.disturbed(max_wait))
        calm = [index for index in range(len(self)) if index not in disturbed]
        return calm if len(calm) >= 2 else list(range(len(self)))

    def estimate(self, max_wait: float, level: float = LEVEL) -> Estimate:
        chosen = self.ratios
        return hodges_lehmann([chosen[index] for index in self.used(max_wait)], level)

    def wanted(self, reps: int, max_relative_ci: float, max_wait: float) -> bool:
        """Whether the noise gate asks for another round: fewer than `reps` undisturbed pairs,
        or an interval wider than `max_relative_ci` of the estimate."""
        calm = len(self) - len(self.disturbed(max_wait))
        return calm < reps or self.estimate(max_wait).relative_width > max_relative_ci
