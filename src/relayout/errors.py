"""The one error a request can earn: RequestError, a ValueError whose message names the entry."""

from __future__ import annotations

__all__ = ["RequestError", "entry_label"]


class RequestError(ValueError):
    """A request that is malformed or that the arrays cannot honour.

    The message starts with the entry it is about, e.g. `operations[3] (distribute): ...`, or
    `startup.grid[1]: ...`, and says what would be accepted.
    """

    def __init__(self, message: str, *, entry: str | None = None) -> None:
        self.entry = entry
        self.reason = message
        super().__init__(f"{entry}: {message}" if entry else message)


def entry_label(index: int, action: str | None) -> str:
    """`operations[3] (distribute)`: how every message names an operation."""
    return f"operations[{index}] ({action})" if action else f"operations[{index}]"
