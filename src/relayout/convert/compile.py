"""compile_program: a request lowered to its NodeLayout and built into a conversion program for
a target, the host's C with OpenMP (relayout.convert.program) or a GPU through cupy
(relayout.convert.device); build_host_library: the host library alone, built and not loaded."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from relayout.algebra.lower import lower_single_node
from relayout.convert.build import Toolchain, build_library
from relayout.convert.codegen import program_source
from relayout.convert.device import DeviceProgram
from relayout.convert.program import SANITIZE_FLAGS, ConversionProgram, HostProgram
from relayout.models import Requests


def compile_program(
    requests: Requests | Any,
    arrays: Mapping[str, Any],
    *,
    target: str = "host",
    cc: str | None = None,
    cflags: str | list[str] | None = None,
    native: bool | None = None,
    sanitize: bool = False,
    sizes: Mapping[str, int] | None = None,
    cache_dir: Path | None = None,
) -> ConversionProgram:
    """The conversion program of `requests` over `arrays` (ArraySpec texts or objects).

    target "host" builds C with OpenMP (compiler and flags: cc / cflags / native, else RELAYOUT_CC /
    RELAYOUT_CFLAGS, else gcc -O3 -fopenmp -march=native); "device" builds CUDA through
    cupy.RawModule. `sanitize` adds AddressSanitizer and UndefinedBehaviorSanitizer (host only; the
    process must preload the sanitizer runtime). `sizes` binds size symbols for the request's checks.
    `cache_dir` is where the host libraries are built or found (else $RELAYOUT_CACHE_DIR or
    ~/.cache/relayout).
    """
    requests = Requests.validate(requests)
    layout = lower_single_node(requests, arrays, sizes)
    program: ConversionProgram
    if target == "host":
        extra = SANITIZE_FLAGS if sanitize else ()
        toolchain = Toolchain.from_environment(cc, cflags, native, extra, cache_dir)
        program = HostProgram(requests, layout, toolchain)
    elif target == "device":
        program = DeviceProgram(requests, layout)
    else:
        raise ValueError(f"target {target!r}: expected 'host' or 'device'")
    if sizes:
        # Lowered at these sizes, the layout's extents may be constants of them: run at other
        # sizes, the program lowers again there (a block by 4 compiled at N=8 and run at N=10
        # must not drop A[8] and A[9]).
        def again(other: Mapping[str, int]) -> ConversionProgram:
            return compile_program(
                requests, arrays, target=target, cc=cc, cflags=cflags, native=native,
                sanitize=sanitize, sizes=other, cache_dir=cache_dir,
            )  # fmt: skip

        program.lowered_at = {name: int(value) for name, value in sizes.items()}
        program.lower_again = again
    return program


def build_host_library(
    requests: Requests | Any,
    arrays: Mapping[str, Any],
    *,
    sizes: Mapping[str, int] | None = None,
    cache_dir: Path | None = None,
) -> Path:
    """The host library of `requests`' conversion program over `arrays`, built (or found) in the
    cache and returned as a path, loaded by nobody: a caller that only prepares the program (a
    judge's service, for the process that converts) never runs generated code itself. The same
    toolchain and cache as compile_program's find it there."""
    requests = Requests.validate(requests)
    layout = lower_single_node(requests, arrays, sizes)
    source, _, _ = program_source(layout, "host")
    return build_library(source, Toolchain.from_environment(cache_dir=cache_dir))
