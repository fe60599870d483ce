"""The catalog as a whole: every kernel's baseline graded correct at preset S in every precision it
lists (real build, real box), every reference deterministic, docs/catalog.md as its generator
writes it, GET /tasks with its track filter, and the manifests' tolerance override."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient

from hb import kernels
from hb.envelope import Submission
from hb.judge.grading import resolve_problem
from hb.kernels import table
from hb.precision import NUMPY_DTYPES, TOLERANCE_MATRIX, Tolerance
from hb.service import JudgeHandler
from tests.hb.conftest import graded_correct, make_config

KERNEL_PRECISIONS = [
    (name, precision)
    for name in kernels.kernel_names()
    for precision in kernels.load_manifest(name).precisions
]


@pytest.fixture(scope="module")
def judges(data_dir: Path) -> dict[str, JudgeHandler]:
    """One judge per precision over the session's data directory, so builds (keyed by source, not
    precision) are shared with every other test of the session; one timed rep, no warm-up."""
    lean = {"reps": 1, "warmup": 0}
    return {
        precision: JudgeHandler(make_config(data_dir, grading={"datatype": precision, **lean}))
        for precision in sorted({p for _, p in KERNEL_PRECISIONS})
    }


@pytest.mark.parametrize(("name", "precision"), KERNEL_PRECISIONS)
def test_baseline_grades_correct_at_s(
    judges: dict[str, JudgeHandler], name: str, precision: str
) -> None:
    # Correctness through the real build and box; the speedup against it is make bench's
    # (bench_catalog, at M); the test below grades one baseline whole, its own baseline timed.
    graded_correct(judges[precision], name, kernels.solution_source(name))


def test_a_whole_grade_of_a_catalog_baseline_times_it_against_itself(
    judges: dict[str, JudgeHandler],
) -> None:
    result = (
        judges["fp64"]
        .grade(
            Submission(kernel="gemm", source=kernels.solution_source("gemm"), preset="S"), "score"
        )
        .model_dump()
    )
    assert result["correct"], result["reason"]
    assert result["native_ns"] > 0 and result["baseline_ns"] > 0 and result["speedup"] > 0


@pytest.mark.parametrize("name", kernels.kernel_names())
def test_reference_is_deterministic(name: str) -> None:
    manifest = kernels.load_manifest(name)
    sizes, scalars = manifest.preset_sizes("S"), manifest.preset_scalars("S")
    for precision in manifest.precisions:
        dtype = NUMPY_DTYPES[precision]
        first = kernels.make_inputs(manifest, sizes, 11, dtype)
        again = kernels.make_inputs(manifest, sizes, 11, dtype)
        assert list(first) == kernels.pointer_names(manifest)
        assert all(np.array_equal(first[n], again[n], equal_nan=True) for n in first)
        other = kernels.make_inputs(manifest, sizes, 12, dtype)
        assert any(not np.array_equal(first[n], other[n]) for n in first), "the seed is ignored"
        want = kernels.reference_outputs(manifest, first, sizes, scalars)
        got = kernels.reference_outputs(manifest, again, sizes, scalars)
        assert list(want) == kernels.output_names(manifest)
        for output in want:
            assert want[output].dtype == first[output].dtype, f"{output} changed its dtype"
            assert np.isfinite(want[output].astype(np.float64)).all(), f"{output} not finite"
            assert np.array_equal(want[output], got[output]), f"{output} differs on a rerun"


def test_catalog_doc_is_what_its_generator_writes() -> None:
    assert table.DOC_PATH.read_text() == table.catalog_markdown(), (
        "docs/catalog.md is stale: run `python -m hb.kernels.table --write`"
    )


def test_tasks_list_track_dwarf_and_tags_and_filter_by_track(client: TestClient) -> None:
    listed = client.get("/tasks").json()
    assert [task["kernel"] for task in listed] == kernels.kernel_names()
    for task in listed:
        manifest = kernels.load_manifest(task["kernel"])
        assert (task["track"], task["dwarf"], task["tags"]) == (
            manifest.track,
            manifest.dwarf,
            manifest.tags,
        )
    for track in ("scientific_computing", "loop_level", "machine_learning"):
        filtered = client.get("/tasks", params={"track": track}).json()
        assert [t["kernel"] for t in filtered] == [
            t["kernel"] for t in listed if t["track"] == track
        ]
    refused = client.get("/tasks", params={"track": "nope"})
    assert refused.status_code == 400
    assert "'nope'" in refused.json()["detail"] and "loop_level" in refused.json()["detail"]


def _with_tolerance(name: str, tolerance: dict) -> dict:
    raw = kernels.load_manifest(name).model_dump()
    raw["tolerance"] = tolerance
    return raw


def test_a_tolerance_override_widens_the_band_of_its_precision_only() -> None:
    raw = _with_tolerance(
        "scaled_add", {"reason": "a long sum", "bands": {"fp64": {"rtol": 1e-6, "atol": 1e-9}}}
    )
    manifest = kernels.Manifest.model_validate(raw)
    bands = manifest.tolerance_bands()
    assert bands == {"fp64": Tolerance(1e-6, 1e-9)}
    fp64 = resolve_problem("scaled_add", manifest.precisions, "fp64", [], bands)
    fp32 = resolve_problem("scaled_add", manifest.precisions, "fp32", [], bands)
    assert not isinstance(fp64, str) and fp64.band == Tolerance(1e-6, 1e-9)
    assert not isinstance(fp32, str) and fp32.band == TOLERANCE_MATRIX["fp32"]


def test_the_precision_override_keeps_the_wider_of_the_fp32_band_and_the_kernels_own() -> None:
    wide = {"fp64": Tolerance(5e-3, 1e-9)}
    problem = resolve_problem("k", ["fp64"], "fp32", ["k"], wide)
    assert not isinstance(problem, str)
    assert problem.band == Tolerance(5e-3, TOLERANCE_MATRIX["fp32"].atol)
    assert problem.precision == "fp64" and problem.precision_override == "fp32"


@pytest.mark.parametrize(
    ("tolerance", "message"),
    [
        ({"bands": {"fp64": {"rtol": 1e-6, "atol": 1e-9}}}, "reason"),
        ({"reason": "", "bands": {"fp64": {"rtol": 1e-6, "atol": 1e-9}}}, "reason"),
        ({"reason": "r", "bands": {}}, "bands"),
        ({"reason": "r", "bands": {"fp16": {"rtol": 1, "atol": 1}}}, "tolerance.bands.fp16"),
        ({"reason": "r", "bands": {"fp64": {"rtol": 1e-12, "atol": 1e-9}}}, "only widens"),
        ({"reason": "r", "bands": {"fp64": {"rtol": -1, "atol": 1e-9}}}, "rtol"),
    ],
)
def test_a_malformed_tolerance_override_is_refused(tolerance: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        kernels.Manifest.model_validate(_with_tolerance("scaled_add", tolerance))


def test_the_task_view_gives_the_graded_band(client: TestClient) -> None:
    task = client.get("/task/scaled_add").json()
    fp64 = TOLERANCE_MATRIX["fp64"]
    assert task["tolerance"] == {"rtol": fp64.rtol, "atol": fp64.atol}
    overridden = [n for n in kernels.kernel_names() if kernels.load_manifest(n).tolerance]
    for name in overridden:
        manifest = kernels.load_manifest(name)
        if "fp64" in manifest.tolerance_bands():
            shown = client.get(f"/task/{name}").json()["tolerance"]
            assert shown["reason"] == manifest.tolerance.reason  # type: ignore[union-attr]
            assert shown["rtol"] == manifest.tolerance_bands()["fp64"].rtol
