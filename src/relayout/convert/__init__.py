"""relayout's conversion kernels: exact casts, digit layouts and regrouping, on the host and a GPU.

`compile_program(requests, arrays, target=...)` (relayout.convert.compile) returns a program with
`convert_in`, `convert_out` and `timings`; `Group` is the same machinery seen from a zip or unzip;
`reference` holds the numpy engine the kernels are tested against.
"""

from relayout.convert.build import BuildError, Toolchain, build_library, cache_directory
from relayout.convert.casts import aligned_empty, cast_in, copy_bytes, widen_out
from relayout.convert.compile import build_host_library, compile_program
from relayout.convert.group import Group
from relayout.convert.program import (
    ConversionError,
    ConversionProgram,
    ConversionTimings,
    HostProgram,
)

__all__ = [
    "BuildError",
    "ConversionError",
    "ConversionProgram",
    "ConversionTimings",
    "Group",
    "HostProgram",
    "Toolchain",
    "aligned_empty",
    "build_host_library",
    "build_library",
    "cache_directory",
    "cast_in",
    "compile_program",
    "copy_bytes",
    "widen_out",
]
