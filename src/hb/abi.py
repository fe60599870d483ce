"""The C ABI of a kernel (ARCHITECTURE.md): `void <kernel>_<precision>(pointers..., size symbols and
scalars..., void *workspace, int64_t workspace_bytes)`, and the relayout array specs of its arrays."""

from __future__ import annotations

from typing import Any

from hb.kernels import Manifest
from hb.precision import C_TYPES


def scalar_argument(kind: str, value: float, problem_precision: str) -> dict[str, Any]:
    """A scalar's ABI entry: int scalars and size symbols are int64_t; a floating scalar takes the
    problem precision (a cast changes pointers, never scalars)."""
    if kind == "int":
        return {"kind": "int64", "value": int(value)}
    ctype = {"fp64": "double", "fp32": "float"}.get(problem_precision)
    if ctype is None:
        raise ValueError(f"floating scalars at {problem_precision} cannot be passed through ctypes")
    return {"kind": ctype, "value": float(value)}


def symbol(manifest: Manifest, precision: str) -> str:
    return f"{manifest.name}_{precision}"


def relayout_arrays(manifest: Manifest, precision: str) -> dict[str, str]:
    """Each array as relayout's ArraySpec text at the problem precision (`fp64[N,N]:inout`,
    `csr:fp64[M,N]`)."""
    specs: dict[str, str] = {}
    for array in manifest.arrays:
        dtype = precision if array.is_floating else array.dtype
        prefix = f"{array.format}:" if array.is_sparse else ""
        extents = ",".join(str(e) for e in array.shape)
        intent = "" if array.intent == "in" else f":{array.intent}"
        specs[array.name] = f"{prefix}{dtype}[{extents}]{intent}"
    return specs


def trailing_arguments(
    manifest: Manifest, sizes: dict[str, int], scalars: dict[str, float], precision: str
) -> list[dict[str, Any]]:
    """The ABI's arguments after the pointers: size symbols, then scalars, in manifest order."""
    arguments = [{"kind": "int64", "value": int(sizes[name])} for name in manifest.sizes]
    for scalar in manifest.scalars:
        arguments.append(scalar_argument(scalar.type, scalars[scalar.name], precision))
    return arguments


def abi_scalars(manifest: Manifest, precision: str) -> list[tuple[str, str]]:
    """The ABI's non-pointer parameters as (name, element type) for relayout's c_signature."""
    scalars = [(name, "int64") for name in manifest.sizes]
    scalars += [(s.name, precision if s.type == "float" else "int64") for s in manifest.scalars]
    return scalars


def pointer_declaration(name: str, c_type: str, intent: str) -> str:
    """One pointer parameter: `const` where the kernel only reads it, always `restrict`."""
    return f"{'const ' if intent == 'in' else ''}{c_type} *restrict {name}"


def c_prototype(
    entry_point: str, pointers: list[str], manifest: Any, precision: str,
    size_arguments: tuple[str, ...] = (), extra: tuple[str, ...] = (),
) -> str:  # fmt: skip
    """The one renderer of the judge's C prototypes (single-node, sparse and MPI entry points):
    `void <entry>(pointers..., int64_t size symbols..., size arguments..., scalars..., extra...,
    void *workspace, int64_t workspace_bytes)` without the closing semicolon. `manifest` needs
    `sizes` and `scalars` (a scalar's `type` or `kind` of "float" takes the problem precision)."""
    parameters = list(pointers)
    parameters += [f"int64_t {name}" for name in (*manifest.sizes, *size_arguments)]
    for scalar in manifest.scalars:
        kind = getattr(scalar, "type", None) or getattr(scalar, "kind", None)
        parameters.append(f"{C_TYPES[precision] if kind == 'float' else 'int64_t'} {scalar.name}")
    parameters += [*extra, "void *workspace", "int64_t workspace_bytes"]
    return f"void {entry_point}({', '.join(parameters)})"


def default_signature(manifest: Manifest, precision: str) -> str:
    """The C prototype a submission implements when it sends no request."""
    pointers: list[str] = []
    for array in manifest.arrays:
        element = C_TYPES[precision] if array.is_floating else f"{array.dtype}_t"
        if array.is_sparse:
            pointers += [
                pointer_declaration(f"{array.name}_data", element, array.intent),
                pointer_declaration(f"{array.name}_indices", "int64_t", "in"),
                pointer_declaration(f"{array.name}_indptr", "int64_t", "in"),
            ]
        else:
            pointers.append(pointer_declaration(array.name, element, array.intent))
    return c_prototype(symbol(manifest, precision), pointers, manifest, precision) + ";"
