"""Fuzzing the request reader: random and mutated JSON requests give a valid Requests or a
RequestError, never another exception. The default runs 5,000 inputs; the slow form 100,000."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator
from typing import Any

import pytest

from relayout import RequestError, Requests
from relayout.check import check_requests
from relayout.models import ACTIONS
from tests.relayout.spec_request import spec_request

VALID = [
    spec_request(["root(P, 2)", "root(P, 2)"]),
    {
        "operations": [
            {"action": "permute", "array": "A", "order": ["i1", "i0"]},
            {"action": "block", "array": "B", "digit": "i1", "factor": 4, "into": ["b", "f"]},
            {"action": "unblock", "array": "B", "digits": ["b", "f"], "factor": 4, "into": "i1"},
            {"action": "split", "array": "B", "digit": "i0", "parts": "P0", "into": ["p", "o"]},
            {"action": "unsplit", "array": "B", "digits": ["p", "o"], "parts": "P0", "into": "i0"},
            {"action": "pad", "array": "A", "digit": "i0", "amount": "(64 - N % 64) % 64"},
            {"action": "unpad", "array": "A", "digit": "i0", "amount": 1},
            {
                "action": "shuffle",
                "array": "A",
                "digits": ["i0"],
                "f": ["(i0 + 1) % N"],
                "f_inv": ["(i0 + N - 1) % N"],
            },
            {
                "action": "linear_shuffle",
                "array": "T",
                "digits": ["i0", "i1"],
                "bits": [1, 1],
                "matrix": [[1, 0], [1, 1]],
            },
            {"action": "zip", "arrays": ["u", "v"], "into": "uv", "dim": 0},
            {"action": "unzip", "array": "z", "into": ["re", "im"]},
            {"action": "format", "array": "S", "to": "csr"},
            {"action": "distribute", "array": "A", "grid_dim": 1, "digit": "b", "scheme": "cyclic"},
        ]
    },
]

ATOMS: list[Any] = [
    None,
    True,
    False,
    0,
    1,
    -1,
    2**63,
    -(2**70),
    3.5,
    float("inf"),
    "",
    "A",
    "i0",
    "P",
    "N + 1",
    "N +",
    "root(P, 2)",
    "((((",
    "__import__('os')",
    "\x00",
    "é",
    "fp32",
    "block_cyclic",
    "1e9",
    "9" * 400,
    "(" * 300 + "1" + ")" * 300,
    "+".join(["1"] * 400),
    [],
    {},
    [1, 2],
    {"action": "cast"},
    *ACTIONS,
]


def atom(rng: random.Random) -> Any:
    # A copy: mutations must never reach the shared list (or make a structure contain itself).
    return copy.deepcopy(rng.choice(ATOMS))


def random_json(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 4 or roll < 0.45:
        return atom(rng)
    if roll < 0.7:
        return [random_json(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    keys = [
        "action",
        "array",
        "arrays",
        "to",
        "digit",
        "digits",
        "into",
        "factor",
        "parts",
        "amount",
        "order",
        "f",
        "f_inv",
        "bits",
        "matrix",
        "dim",
        "grid_dim",
        "scheme",
        "block_size",
        "on",
        "startup",
        "operations",
        "load",
        "grid",
        "extra",
    ]
    return {rng.choice(keys): random_json(rng, depth + 1) for _ in range(rng.randint(0, 5))}


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from paths(item, (*prefix, index))


def mutate(rng: random.Random, document: Any) -> Any:
    result = copy.deepcopy(document)
    for _ in range(rng.randint(1, 3)):
        targets = list(paths(result))[1:]
        if not targets:
            return random_json(rng)
        path = rng.choice(targets)
        parent = result
        for step in path[:-1]:
            parent = parent[step]
        key = path[-1]
        choice = rng.random()
        if choice < 0.4:
            parent[key] = random_json(rng)
        elif choice < 0.6:
            del parent[key]
        elif choice < 0.75 and isinstance(parent, dict):
            parent[rng.choice(["extra", "Action", "dim", "digit", "scheme"])] = random_json(rng)
        elif choice < 0.9 and isinstance(parent, list):
            parent.insert(
                rng.randint(0, len(parent)),
                copy.deepcopy(rng.choice(parent)) if parent else random_json(rng),
            )
        else:
            parent[key] = atom(rng)
    return result


def mutate_text(rng: random.Random, text: str) -> str:
    characters = list(text)
    for _ in range(rng.randint(1, 4)):
        position = rng.randrange(len(characters) + 1)
        operation = rng.random()
        if operation < 0.4 and characters:
            del characters[min(position, len(characters) - 1)]
        elif operation < 0.8:
            characters.insert(position, rng.choice('{}[],:"0123456789aeP-+*/%()^ \\'))
        elif characters:
            characters[min(position, len(characters) - 1)] = rng.choice("\"'x0}")
    return "".join(characters)


def mutate_operation(rng: random.Random) -> Any:
    """One valid operation with one of its fields changed, dropped or added."""
    operation = copy.deepcopy(rng.choice(VALID[1]["operations"]))
    key = rng.choice([*operation, "extra"])
    roll = rng.random()
    if roll < 0.3 and key in operation:
        del operation[key]
    else:
        operation[key] = random_json(rng) if roll < 0.8 else atom(rng)
    return operation


def inputs(count: int, seed: int) -> Iterator[Any]:
    rng = random.Random(seed)
    for index in range(count):
        kind = index % 4
        if kind == 0:
            yield random_json(rng)
        elif kind == 1:
            yield mutate(rng, rng.choice(VALID))
        elif kind == 2:
            yield mutate_text(rng, json.dumps(rng.choice(VALID)))
        else:
            operations = [
                mutate_operation(rng) if rng.random() < 0.9 else random_json(rng)
                for _ in range(rng.randint(1, 3))
            ]
            yield {"operations": operations}


def fuzz(count: int, seed: int) -> tuple[int, int]:
    valid = refused = 0
    for document in inputs(count, seed):
        try:
            requests = Requests.validate(document)
        except RequestError as error:
            assert str(error), document
            refused += 1
            continue
        # A request that validates writes JSON that validates back to the same request.
        assert Requests.validate(requests.to_json()) == requests
        valid += 1
    return valid, refused


# check over one fixed set of arrays: a request that validates is accepted or refused, never raises.
CHECK_ARRAYS = {
    "A": "fp64[N,N]:inout",
    "B": "fp64[N,N]",
    "T": "fp32[4,4]",
    "u": "fp64[N]",
    "v": "fp64[N]",
    "z": "complex128[N]",
    "S": "csr:fp64[N,N]",
    "x": "fp64[N]",
}
OVERFLOWING = [
    {
        "action": "shuffle",
        "array": "x",
        "digits": ["i0"],
        "f": ["9223372036854775807 * 4 + i0 * 0"],
        "f_inv": ["i0"],
    },
    {
        "action": "shuffle",
        "array": "x",
        "digits": ["i0"],
        "f": ["i0 * 4611686018427387904 * 2"],
        "f_inv": ["i0"],
    },
    {
        "action": "shuffle",
        "array": "x",
        "digits": ["i0"],
        "f": ["i0"],
        "f_inv": ["(i0 + 9223372036854775807) * 2"],
    },
    {
        "action": "block",
        "array": "x",
        "digit": "i0",
        "factor": "4294967296 * 4294967296",
        "into": ["b", "f"],
    },
    {"action": "pad", "array": "A", "digit": "i1", "amount": "9223372036854775807"},
    {
        "action": "split",
        "array": "x",
        "digit": "i0",
        "parts": "3037000500 * 3037000500",
        "into": ["p", "o"],
    },
]


def check_fuzz(count: int, seed: int) -> None:
    rng = random.Random(seed)
    documents = [{"operations": [operation]} for operation in OVERFLOWING]
    documents += [document for document in inputs(count, seed) if rng.random() < 0.5]
    for document in documents:
        try:
            requests = Requests.validate(document)
        except RequestError:
            continue
        for sizes in (None, {"N": 8}, {"N": 2**31}):
            answer = check_requests(
                requests, CHECK_ARRAYS, sizes, 4 if requests.distributed else None
            )
            assert answer.accepted or answer.refusal, document


def test_check_answers_or_refuses() -> None:
    check_fuzz(400, seed=3)


def test_the_valid_seeds_are_valid() -> None:
    for document in VALID:
        Requests.validate(document)


def test_fuzz_short() -> None:
    valid, refused = fuzz(5_000, seed=1)
    assert valid > 50 and refused > 2_000


@pytest.mark.slow
def test_fuzz_100k() -> None:
    valid, refused = fuzz(100_000, seed=2)
    assert valid + refused == 100_000
