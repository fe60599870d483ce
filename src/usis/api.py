"""The query API: `load()` reads the shipped corpora from package data; a Corpus answers lookups,
searches, family questions and cross-model equivalents, building typed entries lazily."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from functools import cached_property
from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from usis.schema.models import Entry

MODELS: tuple[str, ...] = ("mpi", "openmp", "shmem", "nccl", "nvshmem", "cuda")


class UnknownModelError(LookupError, ValueError):
    """A model name usis does not know; also a ValueError, which earlier callers catch."""


def shipped_models() -> list[str]:
    """Models with a shipped corpus file, in the build's model order."""
    folder = resources.files("usis").joinpath("corpus")
    return [m for m in MODELS if folder.joinpath(f"final-{m}-api.json").is_file()]


def read_shipped(name: str) -> dict[str, Any]:
    text = resources.files("usis").joinpath("corpus", name).read_text(encoding="utf-8")
    document: dict[str, Any] = json.loads(text)
    return document


def shipped_entry(key: str) -> dict[str, Any] | None:
    """One entry of a shipped corpus file without parsing the whole file, or None when absent.

    The split stage writes every file with sorted keys and a 2-space indent, so an entry is the
    text from its key line at indent 4 to the next closing brace at indent 4; strings never hold
    a raw newline. That keeps a cold `usis show` fast even on the largest corpus.
    """
    model = key.split(":", 1)[0]
    if model not in MODELS:
        return None
    path = resources.files("usis").joinpath("corpus", f"final-{model}-api.json")
    if not path.is_file():
        return None
    text = path.read_text(encoding="utf-8")
    opening = f"\n    {json.dumps(key, ensure_ascii=False)}: {{\n"
    start = text.find(opening)
    if start < 0:
        return None
    end = text.find("\n    }", start + len(opening))
    if end < 0:
        return None
    entry: dict[str, Any] = json.loads(text[start + len(opening) - 2 : end + 6])
    return entry


