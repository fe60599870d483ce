"""The timed run: the judge's side (run_kernel: stage a private directory, start the sandboxed
child, read its results back) and the child's (`python -m hb.runner`: load the submission with
ctypes, convert in, time the kernel call, convert out, K reps after a warm-up).

Results cross the boundary as JSON and an .npz read with allow_pickle=False, never as pickles.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

JOB_FILE = "job.json"
INPUTS_FILE = "inputs.npz"
OUTPUTS_FILE = "outputs.npz"
RESULT_FILE = "result.json"
LIBRARY_FILE = "libsubmission.so"
CONVERSION_DIR = "conversions"


@dataclass
class RunResult:
    """The credited rep of a timed run, or why there is none."""

    ok: bool
    reason: str | None = None
    kernel_ns: int = 0
    convert_in_ns: int = 0
    convert_out_ns: int = 0
    rep_kernel_ns: list[int] = field(default_factory=list)
    outputs: dict[str, np.ndarray] = field(default_factory=dict)
    protections: list[str] = field(default_factory=list)
    wall_s: float = 0.0


def scalar_argument(kind: str, value: float, problem_precision: str) -> dict[str, Any]:
    """A scalar's ABI entry: int scalars and size symbols are int64_t; a floating scalar takes the
    problem precision (a cast changes pointers, never scalars)."""
    if kind == "int":
        return {"kind": "int64", "value": int(value)}
    ctype = {"fp64": "double", "fp32": "float"}.get(problem_precision)
    if ctype is None:
        raise ValueError(f"floating scalars at {problem_precision} cannot be passed through ctypes")
    return {"kind": ctype, "value": float(value)}


def run_kernel(
    library: Path,
    symbol: str,
    pointers: list[str],
    trailing_arguments: list[dict[str, Any]],
    workspace_bytes: int,
    inputs: dict[str, np.ndarray],
    output_names: list[str],
    reps: int,
    warmup: int,
    workdir_root: Path,
    limits: Any,
    threads: int = 0,
    conversion: dict[str, Any] | None = None,
    conversion_files: Path | None = None,
) -> RunResult:
    """Run `symbol` of `library` in the sandbox on `inputs` (problem arrays at the problem
    precision). `conversion` is the request's conversion program description (requests JSON, the
    relayout array specs and sizes) when the request converts anything; None calls the kernel on
    the problem arrays directly."""
    from hb import sandbox

    workdir = workdir_root / f"run-{uuid.uuid4().hex}"
    workdir.mkdir(parents=True)
    try:
        shutil.copyfile(library, workdir / LIBRARY_FILE)
        if conversion_files is not None and conversion_files.is_dir():
            shutil.copytree(conversion_files, workdir / CONVERSION_DIR)
        np.savez(workdir / INPUTS_FILE, **inputs)  # type: ignore[arg-type]
        job = {
            "library": LIBRARY_FILE,
            "symbol": symbol,
            "pointers": pointers,
            "trailing": trailing_arguments,
            "workspace_bytes": workspace_bytes,
            "outputs": output_names,
            "reps": reps,
            "warmup": warmup,
            "conversion": conversion,
        }
        (workdir / JOB_FILE).write_text(json.dumps(job))
        env = {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1"}
        if threads > 0:
            env["OMP_NUM_THREADS"] = str(threads)
        result = sandbox.run_sandboxed([sys.executable, "-m", "hb.runner"], workdir, limits, env)
        failure = result.failure("the run")
        report_path = workdir / RESULT_FILE
        if failure is not None or not report_path.is_file():
            return RunResult(
                False,
                reason=failure or "the run ended without a result (did the kernel call exit()?)",
                protections=result.protections,
                wall_s=result.wall_s,
            )
        report = json.loads(report_path.read_text())
        if report.get("error"):
            return RunResult(False, reason=str(report["error"]), protections=result.protections)
        with np.load(workdir / OUTPUTS_FILE, allow_pickle=False) as archive:
            outputs = {name: archive[name] for name in output_names if name in archive.files}
        missing = [name for name in output_names if name not in outputs]
        if missing:
            return RunResult(False, reason=f"the run returned no output for {missing}")
        return RunResult(
            True,
            kernel_ns=int(report["kernel_ns"]),
            convert_in_ns=int(report["convert_in_ns"]),
            convert_out_ns=int(report["convert_out_ns"]),
            rep_kernel_ns=[int(t) for t in report["rep_kernel_ns"]],
            outputs=outputs,
            protections=result.protections,
            wall_s=result.wall_s,
        )
    except (OSError, ValueError, KeyError) as error:
        return RunResult(False, reason=f"the run's results could not be read: {error}")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


_CTYPES = {"int64": ctypes.c_int64, "double": ctypes.c_double, "float": ctypes.c_float}


def _child_main() -> int:
    """The sandboxed side: everything here runs beside untrusted code, in its private directory."""
    job = json.loads(Path(JOB_FILE).read_text())
    try:
        report, outputs = _timed_reps(job)
    except Exception as error:  # the child reports every failure as data, not a traceback
        Path(RESULT_FILE).write_text(json.dumps({"error": f"{type(error).__name__}: {error}"}))
        return 0
    np.savez(OUTPUTS_FILE, **outputs)  # type: ignore[arg-type]
    Path(RESULT_FILE).write_text(json.dumps(report))
    return 0


def _timed_reps(job: dict[str, Any]) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    library = ctypes.CDLL(os.path.abspath(job["library"]))
    try:
        kernel = getattr(library, job["symbol"])
    except AttributeError:
        raise LookupError(f"the library does not define {job['symbol']}") from None
    pointers: list[str] = job["pointers"]
    trailing = job["trailing"]
    kernel.argtypes = (
        [ctypes.c_void_p] * len(pointers)
        + [_CTYPES[a["kind"]] for a in trailing]
        + [ctypes.c_void_p, ctypes.c_int64]
    )
    kernel.restype = None
    trailing_values = [a["value"] for a in trailing]
    workspace = np.zeros(max(int(job["workspace_bytes"]), 1), dtype=np.uint8)
    with np.load(INPUTS_FILE, allow_pickle=False) as archive:
        problem = {name: archive[name] for name in archive.files}
    program = _conversion_program(job.get("conversion"))
    output_names: list[str] = job["outputs"]
    best: tuple[int, int, int] | None = None
    best_outputs: dict[str, np.ndarray] = {}
    rep_kernel_ns: list[int] = []
    for rep in range(int(job["warmup"]) + int(job["reps"])):
        staged = {name: array.copy() for name, array in problem.items()}  # untimed
        if program is None:
            buffers, convert_in_ns = staged, 0
        else:
            start = time.perf_counter_ns()
            buffers = program.convert_in(staged, job["conversion"]["sizes"])
            convert_in_ns = time.perf_counter_ns() - start
        # A pointer no operation touches is the staged problem array itself.
        addresses = [
            (buffers[name] if name in buffers else staged[name]).ctypes.data for name in pointers
        ]
        start = time.perf_counter_ns()
        kernel(*addresses, *trailing_values, workspace.ctypes.data, workspace.nbytes)
        kernel_ns = time.perf_counter_ns() - start
        convert_out_ns = 0
        if program is not None:
            start = time.perf_counter_ns()
            program.convert_out(
                buffers, {name: staged[name] for name in output_names}, job["conversion"]["sizes"]
            )
            convert_out_ns = time.perf_counter_ns() - start
        if rep < int(job["warmup"]):
            continue
        rep_kernel_ns.append(kernel_ns)
        if best is None or kernel_ns < best[0]:
            best = (kernel_ns, convert_in_ns, convert_out_ns)
            best_outputs = {name: staged[name].copy() for name in output_names}
    assert best is not None
    report = {
        "kernel_ns": best[0],
        "convert_in_ns": best[1],
        "convert_out_ns": best[2],
        "rep_kernel_ns": rep_kernel_ns,
    }
    return report, best_outputs


def _conversion_program(conversion: dict[str, Any] | None) -> Any:
    """relayout's compiled conversion program for the request, or None when nothing converts."""
    if not conversion:
        return None
    from hb import requests_api

    return requests_api.compile_conversions(
        conversion["requests"], conversion["arrays"], cache_dir=Path(CONVERSION_DIR)
    )


if __name__ == "__main__":
    sys.exit(_child_main())
