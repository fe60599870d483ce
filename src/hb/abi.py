"""The C ABI of a kernel (ARCHITECTURE.md): `void <kernel>_<precision>(pointers..., size symbols and
scalars..., void *workspace, int64_t workspace_bytes)`, and the relayout array specs of its arrays."""

from __future__ import annotations

from typing import Any

from hb.kernels import Manifest
from hb.precision import C_TYPES
from hb.runner import scalar_argument


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


def default_signature(manifest: Manifest, precision: str) -> str:
    """The C prototype a submission implements when it sends no request."""
    parameters: list[str] = []
    for array in manifest.arrays:
        const = "const " if array.intent == "in" else ""
        element = C_TYPES[precision] if array.is_floating else f"{array.dtype}_t"
        if array.is_sparse:
            parameters += [
                f"{const}{element} *restrict {array.name}_data",
                f"const int64_t *restrict {array.name}_indices",
                f"const int64_t *restrict {array.name}_indptr",
            ]
        else:
            parameters.append(f"{const}{element} *restrict {array.name}")
    parameters += [f"int64_t {name}" for name in manifest.sizes]
    for scalar in manifest.scalars:
        kind = C_TYPES[precision] if scalar.type == "float" else "int64_t"
        parameters.append(f"{kind} {scalar.name}")
    parameters += ["void *workspace", "int64_t workspace_bytes"]
    return f"void {symbol(manifest, precision)}({', '.join(parameters)});"
