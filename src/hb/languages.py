"""The submission languages the judge builds (c, cpp, fortran, python, cuda), what each needs on
the host, and the catalog of libraries each may load through startup.load."""

from __future__ import annotations

import ctypes.util
import functools
import importlib.util
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class CatalogLibrary:
    """A library a submission may ask for: the system library that must exist and its link flags."""

    name: str
    soname: str
    link_flags: tuple[str, ...]
    summary: str


@dataclass(frozen=True)
class Language:
    """How the judge builds one language: the compiler and its flags, the file the source is
    written to, whether the C prelude (hb_types.h) is included, and how the build is delivered:
    `library` (a shared library whose entry point the box runner calls through ctypes) or
    `python` (the source itself, whose function the in-box Python runner calls with numpy arrays).
    `needs` says what to install when the compiler is missing; `mpi` whether the language builds
    with the generated MPI driver; `device` whether a grade needs a CUDA device."""

    name: str
    compiler: str
    source_name: str
    flags: tuple[str, ...]
    needs: str
    delivery: str = "library"
    prelude: bool = True
    mpi: bool = False
    device: bool = False
    catalog: dict[str, CatalogLibrary] = field(default_factory=dict)

    @property
    def suffix(self) -> str:
        return self.source_name[self.source_name.rindex(".") :]


_OPENBLAS = CatalogLibrary(
    name="openblas",
    soname="openblas",
    link_flags=("-lopenblas",),
    summary="OpenBLAS: CBLAS and LAPACK (#include <cblas.h>)",
)

# The baseline (the catalog's solution.c) is always C, built with these flags.
C_BASELINE_FLAGS = ("-O2", "-fopenmp", "-std=gnu17", "-fPIC", "-shared")

LANGUAGES: dict[str, Language] = {
    "c": Language(
        name="c",
        compiler="gcc",
        source_name="submission.c",
        flags=("-O3", "-fopenmp", "-march=native", "-std=gnu17", "-fPIC", "-shared"),
        needs="gcc (Debian package gcc)",
        mpi=True,
        catalog={"openblas": _OPENBLAS},
    ),
    "cpp": Language(
        name="cpp",
        compiler="g++",
        source_name="submission.cpp",
        flags=("-O3", "-fopenmp", "-march=native", "-std=gnu++17", "-fPIC", "-shared"),
        needs="g++ (Debian package g++)",
        mpi=True,
        catalog={"openblas": _OPENBLAS},
    ),
    "fortran": Language(
        name="fortran",
        compiler="gfortran",
        source_name="submission.f90",
        flags=("-O3", "-fopenmp", "-march=native", "-ffree-line-length-none", "-fPIC", "-shared"),
        needs="gfortran (Debian package gfortran; scripts/sysdeps.sh installs it)",
        prelude=False,
        mpi=True,
        catalog={"openblas": _OPENBLAS},
    ),
    "python": Language(
        name="python",
        compiler=sys.executable,
        source_name="submission.py",
        # The build is a syntax check in the box; the source itself is what runs.
        flags=("-I", "-m", "py_compile"),
        needs="the judge's own Python interpreter with numpy and ml_dtypes",
        delivery="python",
        prelude=False,
    ),
    "cuda": Language(
        name="cuda",
        compiler="nvcc",
        source_name="submission.cu",
        flags=("-O3", "-Xcompiler", "-fopenmp,-fPIC", "-shared"),
        needs="nvcc (the CUDA toolkit), cupy and a CUDA device",
        device=True,
    ),
}


def language(name: str) -> Language:
    """The language `name`; ValueError says which languages the judge builds."""
    if name in LANGUAGES:
        return LANGUAGES[name]
    raise ValueError(
        f"language {name!r} is not built by this judge; use one of {sorted(LANGUAGES)}"
    )


@functools.cache
def _installed(soname: str) -> bool:
    return ctypes.util.find_library(soname) is not None


def library_offered(language_name: str, library: str) -> bool:
    """Whether startup.load may name `library` for a submission in `language_name`: it is in the
    language's catalog and installed on this host."""
    lang = LANGUAGES.get(language_name)
    if lang is None or library not in lang.catalog:
        return False
    return _installed(lang.catalog[library].soname)


def offered_libraries(language_name: str) -> list[str]:
    """Every catalog library this host offers for the language."""
    lang = LANGUAGES.get(language_name)
    if lang is None:
        return []
    return sorted(name for name in lang.catalog if library_offered(language_name, name))


def compiler_path(language_name: str) -> str | None:
    """The language's compiler on this host (nvcc also under $CUDA_HOME), or None."""
    lang = language(language_name)
    if lang.device:
        from hb.distributed.driver import nvcc_path

        return nvcc_path()
    return shutil.which(lang.compiler)


def compiler_available(language_name: str) -> bool:
    return compiler_path(language_name) is not None


@functools.cache
def _python_modules_missing() -> tuple[str, ...]:
    return tuple(m for m in ("numpy", "ml_dtypes") if importlib.util.find_spec(m) is None)


def refusal(name: str) -> str | None:
    """Why this host cannot grade a submission in `name`, naming what would be needed, or None:
    an unknown language, a compiler that is not installed, and for cuda no CUDA device."""
    try:
        lang = language(name)
    except ValueError as error:
        return str(error)
    if lang.delivery == "python":
        missing = _python_modules_missing()
        if missing:
            return f"language {name!r} needs {lang.needs}; this host lacks {', '.join(missing)}"
        return None
    if not compiler_available(name):
        return (
            f"language {name!r} needs {lang.needs}; {lang.compiler} is not installed on this host"
        )
    if lang.device:
        return f"language {name!r} needs {lang.needs}; {_device_refusal()}"
    return None


@functools.cache
def _device_refusal() -> str:
    """Why a cuda grade cannot run here: what is missing of nvcc's toolchain, cupy (relayout's
    device conversion kernels) and a CUDA device, or, with all of them, that this judge has no
    device runner yet (the kernel launched on device arrays, conversions timed with CUDA events)."""
    from hb.distributed.driver import device_toolchain_refusal

    toolchain = device_toolchain_refusal()
    if toolchain is not None:
        return toolchain
    if importlib.util.find_spec("cupy") is None:
        return "cupy (the device conversions' kernels) is not installed"
    if not any(Path("/dev").glob("nvidia[0-9]*")):
        return "there is no CUDA device on this host (no /dev/nvidia*)"
    return "this judge does not run device grades of a cuda submission yet"
