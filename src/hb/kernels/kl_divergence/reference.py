"""The numpy reference of kl_divergence (torch's kl_div with reduction='batchmean'), in float64.
Inputs: input the log_softmax and target the softmax of independent logits uniform in [-3, 3], so
both are true distributions with every probability positive (the logarithm stays finite) and
each row's divergence is of order one."""

from __future__ import annotations

import numpy as np

from hb.kernels import load_reference


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    shape = (sizes["N"], sizes["C"])
    softmax = load_reference("softmax")
    return {
        "input": softmax.log_softmax(rng.uniform(-3.0, 3.0, shape)).astype(dtype),
        "target": softmax.softmax(rng.uniform(-3.0, 3.0, shape)).astype(dtype),
        "loss": np.zeros(1, dtype=dtype),
    }


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    target = arrays["target"].astype(np.float64)
    pointwise = target * (np.log(target) - arrays["input"])
    arrays["loss"][0] = pointwise.sum() / sizes["N"]
