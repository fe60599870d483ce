"""Checking a request against a kernel's arrays: the RequestsCheck answer (each pointer's element type,
packed extents and C declaration, or the refusal), and the C prototype of the kernel's ABI, written
with the C names (CNames) of whoever calls the kernel: relayout's own unless the caller gives its."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from relayout.algebra.lower import run_program
from relayout.algebra.state import PointerState, StructType, check_sizes
from relayout.arrays import parse_arrays
from relayout.distribution import plan_requests
from relayout.errors import RequestError
from relayout.models import Requests
from relayout.plan import DistributionPlan
from relayout.types import ELEMENT_TYPES, RELAYOUT_C_NAMES, CNames

__all__ = [
    "CheckedArray",
    "RequestsCheck",
    "c_declarations",
    "c_signature",
    "check_requests",
    "pointer_declaration",
]


class CheckedArray(BaseModel):
    """One kernel pointer after the request: element type, packed extents over d0, d1, ..., its C
    declaration; for a zip's whole the fields (`zips`) plus a `struct` or the stacked `dim`; for an
    unzip's part the array it came from (`unzips`); for a sparse array its `format`."""

    model_config = ConfigDict(extra="forbid")

    dtype: str
    extents: list[str]
    declaration: str
    typedef: str | None = None
    zips: list[str] | None = None
    struct: dict[str, str] | None = None
    dim: int | None = None
    unzips: str | None = None
    format: str | None = None


class RequestsCheck(BaseModel):
    """The answer to "what would this request do": refused with the reason, or accepted with each
    pointer in the kernel's order, the C signature when a kernel name was given, and the plan when
    the request is distributed and the rank count is known. Dump with exclude_none=True."""

    model_config = ConfigDict(extra="forbid")

    accepted: bool
    refusal: str | None = None
    arrays: dict[str, CheckedArray] | None = None
    signature: str | None = None
    plan: DistributionPlan | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = self.model_dump(mode="json", exclude_none=True)
        return data


def pointer_declaration(
    name: str, element: Any, intent: str, c_names: CNames = RELAYOUT_C_NAMES
) -> str:
    """`const float *restrict A` for an input-only pointer, `double *restrict A` otherwise."""
    c_type = (
        c_names.struct_type(name) if isinstance(element, StructType) else c_names.c_type(element)
    )
    const = "const " if intent == "in" else ""
    return f"{const}{c_type} *restrict {name}"


def _sparse_refusal(pointer: PointerState) -> str:
    return (
        f"{pointer.name} is a sparse array stored as {pointer.sparse}; its C form (one pointer per "
        "buffer) is the kernel manifest's, not relayout's"
    )


def _checked(pointer: PointerState, c_names: CNames) -> CheckedArray:
    if pointer.sparse:
        return CheckedArray(
            dtype=str(pointer.element),
            extents=[str(e) for e in pointer.dim_extents],
            declaration=f"/* {_sparse_refusal(pointer)} */",
            format=pointer.sparse,
        )
    element = pointer.element
    checked: dict[str, Any] = {
        "dtype": "struct" if isinstance(element, StructType) else element,
        "extents": [str(d.extent) for d in pointer.digits],
        "declaration": pointer_declaration(pointer.name, element, pointer.intent, c_names),
    }
    if isinstance(element, StructType):
        checked["typedef"] = element.c_typedef(c_names.struct_type(pointer.name))
        checked["struct"] = dict(element.members)
    if pointer.zip_kind is not None:
        checked["zips"] = list(pointer.zip_fields)
        if pointer.zip_kind == "stacked":
            checked["dim"] = pointer.stacked_dim
    if pointer.unzip_of is not None:
        checked["unzips"] = pointer.unzip_of
    return CheckedArray(**checked)


