"""The shipped schema is the specification's, byte for byte; the generated models follow it."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from tests.usis.factory import mini_corpus
from usis.schema import codegen, definition_validator, load_schema, schema_text
from usis.schema.models import Entry, EntryMap

REPO = Path(__file__).resolve().parents[2]
SPEC_SCHEMA = REPO.parent / "shared" / "spec" / "usis-api-schema.json"
FIXTURE = Path(__file__).with_name("fixtures") / "mini-corpus.json"


@pytest.mark.skipif(
    not SPEC_SCHEMA.is_file(), reason=f"specification not checked out at {SPEC_SCHEMA}"
)
def test_shipped_schema_is_a_byte_copy_of_the_specification() -> None:
    assert (REPO / "src/usis/schema/usis-api-schema.json").read_bytes() == SPEC_SCHEMA.read_bytes()


def test_schema_is_read_as_package_data() -> None:
    assert json.loads(schema_text()) == load_schema()
    assert load_schema()["$schema"].endswith("2020-12/schema")


def test_generated_models_match_the_schema_byte_for_byte() -> None:
    regenerated = codegen.render(load_schema())
    committed = codegen.MODELS_PATH.read_text()
    assert regenerated == committed, "run `python -m usis.schema.codegen` after changing the schema"


def test_codegen_notices_a_schema_change() -> None:
    changed = copy.deepcopy(load_schema())
    changed["$defs"]["identity"]["properties"]["model"]["enum"].append("upc")
    assert "'upc'" in codegen.generate(changed)
    assert "'upc'" not in codegen.MODELS_PATH.read_text()


def test_fixture_file_is_the_factory_corpus() -> None:
    assert json.loads(FIXTURE.read_text()) == mini_corpus()


def test_fixture_entries_round_trip_through_the_models() -> None:
    for key, raw in mini_corpus().items():
        assert Entry.model_validate(raw).model_dump(mode="json") == raw, key
    assert EntryMap.model_validate(mini_corpus()).model_dump(mode="json") == mini_corpus()


def test_models_and_schema_agree_on_the_fixture_entries() -> None:
    validator = definition_validator("entry")
    for raw in mini_corpus().values():
        assert not list(validator.iter_errors(raw))


@pytest.mark.parametrize(
    ("mutation", "why"),
    [
        (lambda e: e["identity"].pop("since"), "a nullable field must be present as explicit null"),
        (lambda e: e["identity"].update(extra=1), "additionalProperties false"),
        (lambda e: e["identity"].update(model="upc"), "closed enum"),
        (lambda e: e["execution"].update(blocking="yes"), "strict boolean"),
        (lambda e: e["identity"].update(since="4.0"), "version pattern"),
        (lambda e: e["parameters"][0].update(length=-1), "length minimum"),
    ],
)
def test_models_reject_what_the_schema_rejects(mutation, why) -> None:
    raw = copy.deepcopy(mini_corpus()["mpi:mpi_bcast"])
    mutation(raw)
    with pytest.raises(ValidationError):
        Entry.model_validate(raw)
    assert list(definition_validator("entry").iter_errors(raw)), why


def test_optional_fields_may_be_absent_but_not_null() -> None:
    raw = copy.deepcopy(mini_corpus()["mpi:mpi_bcast"])
    extent = raw["semantics"]["formal"]["data_flow"][0]["extent"]
    del extent["datatype_ref"]
    assert Entry.model_validate(raw).model_dump(mode="json") == raw
    extent["datatype_ref"] = None
    with pytest.raises(ValidationError, match="never null"):
        Entry.model_validate(raw)
