"""Graded runs through relayout's conversions: a cast output graded in the problem precision's
band, a widening cast that passes, a single-node layout the kernel never sees, and what the grade
records (convert_in_ns / convert_out_ns, the request and its rows)."""

from __future__ import annotations

from pathlib import Path

from hb import kernels, results_db
from hb.envelope import Submission
from hb.service import JudgeHandler
from tests.hb.conftest import make_config


def test_a_narrowing_cast_is_graded_in_the_fp64_band(handler: JudgeHandler) -> None:
    source = kernels.solution_source("scaled_add").replace(
        "scaled_add_fp64(const double *restrict x", "scaled_add_fp64(const float *restrict x"
    )
    requests = {"operations": [{"action": "cast", "array": "x", "to": "fp32"}]}
    result = handler.grade(
        Submission(kernel="scaled_add", source=source, preset="S", requests=requests), "score"
    ).model_dump()
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
    ).model_dump()
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
    ).model_dump()
    assert result["correct"], result["reason"]
    assert result["convert_in_ns"] > 0 and result["convert_out_ns"] > 0


def test_a_layout_on_one_array_only_is_wrong_for_an_unaware_kernel(handler: JudgeHandler) -> None:
    requests = {"operations": [{"action": "permute", "array": "A", "order": ["i1", "i0"]}]}
    source = kernels.solution_source("mat_scaled_add")
    result = handler.grade(
        Submission(kernel="mat_scaled_add", source=source, preset="S", requests=requests), "score"
    ).model_dump()
    assert result["correct"] is False and result["reason"].startswith("B:")


def test_unzip_hands_the_kernel_one_pointer_per_coordinate(handler: JudgeHandler) -> None:
    source = """
#include <stdint.h>
void force_lj_fp64(const double *restrict px, const double *restrict py, const double *restrict pz,
                   double *restrict force, int64_t N, double epsilon, double sigma, void *w, int64_t wb) {
    const double s2 = sigma * sigma, scale = 24.0 * epsilon;
    for (int64_t i = 0; i < N; ++i) {
        double fx = 0, fy = 0, fz = 0;
        for (int64_t j = 0; j < N; ++j) {
            if (j == i) continue;
            const double dx = px[i] - px[j], dy = py[i] - py[j], dz = pz[i] - pz[j];
            const double r2 = dx * dx + dy * dy + dz * dz, q = s2 / r2, s6 = q * q * q;
            const double m = scale * (2.0 * s6 * s6 - s6) / r2;
            fx += m * dx; fy += m * dy; fz += m * dz;
        }
        force[3 * i] = fx; force[3 * i + 1] = fy; force[3 * i + 2] = fz;
    }
}
"""
    requests = {
        "operations": [{"action": "unzip", "array": "pos", "dim": 1, "into": ["px", "py", "pz"]}]
    }
    result = handler.grade(
        Submission(kernel="force_lj", source=source, preset="S", requests=requests), "score"
    ).model_dump()
    assert result["correct"], result["reason"]
    assert result["convert_in_ns"] > 0


def test_zip_regroups_the_fields_around_the_call(handler: JudgeHandler) -> None:
    # channel_flow's solution with u and v read from and written to one stacked pointer uv[ny][nx][2].
    source = kernels.solution_source("channel_flow")
    source = source.replace(
        "double *restrict u, double *restrict v, double *restrict p",
        "double *restrict uv, double *restrict p",
    )
    source = source.replace(
        "#define AT(f, j, i) f[(j) * nx + (i)]", "#define AT(f, j, i) AT_##f(j, i)"
    )
    source = source.replace(
        "    for (int64_t t = 0; t < TSTEPS; ++t) {",
        "#define AT_u(j, i) uv[((j) * nx + (i)) * 2]\n#define AT_v(j, i) uv[((j) * nx + (i)) * 2 + 1]\n"
        "#define AT_p(j, i) p[(j) * nx + (i)]\n#define AT_pn(j, i) pn[(j) * nx + (i)]\n"
        "#define AT_un(j, i) un[(j) * nx + (i)]\n#define AT_vn(j, i) vn[(j) * nx + (i)]\n"
        "    for (int64_t t = 0; t < TSTEPS; ++t) {",
        1,
    )
    source = source.replace(
        "        memcpy(u, un, (size_t)cells * sizeof(double));\n        memcpy(v, vn, (size_t)cells * sizeof(double));",
        "        for (int64_t c = 0; c < cells; ++c) { uv[2 * c] = un[c]; uv[2 * c + 1] = vn[c]; }",
    )
    assert "uv[2 * c]" in source and "AT_u(j, i)" in source
    requests = {"operations": [{"action": "zip", "arrays": ["u", "v"], "into": "uv"}]}
    result = handler.grade(
        Submission(kernel="channel_flow", source=source, preset="S", requests=requests), "score"
    ).model_dump()
    assert result["correct"], result["reason"]
    assert result["convert_in_ns"] > 0 and result["convert_out_ns"] > 0
    rows = results_db.rows_of_grade(handler.engine, result["grade_id"])
    assert [(r["name"], r["array"]) for r in rows] == [("zip", "u")]


def test_the_service_builds_the_conversion_library_without_loading_it(
    handler: JudgeHandler,
) -> None:
    """The grade's conversions run in the supervisor: the service process builds their library
    into the request's cache and never maps it (no generated code runs in the judge's service)."""
    source = kernels.solution_source("scaled_add").replace(
        "scaled_add_fp64(const double *restrict x", "scaled_add_fp64(const float *restrict x"
    )
    requests = {"operations": [{"action": "cast", "array": "x", "to": "fp32"}]}
    result = handler.grade(
        Submission(kernel="scaled_add", source=source, preset="S", requests=requests), "score"
    )
    assert result.convert_in_ns > 0
    built = sorted((handler.config.data_dir / "conversion-cache").rglob("*.so"))
    assert built, "the conversion library was not built into the request's cache"
    mapped = Path("/proc/self/maps").read_text()
    assert not any(str(path.resolve()) in mapped for path in built)
