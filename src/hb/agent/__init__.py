"""hb for agents: the MCP tool server (mcp_server), its HTTP client of a judge (client), the
scripted reference agent (scripted), problem lines and experiments (experiments), the prompt's
templates (templates/) and the vendored requests schema (requests_schema.json)."""

from pathlib import Path

# The request's JSON Schema with every $ref inlined, as the tools ship it (`hb schema --write`
# writes it from requests_api.requests_schema_text(); a test checks it byte for byte).
REQUESTS_SCHEMA_PATH = Path(__file__).resolve().parent / "requests_schema.json"
