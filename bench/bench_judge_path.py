"""The judge's own path, measured through the real service: a cast, a permute+cast, a zip and a
sparse format grade at preset L (their conversions' GB/s from the convert_in_ns and convert_out_ns
the grade records, beside the copy bound measured in the same run), the warm /score round trip at
preset S beside a cold interpreter's `import numpy`, and /requests/check's p50; each row with its
target and verdict. A warm /score finds the box started for it after the call before (hb.execution.box_pool),
as an agent's next call does once it has read the answer; calls back to back, which wait for that
start, are printed beside it.

Bytes are counted as the conversion moves them: what it reads plus what it writes, the arrays it
only copies into their buffers included (the sparse row counts the CSR triple read and the format's
buffers written). Each row's copy bound is relayout's OpenMP memcpy of that row's bytes on this
process's threads, run right after the grade as the judge runs a conversion: its source written
just before each copy (as a rep's inputs are staged), its target the buffer of the copy before,
the median of as many copies as the grade has timed reps (the credited rep is one of those, not
the fastest). The short form grades at
preset S and only shows that every row runs; its figures mean nothing.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from fastapi.testclient import TestClient

from hb import kernels
from hb.config import Config, load_config
from hb.execution import box_pool
from hb.service import create_app
from relayout.convert import aligned_empty, copy_bytes
from relayout.sparse.formats import canonical_csr, from_csr

# Targets: a conversion on the judge's path runs near the copy bound (a cast as the library's
# own target; a layout change or a zip reads or writes with strides; a format conversion sorts
# and scans indices), and an agent's warm /score costs well under an interpreter's start.
CONVERSION_TARGETS = {"cast": 0.8, "permute+cast": 0.5, "zip": 0.5, "format ell": 0.2}
SCORE_TARGET_OF_IMPORT = 1 / 3
CHECK_P50_TARGET_MS = 5.0


@dataclass
class Row:
    figure: str
    measured: float
    target: float
    unit: str
    higher_is_better: bool = True

    def verdict(self) -> str:
        met = (
            self.measured >= self.target if self.higher_is_better else self.measured <= self.target
        )
        return "met" if met else "MISSED"


def bench_config(data_dir: Path, reps: int) -> Config:
    config = load_config(None, environ={"HB_DATA_DIR": str(data_dir)})
    raw = config.model_dump()
    raw["requests"] = {
        "allow": ["load", "cast", "layout", "sparse_format"],
        "precisions": ["fp64", "fp32"],
    }
    raw["grading"].update(reps=reps, warmup=1, datatype="fp32")
    merged = Config.model_validate(raw)
    merged.environment = {}
    return merged


def copy_bound_gbs(nbytes: int, repeats: int) -> tuple[float, float]:
    """relayout's OpenMP memcpy of `nbytes` (read + written) as the judge runs a conversion: the
    source written before each copy, the target reused; the median and the best of `repeats`
    after one more, in GB/s."""
    source = aligned_empty((max(nbytes // 16, 1),), np.dtype(np.float64))
    target = aligned_empty(source.shape, np.dtype(np.float64))
    target[...] = 0.0
    times = []
    for index in range(repeats + 1):
        source[...] = float(index)
        elapsed = copy_bytes(source, target)
        if index:
            times.append(elapsed)
    return 2 * source.nbytes / statistics.median(times), 2 * source.nbytes / min(times)


# Kernels the grades below run: each takes its arrays as the request delivers them.
CAST_SOURCE = """#include <stdint.h>
void scaled_add_fp32(const double *restrict x, float *restrict y, int64_t N, float alpha,
                     void *workspace, int64_t workspace_bytes) {
    (void)workspace; (void)workspace_bytes;
    #pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < N; ++i) y[i] += alpha * (float)x[i];
}
"""
PERMUTE_CAST_SOURCE = """#include <stdint.h>
/* A arrives transposed (A[j][i]) and widened to double. */
void mat_scaled_add_fp32(const double *restrict A, float *restrict B, int64_t M, int64_t N,
                         float alpha, void *workspace, int64_t workspace_bytes) {
    (void)workspace; (void)workspace_bytes;
    #pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) B[i * N + j] += alpha * (float)A[j * M + i];
}
"""
ZIP_SOURCE = """#include <stdint.h>
/* A and B arrive stacked: AB[i][j][0] is A's, AB[i][j][1] is B's. */
void mat_scaled_add_fp32(float *restrict AB, int64_t M, int64_t N, float alpha, void *workspace,
                         int64_t workspace_bytes) {
    (void)workspace; (void)workspace_bytes;
    #pragma omp parallel for simd schedule(static)
    for (int64_t c = 0; c < M * N; ++c) AB[2 * c + 1] += alpha * AB[2 * c];
}
"""


def cases() -> list[tuple[str, str, str, dict[str, Any]]]:
    """(row, kernel, source, requests) of each conversion row."""
    ell = (kernels.CATALOG_DIR / "spmv" / "solutions" / "spmv_ell.c").read_text()
    return [
        ("cast", "scaled_add", CAST_SOURCE,
         {"operations": [{"action": "cast", "array": "x", "to": "fp64"}]}),
        ("permute+cast", "mat_scaled_add", PERMUTE_CAST_SOURCE,
         {"operations": [{"action": "permute", "array": "A", "order": ["i1", "i0"]},
                         {"action": "cast", "array": "A", "to": "fp64"}]}),
        ("zip", "mat_scaled_add", ZIP_SOURCE,
         {"operations": [{"action": "zip", "arrays": ["A", "B"], "into": "AB"}]}),
        ("format ell", "spmv", ell,
         {"operations": [{"action": "format", "array": "A", "to": "ell"}]}),
    ]  # fmt: skip


def bytes_moved(row: str, kernel: str, preset: str, seed: int) -> tuple[int, int]:
    """(bytes convert_in moves, bytes convert_out moves) of the row's conversion at `preset`."""
    manifest = kernels.load_manifest(kernel)
    sizes = manifest.preset_sizes(preset)
    # The cast and permute+cast rows also copy the fp32 array they add into (y, B) to its buffer.
    if row == "cast":
        return sizes["N"] * (4 + 8 + 4 + 4), 0
    cells = sizes["M"] * sizes["N"]
    if row == "permute+cast":
        return cells * (4 + 8 + 4 + 4), 0
    if row == "zip":
        return cells * (8 + 8), cells * (8 + 4)
    inputs = kernels.make_inputs(manifest, sizes, seed, np.dtype(np.float32))
    data, indices, indptr = inputs["A_data"], inputs["A_indices"], inputs["A_indptr"]
    csr = canonical_csr(data, indices, indptr, (sizes["M"], sizes["N"]))
    written = sum(buffer.nbytes for buffer in from_csr(csr, "ell").values())
    return data.nbytes + indices.nbytes + indptr.nbytes + written, 0


