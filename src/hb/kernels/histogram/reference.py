"""The numpy reference of histogram (counts in B equal bins over [lo, hi)) and its inputs."""

from __future__ import annotations

import numpy as np


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """Each value lies in the middle 80% of a bin of [-4, 4) (the manifest's lo and hi), the bin
    drawn uniformly: no value is within rounding of a bin edge, so computing the bin in float32 or
    float64, by division or by multiplication with B / (hi - lo), gives the same count."""
    n, bins = sizes["N"], sizes["B"]
    width = 8.0 / bins
    where = rng.integers(0, bins, n) + rng.uniform(0.1, 0.9, n)
    return {"x": (-4.0 + width * where).astype(dtype), "counts": np.zeros(bins, dtype=np.int64)}


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    bins, lo, hi = sizes["B"], scalars["lo"], scalars["hi"]
    index = np.floor((arrays["x"].astype(np.float64) - lo) * (bins / (hi - lo)))
    inside = (index >= 0) & (index < bins)
    arrays["counts"][...] = np.bincount(index[inside].astype(np.int64), minlength=bins)
