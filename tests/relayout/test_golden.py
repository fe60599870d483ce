"""Golden files for rendered text: the inlined JSON Schema and the C declarations of a set of
requests, each compared byte for byte with its generator's output.

After an intended change, regenerate them with
    RELAYOUT_REGEN_GOLDEN=1 .venv/bin/pytest tests/relayout/test_golden.py
and review the diff before committing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from relayout import RELAYOUT_C_NAMES, c_declarations, c_signature, requests_schema_text

GOLDEN = Path(__file__).parent / "golden"
REGENERATE = os.environ.get("RELAYOUT_REGEN_GOLDEN") == "1"

# (title, kernel, arrays, scalars, request): each renders its declarations and its signature.
CASES: list[tuple[str, str, dict[str, str], list[tuple[str, str]], dict[str, Any]]] = [
    (
        "no request",
        "axpy_fp64",
        {"x": "fp64[N]", "y": "fp64[N]:inout"},
        [("N", "int64"), ("alpha", "fp64")],
        {},
    ),
    (
        "casts to every precision",
        "casts_fp64",
        {f"a{k}": "fp64[N]:inout" for k in range(6)},
        [("N", "int64")],
        {
            "operations": [
                {"action": "cast", "array": "a1", "to": "fp32"},
                {"action": "cast", "array": "a2", "to": "fp16"},
                {"action": "cast", "array": "a3", "to": "bf16"},
                {"action": "cast", "array": "a4", "to": "fp8_e4m3"},
                {"action": "cast", "array": "a5", "to": "fp8_e5m2"},
            ]
        },
    ),
    (
        "spec's layout example",
        "jacobi_2d_fp64",
        {"A": "fp64[N,N]:inout", "B": "fp64[N,N]"},
        [("N", "int64"), ("steps", "int64")],
        {
            "operations": [
                {"action": "permute", "array": "A", "order": ["i1", "i0"]},
                {"action": "block", "array": "B", "digit": "i1", "factor": 4, "into": ["b", "f"]},
            ]
        },
    ),
    (
        "mixed zip",
        "kernel",
        {"u": "fp64[N]", "v": "fp64[N]", "n": "int32[N]:out"},
        [("N", "int64")],
        {
            "operations": [
                {"action": "cast", "array": "u", "to": "fp32"},
                {"action": "zip", "arrays": ["u", "v"], "into": "uv"},
            ]
        },
    ),
    (
        "struct of half and storage types",
        "kernel",
        {"a": "fp64[N]:inout", "b": "fp64[N]:inout", "c": "fp64[N]:inout", "d": "int8[N]:inout"},
        [("N", "int64")],
        {
            "operations": [
                {"action": "cast", "array": "a", "to": "fp16"},
                {"action": "cast", "array": "b", "to": "bf16"},
                {"action": "cast", "array": "c", "to": "fp8_e5m2"},
                {"action": "zip", "arrays": ["d", "a", "b", "c"], "into": "abcd"},
            ]
        },
    ),
    (
        "stacked zip and unzips",
        "kernel",
        {"x": "fp32[N]", "y": "fp32[N]", "z": "complex128[N]:out", "q": "fp64[4,N]:inout"},
        [("N", "int64"), ("scale", "double")],
        {
            "operations": [
                {"action": "zip", "arrays": ["x", "y"], "into": "xy", "dim": 0},
                {"action": "unzip", "array": "z", "into": ["z_re", "z_im"]},
                {"action": "cast", "array": "z_re", "to": "fp32"},
                {"action": "unzip", "array": "q", "into": ["q0", "q1", "q2", "q3"], "dim": 0},
            ]
        },
    ),
]


def declarations_text() -> str:
    blocks = []
    for title, kernel, arrays, scalars, request in CASES:
        lines = [
            f"/* {title} */",
            *c_declarations(arrays, request),
            c_signature(kernel, arrays, request, scalars),
        ]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


GENERATORS = {
    "requests_schema.json": requests_schema_text,
    "c_declarations.h": declarations_text,
}


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_golden_file(name: str) -> None:
    path = GOLDEN / name
    generated = GENERATORS[name]()
    if REGENERATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(generated)
    assert path.exists(), f"{path} is missing; run with RELAYOUT_REGEN_GOLDEN=1 to write it"
    assert path.read_text() == generated, (
        f"{name} differs from its generator; see the module docstring"
    )


STORAGE_TYPEDEFS = (
    "#include <stdint.h>\n#include <stddef.h>\n#include <stdio.h>\n"
    + RELAYOUT_C_NAMES.storage_typedefs()
)


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not on this machine")
def test_declarations_compile_and_structs_match_numpy(tmp_path: Path) -> None:
    """The rendered C is valid C11, and each struct has numpy's aligned size and offsets."""
    from relayout import StructType

    structs = [
        StructType((("u", "fp32"), ("v", "fp64"))),
        StructType((("d", "int8"), ("a", "fp16"), ("b", "bf16"), ("c", "fp8_e5m2"))),
        StructType((("a", "int8"), ("z", "complex128"), ("b", "fp16"))),
        StructType((("a", "uint8"), ("z", "complex64"), ("b", "int64"), ("c", "fp8_e4m3"))),
    ]
    source = STORAGE_TYPEDEFS + "#include <complex.h>\n"
    for k, struct in enumerate(structs):
        source += struct.c_typedef(f"s{k}") + "\n"
    seen: set[str] = set()
    for line in declarations_text().splitlines():
        # Each case repeats its typedef before its signature; C wants one definition.
        if line.startswith(("typedef", "void")) and line not in seen:
            seen.add(line)
            source += line + "\n"
    source = source.replace("void kernel(", "void kernel_%d(")
    count = 0
    while "kernel_%d(" in source:
        source = source.replace("kernel_%d(", f"kernel_{count}(", 1)
        count += 1
    lines = ["int main(void) {"]
    for k, struct in enumerate(structs):
        offsets = ", ".join(f"(long)offsetof(s{k}, {name})" for name, _ in struct.members)
        formats = " ".join("%ld" for _ in range(len(struct.members) + 1))
        lines.append(f'    printf("{formats}\\n", (long)sizeof(s{k}), {offsets});')
    lines.append("    return 0;\n}")
    (tmp_path / "d.c").write_text(source + "\n".join(lines) + "\n")
    subprocess.run(
        ["gcc", "-std=c11", "-Wall", "-Werror", "-o", str(tmp_path / "d"), str(tmp_path / "d.c")],
        check=True,
    )
    output = subprocess.run(
        [str(tmp_path / "d")], check=True, capture_output=True, text=True
    ).stdout.splitlines()
    for struct, line in zip(structs, output, strict=True):
        dtype = struct.numpy_dtype()
        expected = [dtype.itemsize, *(dtype.fields[name][1] for name, _ in struct.members)]
        assert [int(v) for v in line.split()] == expected
        assert [struct.itemsize, *struct.offsets] == expected
