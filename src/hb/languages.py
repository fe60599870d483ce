"""The submission languages the judge builds (C today; the table leaves room for cpp, fortran and
cuda) and the catalog of libraries each may load through startup.load."""

from __future__ import annotations

import ctypes.util
import functools
import shutil
from dataclasses import dataclass, field


@dataclass(frozen=True)
class CatalogLibrary:
    """A library a submission may ask for: the system library that must exist and its link flags."""

    name: str
    soname: str
    link_flags: tuple[str, ...]
    summary: str


@dataclass(frozen=True)
class Language:
    """How the judge builds one language into a shared library."""

    name: str
    compiler: str
    suffix: str
    flags: tuple[str, ...]
    baseline_flags: tuple[str, ...]
    catalog: dict[str, CatalogLibrary] = field(default_factory=dict)


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
        suffix=".c",
        flags=("-O3", "-fopenmp", "-march=native", "-std=gnu17", "-fPIC", "-shared"),
        baseline_flags=("-O2", "-fopenmp", "-std=gnu17", "-fPIC", "-shared"),
        catalog={"openblas": _OPENBLAS},
    ),
}

# Named here so that a submission in one of them is refused with what exists, not a KeyError.
PLANNED_LANGUAGES = ("cpp", "fortran", "cuda")


def language(name: str) -> Language:
    """The language `name`; ValueError says which languages the judge builds."""
    if name in LANGUAGES:
        return LANGUAGES[name]
    planned = " (planned, not built yet)" if name in PLANNED_LANGUAGES else ""
    raise ValueError(
        f"language {name!r}{planned} is not built by this judge; use one of {sorted(LANGUAGES)}"
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


def compiler_available(language_name: str) -> bool:
    return shutil.which(language(language_name).compiler) is not None
