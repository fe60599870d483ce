"""Every benchmark of bench/ runs in its short form, exits 0 and prints its figures beside their
targets (the figures themselves are `make bench`'s business, not a test's)."""

from __future__ import annotations

import importlib

import pytest

from bench.__main__ import benchmark_names

# What each benchmark's table must show: its rows and the word for the target column.
PRINTED = {
    "bench_catalog": ["naive/base", "scaled_add", "ranks", "correct"],
    "bench_grade_precision": [
        "self-speedup",
        "spread",
        "ci width",
        "cond_sum",
        "wall per grade",
        "rows met:",
    ],
    "bench_judge_path": [
        "cast convert_in / copy bound",
        "permute+cast convert_in",
        "zip convert_out",
        "format ell convert_in",
        "warm /score S / import numpy",
        "/requests/check p50",
    ],
    "bench_hb": ["/requests/check six operations", "check p99", "score warm build", "cached=True"],
    "bench_results": ["grades recorded in", "GET /leaderboard", "hb report (report.md"],
    "bench_relayout_convert": [
        "| conversion | GB/s | copy bound GB/s | ratio |",
        "| cast fp64->fp32",
        "| cast fp64->bf16",
        "| cast fp64->fp16",
        "| cast fp64->fp8_e4m3",
        "| cast fp64->fp8_e5m2",
        "| cast fp32->bf16",
        "| cast fp32->fp16",
        "| cast fp32->fp8_e4m3",
        "| cast fp32->fp8_e5m2",
        "| permute [i1, i0]",
        "| block by 32 + cast fp32",
        "| cast fp32->fp64 (widen in)",
        "| permute + cast fp32->fp64",
        "| zip 2 x fp64 (stacked last)",
        "| unzip it back (convert_out)",
        "| convert-out fp32->fp64",
        "| tiny conversion | convert_in µs |",
        "| unzip 64x3 fp64 into 3",
    ],
    "bench_sparse_formats": ["csc", "bcsr", "sell_c_sigma", "scipy GB/s"],
    "bench_site": ["usis site:", "entries in", "explorer"],
    "bench_timing": [
        "judge credited kernel_ns",
        "round trip subtracted",
        "judge - direct (us)",
        "gemm judge - direct (us)",
    ],
    "bench_usis": ["usis show mpi:mpi_bcast", "usis.load()"],
}


def test_every_benchmark_is_listed_here() -> None:
    assert set(benchmark_names()) == set(PRINTED)


@pytest.mark.parametrize("name", sorted(PRINTED))
def test_short_form_runs(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    module = importlib.import_module(f"bench.{name}")
    assert module.main(full=False) == 0
    printed = capsys.readouterr().out
    assert "target" in printed, "a benchmark prints its targets beside its figures"
    for fragment in PRINTED[name]:
        assert fragment in printed, f"{name} no longer prints {fragment!r}"
