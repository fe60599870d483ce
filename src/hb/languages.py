"""The submission languages the judge builds (c, cpp, fortran, python, cuda), what each needs on
the host, and the catalog of libraries each may load through startup.load."""

from __future__ import annotations

import ctypes.util
import functools
import importlib.util
import os
import re
import shutil
import subprocess
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
    `library` (a shared library whose entry point the box runner calls through ctypes),
    `python` (the source itself, whose function the in-box Python runner calls with numpy arrays)
    or `cuda` (a shared library whose host entry point hb.execution.cudarunner calls with device pointers).
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
        # The device's architecture is added where the host names it (device_arch_flags).
        flags=("-O3", "-std=c++17", "-Xcompiler", "-fopenmp,-fPIC", "-shared"),
        needs="nvcc (the CUDA toolkit), cupy and a CUDA device",
        delivery="cuda",
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
    """The language's compiler on this host (nvcc: cuda_compiler), or None."""
    lang = language(language_name)
    if lang.device:
        return cuda_compiler()
    return shutil.which(lang.compiler)


def cuda_compiler() -> str | None:
    """nvcc: $CUDA_HOME/bin/nvcc or nvcc on PATH (nvcc_path), else the one NVIDIA's
    nvidia-cuda-nvcc wheel installs in this environment (`pip install 'hb[cuda]'`)."""
    return nvcc_path() or wheel_nvcc()


def nvcc_path() -> str | None:
    """CUDA's compiler driver: $CUDA_HOME/bin/nvcc, else nvcc on PATH; None when neither."""
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")):
        if home and (Path(home) / "bin" / "nvcc").exists():
            return str(Path(home) / "bin" / "nvcc")
    return shutil.which("nvcc")


def wheel_nvcc() -> str | None:
    """The nvcc of NVIDIA's nvidia-cuda-nvcc wheel in this environment (nvidia/cu13/bin/nvcc; the
    -cu12 wheels ship ptxas and NVVM but no nvcc), or None."""
    spec = importlib.util.find_spec("nvidia")
    roots = list(spec.submodule_search_locations or []) if spec is not None else []
    for root in roots:
        for candidate in sorted(Path(root).glob("cu*/bin/nvcc"), reverse=True):
            return str(candidate)
    return None


def cuda_root() -> Path | None:
    """The CUDA toolkit nvcc belongs to (its bin/ and include/ and lib/ beside each other): the
    box reads it where it lies outside /usr and the judge's environment."""
    nvcc = cuda_compiler()
    return Path(nvcc).resolve().parent.parent if nvcc is not None else None


def cuda_read_only() -> list[str]:
    """What a box that builds or runs cuda reads besides /usr: the toolkit where it lies
    elsewhere ($CUDA_HOME=/opt/...), and the directories of the judge's $LD_LIBRARY_PATH (where a
    driver's libraries may live). The box leaves out what the judge's environment binds already."""
    bound = ["/usr"]
    root = cuda_root()
    candidates = [str(root)] if root is not None else []
    candidates += [p for p in os.environ.get("LD_LIBRARY_PATH", "").split(":") if p]
    found: list[str] = []
    for path in candidates:
        resolved = Path(path).resolve()
        if resolved.is_dir() and not any(resolved.is_relative_to(b) for b in bound):
            found.append(str(resolved))
    return sorted(set(found))


@functools.cache
def device_arch_flags() -> tuple[str, ...]:
    """nvcc's -arch for this host's first CUDA device (`nvidia-smi --query-gpu=compute_cap`), so
    that a submission is compiled for the device that runs it; with no nvidia-smi, none (nvcc's
    default architecture with its PTX, which the driver compiles for a newer device at load)."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return ()
    try:
        answer = subprocess.run(
            [smi, "--query-gpu=compute_cap", "--format=csv,noheader"],
            capture_output=True, text=True, check=False, timeout=30,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return ()
    first = answer.stdout.strip().splitlines()[:1]
    if answer.returncode != 0 or not first or not re.fullmatch(r"\d+\.\d+", first[0].strip()):
        return ()
    return (f"-arch=sm_{first[0].strip().replace('.', '')}",)


def compile_flags(lang: Language) -> tuple[str, ...]:
    """The flags a submission in `lang` is built with: the language's, and for a device language
    the host device's architecture."""
    return (*lang.flags, *device_arch_flags()) if lang.device else lang.flags


