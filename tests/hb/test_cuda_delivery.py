"""The cuda delivery: the refusals that name what a host lacks (nvcc, cupy, a device, the driver),
the cuda entry point /task and /requests/check show, the hand-written .cu solutions built with nvcc
in the box (the judge's nvcc, the nvidia-cuda-nvcc wheel's and a toolkit under $CUDA_HOME, each with
the host's g++), the box a cuda run gets (the device nodes, no RLIMIT_AS), hb.execution.cudarunner's protocol
between its trusted side and its in-box runner over a stand-in for cupy, and, where a CUDA device
is present, the solutions' grades on device arrays with the request's conversions on the device."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from hb import languages
from hb.envelope import RequestsCheckBody, Submission
from hb.execution import build
from hb.service import JudgeHandler
from tests.hb.conftest import make_config

SOLUTIONS = Path(__file__).resolve().parent / "language_solutions"
ALLOW = {"allow": ["cast", "layout"], "precisions": ["fp32", "bf16"]}
PERMUTE_A = {"operations": [{"action": "permute", "array": "A", "order": ["i1", "i0"]}]}
CAST_X_BF16 = {"operations": [{"action": "cast", "array": "x", "to": "bf16"}]}

# (kernel, solution file stem, request) of the hand-written cuda solutions graded correct.
CUDA_SOLVED = [
    ("scaled_add", "scaled_add", None),
    ("gemm", "gemm", None),
    ("mat_scaled_add", "mat_scaled_add_permute", PERMUTE_A),
]
STEMS = sorted(path.stem for path in SOLUTIONS.glob("*.cu"))
NO_NVCC = (
    "nvcc is not installed: `pip install 'hb[cuda]'` (which make setup runs) installs NVIDIA's "
    "nvidia-cuda-nvcc wheel"
)
DEVICE_REFUSAL = languages.refusal("cuda")
needs_device = pytest.mark.skipif(DEVICE_REFUSAL is not None, reason=str(DEVICE_REFUSAL))


def compilers() -> list[Any]:
    """Each nvcc this host has: the judge's (toolkit or PATH) and the wheel's, once each."""
    found = dict.fromkeys(p for p in (languages.cuda_compiler(), languages.wheel_nvcc()) if p)
    return list(found) or [pytest.param(None, marks=pytest.mark.skip(reason=NO_NVCC))]


@pytest.fixture(scope="module")
def judge(data_dir: Path) -> JudgeHandler:
    return JudgeHandler(make_config(data_dir, requests=ALLOW))


@pytest.fixture
def fresh_refusal() -> Iterator[None]:
    """device_refusal is worked out once per process: a test that changes the host clears it
    before and after."""
    languages.device_refusal.cache_clear()
    yield
    languages.device_refusal.cache_clear()


@pytest.mark.parametrize("nvcc", compilers())
@pytest.mark.parametrize("stem", STEMS)
def test_each_cuda_solution_builds_with_nvcc_and_the_host_gxx_in_the_box(
    judge: JudgeHandler, monkeypatch: pytest.MonkeyPatch, nvcc: str, stem: str
) -> None:
    """The judge's fixed flags, no -allow-unsupported-compiler: nvcc takes Debian's g++ as it is,
    and the library exports the entry point `extern "C"`."""
    monkeypatch.setattr(languages, "cuda_compiler", lambda: nvcc)
    flags = languages.compile_flags(languages.LANGUAGES["cuda"])
    assert "-allow-unsupported-compiler" not in flags and "-shared" in flags
    source = (SOLUTIONS / f"{stem}.cu").read_text()
    built = build.build(source, "cuda", [], judge.config.build_cache_dir, judge.build_limits)
    assert built.ok and built.library is not None, built.log
    symbols = subprocess.run(
        ["nm", "-D", "--defined-only", str(built.library)], capture_output=True, text=True
    ).stdout
    entry = stem.split("_permute")[0].split("_bf16")[0] + "_fp64"
    assert f" T {entry}\n" in symbols


def test_a_cuda_syntax_check_is_its_build(judge: JudgeHandler) -> None:
    if languages.cuda_compiler() is None:
        pytest.skip(NO_NVCC)
    good = build.syntax_check(
        (SOLUTIONS / "scaled_add.cu").read_text(), "cuda", [], judge.config.sandbox_dir,
        judge.build_limits,
    )  # fmt: skip
    assert good.ok, good.diagnostics
    bad = build.syntax_check(
        "__global__ void k() { undeclared = 1; }\n", "cuda", [], judge.config.sandbox_dir,
        judge.build_limits,
    )  # fmt: skip
    assert not bad.ok and "undeclared" in bad.diagnostics


def test_a_cuda_grade_is_refused_naming_what_the_host_lacks(
    monkeypatch: pytest.MonkeyPatch, fresh_refusal: None
) -> None:
    needs = "language 'cuda' needs nvcc (the CUDA toolkit), cupy and a CUDA device; "
    monkeypatch.setattr(languages, "cuda_compiler", lambda: None)
    assert languages.refusal("cuda") == (
        f"{needs}nvcc is not installed on this host (a CUDA toolkit, or pip install 'hb[cuda]')"
    )
    monkeypatch.setattr(languages, "cuda_compiler", lambda: "/usr/bin/nvcc")
    real_find_spec = languages.importlib.util.find_spec
    monkeypatch.setattr(
        languages.importlib.util, "find_spec",
        lambda name, *rest: None if name == "cupy" else real_find_spec(name, *rest),
    )  # fmt: skip
    assert languages.refusal("cuda") == (
        f"{needs}cupy (the device conversions' kernels) is not installed (pip install 'hb[gpu]')"
    )
    languages.device_refusal.cache_clear()
    monkeypatch.setattr(
        languages.importlib.util, "find_spec",
        lambda name, *rest: object() if name == "cupy" else real_find_spec(name, *rest),
    )  # fmt: skip
    monkeypatch.setattr(languages, "device_nodes", lambda: [])
    assert languages.refusal("cuda") == (
        f"{needs}there is no CUDA device on this host (no /dev/nvidia*)"
    )
    languages.device_refusal.cache_clear()
    monkeypatch.setattr(languages, "device_nodes", lambda: ["/dev/nvidia0", "/dev/nvidiactl"])
    assert languages.refusal("cuda") == (
        f"{needs}/dev/nvidia-uvm is missing (the driver makes it when a CUDA program first runs "
        "on the host, or `nvidia-modprobe -u -c=0`), and the box cannot make it"
    )
    languages.device_refusal.cache_clear()
    monkeypatch.setattr(
        languages, "device_nodes", lambda: ["/dev/nvidia0", "/dev/nvidiactl", "/dev/nvidia-uvm"]
    )
    monkeypatch.setattr(languages, "_installed", lambda soname: soname != "cuda")
    assert languages.refusal("cuda") == (
        f"{needs}the CUDA driver (libcuda) is not installed on this host"
    )
    languages.device_refusal.cache_clear()
    monkeypatch.setattr(languages, "_installed", lambda soname: True)
    monkeypatch.setattr(languages, "driver_cuda_version", lambda: (12, 8))
    monkeypatch.setattr(languages, "nvcc_cuda_version", lambda: (13, 0))
    assert languages.refusal("cuda") == (
        f"{needs}the CUDA driver runs CUDA 12.8 at most, and nvcc is CUDA 13.0: what it builds "
        "would not start (a newer driver, or an nvcc of CUDA 12 first on PATH or under $CUDA_HOME)"
    )
    languages.device_refusal.cache_clear()
    monkeypatch.setattr(languages, "driver_cuda_version", lambda: (13, 2))
    assert languages.refusal("cuda") is None


def test_the_device_nodes_are_given_to_a_cuda_box_only(tmp_path: Path) -> None:
    """A cuda grade's box binds the device nodes it is given; every other box has none."""
    from hb.execution import sandbox

    if sandbox.bwrap_path() is None:
        pytest.skip("bubblewrap is not installed (scripts/sysdeps.sh)")
    limits = sandbox.Limits()
    with sandbox.Box(tmp_path, limits, devices=["/dev/nvidia0"]) as box:
        argv = box.command(["true"]).argv
        assert argv[argv.index("--dev-bind") + 1 : argv.index("--dev-bind") + 3] == [
            "/dev/nvidia0", "/dev/nvidia0",
        ]  # fmt: skip
    with sandbox.Box(tmp_path, limits) as box:
        assert "--dev-bind" not in box.command(["true"]).argv


