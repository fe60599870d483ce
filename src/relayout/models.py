"""The request as pydantic models: one model per action, the Requests document, its validation into
RequestError, its JSON writer and its inlined JSON Schema. The meaning lives in the digit algebra
(relayout.algebra) and plan.py."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    StrictStr,
    StringConstraints,
    TypeAdapter,
    ValidationError,
    model_validator,
)

from relayout import expr as expressions
from relayout.errors import RequestError, entry_label
from relayout.plan import short_form
from relayout.types import (
    SPARSE_FORMAT_DEFAULTS,
    CastTarget,
    SparseFormatName,
    c_name_problem,
)

__all__ = [
    "ACTIONS",
    "OPERATION_ADAPTER",
    "OPERATION_MODELS",
    "REQUESTS_ADAPTER",
    "Operation",
    "Requests",
    "Startup",
    "requests_schema",
    "requests_schema_text",
]


def _check_expression(value: int | str) -> int | str:
    try:
        expressions.parse(value, bitwise=False)
    except expressions.ExprError as error:
        raise ValueError(f"expression {value!r}: {error}") from None
    return value


def _check_bit_expression(value: int | str) -> int | str:
    try:
        expressions.parse(value, bitwise=True)
    except expressions.ExprError as error:
        raise ValueError(f"expression {value!r}: {error}") from None
    return value


Expression = Annotated[
    StrictInt | StrictStr,
    AfterValidator(_check_expression),
    Field(description="An integer expression: + - * // % min max root, over P, P0.., sizes."),
]
BitExpression = Annotated[
    StrictInt | StrictStr,
    AfterValidator(_check_bit_expression),
    Field(description="An integer expression over the digit names; also ^ & | << >> < <= ..."),
]


def _check_c_name(value: str) -> str:
    problem = c_name_problem(value)
    if problem:
        raise ValueError(f"{problem}; choose another name")
    return value


Name = Annotated[
    StrictStr,
    StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", max_length=64),
    AfterValidator(_check_c_name),
    Field(description="An identifier: a letter or _, then letters, digits, _."),
]
DigitPair = Annotated[list[Name], Field(min_length=2, max_length=2)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _distinct(names: list[str], what: str) -> None:
    if len(set(names)) != len(names):
        raise ValueError(f"{what} must be distinct, got {names}")


class Cast(_Model):
    """Set an array's element type (one rounding from the problem precision)."""

    action: Literal["cast"]
    array: Name
    to: CastTarget


PositiveInt = Annotated[StrictInt, Field(ge=1)]
# Which optional fields each storage format takes (its parameters in relayout.types' table).
FORMAT_FIELDS = {name: tuple(params) for name, params in SPARSE_FORMAT_DEFAULTS.items() if params}


class Format(_Model):
    """Set a sparse array's storage format (bcsr takes block_size; sell_c_sigma takes C, sigma)."""

    action: Literal["format"]
    array: Name
    to: SparseFormatName
    block_size: (
        PositiveInt | Annotated[list[PositiveInt], Field(min_length=2, max_length=2)] | None
    ) = None
    C: PositiveInt | None = None
    sigma: PositiveInt | None = None

    @model_validator(mode="after")
    def _fields_of_the_format(self) -> Format:
        taken = FORMAT_FIELDS.get(self.to, ())
        for name in ("block_size", "C", "sigma"):
            if getattr(self, name) is not None and name not in taken:
                owner = next(fmt for fmt, fields in FORMAT_FIELDS.items() if name in fields)
                others = f"takes {', '.join(taken)}" if taken else "takes no other fields"
                raise ValueError(f"{name} applies only to {owner}; format {self.to} {others}")
        return self


