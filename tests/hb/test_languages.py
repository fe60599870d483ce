"""The submission languages: C++ versions of every catalog kernel's C baseline graded in the box,
hand-written Fortran and Python solutions graded through the judge (one of them on MPI ranks),
each language's entry point as /task and /requests/check show it, and the refusals of what this
host cannot build."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from hb import interfaces, kernels, languages
from hb.distributed.driver import mpicc_path
from hb.envelope import RequestsCheckBody, Submission
from hb.execution import build
from hb.service import JudgeHandler, create_app
from relayout.types import element_type
from tests.hb.conftest import graded_correct, make_config

SOLUTIONS = Path(__file__).resolve().parent / "language_solutions"
ALLOW = {
    "allow": ["load", "cast", "layout", "sparse_format"],
    "precisions": ["fp32", "fp16", "bf16"],
}
PERMUTE_A = {"operations": [{"action": "permute", "array": "A", "order": ["i1", "i0"]}]}
UNZIP_POS = {
    "operations": [{"action": "unzip", "array": "pos", "dim": 1, "into": ["px", "py", "pz"]}]
}
ELL = {"operations": [{"action": "format", "array": "A", "to": "ell"}]}
ZIP_AB = {"operations": [{"action": "zip", "arrays": ["A", "B"], "into": "AB"}]}
CAST_X_BF16 = {"operations": [{"action": "cast", "array": "x", "to": "bf16"}]}

# (kernel, solution file stem, request) of the hand-written Fortran and Python solutions.
SOLVED = [
    ("scaled_add", "scaled_add", None),
    ("mat_scaled_add", "mat_scaled_add_permute", PERMUTE_A),
    ("jacobi_2d", "jacobi_2d", None),
    ("gemm", "gemm", None),
    ("force_lj", "force_lj_unzip", UNZIP_POS),
    ("spmv", "spmv_ell", ELL),
]

needs_gfortran = pytest.mark.skipif(
    shutil.which("gfortran") is None, reason="gfortran is not installed (scripts/sysdeps.sh)"
)


@pytest.fixture(scope="module")
def judge(data_dir: Path) -> JudgeHandler:
    return JudgeHandler(make_config(data_dir, requests=ALLOW))


@pytest.fixture(scope="module")
def lean_judge(data_dir: Path) -> JudgeHandler:
    """For the C++ sweep over the catalog: one rep, no warm-up (correctness, not timing)."""
    return JudgeHandler(make_config(data_dir, requests=ALLOW, grading={"reps": 1, "warmup": 0}))


def cpp_version(c_source: str) -> str:
    """A C solution as C++: its includes first, then the rest `extern "C"`, `restrict` spelled
    `__restrict__`, and the workspace or an allocation converted to the pointer it initialises
    (C++ converts no void * implicitly)."""
    lines = c_source.splitlines()
    includes = [line for line in lines if line.startswith("#include")]
    body = [
        re.sub(
            r"\b(\w+)(\s*)=(\s*)(workspace\b|(?:malloc|calloc|aligned_alloc|realloc)\s*\()",
            r"\1\2=\3(decltype(\1))\4",
            line,
        )
        for line in lines
        if not line.startswith("#include")
    ]
    return (
        "\n".join([*includes, "#define restrict __restrict__", 'extern "C" {', *body, "}"]) + "\n"
    )


def _with_baseline_at_s() -> list[str]:
    return [
        name
        for name in kernels.kernel_names()
        if (kernels.CATALOG_DIR / name / "solution.c").is_file()
        and "S" in kernels.load_manifest(name).presets
    ]


@pytest.mark.parametrize("kernel", _with_baseline_at_s())
def test_cpp_version_of_the_c_baseline_grades_correct(
    lean_judge: JudgeHandler, kernel: str
) -> None:
    """The baseline compiled as C++ with the judge's C++ flags, run in the box on the grade's
    own inputs and compared with the reference like any submission (the speedup is left out: it
    needs the baseline's timing, which the catalog's own tests take)."""
    graded_correct(lean_judge, kernel, cpp_version(kernels.solution_source(kernel)), "cpp")


@pytest.mark.parametrize(
    ("language", "suffix"),
    [pytest.param("fortran", ".f90", marks=needs_gfortran), ("python", ".py")],
)
@pytest.mark.parametrize(("kernel", "stem", "requests"), SOLVED)
def test_hand_written_solution_grades_correct(
    judge: JudgeHandler, language: str, suffix: str, kernel: str, stem: str,
    requests: dict[str, Any] | None,
) -> None:  # fmt: skip
    source = (SOLUTIONS / f"{stem}{suffix}").read_text()
    outcome = judge.grade(
        Submission(kernel=kernel, language=language, source=source, requests=requests), "score"
    )
    assert outcome.correct, outcome.reason
    assert outcome.language == language and outcome.speedup > 0


def test_python_gets_a_zip_as_one_stacked_array(judge: JudgeHandler) -> None:
    source = (SOLUTIONS / "mat_scaled_add_zip.py").read_text()
    outcome = judge.grade(
        Submission(kernel="mat_scaled_add", language="python", source=source, requests=ZIP_AB),
        "score",
    )
    assert outcome.correct, outcome.reason
    assert outcome.convert_in_ns > 0


def test_python_gets_a_cast_array_as_its_ml_dtypes_type(judge: JudgeHandler) -> None:
    """x arrives as bfloat16 (the solution raises otherwise); the fp64 band then fails the grade
    on its tolerance, as it does a C kernel's."""
    source = (SOLUTIONS / "scaled_add_bf16.py").read_text()
    outcome = judge.grade(
        Submission(kernel="scaled_add", language="python", source=source, requests=CAST_X_BF16),
        "score",
    )
    assert not outcome.correct
    assert outcome.reason is not None and "raised" not in outcome.reason
    assert outcome.max_rel_error is not None and outcome.max_rel_error > 1e-9