def check_requests(
    requests: Requests | Any,
    arrays: Mapping[str, Any],
    sizes: Mapping[str, int] | None = None,
    ranks: int | None = None,
    *,
    kernel: str | None = None,
    scalars: Sequence[tuple[str, str]] = (),
    c_names: CNames = RELAYOUT_C_NAMES,
) -> RequestsCheck:
    """Run the request over `arrays` (sizes bound where given) and answer accepted or refused.

    A malformed request raises RequestError (it is not an answer); malformed array specs raise
    ValueError, malformed sizes RequestError (`sizes.N: ...`). With a grid and `ranks`, the plan
    is lowered at that rank count too; with `kernel` the C signature is included. Declarations,
    typedefs and the signature name structs and storage-only types by `c_names`.
    """
    requests = Requests.validate(requests)
    specs = parse_arrays(arrays)
    # Malformed sizes are an error of the call, like a malformed array spec, not a refusal.
    sizes = check_sizes(sizes)
    grid = None
    try:
        if requests.startup.grid and ranks is not None:
            grid = requests.grid_at(ranks)
        state = run_program(requests, specs, sizes, grid, ranks)
        plan = plan_requests(requests, specs, sizes, ranks) if grid is not None else None
    except RequestError as error:
        return RequestsCheck(accepted=False, refusal=str(error))
    checked = {pointer.name: _checked(pointer, c_names) for pointer in state.pointers}
    signature = None
    if kernel is not None:
        try:
            signature = _signature_of(kernel, state.pointers, scalars, c_names)
        except ValueError as error:
            return RequestsCheck(accepted=False, refusal=str(error))
    return RequestsCheck(accepted=True, arrays=checked, signature=signature, plan=plan)


def _scalar_c_type(kind: str, c_names: CNames) -> str:
    return c_names.c_type(kind) if kind in ELEMENT_TYPES else kind


def _signature_of(
    kernel: str,
    pointers: Sequence[PointerState],
    scalars: Sequence[tuple[str, str]],
    c_names: CNames,
) -> str:
    typedefs = []
    parameters = []
    for pointer in pointers:
        if pointer.sparse:
            raise ValueError(_sparse_refusal(pointer))
        if isinstance(pointer.element, StructType):
            typedefs.append(pointer.element.c_typedef(c_names.struct_type(pointer.name)))
        parameters.append(
            pointer_declaration(pointer.name, pointer.element, pointer.intent, c_names)
        )
    parameters.extend(f"{_scalar_c_type(kind, c_names)} {name}" for name, kind in scalars)
    parameters.extend(["void *workspace", "int64_t workspace_bytes"])
    prototype = f"void {kernel}({', '.join(parameters)});"
    return "\n".join([*typedefs, prototype])


def c_signature(
    kernel_name: str,
    arrays: Mapping[str, Any],
    requests: Requests | Any,
    scalars: Sequence[tuple[str, str]] = (),
    c_names: CNames = RELAYOUT_C_NAMES,
) -> str:
    """The C prototype a kernel is called with under a request, each struct's typedef first.

    Pointers come in the kernel's order (arrays in the given order; a zip at its first field's
    place; an unzip's parts at the array's place); input-only pointers are `const T *restrict`;
    then `scalars` in the order given, each (name, type) with type an element type name (int64,
    fp64, ...) or a C type; then `void *workspace, int64_t workspace_bytes`. Structs and
    storage-only types are named by `c_names`. RequestError when the request is refused;
    ValueError for a sparse array, whose C form is the kernel manifest's.
    """
    requests = Requests.validate(requests)
    state = run_program(requests, parse_arrays(arrays))
    return _signature_of(kernel_name, state.pointers, scalars, c_names)


def c_declarations(
    arrays: Mapping[str, Any], requests: Requests | Any, c_names: CNames = RELAYOUT_C_NAMES
) -> list[str]:
    """Each pointer's C declaration in the kernel's order, a struct's typedef just before it."""
    requests = Requests.validate(requests)
    state = run_program(requests, parse_arrays(arrays))
    lines = []
    for pointer in state.pointers:
        if pointer.sparse:
            lines.append(f"/* {_sparse_refusal(pointer)} */")
            continue
        if isinstance(pointer.element, StructType):
            lines.append(pointer.element.c_typedef(c_names.struct_type(pointer.name)))
        lines.append(
            pointer_declaration(pointer.name, pointer.element, pointer.intent, c_names) + ";"
        )
    return lines
