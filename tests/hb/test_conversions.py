"""Graded runs through relayout's conversions: a cast output graded in the problem precision's
band, a widening cast that passes, a single-node layout the kernel never sees, and what the grade
records (convert_in_ns / convert_out_ns, the request and its rows)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hb import kernels, results_db
from hb.envelope import Submission
from hb.service import JudgeHandler, conversions_available
from tests.hb.conftest import make_config

pytestmark = pytest.mark.skipif(
    not conversions_available(),
    reason="relayout.convert.compile_program is not in this checkout yet",
)


def test_a_narrowing_cast_is_graded_in_the_fp64_band(handler: JudgeHandler) -> None:
    source = kernels.solution_source("scaled_add").replace(
        "scaled_add_fp64(const double *restrict x", "scaled_add_fp64(const float *restrict x"
    )
    requests = {"operations": [{"action": "cast", "array": "x", "to": "fp32"}]}
    result = handler.grade(
        Submission(kernel="scaled_add", source=source, preset="S", requests=requests), "score"
    )
    assert result["correct"] is False and "rtol=1e-09" in result["reason"]
    assert 1e-9 < result["max_rel_error"] < 1e-3  # fp32's rounding of x, no more
    assert result["convert_in_ns"] > 0
    row = results_db.get_grade(handler.engine, result["grade_id"])
    assert row is not None and results_db.requests_of_row(row).operations[0].to == "fp32"
    assert [r["name"] for r in results_db.rows_of_grade(handler.engine, result["grade_id"])] == [
        "cast"
    ]


def test_a_widening_cast_passes_in_an_fp32_problem(tmp_path: Path) -> None:
    fp32 = JudgeHandler(
        make_config(
            tmp_path,
            grading={"datatype": "fp32"},
            requests={"allow": ["load", "cast"], "precisions": ["fp64"]},
        )
    )
    source = kernels.solution_source("scaled_add").replace(
        "scaled_add_fp32(const float *restrict x", "scaled_add_fp32(const double *restrict x"
    )
    requests = {"operations": [{"action": "cast", "array": "x", "to": "fp64"}]}
    result = fp32.grade(
        Submission(kernel="scaled_add", source=source, preset="S", requests=requests), "score"
    )
    assert result["correct"], result["reason"]
    assert result["datatype"] == "fp32" and result["convert_in_ns"] > 0


def test_a_layout_reaches_the_kernel_and_comes_back(handler: JudgeHandler) -> None:
    # Transposing both matrices leaves an elementwise kernel correct: the conversions do the rest.
    requests = {
        "operations": [
            {"action": "permute", "array": "A", "order": ["i1", "i0"]},
            {"action": "permute", "array": "B", "order": ["i1", "i0"]},
        ]
    }
    source = kernels.solution_source("mat_scaled_add")
    result = handler.grade(
        Submission(kernel="mat_scaled_add", source=source, preset="S", requests=requests), "score"
    )
    assert result["correct"], result["reason"]
    assert result["convert_in_ns"] > 0 and result["convert_out_ns"] > 0


def test_a_layout_on_one_array_only_is_wrong_for_an_unaware_kernel(handler: JudgeHandler) -> None:
    requests = {"operations": [{"action": "permute", "array": "A", "order": ["i1", "i0"]}]}
    source = kernels.solution_source("mat_scaled_add")
    result = handler.grade(
        Submission(kernel="mat_scaled_add", source=source, preset="S", requests=requests), "score"
    )
    assert result["correct"] is False and result["reason"].startswith("B:")