def test_only_a_box_told_so_runs_without_an_address_space_limit(tmp_path: Path) -> None:
    """A cuda grade's box has no RLIMIT_AS (the CUDA driver reserves far more address space than
    it uses); every other box keeps it at the memory limit."""
    from dataclasses import replace

    from hb.execution import sandbox

    limits = sandbox.Limits(memory_bytes=2 << 30)
    for box_limits, expected in ((limits, str(2 << 20)),
                                 (replace(limits, address_space_limit=False), "unlimited")):  # fmt: skip
        with sandbox.Box(tmp_path, box_limits) as box:
            ended = box.run(["/bin/sh", "-c", "ulimit -v"])
        assert ended.returncode == 0, ended.stderr
        assert ended.stdout.strip() == expected


def test_task_and_check_show_the_cuda_entry_point(
    judge: JudgeHandler, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The host entry point as nvcc compiles it (C++: `extern "C"`, `__restrict__`) after the
    lines saying its pointers are device memory; a request's pointers as the request leaves them."""
    monkeypatch.setattr(languages, "cuda_compiler", lambda: "/usr/bin/nvcc")
    monkeypatch.setattr(languages, "device_refusal", lambda: None)
    signature = judge.task("scaled_add", "cuda")["signature"]
    assert signature.startswith("// CUDA: a host function called with device pointers")
    assert signature.splitlines()[-1] == (
        'extern "C" void scaled_add_fp64(const double *__restrict__ x, double *__restrict__ y, '
        "int64_t N, double alpha, void *workspace, int64_t workspace_bytes);"
    )
    check = judge.check(
        RequestsCheckBody(kernel="scaled_add", language="cuda", requests=CAST_X_BF16)
    )
    assert check["accepted"], check
    assert 'extern "C" void scaled_add_fp64(const __npb_bf16 *__restrict__ x' in check["signature"]


@needs_device
@pytest.mark.parametrize(("kernel", "stem", "requests"), CUDA_SOLVED)
def test_cuda_solution_grades_correct_on_the_device(
    judge: JudgeHandler, kernel: str, stem: str, requests: dict[str, Any] | None
) -> None:
    source = (SOLUTIONS / f"{stem}.cu").read_text()
    outcome = judge.grade(
        Submission(kernel=kernel, language="cuda", source=source, requests=requests), "score"
    )
    assert outcome.correct, outcome.reason
    assert outcome.language == "cuda" and outcome.native_ns > 0 and outcome.measured_speedup > 0
    if requests is not None:
        assert outcome.convert_in_ns > 0 and outcome.convert_out_ns >= 0
    # Paired: the device runs alternate with the host baseline's, rep beside rep.
    assert outcome.timing is not None and outcome.timing.mode == "paired"
    assert len(outcome.timing.ratios) == judge.config.grading.reps
    assert outcome.speedup_ci is not None


@needs_device
def test_a_cast_reaches_the_device_kernel_converted_as_on_the_host(judge: JudgeHandler) -> None:
    """x cast to bf16 on the device (relayout's cupy kernels) reaches the kernel as the bits the
    host conversion gives a python delivery: the same inputs give the same error, which the fp64
    band refuses as it does any bf16 input."""
    device = judge.grade(
        Submission(kernel="scaled_add", language="cuda", requests=CAST_X_BF16,
                   source=(SOLUTIONS / "scaled_add_bf16.cu").read_text()),
        "score",
    )  # fmt: skip
    host = judge.grade(
        Submission(kernel="scaled_add", language="python", requests=CAST_X_BF16,
                   source=(SOLUTIONS / "scaled_add_bf16.py").read_text()),
        "score",
    )  # fmt: skip
    assert not device.correct and device.max_rel_error is not None
    assert host.max_rel_error is not None
    assert device.max_rel_error == pytest.approx(host.max_rel_error, rel=1e-6)
    assert device.convert_in_ns > 0


@needs_device
def test_a_device_fault_fails_the_grade_with_its_reason(judge: JudgeHandler) -> None:
    source = (
        "#include <stdint.h>\n"
        "__global__ void k(double *y) { y[-(1ll << 40)] = 1.0; }\n"
        'extern "C" void scaled_add_fp64(const double *x, double *y, int64_t N, double alpha,\n'
        "                                void *workspace, int64_t workspace_bytes) {\n"
        "    k<<<1, 1>>>(y);\n"
        "}\n"
    )
    outcome = judge.grade(Submission(kernel="scaled_add", language="cuda", source=source), "score")
    assert not outcome.correct
    assert outcome.reason is not None and "scaled_add_fp64 on the device failed" in outcome.reason


class _StandInArray(np.ndarray):
    """A numpy array standing in for a cupy one: `.data.ptr` and `.get()`."""

    @property
    def data(self) -> Any:  # type: ignore[override]
        return SimpleNamespace(ptr=self.ctypes.data)

    def get(self) -> np.ndarray:
        return np.array(self)


class _Event:
    def __init__(self) -> None:
        self.at = 0

    def record(self) -> None:
        self.at = time.perf_counter_ns()

    def synchronize(self) -> None:
        pass


def _stand_in_cupy() -> Any:
    """cupy's surface the in-box runner uses, over host memory (no device on this host)."""
    return SimpleNamespace(
        uint8=np.uint8,
        asarray=lambda array: np.array(array).view(_StandInArray),
        zeros=lambda count, dtype: np.zeros(count, dtype=dtype).view(_StandInArray),
        cuda=SimpleNamespace(
            runtime=SimpleNamespace(getDeviceCount=lambda: 1, deviceSynchronize=lambda: None),
            Event=_Event,
            get_elapsed_time=lambda start, end: (end.at - start.at) / 1e6,
        ),
    )


def _scaled_add_box(directory: Path) -> dict[str, Any]:
    """A run directory as hb.execution.cudarunner.run_kernel leaves it for scaled_add, with the catalog's C
    baseline as the library (the stand-in's device memory is host memory): its box.json."""
    from hb import kernels

    solution = kernels.CATALOG_DIR / "scaled_add" / "solution.c"
    subprocess.run(
        ["gcc", "-O2", "-fopenmp", "-fPIC", "-shared", "-o", str(directory / "libsubmission.so"),
         str(solution)],
        check=True,
    )  # fmt: skip
    job = {
        "symbol": "scaled_add_fp64", "pointer_names": ["x", "y"],
        "trailing_kinds": ["int64", "double"], "staged": ["x", "y"], "output_names": ["y"],
        "conversion": None,
    }  # fmt: skip
    (directory / "box.json").write_text(json.dumps(job))
    return job


def test_the_in_box_runner_lays_out_calls_and_copies_back_in_the_abi_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """hb.execution.cudarunner's box side over a stand-in for cupy (host memory as the device) and the C
    baseline as the entry point: the region the supervisor's "a" message lays out, the arrays
    copied in, the call with the pointers, trailing values and workspace in ABI order, the
    outputs copied back into the region and the three times in its slot."""
    from hb.execution import cudarunner, supervisor

    job = _scaled_add_box(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, "cupy", _stand_in_cupy())
    device = cudarunner._Device(job)
    x, y = np.arange(1000, dtype=np.float64), np.full(1000, 0.5)
    offsets = [0, supervisor._aligned(x.nbytes)]
    times_offset = supervisor._aligned(offsets[1] + y.nbytes)
    message = supervisor._arguments(
        times_offset + 8 * cudarunner.TIMES, offsets,
        [{"kind": "int64", "value": 1000}, {"kind": "double", "value": 2.0}], times_offset, 64,
        [x, y],
    )  # fmt: skip
    assert device.layout(json.loads(message[1:])) == device.region.address
    device.host["x"][...] = x
    device.host["y"][...] = y
    device.copy_in()
    assert device.workspace.nbytes == 64 and not device.workspace.any()
    device.call()
    assert np.array_equal(device.host["y"], y)  # the outputs reach the region only at "o"
    device.copy_out()
    assert np.array_equal(device.host["y"], y + 2.0 * x)
    assert np.array_equal(device.host["x"], x)
    slot = device.region.bytes[times_offset : times_offset + 8 * cudarunner.TIMES]
    assert (slot.view(np.int64) >= 0).all() and slot.view(np.int64)[1] > 0


STAND_IN_RUNNER = """
import sys
sys.path.insert(0, {root!r})
from tests.hb.test_cuda_delivery import _stand_in_cupy
sys.modules["cupy"] = _stand_in_cupy()
from hb.execution import cudarunner
sys.exit(cudarunner.main(sys.argv))
"""


def test_the_trusted_side_stages_times_and_reads_back_each_rep(tmp_path: Path) -> None:
    """hb.execution.cudarunner's supervisor driving its box side over the protocol ("a", "i", "g", "o",
    the pings), here outside a box with the stand-in for cupy: every rep's inputs staged into the
    runner's memory and its outputs read back (each rep on inputs of its own), the kernel time the
    supervisor's bracket, the conversion times the runner's, bounded by the supervisor's."""
    from hb.execution import cudarunner, sandbox, supervisor

    box_dir = tmp_path / "box"
    box_dir.mkdir()
    _scaled_add_box(box_dir)
    root = str(Path(__file__).resolve().parents[2])
    (tmp_path / "runner.py").write_text(STAND_IN_RUNNER.format(root=root))
    command = sandbox.BoxCommand(
        [sys.executable, str(tmp_path / "runner.py")], {"PATH": "/usr/bin:/bin"}, (), [],
        sandbox.Limits(), [],
    )  # fmt: skip
    jobdir = tmp_path / "job"
    jobdir.mkdir()
    inputs = []
    for index in range(3):
        x, y = np.random.default_rng(index).random((2, 4096))
        inputs.append((x, y))
        np.savez(jobdir / f"inputs_{index}.npz", x=x, y=y)
    job = {
        "box": command.to_json(), "box_dir": str(box_dir), "freeze": None,
        "staged": ["x", "y"], "outputs": ["y"], "workspace_bytes": 0, "timeout_s": 30,
        "reps": [
            {"inputs": f"inputs_{i}.npz", "convert_in_ns": 5,
             "trailing": [{"kind": "int64", "value": 4096}, {"kind": "double", "value": 3.0}]}
            for i in range(3)
        ],
    }  # fmt: skip
    (jobdir / supervisor.JOB_FILE).write_text(json.dumps(job))
    cudarunner.run_job(jobdir)
    report = json.loads((jobdir / supervisor.RESULT_FILE).read_text())
    assert report["ok"], report
    assert (jobdir / "box.stderr").read_text() == ""
    for index, (x, y) in enumerate(inputs):
        outputs = supervisor.read_outputs(jobdir, report["outputs"], index)
        assert list(outputs) == ["y"]
        assert np.array_equal(outputs["y"], y + 3.0 * x)
        rep = report["reps"][index]
        assert rep["kernel_ns"] >= supervisor.RESOLUTION_NS
        assert 0 < rep["device_kernel_ns"] <= rep["seen_ns"]
        assert rep["convert_in_ns"] >= 5 and rep["convert_out_ns"] >= 0


@pytest.mark.skipif(
    languages.importlib.util.find_spec("cupy") is not None, reason="cupy is installed here"
)
def test_without_cupy_in_the_box_the_run_fails_naming_it(judge: JudgeHandler) -> None:
    """The whole path of a cuda run up to the device: its box (the device nodes this host has,
    no RLIMIT_AS), its own supervisor process, the runner's first layout; the reason is the
    runner's."""
    from hb.execution import cudarunner, runner

    if languages.cuda_compiler() is None:
        pytest.skip(NO_NVCC)
    source = (SOLUTIONS / "scaled_add.cu").read_text()
    built = build.build(source, "cuda", [], judge.config.build_cache_dir, judge.build_limits)
    assert built.ok and built.library is not None, built.log
    trailing = [{"kind": "int64", "value": 8}, {"kind": "double", "value": 2.0}]
    reps = [runner.RepInput({"x": np.ones(8), "y": np.zeros(8)}, trailing) for _ in range(2)]
    run = cudarunner.run_kernel(
        built.library, "scaled_add_fp64", ["x", "y"], reps, 0, ["y"], 1,
        judge.config.sandbox_dir, judge.limits,
    )  # fmt: skip
    assert not run.ok
    assert run.reason == "the device runner could not start: No module named 'cupy'"


def test_a_toolkit_outside_usr_is_read_by_the_build_box(
    judge: JudgeHandler, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """$CUDA_HOME elsewhere (a toolkit in /opt): the build's box binds it read-only, as it does
    the directories of $LD_LIBRARY_PATH, and nvcc runs from there."""
    real = languages.wheel_nvcc() or languages.cuda_compiler()
    if real is None:
        pytest.skip(NO_NVCC)
    home = tmp_path / "toolkit"
    (home / "bin").mkdir(parents=True)
    (tmp_path / "lib").mkdir()
    nvcc = home / "bin" / "nvcc"
    nvcc.write_text(f'#!/bin/sh\nexec {real} "$@"\n')
    nvcc.chmod(0o755)
    monkeypatch.setenv("CUDA_HOME", str(home))
    monkeypatch.setenv("LD_LIBRARY_PATH", f"/usr/lib:{tmp_path / 'lib'}")
    assert languages.cuda_compiler() == str(nvcc)
    assert languages.cuda_read_only() == [str(tmp_path / "lib"), str(home)]
    source = (SOLUTIONS / "scaled_add.cu").read_text() + "// built by the toolkit in CUDA_HOME\n"
    built = build.build(source, "cuda", [], judge.config.build_cache_dir, judge.build_limits)
    assert built.ok, built.log
