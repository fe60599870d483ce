"""usis: the Unified Semantic Interface Specification, its corpora and the tools to query them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from usis.api import Corpus, load

__all__ = ["Corpus", "load"]


def __getattr__(name: str) -> Any:
    # Lazy, so that `import usis` stays cheap for the CLI's cold start.
    if name in __all__:
        from usis import api

        return getattr(api, name)
    raise AttributeError(f"module 'usis' has no attribute {name!r}")