class Distribute(_Model):
    """Hand a dimension (short form: dim + scheme) or a digit (digit form) to a grid dimension."""

    action: Literal["distribute"]
    array: Name
    grid_dim: Annotated[StrictInt, Field(ge=0)]
    dim: Annotated[StrictInt, Field(ge=0)] | None = None
    digit: Name | None = None
    scheme: Literal["block", "cyclic", "block_cyclic"] | None = None
    block_size: Expression | None = None

    @model_validator(mode="after")
    def _one_form(self) -> Distribute:
        if (self.dim is None) == (self.digit is None):
            raise ValueError(
                "give either dim (short form, with scheme) or digit (digit form), not both/neither"
            )
        if self.digit is not None and self.scheme == "block_cyclic":
            raise ValueError(
                "the digit form takes scheme block or cyclic; for block_cyclic(b) block the digit "
                "by b and distribute the coarse digit cyclic, or use the short form"
            )
        if self.scheme == "block_cyclic" and self.block_size is None:
            raise ValueError("scheme block_cyclic needs block_size")
        if self.scheme != "block_cyclic" and self.block_size is not None:
            raise ValueError("block_size applies only to scheme block_cyclic")
        return self


class Replicate(_Model):
    """Hold an array whole on every rank."""

    action: Literal["replicate"]
    array: Name


class Split(_Model):
    """Cut a whole dimension's digit into `parts` balanced bands: into [band, offset]."""

    action: Literal["split"]
    array: Name
    digit: Name
    parts: Expression
    into: DigitPair

    @model_validator(mode="after")
    def _distinct_into(self) -> Split:
        _distinct(self.into, "into")
        return self


class Unsplit(_Model):
    """Merge a split's [band, offset] back into one digit."""

    action: Literal["unsplit"]
    array: Name
    digits: DigitPair
    parts: Expression
    into: Name

    @model_validator(mode="after")
    def _distinct_digits(self) -> Unsplit:
        _distinct(self.digits, "digits")
        return self


class Block(_Model):
    """Cut a digit into [coarse, fine] with fine of extent `factor`."""

    action: Literal["block"]
    array: Name
    digit: Name
    factor: Expression
    into: DigitPair

    @model_validator(mode="after")
    def _distinct_into(self) -> Block:
        _distinct(self.into, "into")
        return self


class Unblock(_Model):
    """Merge a block's [coarse, fine] back into one digit."""

    action: Literal["unblock"]
    array: Name
    digits: DigitPair
    factor: Expression
    into: Name

    @model_validator(mode="after")
    def _distinct_digits(self) -> Unblock:
        _distinct(self.digits, "digits")
        return self


class Permute(_Model):
    """Reorder the digits; `order` names every current digit once, outermost first."""

    action: Literal["permute"]
    array: Name
    order: Annotated[list[Name], Field(min_length=1)]


class Pad(_Model):
    """Add `amount` dead cells at the end of a digit."""

    action: Literal["pad"]
    array: Name
    digit: Name
    amount: Expression


class Unpad(_Model):
    """Drop `amount` dead cells from the end of a digit."""

    action: Literal["unpad"]
    array: Name
    digit: Name
    amount: Expression


class Shuffle(_Model):
    """Renumber digits by a bijection f; stored cell p holds logical cell f_inv(p)."""

    action: Literal["shuffle"]
    array: Name
    digits: Annotated[list[Name], Field(min_length=1)]
    f: Annotated[list[BitExpression], Field(min_length=1)]
    f_inv: Annotated[list[BitExpression], Field(min_length=1)]

    @model_validator(mode="after")
    def _one_expression_per_digit(self) -> Shuffle:
        _distinct(self.digits, "digits")
        if not len(self.f) == len(self.f_inv) == len(self.digits):
            raise ValueError(
                f"f and f_inv need one expression per digit ({len(self.digits)}), "
                f"got {len(self.f)} and {len(self.f_inv)}"
            )
        return self


class LinearShuffle(_Model):
    """XOR-swizzle the digits' bits: stored bits = matrix @ logical bits over GF(2)."""

    action: Literal["linear_shuffle"]
    array: Name
    digits: Annotated[list[Name], Field(min_length=1)]
    bits: Annotated[list[Annotated[StrictInt, Field(ge=1, le=62)]], Field(min_length=1)]
    matrix: Annotated[list[list[Literal[0, 1]]], Field(min_length=1)]

    @model_validator(mode="after")
    def _square_matrix(self) -> LinearShuffle:
        _distinct(self.digits, "digits")
        if len(self.bits) != len(self.digits):
            raise ValueError(
                f"bits needs one entry per digit ({len(self.digits)}), got {len(self.bits)}"
            )
        total = sum(self.bits)
        if total > 62:
            raise ValueError(f"the digits' bits add up to {total}; at most 62 are accepted")
        if len(self.matrix) != total or any(len(row) != total for row in self.matrix):
            raise ValueError(f"matrix must be {total}x{total} (the sum of bits), one row per bit")
        return self


