"""The request example of the relayout spec (cast, distribute, replicate, place), shared by the
tests that read it, check it and fuzz from it."""

from __future__ import annotations

import copy
from typing import Any

SPEC_OPERATIONS: list[dict[str, Any]] = [
    {"action": "cast", "array": "A", "to": "fp32"},
    {
        "action": "distribute",
        "array": "A",
        "grid_dim": 0,
        "dim": 0,
        "scheme": "block_cyclic",
        "block_size": 32,
    },
    {"action": "replicate", "array": "x"},
    {"action": "place", "array": "A", "on": "device"},
]


def spec_request(grid: list[str]) -> dict[str, Any]:
    """The spec's example over `grid` (its startup.grid), a fresh copy each call."""
    return {
        "startup": {"load": ["openblas"], "grid": list(grid)},
        "operations": copy.deepcopy(SPEC_OPERATIONS),
    }
