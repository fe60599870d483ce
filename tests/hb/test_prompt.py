"""The task prompt: each section of three tasks (a dense kernel under casts and layouts, a sparse
kernel under its formats, a stencil graded on MPI ranks) against its golden file, and the laws the
sections keep (order, the offer's sections only where they apply, the facts they state).

Golden files are written by `python -m tests.hb.test_prompt --write`, never by hand."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from hb import prompts
from hb.precision import TOLERANCE_MATRIX
from hb.service import JudgeHandler
from tests.hb.conftest import make_config

GOLDEN = Path(__file__).resolve().parent / "golden" / "prompt"

# (case, kernel, config sections): each case's prompt is golden, section by section.
CASES: dict[str, tuple[str, dict[str, Any]]] = {
    "scaled_add-cast-layout": (
        "scaled_add",
        {"requests": {"allow": ["load", "cast", "layout"], "precisions": ["fp32", "fp16", "bf16"]}},
    ),
    "spmv-formats": ("spmv", {"requests": {"allow": ["load", "sparse_format"]}}),
    "jacobi_2d-mpi": (
        "jacobi_2d",
        {
            "requests": {"allow": ["load", "distribute"], "grid": "task"},
            "mpi": {"grade_distributed": True},
        },
    ),
    "gemm-nothing-offered": ("gemm", {"requests": {"allow": []}}),
}


def rendered(case: str, data_dir: Path) -> dict[str, str]:
    kernel, sections = CASES[case]
    handler = JudgeHandler(make_config(data_dir / case, **sections))
    answer: dict[str, str] = handler.task(kernel)["prompt_sections"]
    return answer


def golden_sections(case: str) -> list[str]:
    return sorted(path.stem for path in (GOLDEN / case).glob("*.md"))


@pytest.fixture(scope="module")
def prompts_of(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, str]]:
    root = tmp_path_factory.mktemp("prompt")
    return {case: rendered(case, root) for case in CASES}


@pytest.mark.parametrize(
    ("case", "section"),
    [(case, section) for case in CASES for section in golden_sections(case)],
)
def test_section_matches_its_golden_file(
    prompts_of: dict[str, dict[str, str]], case: str, section: str
) -> None:
    golden = (GOLDEN / case / f"{section}.md").read_text()
    assert prompts_of[case].get(section) == golden, (
        f"{case}/{section} differs from its golden file; after an intended change run "
        "`python -m tests.hb.test_prompt --write` and review the diff"
    )


def test_every_rendered_section_has_a_golden_file(prompts_of: dict[str, dict[str, str]]) -> None:
    for case, sections in prompts_of.items():
        assert sorted(sections) == golden_sections(case), case


def test_sections_come_in_order_and_only_where_they_apply(
    prompts_of: dict[str, dict[str, str]],
) -> None:
    for sections in prompts_of.values():
        order = [prompts.SECTIONS.index(name) for name in sections]
        assert order == sorted(order)
        assert {"intro", "semantics", "correctness", "timing", "delivery", "response"} <= set(
            sections
        )
    assert "requests" not in prompts_of["gemm-nothing-offered"]
    assert "sparse" in prompts_of["spmv-formats"]
    assert "sparse" not in prompts_of["scaled_add-cast-layout"]
    assert "mpi" not in prompts_of["scaled_add-cast-layout"]
    mpi = prompts_of["jacobi_2d-mpi"]
    assert "the judge sets the grid" in mpi["mpi"] and "(MPI, below)" in mpi["requests"]
    assert "jacobi_2d_mpi_fp64(" in mpi["delivery"]


def test_sections_state_the_judges_facts(prompts_of: dict[str, dict[str, str]]) -> None:
    sections = prompts_of["scaled_add-cast-layout"]
    band = TOLERANCE_MATRIX["fp64"]
    assert f"{band.atol:g} + {band.rtol:g} * |want|" in sections["correctness"]
    assert "2 timed calls" in sections["timing"]
    assert "after 1 untimed warm-up call" in sections["timing"]
    assert "| S | 4096 |" in sections["semantics"]
    assert 'arrays["y"] += ' in sections["semantics"]
    assert "fp16 → `_Float16 *`" in sections["requests"]


def test_the_prompt_is_its_sections_joined(tmp_path: Path) -> None:
    handler = JudgeHandler(make_config(tmp_path))
    task = handler.task("scaled_add")
    assert task["prompt"] == "\n".join(task["prompt_sections"].values())


def test_hb_task_prints_the_prompt_and_its_sections(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from hb import cli

    monkeypatch.setenv("HB_DATA_DIR", str(tmp_path))
    config = tmp_path / "config.yaml"
    config.write_text("grading: {reps: 3, warmup: 1, max_pairs: 3, box_pairs: 1}\n")
    assert cli.main(["--config", str(config), "task", "gemm", "--section", "timing"]) == 0
    timing = capsys.readouterr().out
    assert timing.startswith("## Timing") and "3 timed calls" in timing
    assert cli.main(["--config", str(config), "task", "gemm"]) == 0
    assert timing in capsys.readouterr().out
    assert cli.main(["--config", str(config), "task", "gemm", "--section", "sparse"]) == 2
    assert "gemm's prompt has no section 'sparse'" in capsys.readouterr().err


def write_golden() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        for case in CASES:
            directory = GOLDEN / case
            directory.mkdir(parents=True, exist_ok=True)
            for stale in directory.glob("*.md"):
                stale.unlink()
            for section, text in rendered(case, Path(scratch)).items():
                (directory / f"{section}.md").write_text(text)
            print(f"wrote {directory}")


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python -m tests.hb.test_prompt --write")
    write_golden()