def test_python_failures_name_the_submission(judge: JudgeHandler) -> None:
    missing = judge.grade(
        Submission(kernel="scaled_add", language="python", source="def other(): pass\n"), "score"
    )
    assert missing.reason == "submission.py does not define a function scaled_add_fp64"
    raising = judge.grade(
        Submission(
            kernel="scaled_add", language="python",
            source="def scaled_add_fp64(*args):\n    raise RuntimeError('no')\n",
        ),
        "score",
    )  # fmt: skip
    assert raising.reason == "scaled_add_fp64 raised RuntimeError: no (line 2)"
    broken = judge.grade(
        Submission(kernel="scaled_add", language="python", source="def f(:\n"), "score"
    )
    assert not broken.correct and broken.reason is not None
    assert broken.reason.startswith("build failed")


@needs_gfortran
@pytest.mark.skipif(
    not Path(mpicc_path()).exists(),
    reason="MPICH's mpicc is not beside the interpreter (make setup installs it)",
)
def test_fortran_solution_grades_correct_on_mpi_ranks(data_dir: Path) -> None:
    config = make_config(data_dir, requests={"allow": ["load", "distribute"]}, mpi={"ranks": 2})
    handler = JudgeHandler(config)
    grid = {
        "startup": {"grid": ["P"]},
        "operations": [
            {"action": "distribute", "array": name, "grid_dim": 0, "dim": 0, "scheme": "block"}
            for name in ("x", "y")
        ],
    }
    source = (SOLUTIONS / "scaled_add_mpi.f90").read_text()
    outcome = handler.grade(
        Submission(kernel="scaled_add", language="fortran", source=source, requests=grid), "score"
    )
    assert outcome.correct, outcome.reason
    assert outcome.distributed is not None and outcome.distributed["ranks"] == 2
    checked = handler.check(
        RequestsCheckBody(kernel="scaled_add", language="fortran", requests=grid)
    )
    assert checked["accepted"] and "integer(c_int), value :: comm" in checked["signature"]
    assert 'bind(C, name="scaled_add_mpi_fp64")' in checked["signature"]
    python = handler.check(RequestsCheckBody(kernel="scaled_add", language="python", requests=grid))
    assert python["accepted"] is False and "python" in python["refusal"]


def test_fortran_interface_reverses_extents_and_declares_a_struct(judge: JudgeHandler) -> None:
    permuted = judge.check(
        RequestsCheckBody(kernel="mat_scaled_add", language="fortran", requests=PERMUTE_A)
    )
    assert "real(c_double), intent(in) :: A(M, N)" in permuted["signature"]
    assert "real(c_double), intent(inout) :: B(N, M)" in permuted["signature"]
    mixed = {
        "operations": [
            {"action": "cast", "array": "A", "to": "fp32"},
            {"action": "zip", "arrays": ["A", "B"], "into": "AB"},
        ]
    }
    zipped = judge.check(
        RequestsCheckBody(kernel="mat_scaled_add", language="fortran", requests=mixed)
    )["signature"]
    assert "type, bind(C) :: hb_zip_AB" in zipped
    assert "real(c_float) :: A" in zipped and "real(c_double) :: B" in zipped
    assert "type(hb_zip_AB), intent(inout) :: AB(N, M)" in zipped
    ell = judge.check(RequestsCheckBody(kernel="spmv", language="fortran", requests=ELL))
    assert "integer(c_int64_t), intent(in) :: A_indices(A_width, M)" in ell["signature"]
    c_answer = judge.check(RequestsCheckBody(kernel="spmv", requests=ELL))
    assert c_answer["signature"].startswith("void spmv_fp64(")


