"""Every benchmark of bench/ runs in its short form and exits 0 (its figures are `make bench`'s)."""

from __future__ import annotations

import importlib

import pytest

from bench.__main__ import benchmark_names


def test_benchmarks_are_found() -> None:
    assert "bench_sparse_formats" in benchmark_names()


@pytest.mark.parametrize("name", benchmark_names())
def test_short_form_runs(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    module = importlib.import_module(f"bench.{name}")
    assert module.main(full=False) == 0
    printed = capsys.readouterr().out
    assert "target" in printed, "a benchmark prints its targets beside its figures"
