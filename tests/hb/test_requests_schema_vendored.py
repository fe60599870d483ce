"""The agent tool's requests schema is requests_schema_text(), byte for byte (regenerate it with
`hb schema --write`)."""

from __future__ import annotations

from hb.cli import SCHEMA_PATH
from hb.requests_api import requests_schema_text


def test_vendored_schema_is_generated_byte_for_byte() -> None:
    assert SCHEMA_PATH.read_bytes() == requests_schema_text().encode(), (
        f"{SCHEMA_PATH} is stale: run `hb schema --write`"
    )
