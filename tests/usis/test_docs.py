"""docs/usis.md stays true: it lists every shape, scope and command, and its grammar examples parse."""

from __future__ import annotations

import re
from pathlib import Path

from usis.cli import parser
from usis.formal.grammar import FUNCTIONS, SCOPES, parse_offset, parse_selector
from usis.formal.shapes import load_catalog

DOCS = (Path(__file__).resolve().parents[2] / "docs" / "usis.md").read_text()


def test_every_shape_is_listed_with_its_slots() -> None:
    for shape_id, shape in load_catalog().shapes.items():
        row = next(line for line in DOCS.splitlines() if line.startswith(f"| `{shape_id}` |"))
        for slot in shape.slots:
            assert slot.name in row, (shape_id, slot.name)


def test_every_scope_and_function_is_documented() -> None:
    for scope, meaning in SCOPES.items():
        assert f"| `{scope}` | {meaning} |" in DOCS
    for function in FUNCTIONS:
        assert f"{function}(" in DOCS


def test_grammar_examples_parse() -> None:
    section = DOCS.split("## The reference grammar", 1)[1].split("### Aggregation scopes", 1)[0]
    examples_text = section.split("Examples:", 1)[1].split("\n\n", 1)[0]
    examples = re.findall(r"`([^`]+)`", examples_text)
    assert len(examples) == 5
    for example in examples:
        if "==" in example or " in " in example or example.startswith("is_neighbor"):
            parse_selector(example)
        else:
            parse_offset(example)


def test_every_command_is_documented() -> None:
    commands = parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    for name in commands:
        assert f"| `usis {name}" in DOCS, name


def test_the_opening_example_runs_on_the_shipped_corpora() -> None:
    import pytest

    from usis.api import shipped_models

    if not {"mpi", "shmem"} <= set(shipped_models()):
        pytest.skip(f"the example needs the mpi and shmem corpora; shipped: {shipped_models()}")
    code = DOCS.split("```python\n", 1)[1].split("```", 1)[0]
    namespace: dict[str, object] = {}
    exec(compile(code, "docs/usis.md", "exec"), namespace)
    entry = namespace["entry"]
    assert entry.execution.blocking is True  # type: ignore[attr-defined]
    assert "shmem:shmem_{T}_put" in namespace["corpus"].families()  # type: ignore[attr-defined]
