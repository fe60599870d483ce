"""The C names of a rendered ABI: relayout's own C never names another ABI's types, a caller's CNames
reach every text that shows a kernel its types, and the judge's derived names are exactly the spec's."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from relayout import RELAYOUT_C_NAMES, CNames, Requests, c_declarations, c_signature
from relayout.algebra.lower import lower_single_node
from relayout.check import check_requests
from relayout.convert.casts import cast_source
from relayout.convert.ccode import CAST_PRELUDE
from relayout.convert.codegen import program_source

ARRAYS = {"u": "fp64[N]:inout", "v": "fp64[N]", "w": "fp64[N]", "x": "fp64[N]:out"}
SCALARS = [("N", "int64"), ("h", "bf16")]
# A mixed zip (a struct) beside a pointer of each storage-only type.
REQUEST = {
    "operations": [
        {"action": "cast", "array": "u", "to": "fp32"},
        {"action": "zip", "arrays": ["u", "v"], "into": "uv"},
        {"action": "cast", "array": "w", "to": "bf16"},
        {"action": "cast", "array": "x", "to": "fp8_e4m3"},
    ]
}
ABI = CNames(zip_struct_prefix="abi_zip_", storage_type_prefix="abi_")
ABI_SIGNATURE = (
    "typedef struct { float u; double v; } abi_zip_uv;\n"
    "void k_fp64(abi_zip_uv *restrict uv, const abi_bf16 *restrict w, "
    "abi_fp8_e4m3 *restrict x, int64_t N, abi_bf16 h, void *workspace, int64_t workspace_bytes);"
)


def rendered_texts(c_names: CNames) -> list[str]:
    """Every text relayout renders for a kernel's ABI, written with `c_names`."""
    answer = check_requests(REQUEST, ARRAYS, kernel="k_fp64", scalars=SCALARS, c_names=c_names)
    assert answer.accepted and answer.arrays is not None and answer.signature is not None
    via_model = check_requests(
        Requests.validate(REQUEST), ARRAYS, kernel="k_fp64", scalars=SCALARS, c_names=c_names
    )
    assert via_model == answer
    checked = [a.declaration for a in answer.arrays.values()]
    checked += [a.typedef for a in answer.arrays.values() if a.typedef]
    return [
        answer.signature,
        *checked,
        c_signature("k_fp64", ARRAYS, REQUEST, SCALARS, c_names=c_names),
        *c_declarations(ARRAYS, REQUEST, c_names=c_names),
    ]


def test_relayouts_defaults_are_its_own_names() -> None:
    texts = rendered_texts(RELAYOUT_C_NAMES)
    assert texts[0] == ABI_SIGNATURE.replace("abi_", "relayout_")
    assert check_requests(REQUEST, ARRAYS, kernel="k_fp64", scalars=SCALARS).signature == texts[0]
    assert RELAYOUT_C_NAMES.storage_typedefs() == (
        "typedef uint16_t relayout_bf16;\n"
        "typedef uint8_t relayout_fp8_e4m3;\n"
        "typedef uint8_t relayout_fp8_e5m2;\n"
    )


def test_a_callers_names_reach_every_rendered_text() -> None:
    texts = rendered_texts(ABI)
    assert texts[0] == ABI_SIGNATURE and texts[0] in texts[1:]
    assert "const abi_bf16 *restrict w" in texts and "abi_zip_uv *restrict uv;" in texts
    assert not [text for text in texts if "relayout" in text]


def test_generated_kernels_name_only_relayouts_types() -> None:
    layout = lower_single_node(REQUEST, ARRAYS)
    sources = [cast_source(), *(program_source(layout, target)[0] for target in ("host", "device"))]
    for source in sources:
        assert RELAYOUT_C_NAMES.storage_typedefs() in source
        assert "__npb" not in source and "hb_" not in source


def test_the_judges_derived_values_are_the_spec_s() -> None:
    """hb.precision reads relayout's table with its own C names: these are the spec's, exactly."""
    from hb import precision

    assert precision.PRECISIONS == ("fp64", "fp32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2")
    spec_dtypes = {
        "fp64": np.dtype(np.float64),
        "fp32": np.dtype(np.float32),
        "fp16": np.dtype(np.float16),
        "bf16": np.dtype(ml_dtypes.bfloat16),
        "fp8_e4m3": np.dtype(ml_dtypes.float8_e4m3fn),
        "fp8_e5m2": np.dtype(ml_dtypes.float8_e5m2),
    }
    assert spec_dtypes == precision.NUMPY_DTYPES
    assert precision.C_TYPES == {
        "fp64": "double",
        "fp32": "float",
        "fp16": "_Float16",
        "bf16": "__npb_bf16",
        "fp8_e4m3": "__npb_fp8_e4m3",
        "fp8_e5m2": "__npb_fp8_e5m2",
    }
    assert precision.C_PRELUDE == (
        "#include <stdint.h>\n"
        "typedef uint16_t __npb_bf16;\n"
        "typedef uint8_t __npb_fp8_e4m3;\n"
        "typedef uint8_t __npb_fp8_e5m2;\n"
    )
    # Spec §1 and §3.1: a cast pointer is `__npb_bf16 *`, a mixed zip's struct `hb_zip_uv`.
    texts = rendered_texts(precision.C_NAMES)
    assert texts[0] == ABI_SIGNATURE.replace("abi_zip_", "hb_zip_").replace("abi_", "__npb_")


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not on this machine")
def test_an_abis_typedefs_and_relayouts_compile_together(tmp_path: Path) -> None:
    """A translation unit with a caller's typedefs, its rendered prototype and relayout's cast
    routines (as a driver that inlines them has) is valid C: the two sets of names never clash."""
    from hb import precision

    signature = c_signature("k_fp64", ARRAYS, REQUEST, SCALARS, c_names=precision.C_NAMES)
    source = precision.C_PRELUDE + CAST_PRELUDE + signature + "\n"
    (tmp_path / "unit.c").write_text(source)
    subprocess.run(
        ["gcc", "-std=c11", "-Wall", "-Werror", "-fsyntax-only", str(tmp_path / "unit.c")],
        check=True,
    )