def interpreter_import_ms(repeats: int) -> float:
    """The fastest cold `python -c "import numpy"` of this interpreter, in ms."""
    best = None
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import numpy"], check=True)
        elapsed = (time.perf_counter() - start) * 1e3
        best = elapsed if best is None else min(best, elapsed)
    assert best is not None
    return best


def main(full: bool) -> int:
    preset = "L" if full else "S"
    repeats = 10 if full else 2
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="hb-bench-") as scratch:
        config = bench_config(Path(scratch), reps=5 if full else 2)
        with TestClient(create_app(config)) as client:
            measured: list[tuple[str, int, int, dict[str, Any], tuple[float, float]]] = []
            for row, kernel, source, requests in cases():
                answer = client.post(
                    "/score",
                    json={"kernel": kernel, "source": source, "preset": preset,
                          "requests": requests},
                ).json()  # fmt: skip
                moved_in, moved_out = bytes_moved(row, kernel, preset, config.grading.public_seed)
                copies = copy_bound_gbs(max(moved_in, moved_out, 1 << 20), config.grading.reps)
                measured.append((row, moved_in, moved_out, answer, copies))
            for row, moved_in, moved_out, answer, (copy_gbs, best_copy_gbs) in measured:
                if not answer.get("correct"):
                    print(f"{row}: not graded correct ({answer.get('reason') or answer})")
                for direction, moved in (("in", moved_in), ("out", moved_out)):
                    ns = int(answer.get(f"convert_{direction}_ns") or 0)
                    if moved and ns:
                        ratio = moved / ns / copy_gbs
                        rows.append(Row(f"{row} convert_{direction} / copy bound", ratio,
                                        CONVERSION_TARGETS[row], "ratio"))  # fmt: skip
                        print(f"{row} convert_{direction}: {moved / ns:.2f} GB/s "
                              f"({moved / 1e6:.0f} MB in {ns / 1e6:.2f} ms); copy bound "
                              f"{copy_gbs:.2f} GB/s (median; the best copy {best_copy_gbs:.2f}, "
                              f"{moved / ns / best_copy_gbs:.2f} of it)")  # fmt: skip
            source = kernels.solution_source("scaled_add")
            body = {"kernel": "scaled_add", "source": source, "preset": "S"}
            client.post("/score", json=body)  # the build, the baseline and a started box, once
            trips, imports, back_to_back = [], [], []
            for _ in range(repeats):
                # As an agent reads one answer before it asks again: the next box has started.
                # The cold import is timed beside each call, with nothing of the judge running.
                box_pool.settle()
                imports.append(interpreter_import_ms(1))
                start = time.perf_counter()
                client.post("/score", json=body)
                trips.append((time.perf_counter() - start) * 1e3)
            for _ in range(repeats):
                start = time.perf_counter()
                client.post("/score", json=body)
                back_to_back.append((time.perf_counter() - start) * 1e3)
            check = {"kernel": "gemm", "language": "c",
                     "requests": {"operations": [{"action": "cast", "array": "A", "to": "fp64"}]}}  # fmt: skip
            client.post("/requests/check", json=check)
            checks = []
            for _ in range(50 if full else 5):
                start = time.perf_counter()
                client.post("/requests/check", json=check)
                checks.append((time.perf_counter() - start) * 1e3)
    numpy_ms = min(imports)
    warm_ms = min(trips)
    print(f"warm /score at S: fastest {warm_ms:.1f} ms, median {statistics.median(trips):.1f} ms;"
          f" cold `python -c 'import numpy'` between them: fastest {numpy_ms:.1f} ms, median "
          f"{statistics.median(imports):.1f} ms")  # fmt: skip
    print(f"back to back (each waits for the box the one before started): fastest "
          f"{min(back_to_back):.1f} ms, median {statistics.median(back_to_back):.1f} ms")  # fmt: skip
    rows.append(Row("warm /score S / import numpy", warm_ms / numpy_ms, SCORE_TARGET_OF_IMPORT,
                    "ratio", higher_is_better=False))  # fmt: skip
    rows.append(Row("/requests/check p50", statistics.median(checks), CHECK_P50_TARGET_MS, "ms",
                    higher_is_better=False))  # fmt: skip
    print(f"preset {preset}; the device table: no GPU on this machine" if not _has_gpu() else "")
    print(f"{'figure':<40}{'measured':>10}{'target':>10}  unit   verdict")
    for row in rows:
        bound = ">=" if row.higher_is_better else "<="
        print(f"{row.figure:<40}{row.measured:>10.3f}{bound:>4}{row.target:>6.3f}  "
              f"{row.unit:<6} {row.verdict()}")  # fmt: skip
    return 0


def _has_gpu() -> bool:
    try:
        import cupy  # type: ignore[import-not-found]

        return bool(cupy.cuda.runtime.getDeviceCount())
    except Exception:
        return False


if __name__ == "__main__":
    sys.exit(main(full=False))
