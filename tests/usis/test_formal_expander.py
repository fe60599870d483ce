"""The shape catalog and the expander: typed slots, text substitution, composition, extra patches."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from usis.formal.assign import assign
from usis.formal.expander import ExpansionError, deep_merge, expand
from usis.formal.shapes import SAMPLE_BINDINGS, ShapeCatalog, ShapeError, load_catalog, placeholders
from usis.schema import definition_validator

CATALOG = load_catalog()
BCAST = {
    "buffer": "param:buffer",
    "extent": {"count_ref": "param:count", "datatype_ref": "param:datatype"},
    "root": "param:root",
    "comm": "param:comm",
}
REQUIRED_SHAPES = [
    "collective.broadcast",
    "collective.reduce",
    "collective.allreduce",
    "collective.scatter",
    "collective.gather",
    "collective.allgather",
    "collective.alltoall",
    "collective.scan",
    "collective.exscan",
    "collective.reduce_scatter",
    "collective.barrier",
    "p2p.send",
    "p2p.recv",
    "request.post",
    "request.wait",
    "request.test",
    "rma.put",
    "rma.get",
    "rma.accumulate",
    "rma.compare_and_swap",
    "shmem.put",
    "shmem.get",
    "shmem.atomic_fetch_update",
    "shmem.put_signal",
    "sync.fence",
    "sync.quiet",
    "lifecycle.collective_create",
    "lifecycle.collective_destroy",
    "epoch.lock",
    "epoch.unlock",
    "epoch.start",
    "epoch.post",
    "epoch.fence",
]


def sample_bindings(shape_id: str) -> dict[str, Any]:
    bindings = {}
    for slot in CATALOG[shape_id].slots:
        value = SAMPLE_BINDINGS[slot.kind]
        if slot.kind == "literal_slot":
            value = "COMMUNICATOR"
        bindings[slot.name] = value
    return bindings


def test_catalog_covers_the_required_shapes() -> None:
    missing = [shape for shape in REQUIRED_SHAPES if shape not in CATALOG]
    assert not missing


@pytest.mark.parametrize("shape_id", sorted(CATALOG.shapes))
def test_every_shape_expands_to_a_valid_formal_block(shape_id: str) -> None:
    formal = expand({"shape_ref": shape_id, "bindings": sample_bindings(shape_id)}, CATALOG)
    assert not list(definition_validator("formal").iter_errors(formal))
    assert not list(placeholders(formal))


def test_whole_placeholder_takes_the_typed_value_and_text_is_substituted() -> None:
    formal = expand({"shape_ref": "collective.broadcast", "bindings": BCAST})
    read = formal["data_flow"][0]
    assert read["extent"] == BCAST["extent"]
    assert read["buffer"] == "param:buffer"
    selectors = {p["id"]: p["selector"] for p in formal["participants"]}
    assert selectors == {"root": "rank == param:root", "members": "rank in param:comm"}


def test_unbound_slot_is_an_error() -> None:
    bindings = {k: v for k, v in BCAST.items() if k != "root"}
    with pytest.raises(ExpansionError, match="slot 'root' is not bound"):
        expand({"shape_ref": "collective.broadcast", "bindings": bindings}, where="mpi:mpi_bcast")


def test_unbound_optional_slot_is_null() -> None:
    formal = expand(
        {
            "shape_ref": "lifecycle.local_create",
            "bindings": {"handle": "param:newtype", "handle_kind": "DATATYPE"},
        }
    )
    assert formal["handle_lifecycle"][0]["derived_from"] is None


@pytest.mark.parametrize(
    ("bindings", "message"),
    [
        ({**BCAST, "root": "root +"}, r"bindings.root \(index_slot\)"),
        ({**BCAST, "extent": "param:count"}, "an extent is"),
        ({**BCAST, "buffer": "rank"}, r"bindings.buffer \(buffer_slot\)"),
        ({**BCAST, "colour": "red"}, "'colour' is not a slot"),
        ({**BCAST, "comm": 3}, "takes a string"),
    ],
)
def test_ill_typed_bindings_are_refused(bindings: dict[str, Any], message: str) -> None:
    with pytest.raises(ExpansionError, match=message):
        expand({"shape_ref": "collective.broadcast", "bindings": bindings}, where="k")


def test_non_string_binding_inside_text_is_refused() -> None:
    catalog = ShapeCatalog(
        {
            "shapes": [
                {
                    "id": "test.text",
                    "slots": [{"name": "kind", "kind": "literal_slot", "optional": False}],
                    "template": {
                        "participants": [
                            {
                                "id": "p",
                                "role_kind": "member",
                                "calls_function": True,
                                "cardinality": "one",
                                "selector": "rank == {{kind}}",
                            }
                        ],
                        "data_flow": [],
                        "sync": {"events": [], "ordering": [], "matching": None},
                        "handle_lifecycle": [],
                    },
                }
            ]
        }
    )
    with pytest.raises(ExpansionError, match="only a string can be substituted"):
        expand({"shape_ref": "test.text", "bindings": {"kind": 3}}, catalog)
    formal = expand({"shape_ref": "test.text", "bindings": {"kind": "param:root"}}, catalog)
    assert formal["participants"][0]["selector"] == "rank == param:root"


def test_unknown_shape_is_an_error() -> None:
    with pytest.raises(ExpansionError, match=re.escape("unknown shape_ref 'collective.gossip'")):
        expand({"shape_ref": "collective.gossip", "bindings": {}})


def test_composition_adds_the_request() -> None:
    formal = expand(
        {
            "shape_ref": ["collective.broadcast", "request.post"],
            "bindings": {**BCAST, "request": "param:request"},
        }
    )
    kinds = [(h["handle"], h["role"]) for h in formal["handle_lifecycle"]]
    assert kinds == [("param:comm", "use"), ("param:request", "create")]
    assert formal["sync"]["matching"]["kind"] == "collective_rendezvous"


def test_extra_is_deep_merged() -> None:
    formal = expand(
        {
            "shape_ref": "collective.broadcast",
            "bindings": BCAST,
            "extra": {
                "data_flow": [{"id": "root_read", "offset": "0"}],
                "sync": {"matching": {"program_order_required": False}},
            },
        }
    )
    assert formal["data_flow"][0]["offset"] == "0"
    assert formal["data_flow"][0]["buffer"] == "param:buffer"
    assert formal["sync"]["matching"]["program_order_required"] is False
    assert formal["sync"]["matching"]["kind"] == "collective_rendezvous"


def test_extra_that_breaks_the_formal_schema_is_an_error() -> None:
    with pytest.raises(ExpansionError, match="not a valid formal"):
        expand(
            {
                "shape_ref": "collective.broadcast",
                "bindings": BCAST,
                "extra": {"data_flow": [{"id": "x", "op": "copy", "source": None}]},
            }
        )


def test_deep_merge_laws() -> None:
    assert deep_merge({"a": {"b": 1, "c": 2}}, {"a": {"c": 3}}) == {"a": {"b": 1, "c": 3}}
    assert deep_merge({"a": 1}, {"a": None}) == {"a": None}
    assert deep_merge([1, 2], [2, 3]) == [1, 2, 3]
    assert deep_merge([{"id": "x", "v": 1}], [{"id": "y"}]) == [{"id": "x", "v": 1}, {"id": "y"}]


def test_catalog_refuses_undeclared_and_unused_slots() -> None:
    shape = copy.deepcopy(next(iter(load_catalog_document()["shapes"])))
    shape["slots"] = shape["slots"][1:]
    with pytest.raises(ShapeError, match="undeclared slots"):
        ShapeCatalog({"shapes": [shape]})
    shape = copy.deepcopy(next(iter(load_catalog_document()["shapes"])))
    shape["slots"].append({"name": "spare", "kind": "literal_slot", "optional": True})
    with pytest.raises(ShapeError, match="never used"):
        ShapeCatalog({"shapes": [shape]})


def test_catalog_refuses_a_template_outside_the_formal_schema() -> None:
    shape = copy.deepcopy(next(iter(load_catalog_document()["shapes"])))
    shape["template"]["participants"][0]["role_kind"] = "spectator"
    with pytest.raises(ShapeError, match="spectator"):
        ShapeCatalog({"shapes": [shape]})


def load_catalog_document() -> dict[str, Any]:
    """A private copy of the shipped catalog, free to change."""
    import copy

    from usis.curated import load

    document: dict[str, Any] = copy.deepcopy(load("shapes.json"))
    return document


def test_assign_inlines_and_records_provenance() -> None:
    checkpoint = {
        "model": "mpi",
        "sources": [],
        "entries": {"mpi:mpi_bcast": {"semantics": {"formal": None}}},
        "formal": {"mpi:mpi_bcast": {"shape_ref": "collective.broadcast", "bindings": BCAST}},
        "provenance": {},
    }
    assigned = assign(checkpoint)
    assert "formal" not in assigned
    assert assigned["entries"]["mpi:mpi_bcast"]["semantics"]["formal"]["participants"]
    record = assigned["provenance"]["mpi:mpi_bcast"]["/semantics/formal"]
    assert record == {
        "stage": "assign",
        "method": "curated",
        "from": "curated/shapes.json#collective.broadcast",
    }
    assert checkpoint["entries"]["mpi:mpi_bcast"]["semantics"]["formal"] is None, "assign is pure"


def test_assign_names_every_failing_key() -> None:
    checkpoint = {
        "model": "mpi",
        "sources": [],
        "entries": {"mpi:a": {"semantics": {"formal": None}}},
        "formal": {
            "mpi:a": {"shape_ref": "collective.broadcast", "bindings": {}},
            "mpi:ghost": {"shape_ref": "collective.barrier", "bindings": {"comm": "param:comm"}},
        },
    }
    with pytest.raises(ExpansionError) as failure:
        assign(checkpoint)
    assert "mpi:a: semantics.formal" in str(failure.value)
    assert "mpi:ghost: semantics.formal: assignment for a key that is not an entry" in str(
        failure.value
    )


@settings(max_examples=60)
@given(
    st.sampled_from(sorted(CATALOG.shapes)),
    st.sampled_from(["param:a", "param:b_2", "param:x"]),
)
def test_expansion_never_leaves_a_placeholder(shape_id: str, reference: str) -> None:
    bindings = {}
    for slot in CATALOG[shape_id].slots:
        if slot.kind in ("buffer_slot", "handle_slot", "operation_slot", "index_slot"):
            bindings[slot.name] = reference
        elif slot.kind == "selector_slot":
            bindings[slot.name] = f"rank == {reference}"
        elif slot.kind == "extent_slot":
            bindings[slot.name] = {"count_ref": reference, "datatype_ref": reference}
        else:
            bindings[slot.name] = "WINDOW"
    formal = expand({"shape_ref": shape_id, "bindings": bindings}, CATALOG)
    assert not list(placeholders(formal))
