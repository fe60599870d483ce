"""The judge's benchmark runs in its short form."""

from __future__ import annotations

import pytest
from bench import bench_hb


def test_bench_hb_short_form(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_hb.main(full=False) == 0
    out = capsys.readouterr().out
    assert "/requests/check six operations" in out and "p99" in out
    assert (
        "/score cold cache" in out
        and "/score warm cache: round trip" in out
        and "cached=True" in out
    )