class Zip(_Model):
    """Regroup several arrays into one pointer: stacked along `dim` if one type, else a struct."""

    action: Literal["zip"]
    arrays: Annotated[list[Name], Field(min_length=2)]
    into: Name
    dim: Annotated[StrictInt, Field(ge=0)] | None = None

    @model_validator(mode="after")
    def _distinct_arrays(self) -> Zip:
        _distinct(self.arrays, "arrays")
        return self


class Unzip(_Model):
    """Regroup one pointer into several: a zip's fields, a complex's parts, or along `dim`."""

    action: Literal["unzip"]
    array: Name
    into: Annotated[list[Name], Field(min_length=1)]
    dim: Annotated[StrictInt, Field(ge=0)] | None = None

    @model_validator(mode="after")
    def _distinct_into(self) -> Unzip:
        _distinct(self.into, "into")
        return self


class Place(_Model):
    """Put a distributed array's tiles in host or device memory."""

    action: Literal["place"]
    array: Name
    on: Literal["host", "device"]


Operation = Annotated[
    Cast
    | Format
    | Distribute
    | Replicate
    | Split
    | Unsplit
    | Block
    | Unblock
    | Permute
    | Pad
    | Unpad
    | Shuffle
    | LinearShuffle
    | Zip
    | Unzip
    | Place,
    Field(discriminator="action"),
]

OPERATION_MODELS: dict[str, type[_Model]] = {
    "cast": Cast,
    "format": Format,
    "distribute": Distribute,
    "replicate": Replicate,
    "split": Split,
    "unsplit": Unsplit,
    "block": Block,
    "unblock": Unblock,
    "permute": Permute,
    "pad": Pad,
    "unpad": Unpad,
    "shuffle": Shuffle,
    "linear_shuffle": LinearShuffle,
    "zip": Zip,
    "unzip": Unzip,
    "place": Place,
}
ACTIONS: tuple[str, ...] = tuple(OPERATION_MODELS)
DIGIT_ACTIONS = frozenset(
    {"split", "unsplit", "block", "unblock", "permute", "pad", "unpad", "shuffle", "linear_shuffle"}
)
GRID_ACTIONS = frozenset({"distribute", "replicate", "place"})
SINGLE_NODE_ACTIONS = frozenset({"pad", "unpad", "shuffle", "linear_shuffle", "zip", "unzip"})


class Startup(_Model):
    """What settles the run: catalog libraries to link, and the processor grid over P."""

    load: list[StrictStr] = Field(default_factory=list)
    grid: list[Expression] = Field(default_factory=list)


# The shape of the recorded request JSON: 0 = records written before the stamp existed (the same
# fields), 1 = the JSON of this module. A change of the request's JSON shape raises it.
RECORDED_VERSION = 1


# The most operations a request may have: counted before any operation is validated, so that a
# longer list costs no more than its parse.
MAX_OPERATIONS = 128


