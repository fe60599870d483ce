"""The catalog at preset M: every kernel's baseline (its solution.c) graded through the judge (build,
box, reference check), and the baseline against a naive serial loop, printed as a table with the
target beside each row.

The naive serial loop of a kernel is its own baseline with every OpenMP directive removed
(`#pragma omp ...` lines and `_Pragma("omp ...")` operators) and `#pragma GCC optimize ("O0")`
put before the code: the same loop nest, computing the same result, run on one thread and
unoptimised. It is graded as a submission, so the judge times it against the baseline (built at
-O2 with OpenMP) on the same inputs, and the row's ratio is the naive time over the baseline's.
The target is a ratio of at least 2: a baseline that does not beat its own loop compiled naively
by that much on two cores is a strawman, not a target. No second C file per kernel is written.

A second table grades every kernel's solution_mpi.c under its default distribution on 1, 2 and 4
ranks at preset S (inputs from the kernel's own generator, every rank's outputs gathered and
checked against the reference), with the wall time of each.

The short form (without HB_BENCH_FULL) grades scaled_add at preset S, and its MPI solution on 2
ranks in fp64, only to show it runs.
"""

from __future__ import annotations

import re
import tempfile
import time
from pathlib import Path

from hb import kernels
from hb.config import Config, load_config
from hb.envelope import Submission
from hb.kernels.table import has_mpi_solution
from hb.precision import NUMPY_DTYPES, TOLERANCE_MATRIX
from hb.service import JudgeHandler

TARGET_RATIO = 2.0
SHORT_KERNELS = ("scaled_add",)
_OMP_LINE = re.compile(r"^[ \t]*#[ \t]*pragma[ \t]+omp\b.*$", re.MULTILINE)
_OMP_OPERATOR = re.compile(r'_Pragma\(\s*"omp\b[^"]*"\s*\)')


def naive_serial_source(source: str) -> str:
    """`source` without its OpenMP directives, every function after the prelude compiled at -O0."""
    serial = _OMP_OPERATOR.sub("", _OMP_LINE.sub("", source))
    return '#pragma GCC optimize ("O0")\n' + serial


def bench_config(data_dir: Path, precision: str) -> Config:
    config = load_config(None, environ={"HB_DATA_DIR": str(data_dir)})
    raw = config.model_dump()
    raw["grading"].update(reps=3, warmup=1, datatype=precision)
    raw["sandbox"].update(timeout_s=120)
    merged = Config.model_validate(raw)
    merged.environment = {}
    return merged


def mpi_table(
    names: list[str], directory: Path, rank_counts: tuple[int, ...], every_precision: bool
) -> int:
    """Every listed kernel's solution_mpi.c on each rank count at preset S, in every precision it
    lists (or its first); the number of failures."""
    from hb.distributed.driver import build_driver, mpicc_path
    from hb.distributed.engine import grade_distributed
    from hb.distributed.policy import default_plan

    if not Path(mpicc_path()).exists():
        print("MPI solutions: skipped, MPICH's mpicc is not beside the interpreter")
        return 0
    failures = 0
    print(f"{'kernel':28s} {'prec':5s} {'ranks':>5s} {'wall s':>7s}  verdict")
    for name in names:
        manifest = kernels.load_manifest(name)
        if not has_mpi_solution(manifest):
            continue
        source = (kernels.CATALOG_DIR / name / "solution_mpi.c").read_text()
        sizes, scalars = manifest.preset_sizes("S"), manifest.preset_scalars("S")
        reference = kernels.load_reference(name).reference
        for precision in manifest.precisions if every_precision else manifest.precisions[:1]:
            built = build_driver(manifest, precision, source, directory / "mpi-builds")
            for ranks in rank_counts:
                started = time.monotonic()
                if built.program is None:
                    verdict = f"build failed: {built.log[-200:]}"
                else:
                    inputs = kernels.make_inputs(manifest, sizes, 0, NUMPY_DTYPES[precision])
                    band = manifest.tolerance_bands().get(precision, TOLERANCE_MATRIX[precision])
                    graded = grade_distributed(
                        built.program, manifest, precision, default_plan(manifest, ranks), sizes,
                        scalars, inputs, reference, Path(tempfile.mkdtemp(dir=directory)),
                        reps=2, warmup=1, timeout_s=120, tolerance=band,
                    )  # fmt: skip
                    verdict = (
                        "correct" if graded.correct else graded.failure or graded.mismatches[0]
                    )
                failures += verdict != "correct"
                wall = time.monotonic() - started
                print(f"{name:28s} {precision:5s} {ranks:5d} {wall:7.1f}  {verdict}", flush=True)
    return failures


def main(full: bool) -> int:
    names = kernels.kernel_names() if full else list(SHORT_KERNELS)
    preset = "M" if full else "S"
    judges: dict[str, JudgeHandler] = {}
    failures = 0
    with tempfile.TemporaryDirectory(prefix="hb-bench-catalog-") as directory:
        header = (
            f"{'kernel':28s} {'prec':5s} {'grade s':>8s} {'baseline ms':>12s} "
            f"{'naive ms':>10s} {'naive/base':>10s} {'target':>7s}  verdict"
        )
        print(f"preset {preset}; target: naive serial -O0 / baseline >= {TARGET_RATIO:g}")
        print(header)
        for name in names:
            manifest = kernels.load_manifest(name)
            precision = manifest.precisions[0]
            if precision not in judges:
                judges[precision] = JudgeHandler(bench_config(Path(directory), precision))
            judge = judges[precision]
            source = kernels.solution_source(name)
            started = time.monotonic()
            graded = judge.grade(Submission(kernel=name, source=source, preset=preset), "score")
            seconds = time.monotonic() - started
            naive = judge.grade(
                Submission(kernel=name, source=naive_serial_source(source), preset=preset), "score"
            )
            if not graded.correct or not naive.correct:
                failures += 1
                reason = graded.reason if not graded.correct else f"naive: {naive.reason}"
                print(f"{name:28s} {precision:5s} {seconds:8.1f}  INCORRECT: {reason}")
                continue
            baseline_ms = graded.baseline_ns / 1e6
            naive_ms = naive.native_ns / 1e6
            ratio = naive.native_ns / max(graded.baseline_ns, 1)
            verdict = "ok" if ratio >= TARGET_RATIO else "below target"
            print(
                f"{name:28s} {precision:5s} {seconds:8.1f} {baseline_ms:12.3f} {naive_ms:10.3f} "
                f"{ratio:10.2f} {TARGET_RATIO:7.1f}  {verdict}",
                flush=True,
            )
        failures += mpi_table(names, Path(directory), (1, 2, 4) if full else (2,), full)
    return 1 if failures else 0
