"""Array specifications: what a kernel's array is before any request touches it, written as text
`[FORMAT:][index:]DTYPE[EXTENT, ...][:INTENT]` (e.g. `fp64[N,N]:inout`, `csr:fp64[M,N]`) or as an object."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from relayout import expr as expressions
from relayout.types import ELEMENT_TYPES, SPARSE_FORMATS, ElementType, c_name_problem

__all__ = ["INDEX_DTYPES", "ArraySpec", "parse_arrays"]

INDEX_DTYPES = ("int32", "int64", "uint32", "uint64")
SPEC_TEXT = re.compile(
    r"^\s*(?:(?P<prefix>(?:[a-z]+:)*))(?P<dtype>[a-z0-9_]+)\s*"
    r"(?:\[(?P<extents>[^\]]*)\])?\s*(?::\s*(?P<intent>[a-z]+))?\s*$"
)


@functools.lru_cache(maxsize=4096)
def _parsed_extents(extents: tuple[str, ...]) -> tuple[expressions.Expr, ...]:
    """The extents' expressions, parsed once per distinct tuple (a conversion reads them per call)."""
    return tuple(expressions.parse(extent, bitwise=False) for extent in extents)


class ArraySpec(BaseModel):
    """One kernel array: problem element type, logical extents, intent, sparse format, index flag.

    `dtype` is an element type name (fp64 ... fp8_e5m2, int8 ... uint64, complex64, complex128).
    An index array (row pointers, column indices) is an integer array with `index=True`, written
    `index:int64[nnz]`; casts and zips refuse it. A sparse array names its format (`csr:fp64[M,N]`);
    its extents are the logical matrix's, and it takes no digit operation.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    dtype: str
    extents: tuple[str, ...] = ()
    intent: Literal["in", "out", "inout"] = "in"
    sparse: str | None = None
    index: bool = False

    @field_validator("dtype")
    @classmethod
    def _known_dtype(cls, value: str) -> str:
        if value not in ELEMENT_TYPES:
            raise ValueError(f"unknown dtype {value!r}; accepted: {', '.join(ELEMENT_TYPES)}")
        return value

    @field_validator("extents", mode="before")
    @classmethod
    def _canonical_extents(cls, value: Any) -> Any:
        if isinstance(value, list | tuple):
            canonical = []
            for item in value:
                try:
                    parsed = expressions.parse(item, bitwise=False)
                except expressions.ExprError as error:
                    raise ValueError(f"extent {item!r}: {error}") from None
                constant = parsed.substitute({}).const_value()
                if constant is not None and constant < 1:
                    raise ValueError(f"extent {item!r} is {constant}; an extent is at least 1")
                canonical.append(str(parsed))
            return tuple(canonical)
        return value

    @field_validator("sparse")
    @classmethod
    def _known_format(cls, value: str | None) -> str | None:
        if value is not None and value not in SPARSE_FORMATS:
            raise ValueError(
                f"unknown sparse format {value!r}; accepted: {', '.join(SPARSE_FORMATS)}"
            )
        return value

    @model_validator(mode="after")
    def _consistent(self) -> ArraySpec:
        if self.index and self.dtype not in INDEX_DTYPES:
            raise ValueError(f"an index array has an integer dtype ({', '.join(INDEX_DTYPES)})")
        if self.index and self.sparse:
            raise ValueError("an array is either sparse or an index array, not both")
        return self

    @property
    def element(self) -> ElementType:
        return ELEMENT_TYPES[self.dtype]

    @property
    def extent_exprs(self) -> tuple[expressions.Expr, ...]:
        return _parsed_extents(tuple(self.extents))

    @property
    def ndim(self) -> int:
        return len(self.extents)

    @property
    def dense(self) -> bool:
        return self.sparse is None

    def __str__(self) -> str:
        prefix = (f"{self.sparse}:" if self.sparse else "") + ("index:" if self.index else "")
        intent = "" if self.intent == "in" else f":{self.intent}"
        return f"{prefix}{self.dtype}[{','.join(self.extents)}]{intent}"

    @classmethod
    def parse(cls, spec: str | Mapping[str, Any] | ArraySpec) -> ArraySpec:
        """An ArraySpec from its text, an object with the same fields, or an ArraySpec."""
        if isinstance(spec, ArraySpec):
            return spec
        if isinstance(spec, Mapping):
            return cls.model_validate(dict(spec))
        if not isinstance(spec, str):
            raise ValueError(f"an array spec is text or an object, not {type(spec).__name__}")
        match = SPEC_TEXT.match(spec)
        if not match:
            raise ValueError(
                f"array spec {spec!r} is not [FORMAT:][index:]DTYPE[EXTENT,...][:INTENT], "
                "e.g. fp64[N,N]:inout, csr:fp64[M,N], index:int64[nnz]"
            )
        sparse, index = None, False
        for word in filter(None, (match.group("prefix") or "").split(":")):
            if word == "index":
                index = True
            elif word in SPARSE_FORMATS:
                sparse = word
            else:
                accepted = ", ".join((*SPARSE_FORMATS, "index"))
                raise ValueError(
                    f"array spec {spec!r}: unknown prefix {word!r}; accepted: {accepted}"
                )
        extents_text = match.group("extents")
        extents = (
            [part.strip() for part in extents_text.split(",")]
            if extents_text and extents_text.strip()
            else []
        )
        fields: dict[str, Any] = {"dtype": match.group("dtype"), "extents": extents}
        if match.group("intent"):
            fields["intent"] = match.group("intent")
        fields["sparse"] = sparse
        fields["index"] = index
        try:
            return cls.model_validate(fields)
        except ValidationError as error:
            first = error.errors(include_url=False)[0]
            message = str(first.get("msg", "invalid")).removeprefix("Value error, ")
            where = ".".join(str(part) for part in first.get("loc", ()))
            raise ValueError(
                f"array spec {spec!r}: {where + ': ' if where else ''}{message}"
            ) from None


ArraysArgument = Mapping[str, "str | Mapping[str, Any] | ArraySpec"]


def parse_arrays(arrays: Any) -> dict[str, ArraySpec]:
    """{name: ArraySpec} from {name: text | object | ArraySpec}, keeping the given (manifest) order."""
    if not isinstance(arrays, Mapping):
        raise ValueError("arrays must map each array name to its spec")
    parsed: dict[str, ArraySpec] = {}
    for name, spec in arrays.items():
        if not isinstance(name, str) or not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name):
            raise ValueError(f"array name {name!r} is not an identifier")
        problem = c_name_problem(name)
        if problem:
            raise ValueError(f"array {name}: {problem}; choose another name")
        try:
            parsed[name] = ArraySpec.parse(spec)
        except ValidationError as error:
            first = error.errors(include_url=False)[0]
            message = str(first.get("msg", "invalid")).removeprefix("Value error, ")
            raise ValueError(f"array {name}: {message}") from None
        except ValueError as error:
            raise ValueError(f"array {name}: {error}") from None
    return parsed