@needs_gfortran
@pytest.mark.parametrize(
    ("kernel", "requests"),
    [("mat_scaled_add", {"operations": [{"action": "cast", "array": "A", "to": "bf16"},
                                        {"action": "zip", "arrays": ["A", "B"], "into": "AB"}]}),
     ("spmv", ELL), ("force_lj", UNZIP_POS), ("heat_3d", None)],
)  # fmt: skip
def test_the_rendered_fortran_interface_compiles(
    judge: JudgeHandler, kernel: str, requests: dict[str, Any] | None, tmp_path: Path
) -> None:
    answer = judge.check(RequestsCheckBody(kernel=kernel, language="fortran", requests=requests))
    assert answer["accepted"], answer
    (tmp_path / "interface.f90").write_text(answer["signature"] + "\n")
    compiled = subprocess.run(
        ["gfortran", "-fsyntax-only", "-ffree-line-length-none", "interface.f90"],
        cwd=tmp_path, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert compiled.returncode == 0, compiled.stderr


def test_task_shows_the_entry_point_in_each_language(data_dir: Path) -> None:
    with TestClient(create_app(make_config(data_dir, requests=ALLOW))) as client:
        c_task = client.get("/task/scaled_add").json()
        assert c_task["signature"].startswith("void scaled_add_fp64(")
        fortran = client.get("/task/scaled_add", params={"language": "fortran"}).json()
        assert fortran["language"] == "fortran"
        assert fortran["signature"].startswith("subroutine scaled_add_fp64(x, y, N, alpha,")
        assert "real(c_double), value :: alpha" in fortran["signature"]
        cpp = client.get("/task/scaled_add", params={"language": "cpp"}).json()["signature"]
        assert cpp.startswith('extern "C" void scaled_add_fp64(const double *__restrict__ x')
        python = client.get("/task/spmv", params={"language": "python"}).json()["signature"]
        assert python.startswith(
            "def spmv_fp64(A_data, A_indices, A_indptr, x, y, M, N, nnz, workspace, "
            "workspace_bytes):"
        )
        assert "# A_data: numpy float64 [nnz], read only" in python
        unknown = client.get("/task/scaled_add", params={"language": "rust"})
        assert unknown.status_code == 400 and "rust" in unknown.json()["detail"]


def test_python_is_offered_casts_and_layouts_but_no_grid(judge: JudgeHandler) -> None:
    from hb import prompts

    manifest = judge.manifest("scaled_add")
    offer = prompts.task_actions(manifest, judge.allowances, language="python", precision="fp64")
    assert "cast" in offer.actions and "permute" in offer.actions and "zip" in offer.actions
    distributed = JudgeHandler(
        make_config(judge.config.data_dir, requests={"allow": ["load", "distribute"]})
    )
    on_grid = prompts.task_actions(manifest, distributed.allowances, language="fortran")
    assert "distribute" in on_grid.actions
    assert (
        "distribute"
        not in prompts.task_actions(manifest, distributed.allowances, language="python").actions
    )


def test_a_language_this_host_cannot_build_is_refused_at_the_envelope(
    judge: JudgeHandler, monkeypatch: pytest.MonkeyPatch
) -> None:
    with TestClient(create_app(judge.config)) as client:
        unknown = client.post(
            "/score", json={"kernel": "scaled_add", "language": "rust", "source": ""}
        )
        assert unknown.status_code == 400
        assert "language 'rust' is not built by this judge" in unknown.json()["detail"]
        monkeypatch.setattr(languages, "cuda_compiler", lambda: None)  # a GPU host grades cuda
        cuda = client.post(
            "/score", json={"kernel": "scaled_add", "language": "cuda", "source": ""}
        )
        assert cuda.status_code == 400
        assert cuda.json()["detail"].startswith(
            "language: language 'cuda' needs nvcc (the CUDA toolkit), cupy and a CUDA device; "
        )
        monkeypatch.setattr(languages.shutil, "which", lambda name: None)
        fortran = client.post(
            "/score", json={"kernel": "scaled_add", "language": "fortran", "source": ""}
        )
        assert fortran.status_code == 400
        assert "needs gfortran (Debian package gfortran" in fortran.json()["detail"]
        assert "gfortran is not installed on this host" in fortran.json()["detail"]


def test_element_types_in_fortran_come_from_the_one_table() -> None:
    assert interfaces.fortran_type("fp64") == "real(c_double)"
    assert interfaces.fortran_type("fp32") == "real(c_float)"
    # Types Fortran does not name travel as their bits, like C's storage typedefs.
    for name in ("fp16", "bf16", "fp8_e4m3", "uint16", "int32"):
        bits = 8 * element_type(name).size
        assert interfaces.fortran_type(name) == f"integer(c_int{bits}_t)"
    assert interfaces.fortran_type("complex128") == "complex(c_double_complex)"


@pytest.mark.skipif(
    languages.compiler_path("cuda") is None, reason="nvcc is not installed (the CUDA toolkit)"
)
def test_a_cuda_source_builds_with_nvcc_in_the_box(judge: JudgeHandler) -> None:
    """The build a cuda grade starts with: nvcc in the box, the entry point `extern "C"`
    launching its own kernel; the check refuses the language where the host lacks cupy, the
    driver or a device (tests/hb/test_cuda_delivery.py grades it where none is missing)."""
    source = (SOLUTIONS / "scaled_add.cu").read_text()
    built = build.build(source, "cuda", [], judge.config.build_cache_dir, judge.build_limits)
    assert built.ok, built.log
    check = judge.check(RequestsCheckBody(kernel="scaled_add", language="cuda"))
    missing = languages.refusal("cuda")
    assert check["accepted"] is (missing is None)
    if missing is not None:
        assert check["refusal"] == f"language: {missing}"
