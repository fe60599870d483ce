"""Entry-building pieces that the classifiers of every model share: the empty sections an entry
starts from, the semantics.memory record, and the OpenSHMEM atomics and team parameter names that
NVSHMEM inherits.
"""

from __future__ import annotations

from typing import Any

ATOMIC_OPERATIONS = {
    # operation key -> (semantics.atomic.operation, fetch, compare), OpenSHMEM 1.4 names.
    "atomic_fetch": ("fetch", True, False),
    "atomic_set": ("set", False, False),
    "atomic_swap": ("swap", True, False),
    "atomic_compare_swap": ("cswap", True, True),
    "atomic_fetch_add": ("fetch_add", True, False),
    "atomic_fetch_inc": ("fetch_inc", True, False),
    "atomic_add": ("add", False, False),
    "atomic_inc": ("inc", False, False),
    "atomic_and": ("and", False, False),
    "atomic_or": ("or", False, False),
    "atomic_xor": ("xor", False, False),
    "atomic_fetch_and": ("fetch_and", True, False),
    "atomic_fetch_or": ("fetch_or", True, False),
    "atomic_fetch_xor": ("fetch_xor", True, False),
}
# Parameter names of OpenSHMEM team handles, which NVSHMEM keeps.
TEAM_NAMES = {
    "team",
    "parent_team",
    "src_team",
    "dest_team",
    "new_team",
    "xaxis_team",
    "yaxis_team",
}


def null_variants() -> dict[str, None]:
    return {
        "nonblocking": None,
        "blocking": None,
        "persistent": None,
        "neighborhood": None,
        "host": None,
        "gpu": None,
    }


def empty_semantics() -> dict[str, Any]:
    return {
        "collective": None,
        "point_to_point": None,
        "one_sided": None,
        "atomic": None,
        "memory": None,
        "formal": None,
    }


def memory(
    local: str,
    remote: str | None,
    reuse: str,
    fence: str = "none",
    *,
    symmetric_heap: bool = False,
    model: str | None = None,
) -> dict[str, Any]:
    """semantics.memory: when the local and remote sides complete and the buffer may be reused."""
    return {
        "local_completion": local,
        "remote_completion": remote,
        "buffer_reuse": reuse,
        "fence_semantics": fence,
        "symmetric_heap": symmetric_heap,
        "memory_model": model,
    }
