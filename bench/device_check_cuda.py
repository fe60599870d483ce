"""The cuda delivery's check on a host with a CUDA device (`.venv/bin/python -m
bench.device_check_cuda` from the repository's root; a few minutes at most): the toolchain's
versions, then the hand-written cuda solutions graded through the judge on the device (scaled_add,
gemm, mat_scaled_add under a permute converted on the device), a bf16 cast converted on the device
set against the same request's python delivery (converted on the host: the errors must agree), and
a device fault graded with its reason; one row per grade with its measured figures. Exits 0 when
every grade is as expected, 1 when one is not, 2 when this host refuses cuda grades (the reason is
printed). Not one of `make bench`'s modules: it needs a device."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from hb import languages
from hb.config import Config, load_config
from hb.envelope import Submission
from hb.service import JudgeHandler

SOLUTIONS = Path(__file__).resolve().parent.parent / "tests" / "hb" / "language_solutions"
PERMUTE_A = {"operations": [{"action": "permute", "array": "A", "order": ["i1", "i0"]}]}
CAST_X_BF16 = {"operations": [{"action": "cast", "array": "x", "to": "bf16"}]}
FAULT = (
    "#include <stdint.h>\n"
    "__global__ void k(double *y) { y[-(1ll << 40)] = 1.0; }\n"
    'extern "C" void scaled_add_fp64(const double *x, double *y, int64_t N, double alpha,\n'
    "                                void *workspace, int64_t workspace_bytes) { k<<<1, 1>>>(y); }\n"
)
# (label, kernel, language, source, request, whether the grade must be correct)
CASES: list[tuple[str, str, str, str, dict[str, Any] | None, bool]] = [
    ("scaled_add", "scaled_add", "cuda", "scaled_add.cu", None, True),
    ("gemm", "gemm", "cuda", "gemm.cu", None, True),
    ("mat_scaled_add permute", "mat_scaled_add", "cuda", "mat_scaled_add_permute.cu", PERMUTE_A,
     True),
    ("scaled_add bf16 (device)", "scaled_add", "cuda", "scaled_add_bf16.cu", CAST_X_BF16, False),
    ("scaled_add bf16 (python)", "scaled_add", "python", "scaled_add_bf16.py", CAST_X_BF16, False),
    ("device fault", "scaled_add", "cuda", "", None, False),
]  # fmt: skip


def _first_line(argv: list[str]) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"unavailable ({error})"
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    return lines[-1].strip() if lines else (done.stderr.strip() or "no output")


def versions() -> list[str]:
    """What this check ran on: nvcc, the driver and device, cupy and its CUDA."""
    nvcc = languages.cuda_compiler()
    found = [f"nvcc: {nvcc} ({_first_line([nvcc, '--version']) if nvcc else 'none'})"]
    if shutil.which("nvidia-smi"):
        query = "--query-gpu=name,driver_version,compute_cap,memory.total"
        found.append(f"device: {_first_line(['nvidia-smi', query, '--format=csv,noheader'])}")
    found.append(f"nvcc flags: {' '.join(languages.compile_flags(languages.LANGUAGES['cuda']))}")
    try:
        import cupy

        runtime = cupy.cuda.runtime
        found.append(
            f"cupy {cupy.__version__}: CUDA runtime {runtime.runtimeGetVersion()}, driver "
            f"{runtime.driverGetVersion()}"
        )
    except Exception as error:  # what the host lacks is the check's answer
        found.append(f"cupy: unavailable ({error})")
    return found


def config(data_dir: Path) -> Config:
    raw = load_config(None, environ={"HB_DATA_DIR": str(data_dir)}).model_dump()
    raw["requests"] = {"allow": ["cast", "layout"], "precisions": ["fp32", "bf16"]}
    raw["grading"].update(datatype="fp64")
    checked = Config.model_validate(raw)
    checked.environment = {}
    return checked


def main() -> int:
    for line in versions():
        print(line, flush=True)
    refusal = languages.refusal("cuda")
    if refusal is not None:
        print(f"refused: {refusal}")
        return 2
    failures = 0
    errors: dict[str, float | None] = {}
    header = (f"{'case':26} {'ok':>3} {'native_ns':>11} {'baseline_ns':>12} {'speedup':>8} "
              f"{'95% interval':>17} {'pairs':>5} {'conv_in_ns':>11} {'conv_out_ns':>11} "
              f"{'max_rel_err':>11} {'wall_s':>7}  reason")  # fmt: skip
    print(header)
    with tempfile.TemporaryDirectory(prefix="hb-device-check-") as directory:
        judge = JudgeHandler(config(Path(directory)))
        for label, kernel, language, file, requests, must_be_correct in CASES:
            source = (SOLUTIONS / file).read_text() if file else FAULT
            started = time.monotonic()
            outcome = judge.grade(
                Submission(kernel=kernel, language=language, source=source, requests=requests),
                "score",
            )
            wall = time.monotonic() - started
            errors[label] = outcome.max_rel_error
            expected = outcome.correct == must_be_correct
            if label == "device fault":
                expected = not outcome.correct and "on the device failed" in (outcome.reason or "")
            failures += not expected
            error = f"{outcome.max_rel_error:.3e}" if outcome.max_rel_error is not None else "-"
            # A paired grade's interval (the device runs alternating with the host baseline's).
            ci = outcome.speedup_ci
            interval = f"[{ci[0]:.3g}, {ci[1]:.3g}]" + ("*" if outcome.noisy else "") if ci else "-"
            pairs = outcome.timing.pairs if outcome.timing else 0
            print(
                f"{label:26} {'yes' if outcome.correct else 'no':>3} {outcome.native_ns:>11} "
                f"{outcome.baseline_ns:>12} {outcome.measured_speedup:>8.2f} {interval:>17} "
                f"{pairs:>5} {outcome.convert_in_ns:>11} {outcome.convert_out_ns:>11} {error:>11} "
                f"{wall:>7.1f}  {'' if expected else 'UNEXPECTED '}{outcome.reason or ''}",
                flush=True,
            )
    device, host = errors["scaled_add bf16 (device)"], errors["scaled_add bf16 (python)"]
    agree = device is not None and host is not None and abs(device - host) <= 1e-6 * abs(host)
    print(f"bf16 cast on the device against the host's: {device} vs {host} "
          f"({'agree' if agree else 'DIFFER'})")  # fmt: skip
    failures += not agree
    print("all as expected" if failures == 0 else f"{failures} unexpected")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
