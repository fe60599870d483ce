"""The one C header reader every extract uses (usis.cheader), on small headers written here: macros,
conditionals, markers, defaults, bodies, the protected names, and the canonical rendering."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from usis.cheader.declarations import (
    CPrototype,
    parse_declaration,
    read_prototypes,
    read_template_prototypes,
    render_signature,
)
from usis.cheader.preprocessor import Preprocessor
from usis.cheader.tokens import HeaderParseError


def read_header(tmp_path: Path, text: str, **options: Any) -> list[CPrototype]:
    (tmp_path / "api.h").write_text(text)
    preprocessor = Preprocessor(
        include_root=tmp_path,
        defines=options.get("defines", {}),
        protected=options.get("protected", ()),
        protected_pattern=options.get("protected_pattern"),
        emit=["api.h", *options.get("emit", [])],
    )
    return read_prototypes(
        preprocessor,
        "api.h",
        markers=options.get("markers", ()),
        name_pattern=options.get("pattern", r"\w+"),
    )


def read(tmp_path: Path, text: str, **options: Any) -> list[dict[str, Any]]:
    return [prototype.as_dict() for prototype in read_header(tmp_path, text, **options)]


def signature(prototype: dict[str, Any]) -> str:
    return render_signature(prototype["name"], prototype["return_type"], prototype["parameters"])


def test_function_like_macros_with_token_pasting_generate_one_prototype_per_type(
    tmp_path: Path,
) -> None:
    header = """
    #define REPT(FN) FN(int, int) FN(longlong, long long) FN(uint64, uint64_t)
    #define DECL_PUT(NAME, TYPE) \\
        void lib_##NAME##_put(TYPE *dest, const TYPE *source, size_t nelems, int pe);
    REPT(DECL_PUT)
    #undef DECL_PUT
    """
    found = {p["name"]: signature(p) for p in read(tmp_path, header)}
    assert found == {
        "lib_int_put": "void lib_int_put(int *dest, const int *source, size_t nelems, int pe)",
        "lib_longlong_put": "void lib_longlong_put(long long *dest, const long long *source, size_t nelems, int pe)",
        "lib_uint64_put": "void lib_uint64_put(uint64_t *dest, const uint64_t *source, size_t nelems, int pe)",
    }


def test_conditionals_follow_the_defines_and_markers_are_kept(tmp_path: Path) -> None:
    header = """
    #if defined(DEVICE_PASS) && ARCH >= 700
    #define PREFIX __device__
    #else
    #define PREFIX
    #endif
    PREFIX int lib_rank(void);
    #ifdef NEVER
    int lib_hidden(void);
    #endif
    """
    host = read(tmp_path, header, markers=["__device__"])
    device = read(
        tmp_path, header, defines={"DEVICE_PASS": "1", "ARCH": "900"}, markers=["__device__"]
    )
    assert [(p["name"], p["markers"]) for p in host] == [("lib_rank", [])]
    assert [(p["name"], p["markers"]) for p in device] == [("lib_rank", ["__device__"])]


def test_default_arguments_deprecation_and_function_bodies(tmp_path: Path) -> None:
    header = """
    #define __dv(v) = v
    extern __host__ cudaError_t CUDARTAPI cudaThing(int *value, cudaStream_t stream __dv(0));
    extern __CUDA_DEPRECATED __host__ cudaError_t CUDARTAPI cudaOld(void);
    static inline int cudaInline(int x) { if (x) { return 1; } return 0; }
    typedef struct { int a; } cudaNotAFunction;
    """
    found = {
        p["name"]: p
        for p in read(
            tmp_path,
            header,
            protected=["__dv", "__host__", "CUDARTAPI", "__CUDA_DEPRECATED"],
            markers=["__host__", "CUDARTAPI", "__CUDA_DEPRECATED"],
        )
    }
    assert set(found) == {"cudaThing", "cudaOld", "cudaInline"}
    assert found["cudaThing"]["parameters"][1] == {
        "type": "cudaStream_t",
        "name": "stream",
        "array": False,
        "default": "0",
    }
    assert found["cudaOld"]["deprecated"] and not found["cudaThing"]["deprecated"]
    assert found["cudaInline"]["has_body"]


def test_an_unterminated_conditional_is_an_error_naming_the_file(tmp_path: Path) -> None:
    with pytest.raises(HeaderParseError, match=r"api\.h: unterminated #if"):
        read(tmp_path, "#if 1\nint f(void);\n")


# A header in the style of Open MPI's shmem.h: a decoration macro, C and C++ branches, a comment
# holding a fake declaration, a static inline helper and a typedef.
SHMEM_STYLE_HEADER = """
/* a comment with a fake declaration: void nothing(int); */
#define DECL __attribute__((visibility("default")))
#if defined(__cplusplus)
extern "C" {
void cplusplus_only(int);
#endif
#if __STDC_VERSION__ >= 201112L
DECL void shmem_c11(long *target,
                    const long *source, size_t len, int pe);
#else
DECL void shmem_old(void);
#endif
static inline void helper(void) { return; }
typedef struct { int dummy; } * shmem_ctx_t;
DECL int shmem_flag(volatile long *lock, char const *name, omp_lock_t *, const int []);
"""


def test_a_c11_reading_follows_conditionals_and_reports_bodies(tmp_path: Path) -> None:
    prototypes = read_header(
        tmp_path,
        SHMEM_STYLE_HEADER,
        defines={"__STDC_VERSION__": "201112"},
        protected=["DECL"],
        markers=["DECL"],
    )
    assert [(p.name, p.has_body) for p in prototypes] == [
        ("shmem_c11", False),
        ("helper", True),
        ("shmem_flag", False),
    ]
    c11, _, flag = prototypes
    assert c11.line == 9
    assert [(p.type, p.name) for p in c11.parameters] == [
        ("long*", "target"),
        ("const long*", "source"),
        ("size_t", "len"),
        ("int", "pe"),
    ]
    assert [(p.type, p.name, p.array) for p in flag.parameters] == [
        ("volatile long*", "lock", False),
        ("const char*", "name", False),
        ("omp_lock_t*", None, False),
        ("const int", None, True),
    ]
    assert render_signature("f", "void*", [p.as_dict() for p in c11.parameters]) == (
        "void *f(long *target, const long *source, size_t len, int pe)"
    )
    assert render_signature("g", "int", [p.as_dict() for p in flag.parameters]) == (
        "int g(volatile long *lock, const char *name, omp_lock_t *, const int[])"
    )


def test_the_header_s_own_macros_expand_unless_protected(tmp_path: Path) -> None:
    header = """
    #define COMPLEX_TYPE(type) type complex
    #define omp_set_format ompc_set_format
    extern void omp_set_format(char const *);
    extern COMPLEX_TYPE(double) lib_complex_get(COMPLEX_TYPE(float) value);
    __LIB_DEPRECATED_5_0 extern int omp_old(void);
    """
    options: dict[str, Any] = {
        "protected": ["extern", "__LIB_DEPRECATED_5_0"],
        "markers": ["extern", "__LIB_DEPRECATED_5_0"],
    }
    expanded = read_header(tmp_path, header, **options)
    assert [p.name for p in expanded] == ["ompc_set_format", "lib_complex_get", "omp_old"]
    kept = read_header(tmp_path, header, protected_pattern=r"omp_\w+", **options)
    assert [p.name for p in kept] == ["omp_set_format", "lib_complex_get", "omp_old"]
    complex_get = kept[1].as_declaration()
    assert complex_get["return_type"] == "double complex"
    assert complex_get["parameters"] == [{"type": "float complex", "name": "value", "array": False}]
    assert kept[2].as_declaration()["attributes"] == ["__LIB_DEPRECATED_5_0"]
    assert kept[0].as_declaration()["attributes"] == []


def test_one_declaration_reads_as_written() -> None:
    prototype = parse_declaration("void *shmem_malloc_with_hints(size_t size, long hints)", "spec")
    assert prototype is not None
    assert (prototype.name, prototype.return_type) == ("shmem_malloc_with_hints", "void*")
    assert [(p.type, p.name) for p in prototype.parameters] == [
        ("size_t", "size"),
        ("long", "hints"),
    ]
    assert parse_declaration("typedef int shmem_flag_t", "spec") is None


def test_cxx_alternative_operators_in_conditionals(tmp_path: Path) -> None:
    header = (
        "#if not defined HIDDEN\nint shown(void);\n#endif\n"
        "#if defined A and not defined B\nint both(void);\n#endif\n"
        "#if defined B or defined A\nint either(void);\n#endif\n"
    )
    assert [p["name"] for p in read(tmp_path, header, defines={"A": "1"})] == [
        "shown",
        "both",
        "either",
    ]
    assert [p["name"] for p in read(tmp_path, header, defines={"HIDDEN": "1"})] == []


def test_function_templates_read_with_their_parameter_list(tmp_path: Path) -> None:
    (tmp_path / "api.h").write_text(
        "namespace ns {\n"
        "template <typename T, int N> __device__ int tile_copy(T src, T dst, int pe);\n"
        "template <typename T> __device__ int tile_copy(T src, T dst);\n"
        "int plain(void);\n"
        "template <typename T> struct Box { T value; };\n"
        "}\n"
    )
    preprocessor = Preprocessor(include_root=tmp_path, protected=["__device__"], emit=["api.h"])
    found = read_template_prototypes(
        preprocessor, "api.h", markers=["__device__"], name_pattern=r"tile_\w+"
    )
    assert [(template, p.name, len(p.parameters)) for template, p in found] == [
        ("typename T, int N", "tile_copy", 3),
        ("typename T", "tile_copy", 2),
    ]
    assert found[0][1].markers == ("__device__",)
