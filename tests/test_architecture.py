"""The import direction of ARCHITECTURE.md: relayout <- hb -> usis, and nothing else."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
FORBIDDEN = {
    "relayout": {"hb", "usis"},
    "usis": {"hb", "relayout"},
    "hb": set(),
}


def imported_roots(path: Path) -> set[str]:
    """Top-level package names a module imports, absolute imports only."""
    tree = ast.parse(path.read_text(), filename=str(path))
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_import_direction(package: str) -> None:
    offenders = []
    for path in sorted((SRC / package).rglob("*.py")):
        bad = imported_roots(path) & FORBIDDEN[package]
        if bad:
            offenders.append(f"{path.relative_to(SRC)} imports {sorted(bad)}")
    assert not offenders, "\n".join(offenders)


def test_checker_sees_a_violation(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("import hb.service\nfrom usis import load\nfrom . import local\n")
    assert imported_roots(module) == {"hb", "usis"}


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_every_module_says_what_it_is_for(package: str) -> None:
    missing = []
    for path in sorted((SRC / package).rglob("*.py")):
        tree = ast.parse(path.read_text())
        if path.stat().st_size and not ast.get_docstring(tree):
            missing.append(str(path.relative_to(SRC)))
    assert not missing, f"modules without a docstring: {missing}"
