"""The build cache: content-addressed keys, one build per key, atomic publication, configurable
compiler and flags; and the AddressSanitizer / UndefinedBehaviorSanitizer builds report nothing."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from relayout.convert import compile_program
from relayout.convert.build import (
    BuildError,
    Toolchain,
    build_library,
    cache_directory,
    library_key,
    load_library,
)

SOURCE = "#include <stdint.h>\nint64_t relayout_answer(void) { return 42; }\n"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RELAYOUT_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_key_covers_source_compiler_and_flags() -> None:
    base = Toolchain.from_environment()
    assert library_key(SOURCE, base) == library_key(SOURCE, Toolchain.from_environment())
    assert library_key(SOURCE + " ", base) != library_key(SOURCE, base)
    assert library_key(
        SOURCE, Toolchain.from_environment(cflags="-O1 -fPIC -shared")
    ) != library_key(SOURCE, base)
    assert library_key(SOURCE, Toolchain.from_environment(native=False)) != library_key(
        SOURCE, base
    )


def test_built_once_then_found(private_cache: Path) -> None:
    first = build_library(SOURCE)
    assert first.parent.parent == private_cache and first.exists()
    stamp = first.stat().st_mtime_ns
    assert build_library(SOURCE) == first and first.stat().st_mtime_ns == stamp
    assert first.with_suffix(".c").read_text() == SOURCE
    leftovers = [p for p in first.parent.iterdir() if p.name.startswith(".")]
    assert leftovers == []
    assert load_library(SOURCE).relayout_answer() == 42


def _build_in_child(cache: str) -> str:
    os.environ["RELAYOUT_CACHE_DIR"] = cache
    return str(build_library(SOURCE + "/* concurrent */\n"))


def test_concurrent_builders_publish_one_whole_library(private_cache: Path) -> None:
    with ProcessPoolExecutor(max_workers=2) as pool:
        paths = list(pool.map(_build_in_child, [str(private_cache)] * 2))
    assert paths[0] == paths[1]
    assert Path(paths[0]).stat().st_size > 0


def test_environment_chooses_compiler_and_flags(
    monkeypatch: pytest.MonkeyPatch, private_cache: Path
) -> None:
    monkeypatch.setenv("RELAYOUT_CC", "cc")
    monkeypatch.setenv("RELAYOUT_CFLAGS", "-O2 -fPIC -shared")
    monkeypatch.setenv("RELAYOUT_NATIVE", "0")
    chain = Toolchain.from_environment()
    assert (chain.cc, chain.flags, chain.native) == ("cc", ("-O2", "-fPIC", "-shared"), False)
    assert build_library(SOURCE, chain).exists()
    assert cache_directory() == private_cache


def test_a_compile_error_is_reported(private_cache: Path) -> None:
    with pytest.raises(BuildError, match="did not compile"):
        build_library("this is not C")
    with pytest.raises(BuildError, match="not found on PATH"):
        build_library(SOURCE, Toolchain.from_environment(cc="no-such-compiler-relayout"))


def sanitizer_runtime() -> str | None:
    try:
        path = subprocess.run(
            ["gcc", "-print-file-name=libasan.so"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return path if os.path.isabs(path) and os.path.exists(path) else None


def run_sanitized(
    script: str, tmp_path: Path, **environment: str
) -> subprocess.CompletedProcess[str]:
    """`script` in a child Python with the sanitizer runtime preloaded, a private build cache and
    this checkout importable, `environment` added; the test is skipped where gcc has no runtime."""
    runtime = sanitizer_runtime()
    if runtime is None:
        pytest.skip("gcc has no AddressSanitizer runtime (libasan.so) on this machine")
    return subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={
            **os.environ,
            "LD_PRELOAD": runtime,
            "RELAYOUT_CACHE_DIR": str(tmp_path / "cache"),
            "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)]),
            **environment,
        },
        cwd=ROOT,
        timeout=600,
        check=False,
    )


SANITIZED_RUN = textwrap.dedent(
    """
    from tests.relayout.convert_support.programs import compare_with_reference
    cases = [
        ([{"action": "permute", "array": "A", "order": ["i1", "i0"]}], {"A": "fp64[N,M]:inout"}, {"N": 13, "M": 11}),
        ([{"action": "cast", "array": "A", "to": "fp16"},
          {"action": "block", "array": "A", "digit": "i1", "factor": 4, "into": ["b", "f"]},
          {"action": "pad", "array": "A", "digit": "f", "amount": 1},
          {"action": "permute", "array": "A", "order": ["f", "i0", "b"]}], {"A": "fp64[N,M]:inout"}, {"N": 5, "M": 7}),
        ([{"action": "split", "array": "A", "digit": "i0", "parts": 3, "into": ["b", "o"]},
          {"action": "shuffle", "array": "A", "digits": ["o"], "f": ["2 - o"], "f_inv": ["2 - o"]}],
         {"A": "fp64[N]:inout"}, {"N": 8}),
        ([{"action": "cast", "array": "u", "to": "bf16"}, {"action": "zip", "arrays": ["u", "v"], "into": "uv"}],
         {"u": "fp64[N]:inout", "v": "fp64[N]:inout"}, {"N": 6}),
        ([{"action": "unzip", "array": "z", "into": ["re", "im"]}, {"action": "cast", "array": "re", "to": "fp8_e4m3"}],
         {"z": "complex128[N]:inout"}, {"N": 5}),
    ]
    for operations, arrays, sizes in cases:
        compare_with_reference(operations, arrays, sizes, seed=3, sanitize=True)
    print("SANITIZED-OK")
    """
)


def run_sanitizer_clean(script: str, tmp_path: Path) -> str:
    """Run `script` under ASan and UBSan, halting on the first report; its stdout, once the run
    ended cleanly, printed SANITIZED-OK and no sanitizer spoke."""
    result = run_sanitized(
        script,
        tmp_path,
        ASAN_OPTIONS="detect_leaks=0:abort_on_error=1",
        UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1",
        OMP_NUM_THREADS="2",
    )
    report = result.stdout + result.stderr
    assert result.returncode == 0, report[-4000:]
    assert "SANITIZED-OK" in result.stdout
    for alarm in ("AddressSanitizer", "runtime error", "LeakSanitizer"):
        assert alarm not in report, report[-4000:]
    return result.stdout


def test_sanitized_kernels_report_nothing(tmp_path: Path) -> None:
    run_sanitizer_clean(SANITIZED_RUN, tmp_path)


PLANTED_BUG = textwrap.dedent(
    """
    import ctypes, numpy as np
    from relayout.convert.build import Toolchain, load_library
    from relayout.convert.program import SANITIZE_FLAGS
    source = "#include <stdint.h>\\nint64_t relayout_past_end(const double *a, int64_t n) { return (int64_t)a[n]; }\\n"
    library = load_library(source, Toolchain.from_environment(extra=SANITIZE_FLAGS))
    values = np.ones(5)
    library.relayout_past_end(ctypes.c_void_p(values.ctypes.data), ctypes.c_int64(5))
    print("NOT-CAUGHT")
    """
)


def test_the_sanitized_build_catches_a_planted_overrun(tmp_path: Path) -> None:
    result = run_sanitized(PLANTED_BUG, tmp_path, ASAN_OPTIONS="detect_leaks=0")
    assert "NOT-CAUGHT" not in result.stdout
    assert "AddressSanitizer" in result.stderr and "heap-buffer-overflow" in result.stderr


def test_a_program_builds_into_the_cache_it_is_given_without_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from relayout import Requests

    elsewhere = tmp_path / "environment-cache"
    monkeypatch.setenv("RELAYOUT_CACHE_DIR", str(elsewhere))
    given = tmp_path / "given"
    before = dict(os.environ)
    request = Requests.validate(
        {"operations": [{"action": "permute", "array": "A", "order": ["i1", "i0"]}]}
    )
    program = compile_program(
        request, {"A": "fp64[M,N]"}, target="host", cache_dir=given, sizes={"M": 4, "N": 6}
    )
    assert dict(os.environ) == before
    assert list(given.rglob("*.so")) and not elsewhere.exists()
    # Lowered again at other sizes, it builds (or finds) its library in the same cache.
    import numpy as np

    converted = program.convert_in({"A": np.arange(15.0).reshape(3, 5)}, {"M": 3, "N": 5})
    assert converted["A"].shape == (5, 3) and not elsewhere.exists()
