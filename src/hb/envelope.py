"""The envelope a client posts: Submission (kernel, language, source, requests, preset), the bodies
of /requests/check and /profile (any field they do not declare is refused), and the Caller its
headers name."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    ValidationError,
    field_validator,
    model_serializer,
)

from hb.requests_api import Requests, RequestsField, is_empty

# What a PAPI event name may hold: a preset, or a native event with its qualifiers (pmu::EVENT:u=1).
PAPI_EVENT_NAME = re.compile(r"[A-Za-z0-9_:.=+\-]{1,128}")


class _Envelope(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @model_serializer(mode="wrap")
    def _leave_out_empty_requests(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if "requests" in data and is_empty(self.requests):  # type: ignore[attr-defined]
            data.pop("requests")
        return data


class Submission(_Envelope):
    """One submission: the source of `kernel` in `language`, its request, and the preset to grade."""

    kernel: str = Field(description="A kernel of the catalog (GET /tasks).")
    language: str = Field(
        "c",
        description="The source's language: c, cpp, fortran, python or cuda (docs/languages.md); "
        "one this host cannot build is refused with what it would need.",
    )
    source: str = Field(
        description="The source text, defining <kernel>_<precision> with the task's signature "
        "in its language (GET /task/{kernel}?language=...)."
    )
    requests: RequestsField = Field(
        default_factory=Requests, description="How the data reaches the kernel."
    )
    preset: str | None = Field(
        None, description="S, M or L; the judge's default preset when left out."
    )

    @field_validator("language")
    @classmethod
    def _built_here(cls, language: str) -> str:
        from hb.languages import refusal

        why = refusal(language)
        if why is not None:
            raise ValueError(why)
        return language


class RequestsCheckBody(_Envelope):
    """POST /requests/check: a request to check against a kernel, without building anything."""

    kernel: str
    language: str = "c"
    requests: RequestsField = Field(default_factory=Requests)
    # The sizes the request is checked at: a preset's, or every size symbol given; neither means
    # the configured preset (the one /submit grades at).
    preset: str | None = None
    sizes: dict[str, int] | None = None


class SyntaxCheckBody(_Envelope):
    """POST /syntax-check: a source compiled with the judge's flags for its language and
    -fsyntax-only, in the box; `requests` names the libraries whose headers it includes."""

    kernel: str
    language: str = "c"
    source: str
    requests: RequestsField = Field(default_factory=Requests)


class ProfileBody(Submission):
    """POST /profile: the envelope of /score and the profiler: none (the timing table per thread
    count), perf (Linux perf's counters and hot symbols) or papi (PAPI's `events` around each
    kernel call)."""

    tool: Literal["none", "perf", "papi"] = Field(
        "none", description="none, perf or papi; every answer carries the timing table."
    )
    events: list[str] | None = Field(
        None,
        max_length=32,
        description="tool papi only: the PAPI events to count (names papi_avail and "
        "papi_native_avail list); by default cycles, instructions, L1, L2 and L3 misses, branch "
        "misses, floating-point operations, task clock and page faults.",
    )

    @field_validator("events")
    @classmethod
    def _event_names(cls, events: list[str] | None) -> list[str] | None:
        for index, name in enumerate(events or []):
            if not PAPI_EVENT_NAME.fullmatch(name):
                raise ValueError(
                    f"item {index}, {name[:140]!r}, is not a PAPI event name (1 to 128 letters, "
                    "digits and _ : . = + -)"
                )
            if name in (events or [])[:index]:
                raise ValueError(f"item {index}, {name!r}, is given twice")
        return events


class Caller(BaseModel):
    """Who made a call, as the agent tools send it in headers (CALLER_HEADERS) beside the
    envelope: the agent's id, its round, the experiment and the setup. The judge records it with
    the grade; it never changes how a call is graded."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    agent_id: str = Field("", max_length=200)
    agent_round: int | None = Field(None, ge=0)
    experiment: str = Field("", max_length=200)
    setup: str = Field("", max_length=200)

    @classmethod
    def from_headers(cls, headers: Mapping[str, str]) -> Caller:
        """The caller the headers name; ValueError naming the header that does not validate."""
        return cls._named_by(headers, CALLER_HEADERS)

    @classmethod
    def from_environment(cls, environ: Mapping[str, str]) -> Caller:
        """The caller an agent's environment names (CALLER_VARIABLES), as the tools send it."""
        return cls._named_by(environ, CALLER_VARIABLES)

    @classmethod
    def _named_by(cls, values: Mapping[str, str], names: Mapping[str, str]) -> Caller:
        given: dict[str, Any] = {}
        for field, name in names.items():
            value = values.get(name)
            if value is None or value == "":
                continue
            if field == "agent_round":
                if not value.isdigit():
                    raise ValueError(f"{name}: expected a non-negative integer, got {value!r}")
                given[field] = int(value)
            else:
                given[field] = value
        try:
            return cls(**given)
        except ValidationError as error:
            item = error.errors(include_url=False)[0]
            raise ValueError(f"{names[str(item['loc'][0])]}: {item['msg']}") from None

    def headers(self) -> dict[str, str]:
        """The headers that carry this caller (unset fields left out)."""
        sent = {
            CALLER_HEADERS[field]: str(value)
            for field, value in self.model_dump().items()
            if value not in ("", None)
        }
        return sent

    def record(self) -> dict[str, Any]:
        """The grades columns this caller fills (results_db.GRADE_FIELDS)."""
        return self.model_dump()


# The header of each Caller field.
CALLER_HEADERS = {
    "agent_id": "x-hb-agent-id",
    "agent_round": "x-hb-agent-round",
    "experiment": "x-hb-experiment",
    "setup": "x-hb-setup",
}
# The variable of each Caller field in an agent's environment (a problem line's, hb mcp's).
CALLER_VARIABLES = {
    "agent_id": "HB_AGENT_ID",
    "agent_round": "HB_AGENT_ROUND",
    "experiment": "HB_EXPERIMENT",
    "setup": "HB_SETUP",
}


class RequestFault(Exception):
    """A request the judge refuses before building: a 400 whose detail names the entry."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail
