"""Extract the MPI Forum's apis.json (as pympistandard 0.2.0 ships it) into raw MPI declaration records.

Each record keeps the Forum's own fields and adds the C, large-count C, Fortran 90 and Fortran 2008
renderings that pympistandard derives from them, so classify never needs the package again.
"""

from __future__ import annotations

import hashlib
import json
import pathlib
import zipfile
from collections.abc import Mapping
from typing import Any

SOURCE_NAME = "pympistandard"
SOURCE_VERSION = "0.2.0"
WHEEL_SHA256 = "104fbaa99aadc82d8c65cbb59f9460485cd662f0ebd72aaa4eb2121d9ea04177"
APIS_JSON_MEMBER = "pympistandard/data/apis.json"
APIS_JSON_SHA256 = "defcab0fb0a97744b25edf1f9a61d73c4719f9be374ce76a5062cd174cb1fdd7"

SOURCES: tuple[str, ...] = (SOURCE_NAME,)

# Keys in every raw Forum parameter that extract copies through unchanged.
FORUM_PARAMETER_FIELDS = (
    "name",
    "kind",
    "param_direction",
    "lis_direction",
    "desc",
    "array_type",
    "asynchronous",
    "constant",
    "func_type",
    "large_only",
    "length",
    "optional",
    "pointer",
    "root_only",
    "suppress",
)


class MpiSourceError(ValueError):
    """The MPI source is missing, unreadable or not the pinned apis.json."""


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def installed_apis_json() -> pathlib.Path | None:
    """The installed pympistandard's apis.json, or None when the package is not importable."""
    try:
        import pympistandard
    except ImportError:
        return None
    path = pathlib.Path(pympistandard.__file__).parent / "data" / "apis.json"
    return path if path.is_file() else None


def read_apis_json(path: pathlib.Path | None) -> bytes:
    """Bytes of the pinned apis.json from a wheel, an unpacked wheel, the file itself, or the install.

    `path` is what the fetch stage produced for the pympistandard source (None when it was not
    fetched); the installed package's copy is used only when its sha256 is the pinned one.
    """
    candidates: list[tuple[str, bytes]] = []
    if path is not None:
        if path.is_file() and path.suffix == ".whl":
            with zipfile.ZipFile(path) as wheel:
                try:
                    candidates.append((f"{path}!{APIS_JSON_MEMBER}", wheel.read(APIS_JSON_MEMBER)))
                except KeyError as missing:
                    raise MpiSourceError(
                        f"{path}: wheel has no {APIS_JSON_MEMBER}; expected the pympistandard "
                        f"{SOURCE_VERSION} wheel"
                    ) from missing
        elif path.is_dir():
            nested = path / APIS_JSON_MEMBER
            flat = path / "apis.json"
            for option in (nested, flat):
                if option.is_file():
                    candidates.append((str(option), option.read_bytes()))
                    break
            else:
                raise MpiSourceError(
                    f"{path}: no {APIS_JSON_MEMBER} or apis.json inside; expected the unpacked "
                    f"pympistandard {SOURCE_VERSION} wheel"
                )
        elif path.is_file():
            candidates.append((str(path), path.read_bytes()))
        else:
            raise MpiSourceError(f"{path}: does not exist; run `usis fetch --model mpi`")
    else:
        installed = installed_apis_json()
        if installed is None:
            raise MpiSourceError(
                f"source {SOURCE_NAME!r} was not fetched and pympistandard is not installed; "
                "run `usis fetch --model mpi`"
            )
        candidates.append((str(installed), installed.read_bytes()))
    where, data = candidates[0]
    digest = sha256_of(data)
    if digest != APIS_JSON_SHA256:
        raise MpiSourceError(
            f"{where}: sha256 {digest} is not the pinned apis.json of pympistandard "
            f"{SOURCE_VERSION} ({APIS_JSON_SHA256})"
        )
    return data


def _category(attributes: Mapping[str, Any]) -> str:
    if attributes.get("callback"):
        return "callback"
    if attributes.get("predefined_function"):
        return "predefined_function"
    return "procedure"


# pympistandard's renderers assert (or raise KeyError/TypeError) on a parameter or symbol that a
# language cannot express; such a rendering is recorded as absent (None), never guessed.


def _c_array_suffix(parameter: Any) -> str:
    try:
        return str(parameter.array)
    except (AssertionError, KeyError, TypeError):
        return ""


def _rendered_parameters(symbol: Any, attribute: str) -> dict[str, Any]:
    """Map parameter name -> rendered parameter object for one language expression (or {})."""
    try:
        expression = getattr(symbol, attribute)
    except (AssertionError, KeyError, AttributeError, TypeError):
        return {}
    if expression is None:
        return {}
    try:
        return {str(parameter.name).lower(): parameter for parameter in expression.parameters}
    except (AssertionError, KeyError, AttributeError, TypeError):
        return {}


def _safe_str(render: Any) -> str | None:
    if render is None:
        return None
    try:
        text = str(render)
    except (AssertionError, KeyError, AttributeError, TypeError):
        return None
    return text.strip() or None


def _c_type(parameter: Any) -> str | None:
    try:
        base = str(parameter.type)
    except (AssertionError, KeyError, AttributeError, TypeError):
        return None
    return base + _c_array_suffix(parameter)


def _fortran_type(parameter: Any) -> str | None:
    try:
        return str(parameter.type)
    except (AssertionError, KeyError, AttributeError, TypeError):
        return None


def _symbol_record(key: str, raw: Mapping[str, Any], symbol: Any) -> dict[str, Any]:
    express = symbol.express
    c_render = express.iso_c
    large_render = express.embiggen.iso_c if raw["attributes"].get("lis_expressible") else None
    f90_render = express.f90 if raw["attributes"].get("f90_expressible") else None
    f08_render = express.f08 if raw["attributes"].get("f08_expressible") else None
    c_params = _rendered_parameters(express, "iso_c")
    large_params = (
        _rendered_parameters(express.embiggen, "iso_c") if large_render is not None else {}
    )
    f90_params = _rendered_parameters(express, "f90") if f90_render is not None else {}
    f08_params = _rendered_parameters(express, "f08") if f08_render is not None else {}
    parameters = []
    for position, forum in enumerate(raw["parameters"]):
        name = forum["name"]
        record = {field: forum.get(field) for field in FORUM_PARAMETER_FIELDS}
        record["position"] = position
        c_param = c_params.get(name.lower())
        large_param = large_params.get(name.lower())
        record["c_type"] = _c_type(c_param) if c_param is not None else None
        record["c_large_type"] = _c_type(large_param) if large_param is not None else None
        f90_param = f90_params.get(name.lower())
        f08_param = f08_params.get(name.lower())
        record["f90_type"] = _fortran_type(f90_param) if f90_param is not None else None
        record["f08_type"] = _fortran_type(f08_param) if f08_param is not None else None
        parameters.append(record)
    c_return_type = None
    if c_render is not None:
        try:
            c_return_type = str(c_render.return_type)
        except (AssertionError, KeyError, AttributeError, TypeError):
            c_return_type = None
    return {
        "key": key,
        "name": raw["name"],
        "name_f90": raw.get("name_f90"),
        "category": _category(raw["attributes"]),
        "attributes": dict(sorted(raw["attributes"].items())),
        "return_kind": raw["return_kind"],
        "c_signature": _safe_str(c_render) if raw["attributes"].get("c_expressible") else None,
        "c_large_signature": _safe_str(large_render),
        "c_return_type": c_return_type,
        "f90_name": _safe_str(getattr(f90_render, "name", None)) if f90_render else None,
        "f08_name": _safe_str(getattr(f08_render, "name", None)) if f08_render else None,
        "parameters": parameters,
    }


def _load_symbols(apis_json: pathlib.Path) -> dict[str, Any]:
    """pympistandard's symbol objects for every entry of `apis_json` (its renderers need them)."""
    import pympistandard

    pympistandard.use_api_version(1, given_path=str(apis_json))
    symbols: dict[str, Any] = {}
    for table in (
        pympistandard.PROCEDURES,
        pympistandard.CALLBACKS,
        pympistandard.PREDEFINED_FUNCTIONS,
    ):
        symbols.update({str(key): value for key, value in table.items()})
    return symbols


def extract_from_bytes(data: bytes, scratch: pathlib.Path) -> dict[str, Any]:
    """Records for every symbol of an apis.json given as bytes (written to `scratch` for pympistandard)."""
    forum: dict[str, Any] = json.loads(data)
    scratch.mkdir(parents=True, exist_ok=True)
    staged = scratch / "apis.json"
    staged.write_bytes(data)
    symbols = _load_symbols(staged)
    missing = sorted(set(forum) - set(symbols))
    if missing:
        raise MpiSourceError(
            f"apis.json: pympistandard did not load {len(missing)} entries ({', '.join(missing[:5])})"
        )
    records = [_symbol_record(key, forum[key], symbols[key]) for key in sorted(forum)]
    return {
        "model": "mpi",
        "sources": [[SOURCE_NAME, SOURCE_VERSION, WHEEL_SHA256]],
        "source_files": [[APIS_JSON_MEMBER, APIS_JSON_SHA256]],
        "records": records,
    }


def extract(paths: Mapping[str, pathlib.Path]) -> dict[str, Any]:
    """Raw MPI records from the fetched pympistandard wheel (or the installed, pinned apis.json)."""
    import tempfile

    data = read_apis_json(paths.get(SOURCE_NAME))
    with tempfile.TemporaryDirectory(prefix="usis-mpi-") as scratch:
        return extract_from_bytes(data, pathlib.Path(scratch))
