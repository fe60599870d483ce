"""The judge's side of sparse arrays: the format a request gives each sparse array, the refusals of
what a sparse array cannot take, the kernel's C ABI under those formats, and the conversion of the
canonical CSR inputs into each format's buffers, timed once per grade (convert_in_ns).

The C ABI of a formatted array: one pointer per buffer role, named ``<array>_<role>`` in the
format's role order (relayout.sparse.formats.FORMATS), at the array's place among the pointers; a
format that needs sizes the kernel cannot read from its size symbols (ELL's width, DIA's stored
diagonals, ...) passes them as ``int64_t <array>_<size>`` right after the kernel's size symbols and
before its scalars, so every pointer still comes first (docs/sparse.md tables them).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hb.kernels import ArrayDecl, Manifest
from hb.precision import C_TYPES
from relayout.models import DIGIT_ACTIONS, FORMAT_FIELDS
from relayout.sparse.formats import FORMATS, SparseFormatError, canonical_csr, from_csr

CANONICAL_FORMAT = "csr"
CANONICAL_ROLES = ("data", "indices", "indptr")
# Each format's extra int64_t arguments (named <array>_<size>), in ABI order.
SIZE_ARGUMENTS: dict[str, tuple[str, ...]] = {
    "csr": (),
    "csc": (),
    "coo": (),
    "ell": ("width",),
    "dia": ("ndiag",),
    "bcsr": ("block_rows", "block_cols", "nblocks"),
    "jds": ("ndiag",),
    "sell_c_sigma": ("C", "nslices"),
}
_ALL_ROLES = frozenset(role for fmt in FORMATS.values() for role in fmt.roles)


@dataclass(frozen=True)
class FormatChoice:
    """The storage format one sparse array reaches the kernel in: the last format operation naming
    it (`entry` labels it), or canonical CSR when none does (`entry` is None)."""

    array: str
    to: str = CANONICAL_FORMAT
    params: Mapping[str, Any] = field(default_factory=dict)
    entry: str | None = None

    @property
    def requested(self) -> bool:
        return self.entry is not None


@dataclass(frozen=True)
class KernelAbi:
    """A kernel's C ABI under a request: every pointer in order with its CheckedArray-shaped entry
    (dtype, extents, declaration, and `format` for a sparse array's buffers), the extra int64_t
    size arguments that follow the size symbols, and the C prototype."""

    symbol: str
    pointers: tuple[str, ...]
    arrays: dict[str, dict[str, Any]]
    size_arguments: tuple[str, ...]
    signature: str


@dataclass
class SparseConversion:
    """The problem inputs with each formatted sparse array's CSR triple replaced by its format's
    buffers, the values of the extra size arguments (ABI order), and the conversion's nanoseconds."""

    inputs: dict[str, np.ndarray]
    size_values: dict[str, int]
    convert_in_ns: int


@dataclass
class SparseRun:
    """What the runner needs for one grade of a kernel with sparse arrays: the pointers, the
    inputs to stage, the arguments after the pointers, and the sparse conversion's time."""

    abi: KernelAbi
    pointers: list[str]
    inputs: dict[str, np.ndarray]
    trailing_arguments: list[dict[str, Any]]
    convert_in_ns: int


# ---------------------------------------------------------------------------------------------
# Reading the request.


def _document(requests: Any) -> dict[str, Any]:
    """The request as a plain JSON document, from relayout's Requests, JSON text or a mapping."""
    if requests is None:
        return {}
    if hasattr(requests, "to_json"):
        text = requests.to_json()
        return json.loads(text) if text else {}
    if isinstance(requests, str | bytes):
        return json.loads(requests) if requests.strip() else {}
    return json.loads(json.dumps(dict(requests)))


def _operations(requests: Any) -> list[dict[str, Any]]:
    operations = _document(requests).get("operations") or []
    return [op if isinstance(op, dict) else {} for op in operations]


def _label(index: int, operation: Mapping[str, Any]) -> str:
    action = operation.get("action")
    return f"operations[{index}] ({action})" if action else f"operations[{index}]"


def sparse_arrays(manifest: Manifest) -> dict[str, ArrayDecl]:
    """The kernel's sparse arrays by name, in manifest order."""
    return {array.name: array for array in manifest.arrays if array.is_sparse}


def has_sparse(manifest: Manifest) -> bool:
    """Whether the kernel has a sparse array (the judge then routes it through this module)."""
    return any(array.is_sparse for array in manifest.arrays)


def _format_params(to: str, operation: Mapping[str, Any]) -> dict[str, Any]:
    """The format's parameters from the operation's fields, defaults filled; ValueError says
    which field is wrong and what is accepted."""
    fields = FORMAT_FIELDS.get(to, ())
    stray = [
        key
        for key in operation
        if key not in ("action", "array", "to", *fields) and operation[key] is not None
    ]
    if stray:
        owners = {f: n for n, names in FORMAT_FIELDS.items() for f in names}
        where = ", ".join(
            f"{key} applies only to {owners[key]}" if key in owners else f"{key} is not a field"
            for key in stray
        )
        takes = f"takes {', '.join(fields)}" if fields else "takes no other fields"
        raise ValueError(f"{where}; format {to} {takes}")
    from relayout.sparse.formats import format_params

    return format_params(to, {key: operation.get(key) for key in fields})


def format_choices(requests: Any, manifest: Manifest) -> dict[str, FormatChoice]:
    """Each sparse array's format under the request (the last format operation naming it wins,
    as the last cast of an array does). Assumes sparse_refusal found nothing."""
    choices = {name: FormatChoice(name) for name in sparse_arrays(manifest)}
    for index, operation in enumerate(_operations(requests)):
        if operation.get("action") != "format" or operation.get("array") not in choices:
            continue
        to = str(operation.get("to"))
        choices[operation["array"]] = FormatChoice(
            operation["array"], to, _format_params(to, operation), _label(index, operation)
        )
    return choices


def format_allowed(allowances: Any) -> bool:
    """Whether a setup's resolved allowances (requests_api.RequestAllowances) let a submission
    choose a sparse format: the sparse_format capability, which no preset lists."""
    return "sparse_format" in allowances.allow


# ---------------------------------------------------------------------------------------------
# Refusals (the list): each names the entry and says what would be accepted.


def _owner_of_part(name: str, sparse: Mapping[str, ArrayDecl]) -> str | None:
    """The sparse array whose buffer `name` is (A_data -> A), else None."""
    for array in sparse:
        prefix = f"{array}_"
        if name.startswith(prefix) and name[len(prefix) :] in _ALL_ROLES:
            return array
    return None


def _sparse_target(name: Any, sparse: Mapping[str, ArrayDecl]) -> str | None:
    """How a request names a sparse array or one of its buffers, for a refusal; None if it does not."""
    if not isinstance(name, str):
        return None
    if name in sparse:
        return f"{name} is a sparse array ({sparse[name].format})"
    owner = _owner_of_part(name, sparse)
    if owner is not None:
        return f"{name} is a buffer of the sparse array {owner}"
    return None


def _format_refusal(
    label: str, operation: Mapping[str, Any], manifest: Manifest, sparse: Mapping[str, ArrayDecl]
) -> str | None:
    name = operation.get("array")
    accepted = ", ".join(sparse) or "none"
    if name not in sparse:
        if any(array.name == name for array in manifest.arrays):
            return (
                f"{label}: {name} is a dense array; format applies only to the sparse arrays of "
                f"{manifest.name} ({accepted})"
            )
        owner = _owner_of_part(str(name), sparse)
        if owner is not None:
            return (
                f"{label}: {name} is a buffer of {owner}; format names the sparse array ({owner})"
            )
        return f"{label}: {manifest.name} has no array {name!r}; its sparse arrays: {accepted}"
    array = sparse[str(name)]
    to = operation.get("to")
    if to not in FORMATS:
        return f"{label}: unknown sparse format {to!r}; accepted: {', '.join(FORMATS)}"
    if array.intent != "in":
        return (
            f"{label}: {name} is written by {manifest.name} (intent {array.intent}); only an "
            "input-only sparse array takes another format"
        )
    try:
        _format_params(str(to), operation)
    except ValueError as error:
        return f"{label}: {error}"
    return None


def sparse_refusal(requests: Any, manifest: Manifest) -> str | None:
    """Why the judge refuses the request's sparse side, naming the entry; None when it stands.

    Refused: a processor grid on a kernel with a sparse array (distributing a sparse format is not
    implemented yet), a digit operation or a cast on a sparse array or its buffers, a zip or unzip
    of one, and a format operation on a dense or unknown array, to an unknown format, with a field
    its format does not take or a bad value, or on an array the kernel writes.
    """
    sparse = sparse_arrays(manifest)
    document = _document(requests)
    if sparse and (document.get("startup") or {}).get("grid"):
        return (
            f"startup.grid: {manifest.name} has the sparse array(s) {', '.join(sparse)}, and "
            "distributing a sparse format is not implemented yet; send the request without a grid"
        )
    for index, operation in enumerate(_operations(document)):
        action = operation.get("action")
        label = _label(index, operation)
        if action == "format":
            refusal = _format_refusal(label, operation, manifest, sparse)
            if refusal is not None:
                return refusal
        elif action == "cast":
            target = _sparse_target(operation.get("array"), sparse)
            if target is not None:
                return (
                    f"{label}: {target}; a cast of sparse values is not supported (an open item "
                    "of the requests API): cast the kernel's dense floating arrays only"
                )
        elif action in DIGIT_ACTIONS:
            target = _sparse_target(operation.get("array"), sparse)
            if target is not None:
                return (
                    f"{label}: {target}; it takes format, replicate and place, never a digit "
                    "operation: lay out the dense arrays only"
                )
        elif action in ("zip", "unzip"):
            names = operation.get("arrays") if action == "zip" else [operation.get("array")]
            for name in names if isinstance(names, list) else []:
                target = _sparse_target(name, sparse)
                if target is not None:
                    return (
                        f"{label}: {target}; sparse arrays and their buffers never regroup: "
                        f"{action} dense arrays only"
                    )
    return None


# ---------------------------------------------------------------------------------------------
# The C ABI.


def _entries_extent(manifest: Manifest, array: ArrayDecl) -> str:
    """The extent of a CSR-ordered entry buffer: the kernel's nnz where it declares one."""
    if "nnz" in manifest.sizes and len(sparse_arrays(manifest)) == 1:
        return "nnz"
    return f"{array.name}_indptr[{array.shape[0]}]"


def _buffer_extents(
    manifest: Manifest, array: ArrayDecl, choice: FormatChoice
) -> dict[str, list[str]]:
    """Each buffer's extents, over the kernel's size symbols and the format's size arguments."""
    rows, cols = (str(e) for e in array.shape)
    entries = _entries_extent(manifest, array)
    size = {s: f"{array.name}_{s}" for s in SIZE_ARGUMENTS[choice.to]}
    match choice.to:
        case "csr":
            return {"data": [entries], "indices": [entries], "indptr": [f"{rows} + 1"]}
        case "csc":
            return {"data": [entries], "indices": [entries], "indptr": [f"{cols} + 1"]}
        case "coo":
            return {"data": [entries], "row": [entries], "col": [entries]}
        case "ell":
            return {"data": [rows, size["width"]], "indices": [rows, size["width"]]}
        case "dia":
            return {"data": [size["ndiag"], cols], "offsets": [size["ndiag"]]}
        case "bcsr":
            r, c = choice.params["block_size"]
            return {
                "data": [size["nblocks"], str(r), str(c)],
                "indices": [size["nblocks"]],
                "indptr": [f"({rows} + {r - 1}) // {r} + 1" if r > 1 else f"{rows} + 1"],
            }
        case "jds":
            return {
                "data": [entries],
                "indices": [entries],
                "perm": [rows],
                "jd_ptr": [f"{size['ndiag']} + 1"],
            }
        case "sell_c_sigma":
            slots = f"{array.name}_slice_ptr[{size['nslices']}]"
            return {
                "data": [slots],
                "indices": [slots],
                "perm": [rows],
                "slice_ptr": [f"{size['nslices']} + 1"],
            }
    raise ValueError(f"{array.name}: unknown sparse format {choice.to!r}")


def _sparse_entries(
    manifest: Manifest, array: ArrayDecl, choice: FormatChoice, precision: str
) -> dict[str, dict[str, Any]]:
    fmt = FORMATS[choice.to]
    extents = _buffer_extents(manifest, array, choice)
    value_dtype = precision if array.is_floating else array.dtype
    const = "const " if array.intent == "in" else ""
    entries: dict[str, dict[str, Any]] = {}
    for role, name in zip(fmt.roles, fmt.c_names(array.name), strict=True):
        if role in fmt.index_roles:
            dtype, declaration = "int64", f"const int64_t *restrict {name}"
        else:
            c_type = C_TYPES[precision] if array.is_floating else f"{array.dtype}_t"
            dtype, declaration = value_dtype, f"{const}{c_type} *restrict {name}"
        entries[name] = {
            "dtype": dtype,
            "extents": extents[role],
            "declaration": declaration,
            "format": choice.to,
        }
    return entries


def _dense_entry(array: ArrayDecl, precision: str) -> dict[str, Any]:
    from hb.abi import pointer_declaration

    c_type = C_TYPES[precision] if array.is_floating else f"{array.dtype}_t"
    return {
        "dtype": precision if array.is_floating else array.dtype,
        # Over d0, d1, ... like relayout's answer for every dense pointer (its dims at the sizes).
        "extents": [f"d{i}" for i in range(len(array.shape))],
        "declaration": pointer_declaration(array.name, c_type, array.intent),
    }


def _as_entry(checked: Any) -> dict[str, Any]:
    """relayout's CheckedArray (or its dict) without its unset fields."""
    if hasattr(checked, "model_dump"):
        return dict(checked.model_dump(mode="json", exclude_none=True))
    return {key: value for key, value in dict(checked).items() if value is not None}


def kernel_abi(
    manifest: Manifest,
    requests: Any,
    precision: str,
    dense_arrays: Mapping[str, Any] | None = None,
) -> KernelAbi:
    """The kernel's C ABI under the request's formats. `dense_arrays` is relayout's check answer
    (RequestsCheck.arrays, in kernel order) when the request also lays out or casts dense arrays;
    without it the dense arrays keep the manifest's default pointers."""
    choices = format_choices(requests, manifest)
    sparse = sparse_arrays(manifest)
    arrays: dict[str, dict[str, Any]] = {}
    if dense_arrays is None:
        for array in manifest.arrays:
            if array.is_sparse:
                arrays.update(_sparse_entries(manifest, array, choices[array.name], precision))
            else:
                arrays[array.name] = _dense_entry(array, precision)
    else:
        for name, checked in dense_arrays.items():
            if name in sparse:
                arrays.update(_sparse_entries(manifest, sparse[name], choices[name], precision))
            else:
                arrays[name] = _as_entry(checked)
    size_arguments = tuple(
        f"{array}_{size}" for array, choice in choices.items() for size in SIZE_ARGUMENTS[choice.to]
    )
    from hb.abi import c_prototype

    symbol = f"{manifest.name}_{precision}"
    declarations = [entry["declaration"] for entry in arrays.values()]
    typedefs = [entry["typedef"] for entry in arrays.values() if entry.get("typedef")]
    prototype = c_prototype(symbol, declarations, manifest, precision, size_arguments) + ";"
    return KernelAbi(
        symbol=symbol,
        pointers=tuple(arrays),
        arrays=arrays,
        size_arguments=size_arguments,
        signature="\n".join([*typedefs, prototype]),
    )


def check_answer(
    manifest: Manifest,
    requests: Any,
    precision: str,
    dense_arrays: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """/requests/check's answer for a kernel with sparse arrays: refused with the reason, or
    accepted with every pointer (a sparse array's buffers with their `format`) and the signature."""
    refusal = sparse_refusal(requests, manifest)
    if refusal is not None:
        return {"accepted": False, "refusal": refusal}
    abi = kernel_abi(manifest, requests, precision, dense_arrays)
    return {"accepted": True, "arrays": abi.arrays, "signature": abi.signature}


# ---------------------------------------------------------------------------------------------
# The conversion.


def _size_values(choice: FormatChoice, buffers: Mapping[str, np.ndarray]) -> list[int]:
    match choice.to:
        case "ell":
            return [int(buffers["data"].shape[1])]
        case "dia":
            return [int(buffers["offsets"].shape[0])]
        case "bcsr":
            r, c = choice.params["block_size"]
            return [r, c, int(buffers["data"].shape[0])]
        case "jds":
            return [int(buffers["jd_ptr"].shape[0]) - 1]
        case "sell_c_sigma":
            return [int(choice.params["C"]), int(buffers["slice_ptr"].shape[0]) - 1]
    return []


def convert_sparse_inputs(
    manifest: Manifest,
    requests: Any,
    inputs: Mapping[str, np.ndarray],
    sizes: Mapping[str, int],
    warm: bool = False,
) -> SparseConversion:
    """Each sparse array of `inputs` (canonical CSR triples keyed `<array>_data` ...) converted to
    the format the request gives it; the conversions alone are timed (checking the CSR is not).
    `warm` converts each once untimed first, so that building or loading a format's library (and
    importing what it uses) is not timed as the conversion.

    An array no format operation names is left as it is, untimed. SparseFormatError when the CSR
    triple is malformed.
    """
    converted = dict(inputs)
    size_values: dict[str, int] = {}
    convert_in_ns = 0
    for name, choice in format_choices(requests, manifest).items():
        array = manifest.array(name)
        if not choice.requested:
            continue
        shape = manifest.shape_of(array, dict(sizes))
        data, indices, indptr = (inputs[f"{name}_{role}"] for role in CANONICAL_ROLES)
        csr = canonical_csr(data, indices, indptr, (int(shape[0]), int(shape[1])))
        if warm:
            from_csr(csr, choice.to, **choice.params)
        start = time.perf_counter_ns()
        buffers = from_csr(csr, choice.to, **choice.params)
        convert_in_ns += time.perf_counter_ns() - start
        for role in CANONICAL_ROLES:
            del converted[f"{name}_{role}"]
        for role, buffer in buffers.items():
            converted[f"{name}_{role}"] = buffer
        for size, value in zip(
            SIZE_ARGUMENTS[choice.to], _size_values(choice, buffers), strict=True
        ):
            size_values[f"{name}_{size}"] = value
    return SparseConversion(converted, size_values, convert_in_ns)


def insert_size_arguments(
    manifest: Manifest, trailing: Sequence[dict[str, Any]], size_values: Mapping[str, int]
) -> list[dict[str, Any]]:
    """hb.abi.trailing_arguments' list (size symbols, then scalars) with the formats' size
    arguments placed after the size symbols."""
    count = len(manifest.sizes)
    extra = [{"kind": "int64", "value": int(value)} for value in size_values.values()]
    return [*trailing[:count], *extra, *trailing[count:]]


def prepare_sparse_run(
    manifest: Manifest,
    requests: Any,
    precision: str,
    sizes: Mapping[str, int],
    scalars: Mapping[str, float],
    inputs: Mapping[str, np.ndarray],
    dense_arrays: Mapping[str, Any] | None = None,
    warm: bool = False,
) -> SparseRun:
    """The one call the judge makes per grade of a kernel with sparse arrays, after the inputs are
    generated: the ABI, the inputs with the sparse arrays in their formats (the reference keeps
    the canonical inputs), the arguments after the pointers, and convert_in_ns of the conversion."""
    from hb.abi import trailing_arguments

    abi = kernel_abi(manifest, requests, precision, dense_arrays)
    conversion = convert_sparse_inputs(manifest, requests, inputs, sizes, warm)
    missing = [name for name in abi.size_arguments if name not in conversion.size_values]
    if missing:
        raise SparseFormatError(f"no value for the size argument(s) {missing}")
    ordered = {name: conversion.size_values[name] for name in abi.size_arguments}
    trailing = insert_size_arguments(
        manifest, trailing_arguments(manifest, dict(sizes), dict(scalars), precision), ordered
    )
    return SparseRun(
        abi=abi,
        pointers=list(abi.pointers),
        inputs=conversion.inputs,
        trailing_arguments=trailing,
        convert_in_ns=conversion.convert_in_ns,
    )


def has_dense_operations(requests: Any) -> bool:
    """Whether the request has operations besides format (casts, layouts and regroups of dense
    arrays), which relayout's checks and conversion programs handle."""
    return any(operation.get("action") != "format" for operation in _operations(requests))


# ---------------------------------------------------------------------------------------------
# The prompt's sparse section.

# The fields the prompt shows each parameterised format with (its extents use the same values).
_PROMPT_FIELDS: dict[str, dict[str, Any]] = {
    "bcsr": {"block_size": [4, 4]},
    "sell_c_sigma": {"C": 8, "sigma": 64},
}


def sparse_prompt_section(manifest: Manifest, precision: str) -> str:
    """The task prompt's sparse section, where the task offers format: the operation, then per
    format its buffers with their extents and the size arguments it adds, all derived from the
    same tables as the ABI ("" for a kernel without sparse arrays)."""
    sparse = sparse_arrays(manifest)
    if not sparse:
        return ""
    name = next(iter(sparse))
    value_type = C_TYPES[precision]
    lines = [
        "## Sparse formats",
        "",
        f'`{{"action": "format", "array": "{name}", "to": "<format>"}}` gives a sparse array '
        "another storage format; the judge converts the canonical CSR once per grade, outside "
        "the score. Each buffer is a pointer `<array>_<role>` at the array's place (values "
        f"`{value_type} *`, indices `int64_t *`); the sizes a format adds are `int64_t` "
        "arguments right after the kernel's size symbols.",
        "",
    ]
    for to, fmt in FORMATS.items():
        fields = _PROMPT_FIELDS.get(to, {})
        choice = FormatChoice(name, to, _format_params(to, fields), "prompt")
        extents = _buffer_extents(manifest, sparse[name], choice)
        buffers = ", ".join(f"{name}_{role}[{']['.join(extents[role])}]" for role in fmt.roles)
        sizes = ", ".join(f"{name}_{s}" for s in SIZE_ARGUMENTS[to])
        line = f"- `{to}`: {fmt.description}. Buffers {buffers}"
        line += f"; sizes {sizes}." if sizes else "."
        if fields:
            example = json.dumps({"to": to, **fields})
            line += f" Fields, e.g. `{example}`."
        lines.append(line)
    lines.append("")
    lines.append(
        "Refused: digit operations, casts, zip and unzip on a sparse array, format on a dense "
        "array, and a processor grid on a kernel with a sparse array."
    )
    return "\n".join(lines) + "\n"
