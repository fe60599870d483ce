"""The envelope a client posts: Submission (kernel, language, source, requests, preset) and the
body of /requests/check; any field they do not declare is refused."""

from __future__ import annotations

from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from hb.requests_api import Requests, RequestsField, is_empty


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
    language: str = Field("c", description="The source's language; the judge builds c.")
    source: str = Field(
        description="The source text, defining <kernel>_<precision> with the task's C signature."
    )
    requests: RequestsField = Field(
        default_factory=Requests, description="How the data reaches the kernel."
    )
    preset: str | None = Field(
        None, description="S, M or L; the judge's default preset when left out."
    )


class RequestsCheckBody(_Envelope):
    """POST /requests/check: a request to check against a kernel, without building anything."""

    kernel: str
    language: str = "c"
    requests: RequestsField = Field(default_factory=Requests)
    # The sizes the request is checked at: a preset's, or every size symbol given; neither means
    # the configured preset (the one /submit grades at).
    preset: str | None = None
    sizes: dict[str, int] | None = None