class Requests(_Model):
    """A request: startup settings and operations that run top to bottom over the kernel's arrays."""

    startup: Startup = Field(default_factory=Startup)
    operations: list[Operation] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _bounded(cls, data: Any) -> Any:
        operations = data.get("operations") if isinstance(data, dict) else None
        if isinstance(operations, list) and len(operations) > MAX_OPERATIONS:
            raise RequestError(
                f"a request has at most {MAX_OPERATIONS} operations, this one has "
                f"{len(operations)}",
                entry="operations",
            )
        return data

    @classmethod
    def validate(cls, obj: Any) -> Requests:
        """A Requests from a dict, a Requests, or JSON text; RequestError naming the entry."""
        if isinstance(obj, Requests):
            return obj
        if isinstance(obj, bytes | bytearray):
            try:
                obj = obj.decode("utf-8")
            except UnicodeDecodeError as error:
                raise RequestError(f"not UTF-8 text: {error}", entry="request") from None
        if isinstance(obj, str):
            if obj.strip() == "":
                return cls()
            try:
                obj = json.loads(obj)
            except (json.JSONDecodeError, RecursionError) as error:
                raise RequestError(f"not JSON: {error}", entry="request") from None
        try:
            return REQUESTS_ADAPTER.validate_python(obj)
        except ValidationError as error:
            raise _request_error(error, obj) from None
        except RecursionError:
            raise RequestError("nested too deeply", entry="request") from None

    def to_dict(self) -> dict[str, Any]:
        """The request as a JSON object: defaults left out, keys sorted at every level."""
        data: dict[str, Any] = json.loads(self.to_json() or "{}")
        return data

    def to_json(self) -> str:
        """The request as JSON text: sorted keys, defaults left out, "" for an empty request."""
        data = self.model_dump(mode="json", exclude_defaults=True)
        if not data:
            return ""
        return json.dumps(data, sort_keys=True)

    @property
    def distributed(self) -> bool:
        return bool(self.startup.grid)

    def grid_at(self, P: int) -> tuple[int, ...]:
        """startup.grid evaluated at P ranks; RequestError unless each extent is a positive integer
        and their product is P."""
        if not self.startup.grid:
            raise RequestError(
                "the request has no startup.grid (a single-node run)", entry="startup.grid"
            )
        if P < 1:
            raise RequestError(f"the rank count must be at least 1, got {P}", entry="startup.grid")
        extents = []
        for k, text in enumerate(self.startup.grid):
            entry = f"startup.grid[{k}]"
            try:
                parsed = expressions.parse(text, bitwise=False)
                unknown = sorted(parsed.symbols() - {"P"})
                if unknown:
                    raise RequestError(
                        f"{text!r} names {unknown}; a grid extent is an expression over P only",
                        entry=entry,
                    )
                value = parsed.evaluate({"P": P})
            except expressions.ExprError as error:
                raise RequestError(f"{text!r} at P = {P}: {error}", entry=entry) from None
            if value < 1:
                raise RequestError(
                    f"{text!r} is {value} at P = {P}; an extent must be at least 1", entry=entry
                )
            extents.append(int(value))
        product = 1
        for extent in extents:
            product *= extent
        if product != P:
            raise RequestError(
                f"extents {extents} multiply to {product}, not P = {P}", entry="startup.grid"
            )
        return tuple(extents)

    @classmethod
    def from_plan(cls, plan: Any) -> Requests:
        """The short-form request (startup.grid, distribute, replicate, place) of a plan."""
        return cls.validate(short_form(plan))

    def to_recorded(self) -> str:
        """The request as a results database stores it: "" for none, else the JSON of to_json()
        with the stamp "v" = RECORDED_VERSION, so that a later reader knows which shape it is."""
        text = self.to_json()
        if not text:
            return ""
        data = json.loads(text)
        data["v"] = RECORDED_VERSION
        return json.dumps(data, sort_keys=True)

    @classmethod
    def from_recorded(cls, text: str | bytes | None) -> Requests:
        """A recorded request read back: "" is none, a record without "v" is version 0 (the same
        fields as version 1), and a version newer than RECORDED_VERSION is refused."""
        if not text:
            return cls()
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as error:
            raise RequestError(f"not JSON: {error}", entry="recorded request") from None
        if not isinstance(data, dict):
            raise RequestError("a recorded request is a JSON object", entry="recorded request")
        version = data.pop("v", 0)
        if isinstance(version, bool) or not isinstance(version, int) or version < 0:
            raise RequestError(
                f"version {version!r} is not a non-negative integer", entry="recorded request"
            )
        if version > RECORDED_VERSION:
            raise RequestError(
                f"version {version} is newer than this checkout reads (up to "
                f"{RECORDED_VERSION}); upgrade to read it",
                entry="recorded request",
            )
        return cls.validate(data)


REQUESTS_ADAPTER: TypeAdapter[Requests] = TypeAdapter(Requests)
OPERATION_ADAPTER: TypeAdapter[Any] = TypeAdapter(Operation)


