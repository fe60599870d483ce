"""Runs every benchmark module of bench/ (`bench_*.py`, each exposing `main(full: bool) -> int`).

`python -m bench` runs the full forms when HB_BENCH_FULL=1 (as `make bench` sets it), otherwise the
seconds-long forms that only show each benchmark runs; `python -m bench NAME ...` runs the named ones.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import sys
from pathlib import Path


def benchmark_names() -> list[str]:
    """The benchmark modules of this folder, in name order."""
    here = Path(__file__).parent
    return sorted(m.name for m in pkgutil.iter_modules([str(here)]) if m.name.startswith("bench_"))


def main(argv: list[str]) -> int:
    full = os.environ.get("HB_BENCH_FULL") == "1"
    names = argv or benchmark_names()
    status = 0
    for name in names:
        module = importlib.import_module(f"bench.{name.removesuffix('.py')}")
        print(f"== {module.__name__} ({'full' if full else 'short'}) ==", flush=True)
        status |= int(module.main(full=full))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
