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


def module_imports(package: str) -> dict[str, dict[str, int]]:
    """Each module of `package` and the modules of the same package it imports when it runs
    (anywhere in it, a function's own imports included; not under `if TYPE_CHECKING`), with the
    line of the import."""
    modules: dict[str, Path] = {}
    for path in (SRC / package).rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    graph: dict[str, dict[str, int]] = {name: {} for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        typing_only = {
            id(inner)
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
            for inner in ast.walk(node)
        }
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    targets.append(full if full in modules else node.module)
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target not in (name, package):
                    graph[name].setdefault(target, node.lineno)
    return graph


@pytest.mark.parametrize("package", ["hb", "usis", "relayout"])
def test_no_two_modules_import_each_other(package: str) -> None:
    graph = module_imports(package)
    pairs = sorted(
        f"{a} (line {graph[a][b]}) <-> {b} (line {graph[b][a]})"
        for a in graph
        for b in graph[a]
        if a < b and a in graph.get(b, {})
    )
    assert not pairs, pairs


@pytest.mark.parametrize("package", ["hb", "usis", "relayout"])
def test_no_import_cycle_at_any_length(package: str) -> None:
    """No module reaches itself through the modules it imports (Tarjan's strongly connected
    components of the import graph: each must be a single module)."""
    graph = module_imports(package)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in graph.get(module, {}):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    assert not cycles, cycles