def compiler_available(language_name: str) -> bool:
    return compiler_path(language_name) is not None


@functools.cache
def _python_modules_missing() -> tuple[str, ...]:
    return tuple(m for m in ("numpy", "ml_dtypes") if importlib.util.find_spec(m) is None)


def refusal(name: str) -> str | None:
    """Why this host cannot grade a submission in `name`, naming what would be needed, or None:
    an unknown language, a compiler that is not installed, and for cuda no cupy or no device."""
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
        where = " (a CUDA toolkit, or pip install 'hb[cuda]')" if lang.device else ""
        return (
            f"language {name!r} needs {lang.needs}; {lang.compiler} is not installed on this "
            f"host{where}"
        )
    if lang.device:
        missing_device = device_refusal()
        if missing_device is not None:
            return f"language {name!r} needs {lang.needs}; {missing_device}"
    return None


@functools.cache
def device_refusal() -> str | None:
    """Why a cuda grade cannot run here besides nvcc, or None: cupy (relayout's device
    conversion kernels and the in-box runner's device arrays), a device node, the CUDA driver
    (libcuda), and a driver whose CUDA major version is at least nvcc's (the runtime nvcc links
    into a submission needs it). Nothing here starts CUDA in the judge's own process."""
    if importlib.util.find_spec("cupy") is None:
        return "cupy (the device conversions' kernels) is not installed (pip install 'hb[gpu]')"
    nodes = device_nodes()
    if not nodes:
        return "there is no CUDA device on this host (no /dev/nvidia*)"
    if "/dev/nvidia-uvm" not in nodes:
        return (
            "/dev/nvidia-uvm is missing (the driver makes it when a CUDA program first runs on "
            "the host, or `nvidia-modprobe -u -c=0`), and the box cannot make it"
        )
    if not _installed("cuda"):
        return "the CUDA driver (libcuda) is not installed on this host"
    driver, toolkit = driver_cuda_version(), nvcc_cuda_version()
    if driver is not None and toolkit is not None and driver[0] < toolkit[0]:
        return (
            f"the CUDA driver runs CUDA {driver[0]}.{driver[1]} at most, and nvcc is CUDA "
            f"{toolkit[0]}.{toolkit[1]}: what it builds would not start (a newer driver, or an "
            f"nvcc of CUDA {driver[0]} first on PATH or under $CUDA_HOME)"
        )
    return None


def driver_cuda_version() -> tuple[int, int] | None:
    """The newest CUDA the installed driver runs (cuDriverGetVersion, which needs no cuInit and
    makes no context), or None without a loadable libcuda."""
    found = ctypes.util.find_library("cuda")
    if found is None:
        return None
    try:
        version = ctypes.c_int(0)
        if ctypes.CDLL(found).cuDriverGetVersion(ctypes.byref(version)) != 0:
            return None
    except (OSError, AttributeError):
        return None
    return version.value // 1000, version.value % 1000 // 10


def nvcc_cuda_version() -> tuple[int, int] | None:
    """The CUDA release of the judge's nvcc (`nvcc --version`: "release 13.0"), or None."""
    nvcc = cuda_compiler()
    if nvcc is None:
        return None
    try:
        answer = subprocess.run(
            [nvcc, "--version"], capture_output=True, text=True, check=False, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = re.search(r"release (\d+)\.(\d+)", answer.stdout)
    return (int(found.group(1)), int(found.group(2))) if found else None


def device_nodes() -> list[str]:
    """The NVIDIA device nodes a cuda grade's box is given (and only a cuda grade's): what CUDA
    needs to compute, the devices, nvidiactl, the unified-memory node and the MIG capability
    nodes (not the profilers' nvidia-uvm-tools, nor the display's nvidia-modeset); [] without a
    device."""
    root = Path("/dev")
    devices = sorted(str(p) for p in root.glob("nvidia[0-9]*"))
    if not devices:
        return []
    extra = [root / "nvidiactl", root / "nvidia-uvm"]
    capabilities = sorted((root / "nvidia-caps").glob("*"))
    return devices + [str(p) for p in [*extra, *capabilities] if p.exists()]
