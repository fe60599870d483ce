"""usis's build stages stay apart: read from the source's import statements, no stage imports
another stage, no per-model module imports a sibling model's module, shared modules import no
stage, no module imports another in a cycle, and every module says what it is for."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

from usis.build import MODELS

SOURCE_ROOT = Path(__file__).resolve().parents[2] / "src"
# The build's stages and the package (or module) each lives in; build.STAGES gives their order.
STAGE_HOMES = {
    "extract": "usis.extract",
    "classify": "usis.classify",
    "assign": "usis.formal.assign",
    "assemble": "usis.assemble",
    "validate": "usis.validate",
    "provenance": "usis.provenance",
    "split": "usis.split",
}
# What runs or serves the stages (usis.history runs old wheels through the extracts), and may
# therefore import any of them.
ORCHESTRATORS = {"usis", "usis.build", "usis.cli", "usis.api", "usis.site", "usis.history"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SOURCE_ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted((SOURCE_ROOT / "usis").rglob("*.py"))}


def resolve(imported: str) -> str | None:
    """The usis module an import names: `from usis.x import y` is usis.x.y when that is a module,
    else usis.x; None for anything outside usis."""
    if imported != "usis" and not imported.startswith("usis."):
        return None
    known = modules()
    while imported not in known:
        imported = imported.rpartition(".")[0]
    return imported


def imports_of(module: str) -> Iterator[tuple[str, int]]:
    """(imported usis module, line) for every import statement of `module`, nested ones too."""
    path = modules()[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            names = [f"{base}.{alias.name}" for alias in node.names]
        for name in names:
            target = resolve(name)
            if target is not None and target != module:
                yield target, node.lineno


def stage_of(module: str) -> str | None:
    for stage, home in STAGE_HOMES.items():
        if module == home or module.startswith(home + "."):
            return stage
    return None


def model_module(module: str) -> str | None:
    """The model of a per-model module of a stage (`usis.classify.nccl` -> nccl)."""
    stage = stage_of(module)
    if stage is None:
        return None
    last = module.rpartition(".")[2]
    return last if last in MODELS else None


def test_the_scan_sees_every_stage_and_the_shared_modules() -> None:
    found = set(modules())
    assert set(STAGE_HOMES.values()) <= found
    assert {f"usis.{stage}.{model}" for stage in ("extract", "classify") for model in MODELS} <= (
        found
    )
    for shared in ("usis.cheader.declarations", "usis.entry_builder", "usis.curated"):
        assert shared in found, shared
    assert "usis.cheader.declarations" in {target for target, _ in imports_of("usis.extract.cuda")}


@pytest.mark.parametrize("module", sorted(m for m in modules() if stage_of(m)))
def test_a_stage_imports_only_itself_and_shared_modules(module: str) -> None:
    stage = stage_of(module)
    crossing = [
        f"{modules()[module].name}:{line} imports {target} ({stage_of(target) or 'orchestration'})"
        for target, line in imports_of(module)
        if (stage_of(target) not in (None, stage)) or target in ORCHESTRATORS
    ]
    assert not crossing, f"{module} (stage {stage}) reaches outside its stage: {crossing}"


@pytest.mark.parametrize("module", sorted(m for m in modules() if model_module(m)))
def test_a_model_module_imports_no_sibling_module_of_its_stage(module: str) -> None:
    home = STAGE_HOMES[str(stage_of(module))]
    siblings = [
        f"line {line}: {target}"
        for target, line in imports_of(module)
        if target.startswith(home + ".") or target == home
    ]
    assert not siblings, (
        f"{module} imports modules of its own stage {siblings}; shared code belongs in "
        "usis.cheader, usis.entry_builder or usis.curated"
    )


@pytest.mark.parametrize(
    "module", sorted(m for m in modules() if not stage_of(m) and m not in ORCHESTRATORS)
)
def test_a_shared_module_imports_no_stage(module: str) -> None:
    reaching = [
        f"line {line}: {target}"
        for target, line in imports_of(module)
        if stage_of(target) or target in ORCHESTRATORS
    ]
    assert not reaching, f"shared module {module} imports stages or their drivers: {reaching}"


def test_no_import_cycle() -> None:
    graph = {module: sorted({target for target, _ in imports_of(module)}) for module in modules()}
    # Tarjan's strongly connected components: a component of two or more modules is a cycle.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in graph[module]:
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in graph:
        if module not in index:
            visit(module)
    assert not cycles, f"modules that import each other: {cycles}"


@pytest.mark.parametrize("module", sorted(modules()))
def test_every_module_says_what_it_is_for(module: str) -> None:
    docstring = ast.get_docstring(ast.parse(modules()[module].read_text(encoding="utf-8")))
    assert docstring and len(docstring.split()) >= 4, f"{module} has no opening docstring"
