"""A validation finding and the path notation findings use (`parameters[2].length`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

SCHEMA_RULE = "schema"


@dataclass(frozen=True, order=True)
class Finding:
    """One problem with one entry: `key: path: message (rule id)` when printed."""

    key: str
    path: str
    message: str
    rule: str

    def __str__(self) -> str:
        return f"{self.key}: {self.path or '(entry)'}: {self.message} ({self.rule})"


def dotted(parts: Iterable[str | int]) -> str:
    """('parameters', 2, 'length') -> 'parameters[2].length'."""
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text