def _entry_of(location: tuple[Any, ...], obj: Any) -> tuple[str, tuple[Any, ...]]:
    """The label of the entry an error location points into, and the rest of the location."""
    if len(location) >= 2 and location[0] == "operations" and isinstance(location[1], int):
        index = location[1]
        action = None
        rest = location[2:]
        if rest and rest[0] in OPERATION_MODELS:
            action, rest = rest[0], rest[1:]
        elif isinstance(obj, dict):
            operations = obj.get("operations")
            if isinstance(operations, list) and index < len(operations):
                entry = operations[index]
                if isinstance(entry, dict) and isinstance(entry.get("action"), str):
                    action = entry["action"]
        return entry_label(index, action), rest
    if len(location) >= 3 and location[0] == "startup" and isinstance(location[2], int):
        return f"startup.{location[1]}[{location[2]}]", location[3:]
    if location and location[0] == "startup":
        return "startup", location[1:]
    if location:
        return str(location[0]), location[1:]
    return "request", ()


def _request_error(error: ValidationError, obj: Any) -> RequestError:
    details = error.errors(include_url=False)
    first = details[0]
    cause = (first.get("ctx") or {}).get("error")
    if isinstance(cause, RequestError) and len(details) == 1:
        return cause  # a validator's own refusal, in its own words and entry
    location = tuple(first.get("loc", ()))
    entry, rest = _entry_of(location, obj)
    kind = first.get("type", "")
    message = str(first.get("msg", "invalid"))
    if message.startswith("Value error, "):
        message = message[len("Value error, ") :]
    field = ".".join(str(part) for part in rest if not str(part).startswith("function-"))
    # Union members appear in the location as type names; they say nothing to the reader.
    field = ".".join(
        part
        for part in field.split(".")
        if part and part not in ("int", "str") and "[" not in part and "function" not in part
    )
    if kind == "union_tag_invalid":
        tag = (first.get("ctx") or {}).get("tag")
        message = f"unknown action {tag!r}; accepted: {', '.join(ACTIONS)}"
    elif kind == "union_tag_not_found":
        message = f"missing 'action'; accepted: {', '.join(ACTIONS)}"
    elif kind == "extra_forbidden":
        accepted = _accepted_fields(location)
        name = location[-1] if location else "?"
        if len(location) == 1:
            entry = "request"
        message = f"unknown field {name!r}" + (f"; accepted: {accepted}" if accepted else "")
        field = ""
    elif kind == "model_type" or kind == "model_attributes_type":
        message = "expected an object"
    elif kind == "missing":
        message = "field required"
    others = len(details) - 1
    suffix = f" (and {others} more error{'s' if others > 1 else ''})" if others else ""
    text = f"{field}: {message}" if field else message
    return RequestError(text + suffix, entry=entry)


def _accepted_fields(location: tuple[Any, ...]) -> str:
    if len(location) >= 3 and location[0] == "operations" and location[2] in OPERATION_MODELS:
        return ", ".join(OPERATION_MODELS[location[2]].model_fields)
    if location and location[0] == "startup":
        return ", ".join(Startup.model_fields)
    if len(location) == 1:
        return ", ".join(Requests.model_fields)
    return ""


def _inline_refs(node: Any, definitions: dict[str, Any], stack: tuple[str, ...] = ()) -> Any:
    if isinstance(node, dict):
        if "$ref" in node:
            name = node["$ref"].split("/")[-1]
            if name in stack:
                raise ValueError(f"recursive schema at {name}; cannot inline")
            resolved = _inline_refs(definitions[name], definitions, (*stack, name))
            extra = {key: value for key, value in node.items() if key != "$ref"}
            return {**resolved, **_inline_refs(extra, definitions, stack)}
        result = {}
        for key, value in node.items():
            if key == "$defs":
                continue
            if key == "discriminator" and isinstance(value, dict):
                value = {k: v for k, v in value.items() if k != "mapping"}
            result[key] = _inline_refs(value, definitions, stack)
        return result
    if isinstance(node, list):
        return [_inline_refs(item, definitions, stack) for item in node]
    return node


def requests_schema() -> dict[str, Any]:
    """The JSON Schema of a request with every $ref inlined."""
    schema = REQUESTS_ADAPTER.json_schema()
    inlined: dict[str, Any] = _inline_refs(schema, schema.get("$defs", {}))
    return inlined


def requests_schema_text() -> str:
    """requests_schema() as deterministic text (sorted keys, two-space indent, final newline)."""
    return json.dumps(requests_schema(), sort_keys=True, indent=2) + "\n"
