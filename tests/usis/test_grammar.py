"""The reference grammar: selectors, offsets and match keys parse; everything else is refused."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from usis.formal.grammar import (
    SCOPES,
    Binary,
    Call,
    GrammarError,
    Param,
    Rank,
    Self,
    parameter_names,
    parse_match_key,
    parse_offset,
    parse_reference,
    parse_selector,
    render,
)


@pytest.mark.parametrize(
    "text",
    [
        "self",
        "rank == param:root",
        "rank in param:comm",
        "is_neighbor(rank, param:comm)",
        "rank != param:root && rank in param:comm",
        "!(rank == param:root) || self",
        "(rank < param:n) && (rank >= 0)",
        "rank % 2 == 0",
        "(rank + 1) * 2 > param:size",
    ],
)
def test_selectors_parse(text: str) -> None:
    tree = parse_selector(text)
    assert parse_selector(render(tree)) == tree


def test_selector_trees() -> None:
    assert parse_selector("self") == Self()
    assert parse_selector("rank == param:root") == Binary("==", Rank(), Param("root"))
    assert parse_selector("is_neighbor(rank, param:comm)") == Call(
        "is_neighbor", (Rank(), Param("comm"))
    )
    tree = parse_selector("rank in param:comm && !self")
    assert isinstance(tree, Binary) and tree.operator == "&&"


@pytest.mark.parametrize(
    "text",
    [
        "rank * extent_size(param:count, param:datatype)",
        "extent_size(param:displs[rank], param:sendtype)",
        "-param:lb + 4",
        "0",
        "(rank + 1) % comm_size(param:comm)",
    ],
)
def test_offsets_parse(text: str) -> None:
    tree = parse_offset(text)
    assert parse_offset(render(tree)) == tree


def test_parameter_names() -> None:
    tree = parse_offset("extent_size(param:displs[rank], param:sendtype) + param:base")
    assert parameter_names(tree) == {"displs", "sendtype", "base"}


@pytest.mark.parametrize(
    ("parser", "text", "message"),
    [
        (parse_selector, "rank ==", "unexpected end"),
        (parse_selector, "rank", "needs a comparison"),
        (parse_selector, "rank in 3", "'in' takes a param"),
        (parse_selector, "is_neighbor(rank)", "takes 2 arguments"),
        (parse_selector, "owner(rank)", "unexpected 'owner'"),
        (parse_selector, "rank == param:root extra", "unexpected 'extra'"),
        (parse_offset, "rank == 1", "unexpected '=='"),
        (parse_offset, "is_neighbor(rank, param:comm)", "is a predicate"),
        (parse_offset, "rank $ 2", "unexpected character"),
        (parse_match_key, "rank", "one param: reference"),
        (parse_match_key, "param:tag + 1", "one param: reference"),
        (parse_reference, "rank + 1", "expected a param: reference"),
    ],
)
def test_invalid_expressions_are_refused_with_the_reason(parser, text, message) -> None:
    with pytest.raises(GrammarError, match=message):
        parser(text)


def test_references() -> None:
    assert parse_reference("param:buf") == Param("buf")
    assert parse_reference("return_value") is not None
    assert parse_reference("type:{T}") is not None
    assert parse_match_key("param:tag") == Param("tag")


def test_scope_registry_is_closed_and_documented() -> None:
    assert {
        "all_participant_instances",
        "instances_before_self_in_order",
        "rma_target_prior",
    } <= set(SCOPES)
    assert all(description for description in SCOPES.values())


names = st.sampled_from(["root", "comm", "count", "datatype", "displs"])
atoms = st.one_of(
    st.just("rank"),
    st.integers(min_value=0, max_value=99).map(str),
    names.map(lambda name: f"param:{name}"),
)


def arithmetic(depth: int) -> st.SearchStrategy[str]:
    if depth == 0:
        return atoms
    smaller = arithmetic(depth - 1)
    return st.one_of(
        smaller,
        st.tuples(smaller, st.sampled_from(["+", "-", "*", "/", "%"]), smaller).map(
            lambda t: f"({t[0]} {t[1]} {t[2]})"
        ),
        st.tuples(smaller, smaller).map(lambda t: f"extent_size({t[0]}, {t[1]})"),
    )


def selectors(depth: int) -> st.SearchStrategy[str]:
    leaf = st.one_of(
        st.just("self"),
        names.map(lambda name: f"rank in param:{name}"),
        st.tuples(arithmetic(1), st.sampled_from(["==", "!=", "<", ">="]), arithmetic(1)).map(
            lambda t: f"{t[0]} {t[1]} {t[2]}"
        ),
    )
    if depth == 0:
        return leaf
    smaller = selectors(depth - 1)
    return st.one_of(
        leaf,
        st.tuples(smaller, st.sampled_from(["&&", "||"]), smaller).map(
            lambda t: f"({t[0]}) {t[1]} ({t[2]})"
        ),
        smaller.map(lambda s: f"!({s})"),
    )


@settings(max_examples=150)
@given(selectors(2))
def test_rendering_a_parsed_selector_parses_to_the_same_tree(text: str) -> None:
    tree = parse_selector(text)
    assert parse_selector(render(tree)) == tree


@settings(max_examples=150)
@given(arithmetic(3))
def test_rendering_a_parsed_offset_parses_to_the_same_tree(text: str) -> None:
    tree = parse_offset(text)
    assert parse_offset(render(tree)) == tree