class Corpus:
    """Entries of one or more models by key (`model:function_key`).

    `corpus[key]` is a typed entry (usis.schema.models.Entry) whose `.model_dump(mode="json")` is
    the shipped JSON; `corpus.raw(key)` is that JSON without building the model.
    """

    def __init__(
        self,
        documents: Mapping[str, Mapping[str, Any]],
        provenance: Mapping[str, Any] | None = None,
    ) -> None:
        """`documents` maps a model to its shipped corpus document; `provenance` (model -> {key:
        every record of the key}) is read from the shipped provenance files on first use when not
        given."""
        self.documents = dict(documents)
        self.given_provenance = dict(provenance) if provenance is not None else None
        self.entries: dict[str, Any] = {}
        for model in sorted(self.documents):
            self.entries.update(self.documents[model]["entries"])
        self.typed: dict[str, Entry] = {}
        self.resolved_records: dict[str, dict[str, Any]] = {}

    @property
    def models(self) -> list[str]:
        return sorted(self.documents)

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self.entries))

    def __contains__(self, key: object) -> bool:
        return key in self.entries

    def keys(self) -> list[str]:
        return sorted(self.entries)

    def raw(self, key: str) -> dict[str, Any]:
        """The shipped JSON of one entry."""
        try:
            entry: dict[str, Any] = self.entries[key]
        except KeyError:
            raise KeyError(self.missing_message(key)) from None
        return entry

    def __getitem__(self, key: str) -> Entry:
        if key not in self.typed:
            from usis.schema.models import Entry  # deferred: pydantic is the slow import

            self.typed[key] = Entry.model_validate(self.raw(key))
        return self.typed[key]

    def missing_message(self, key: str) -> str:
        lowered = key.lower()
        close = [k for k in self.entries if k.lower() == lowered or lowered in k.lower()][:5]
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        return f"no entry {key!r} in the corpus of {', '.join(self.models) or 'no models'}{hint}"

    def find(
        self,
        model: str | None = None,
        api_group: str | None = None,
        collective: bool | None = None,
        blocking: bool | None = None,
        text: str | None = None,
        family: str | None = None,
    ) -> list[str]:
        """Keys of the entries matching every given filter, sorted. `collective` and `blocking`
        test execution.collective/blocking; `text` searches key, name and desc, case-blind;
        `family` keeps the members of a `{T}` family (given by its family key)."""
        members = set(self.families().get(family, [])) if family is not None else None
        needle = text.lower() if text else None
        found = []
        for key in sorted(self.entries):
            entry = self.entries[key]
            identity, execution = entry["identity"], entry["execution"]
            if model is not None and identity["model"] != model:
                continue
            if api_group is not None and identity["api_group"] != api_group:
                continue
            if collective is not None and execution["collective"] != collective:
                continue
            if blocking is not None and execution["blocking"] != blocking:
                continue
            if members is not None and key not in members:
                continue
            if needle is not None:
                haystack = f"{key} {identity['name']} {identity['desc'] or ''}".lower()
                if needle not in haystack:
                    continue
            found.append(key)
        return found

    def operation_of(self, key: str) -> tuple[str, str] | None:
        """('collective', type) or ('one_sided'/'atomic', operation) of an entry, if any."""
        semantics = self.raw(key)["semantics"]
        if semantics["collective"] is not None:
            return ("collective", semantics["collective"]["type"])
        if semantics["one_sided"] is not None:
            return ("one_sided", semantics["one_sided"]["operation"])
        if semantics["atomic"] is not None and semantics["atomic"]["operation"] is not None:
            return ("atomic", semantics["atomic"]["operation"])
        return None

    def equivalents(self, key: str) -> list[str]:
        """Entries of the other models with the same collective type or one-sided/atomic operation."""
        operation = self.operation_of(key)
        if operation is None:
            return []
        model = self.raw(key)["identity"]["model"]
        return [
            other
            for other in sorted(self.entries)
            if self.entries[other]["identity"]["model"] != model
            and self.operation_of(other) == operation
        ]

    @cached_property
    def family_members(self) -> dict[str, list[str]]:
        families = {}
        for key, entry in self.entries.items():
            types = entry["identity"]["type_family"]
            if types and "{T}" in key:
                families[key] = [key.replace("{T}", name) for name in types]
        return dict(sorted(families.items()))

    def families(self) -> dict[str, list[str]]:
        """{family key: member keys} for every `{T}` family (e.g. 'shmem:shmem_{T}_put')."""
        return self.family_members

    def family_of(self, key: str) -> str | None:
        """The family key a concrete member belongs to, if any."""
        return next((family for family, members in self.families().items() if key in members), None)

    @cached_property
    def provenance_documents(self) -> dict[str, Any]:
        """model -> the shipped provenance form ({key: {"family"?, "records"}}, a family member
        linking to its family's records); given full records are wrapped unlinked."""
        if self.given_provenance is not None:
            return {
                model: {key: {"records": records} for key, records in given.items()}
                for model, given in self.given_provenance.items()
            }
        return {
            model: read_shipped(f"provenance-{model}.json")["provenance"] for model in self.models
        }

    def provenance_records(self, key: str) -> dict[str, Any]:
        """Every provenance record of an entry, {pointer: record}, a family member's link
        resolved (its family's records under its own)."""
        from usis.split.shipped import expand_records

        if key not in self.resolved_records:
            model = self.raw(key)["identity"]["model"]
            shipped = self.provenance_documents.get(model, {})
            self.resolved_records[key] = expand_records(shipped, key)
        return self.resolved_records[key]

    def provenance(self, key: str, pointer: str = "") -> dict[str, str] | None:
        """The provenance record governing one value of an entry (a JSON pointer into it)."""
        from usis.provenance.records import record_for

        return record_for(self.provenance_records(key), pointer)


def load(model: str | None = None) -> Corpus:
    """Every shipped model's corpus, or one model's (`load("mpi")`)."""
    if model is not None:
        if model not in MODELS:
            raise UnknownModelError(
                f"unknown model {model!r}; shipped: {', '.join(shipped_models()) or 'none'}"
            )
        if model not in shipped_models():
            raise LookupError(
                f"no shipped corpus for {model!r}; shipped: {', '.join(shipped_models()) or 'none'}"
            )
        return Corpus({model: read_shipped(f"final-{model}-api.json")})
    return Corpus({m: read_shipped(f"final-{m}-api.json") for m in shipped_models()})


def leaves(value: Any, path: str = "") -> dict[str, Any]:
    """Every leaf of an entry (or any JSON value) by its path (`a.b[2].c`): what a diff compares."""
    if isinstance(value, Mapping) and value:
        out: dict[str, Any] = {}
        for name in value:
            out.update(leaves(value[name], f"{path}.{name}" if path else str(name)))
        return out
    if isinstance(value, list) and value:
        out = {}
        for index, item in enumerate(value):
            out.update(leaves(item, f"{path}[{index}]"))
        return out
    return {path: value}
