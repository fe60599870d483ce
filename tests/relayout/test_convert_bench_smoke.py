"""The conversion benchmark runs in its seconds-long form and prints its table (figures not judged)."""

from __future__ import annotations

import pytest
from bench import bench_relayout_convert


def test_short_benchmark_runs_and_prints_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_relayout_convert.main(full=False) == 0
    table = capsys.readouterr().out
    assert "| conversion | GB/s | copy bound GB/s | ratio |" in table
    for row in (
        "cast fp64->fp32",
        "cast fp64->bf16",
        "cast fp64->fp16",
        "cast fp64->fp8_e4m3",
        "cast fp64->fp8_e5m2",
        "permute [i1, i0]",
        "block by 32 + cast fp32",
        "convert-out fp32->fp64",
    ):
        assert f"| {row}" in table
