"""The entry point a kernel implements, rendered in each submission language: C (hb.abi.c_prototype
and relayout's signatures), C++ (the same prototype, `extern "C"`), Fortran (a `bind(C)`
subroutine, extents reversed, a zip's struct a `type, bind(C)`) and Python (the function the
in-box runner calls with numpy arrays), all from one description of the parameters and the one
table of element types (relayout.types)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hb.kernels import Manifest
from relayout import expr as E
from relayout.types import element_type


@dataclass(frozen=True)
class Pointer:
    """One pointer parameter: its element type (a relayout name, or a struct's members in order),
    whether the kernel writes it, and its row-major extents over the size symbols (None where an
    extent is not known before the run)."""

    name: str
    element: str | tuple[tuple[str, str], ...]
    intent: str
    extents: tuple[str | None, ...]
    struct_name: str | None = None


@dataclass(frozen=True)
class Entry:
    """The parameters of an entry point in ABI order: pointers, int64 size symbols and size
    arguments, scalars (name, element type), the communicator of an MPI entry point, then the
    workspace and its size."""

    name: str
    pointers: tuple[Pointer, ...]
    integers: tuple[str, ...]
    scalars: tuple[tuple[str, str], ...]
    communicator: bool = False


# -- building the description ------------------------------------------------------------------


def _source_array(name: str, entry: Mapping[str, Any]) -> str:
    if entry.get("zips"):
        return str(entry["zips"][0])
    if entry.get("unzips"):
        return str(entry["unzips"])
    return name


def _intent(name: str, entry: Mapping[str, Any], manifest: Manifest) -> str:
    intents = {array.name: array.intent for array in manifest.arrays}
    if entry.get("zips"):
        written = any(intents.get(field, "in") != "in" for field in entry["zips"])
        return "inout" if written else "in"
    source = _source_array(name, entry)
    if source in intents and not entry.get("format"):
        return intents[source]
    # A sparse array's buffers: the judge writes an input-only one `const`.
    return "in" if str(entry.get("declaration", "")).startswith("const ") else "inout"


def _extent(text: str, dims: Mapping[str, E.Expr]) -> str | None:
    try:
        return str(E.parse(text).substitute(dims))
    except (E.ExprError, ValueError):
        return None  # an extent read from another buffer (A_indptr[M]) is known at run time only


def entry_from_arrays(
    manifest: Manifest,
    precision: str,
    arrays: Mapping[str, Mapping[str, Any]],
    size_arguments: Sequence[str] = (),
    struct_prefix: str = "hb_zip_",
) -> Entry:
    """The single-node entry point from /requests/check's pointer entries (relayout's
    CheckedArray dumps, or hb.sparse's entries): each pointer's extents over d0, d1, ... are
    bound to its source array's declared shape."""
    shapes = {array.name: array.shape for array in manifest.arrays}
    pointers = []
    for name, entry in arrays.items():
        declared = shapes.get(_source_array(name, entry), [])
        dims = {f"d{i}": E.parse(str(extent)) for i, extent in enumerate(declared)}
        struct = entry.get("struct")
        element: str | tuple[tuple[str, str], ...] = (
            tuple((str(k), str(v)) for k, v in struct.items()) if struct else str(entry["dtype"])
        )
        pointers.append(
            Pointer(
                name=name,
                element=element,
                intent=_intent(name, entry, manifest),
                extents=tuple(_extent(str(e), dims) for e in entry.get("extents", [])),
                struct_name=f"{struct_prefix}{name}" if struct else None,
            )
        )
    return Entry(
        name=f"{manifest.name}_{precision}",
        pointers=tuple(pointers),
        integers=(*manifest.sizes, *size_arguments),
        scalars=tuple(
            (s.name, precision if s.type == "float" else "int64") for s in manifest.scalars
        ),
    )


def mpi_entry(kernel: Any, precision: str, casts: Mapping[str, str] | None = None) -> Entry:
    """The MPI entry point `<kernel>_mpi_<precision>` of a catalog kernel: each pointer a rank's
    tile (extents known at run time), the communicator before the workspace."""
    from hb.distributed.signature import mpi_entry_point

    casts = casts or {}
    return Entry(
        name=mpi_entry_point(kernel, precision),
        pointers=tuple(
            Pointer(a.name, casts.get(a.name, precision), a.intent, (None,)) for a in kernel.arrays
        ),
        integers=tuple(kernel.sizes),
        scalars=tuple(
            (s.name, precision if s.type == "float" else "int64") for s in kernel.scalars
        ),
        communicator=True,
    )


# -- C++ -----------------------------------------------------------------------------------------


def cpp_signature(c_signature: str) -> str:
    """A C signature (typedefs, then the prototype) as C++ declares it: the prototype
    `extern "C"`, its pointers `__restrict__` (C++ has no `restrict`)."""
    lines = c_signature.splitlines()
    prototype = lines[-1].replace("*restrict ", "*__restrict__ ")
    return "\n".join([*lines[:-1], f'extern "C" {prototype}'])


def cuda_signature(c_signature: str) -> str:
    """The host entry point a cuda submission defines: C++'s declaration (nvcc compiles C++),
    after the lines saying that every pointer, the workspace too, is device memory."""
    return (
        "// CUDA: a host function called with device pointers (the workspace too); the kernels\n"
        "// it launches are timed until the judge synchronizes the device after it returns\n"
        + cpp_signature(c_signature)
    )


# -- Fortran ---------------------------------------------------------------------------------------


def fortran_type(name: str) -> str:
    """The iso_c_binding type of an element type: real and complex where Fortran has the C type,
    otherwise its bits as an integer of the same size (fp16, bf16, fp8, unsigned integers)."""
    entry = element_type(name)
    if entry.complex:
        return f"complex({'c_float_complex' if entry.real_part == 'fp32' else 'c_double_complex'})"
    if entry.c_type == "double":
        return "real(c_double)"
    if entry.c_type == "float":
        return "real(c_float)"
    return f"integer(c_int{8 * entry.size}_t)"


def _fortran_expression(node: E.Expr) -> str | None:
    """An extent in Fortran (integer arithmetic; // on non-negative extents is Fortran's /)."""
    if isinstance(node, E.Const):
        return str(node.value)
    if isinstance(node, E.Sym):
        return node.name
    if isinstance(node, E.Neg):
        inner = _fortran_expression(node.operand)
        return None if inner is None else f"(-{inner})"
    if isinstance(node, E.Bin) and node.op in ("+", "-", "*", "//", "%"):
        left, right = _fortran_expression(node.left), _fortran_expression(node.right)
        if left is None or right is None:
            return None
        if node.op == "%":
            return f"mod({left}, {right})"
        return f"({left} {'/' if node.op == '//' else node.op} {right})"
    if isinstance(node, E.Call) and node.function in ("min", "max"):
        parts = [_fortran_expression(arg) for arg in node.args]
        if any(part is None for part in parts) or len(parts) < 2:
            return None
        return f"{node.function}({', '.join(str(p) for p in parts)})"
    return None


def _fortran_extent(text: str | None) -> str | None:
    if text is None:
        return None
    rendered = _fortran_expression(E.parse(text))
    if rendered is not None and isinstance(E.parse(text), E.Bin) and rendered[0] == "(":
        return rendered[1:-1]  # the outermost operation needs no parentheses
    return rendered


def _fortran_dimensions(pointer: Pointer) -> tuple[str, str]:
    """The dummy's dimensions, the C extents reversed (numpy's last dimension is Fortran's
    first), and a comment where they cannot all be written: an assumed-size `*` stands for the
    last Fortran extent when only it is unknown, one flat `(*)` otherwise."""
    reversed_extents = [_fortran_extent(e) for e in reversed(pointer.extents)]
    if not reversed_extents:
        return "(*)", ""
    known = reversed_extents[:-1]
    if all(e is not None for e in known):
        last = reversed_extents[-1] or "*"
        return f"({', '.join([*(str(e) for e in known), last])})", ""
    c_shape = ", ".join(e if e is not None else "?" for e in pointer.extents)
    return "(*)", f"  ! [{c_shape}] in C order, one flat buffer"


def _struct_definition(pointer: Pointer) -> list[str]:
    assert isinstance(pointer.element, tuple) and pointer.struct_name
    members = [f"    {fortran_type(kind)} :: {name}" for name, kind in pointer.element]
    return [f"  type, bind(C) :: {pointer.struct_name}", *members,
            f"  end type {pointer.struct_name}"]  # fmt: skip


def fortran_interface(entry: Entry) -> str:
    """The `bind(C)` subroutine a Fortran submission defines (an empty body compiles as it is):
    scalars and sizes `value`, each pointer an explicit-shape dummy with the C extents reversed,
    the workspace a `type(c_ptr)`. With a zip's struct the subroutine sits in a module that
    defines the struct as `type, bind(C)` (C's layout: natural alignment)."""
    names = [p.name for p in entry.pointers] + list(entry.integers) + [n for n, _ in entry.scalars]
    if entry.communicator:
        names.append("comm")
    names += ["workspace", "workspace_bytes"]
    declarations = ["  use, intrinsic :: iso_c_binding", "  implicit none"]
    declarations += [f"  integer(c_int64_t), value :: {name}" for name in entry.integers]
    declarations += [f"  {fortran_type(kind)}, value :: {name}" for name, kind in entry.scalars]
    for pointer in entry.pointers:
        kind = (
            f"type({pointer.struct_name})"
            if pointer.struct_name
            else fortran_type(str(pointer.element))
        )
        dims, note = _fortran_dimensions(pointer)
        intent = "in" if pointer.intent == "in" else "inout"
        declarations.append(f"  {kind}, intent({intent}) :: {pointer.name}{dims}{note}")
    if entry.communicator:
        declarations.append("  integer(c_int), value :: comm  ! MPICH's MPI_Comm (a C int)")
    declarations += [
        "  type(c_ptr), value :: workspace",
        "  integer(c_int64_t), value :: workspace_bytes",
    ]
    arguments = ", ".join(names)
    subroutine = [
        f'subroutine {entry.name}({arguments}) bind(C, name="{entry.name}")',
        *declarations,
        f"end subroutine {entry.name}",
    ]
    structs = [p for p in entry.pointers if p.struct_name]
    if not structs:
        return "\n".join(subroutine)
    module = [f"module {entry.name}_types", "  use, intrinsic :: iso_c_binding", "  implicit none"]
    for pointer in structs:
        module += _struct_definition(pointer)
    module.append("contains")
    module += ["  " + line for line in subroutine]
    module.append(f"end module {entry.name}_types")
    return "\n".join(module)


# -- Python ---------------------------------------------------------------------------------------


def _numpy_name(element: str | tuple[tuple[str, str], ...]) -> str:
    if isinstance(element, tuple):
        fields = ", ".join(f"{name}: {_numpy_name(kind)}" for name, kind in element)
        return f"structured ({fields}; C alignment)"
    return str(element_type(element).numpy_dtype.name)


def python_signature(entry: Entry) -> str:
    """The function a python submission defines, with what each argument holds: a numpy array
    per pointer (C-ordered, the extents as in C), the sizes as int, the scalars as numpy scalars
    of their type, the workspace a uint8 array and its size."""
    names = [p.name for p in entry.pointers] + list(entry.integers) + [n for n, _ in entry.scalars]
    lines = [f"def {entry.name}({', '.join([*names, 'workspace', 'workspace_bytes'])}):"]
    for pointer in entry.pointers:
        shape = ", ".join(e if e is not None else "?" for e in pointer.extents)
        use = "read only" if pointer.intent == "in" else "written in place"
        lines.append(f"    # {pointer.name}: numpy {_numpy_name(pointer.element)} [{shape}], {use}")
    for name in entry.integers:
        lines.append(f"    # {name}: int")
    for name, kind in entry.scalars:
        lines.append(f"    # {name}: numpy {_numpy_name(kind)}")
    lines.append("    # workspace: numpy uint8 [workspace_bytes], zeroed before every call")
    return "\n".join(lines)


def render(language: str, entry: Entry, c_signature: str) -> str:
    """The entry point as a submission in `language` implements it; `c_signature` is the C one
    (typedefs, then the prototype), which C shows as it is."""
    if language == "cpp":
        return cpp_signature(c_signature)
    if language == "cuda":
        return cuda_signature(c_signature)
    if language == "fortran":
        return fortran_interface(entry)
    if language == "python":
        return python_signature(entry)
    return c_signature


def localized(
    language: str, document: dict[str, Any], manifest: Manifest, precision: str, requests: Any
) -> dict[str, Any]:
    """/requests/check's accepted answer (or a task's default one) with its `signature` in
    `language`: the single-node entry point over the answer's pointers (a sparse kernel's size
    arguments after its size symbols), or with a grid the MPI one."""
    if language == "c" or not document.get("accepted") or not document.get("signature"):
        return document
    if requests.startup.grid:
        from hb.distributed.grade import requested_casts

        entry = mpi_entry(manifest, precision, requested_casts(requests))
    else:
        from hb import sparse

        size_arguments: tuple[str, ...] = ()
        if sparse.has_sparse(manifest):
            size_arguments = sparse.kernel_abi(manifest, requests, precision).size_arguments
        entry = entry_from_arrays(manifest, precision, document["arrays"], size_arguments)
    return {**document, "signature": render(language, entry, str(document["signature"]))}
