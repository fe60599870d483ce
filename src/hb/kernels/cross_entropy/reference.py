"""The numpy reference of cross_entropy (mean negative log-likelihood of the target classes), in
float64. Inputs: softmax's logits (uniform in [-5, 5]) and targets uniform over the C classes; every
term is positive, so the mean has no cancellation."""

from __future__ import annotations

import numpy as np

from hb.kernels import load_reference


def make_inputs(
    sizes: dict[str, int], rng: np.random.Generator, dtype: np.dtype
) -> dict[str, np.ndarray]:
    logits = load_reference("softmax").make_logits(sizes | {"D": sizes["C"]}, rng, dtype)["x"]
    return {
        "logits": logits,
        "target": rng.integers(0, sizes["C"], sizes["N"], dtype=np.int64),
        "loss": np.zeros(1, dtype=dtype),
    }


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    log_probabilities = load_reference("softmax").log_softmax(arrays["logits"])
    picked = np.take_along_axis(log_probabilities, arrays["target"][:, None], axis=1)
    arrays["loss"][0] = -picked.mean()
