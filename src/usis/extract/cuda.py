"""Extract every function of the CUDA runtime's cuda_runtime_api.h (from the
nvidia-cuda-runtime-cu12 wheel), with what each function's doc comment states about its return
codes and synchronization.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from usis.cheader.declarations import CPrototype, find_include_dir, read_prototypes
from usis.cheader.preprocessor import Preprocessor
from usis.cheader.tokens import HeaderParseError
from usis.sources.fetch import sha256_file
from usis.sources.manifest import pins

SOURCES: tuple[str, ...] = ("nvidia-cuda-runtime-cu12",)


CUDA_INCLUDE_DIR = "nvidia/cuda_runtime/include"
CUDA_HEADER = "cuda_runtime_api.h"

# Markers the runtime header puts around a prototype; kept as tokens, read by classify.
CUDA_MARKERS = frozenset(
    {
        "__host__",
        "__device__",
        "__cudart_builtin__",
        "CUDARTAPI",
        "__CUDA_DEPRECATED",
        "CUDART_DEVICE",
    }
)
# The wrappers the header puts around a #define'd name; without CUDA_API_PER_THREAD_DEFAULT_STREAM
# they leave the name as it is.
CUDA_API_WRAPPERS = ("__CUDART_API_PTSZ", "__CUDART_API_PTDS")
# A C compiler (not nvcc, not C++), with the header's own API version.
CUDA_DEFINES = {"__GNUC__": "12"}


@dataclass(frozen=True)
class DocFacts:
    """What a function's doc comment states in machine-readable form: the codes after `\\return`,
    the `\\note_*` markers (`note_sync`, `note_async`, `note_null_stream`, ...), each `\\param`
    text (read by classify for a pointer's direction, not shipped), the CUDA version a
    `\\deprecated` line names and the replacement function a deprecated one's text names."""

    returns: tuple[str, ...]
    notes: tuple[str, ...]
    line: int
    params: tuple[tuple[str, str], ...] = ()
    deprecated_as_of: str | None = None
    replacement: str | None = None


def doc_text(text: str) -> str:
    """A doc comment's prose on one line: the `*` margins and `\\p`/`::` markup dropped."""
    text = re.sub(r"^\s*\*", " ", text, flags=re.M)
    text = re.sub(r"\\p\s+", "", text).replace("::", "")
    return " ".join(text.split())


def doc_blocks(text: str) -> list[tuple[int, DocFacts]]:
    """(last line, facts) for every `/** ... */` block of a header."""
    blocks = []
    for match in re.finditer(r"/\*\*(.*?)\*/", text, flags=re.S):
        body = match.group(1)
        end_line = text.count("\n", 0, match.end()) + 1
        returns: list[str] = []
        section = re.search(r"\\return(.*?)(?=\\(?!return)[a-z]|\Z)", body, flags=re.S)
        if section:
            returns = re.findall(r"::(\w+)", section.group(1))
        notes = sorted(set(re.findall(r"\\(note_\w+)", body)))
        params = tuple(
            (name, doc_text(described))
            for name, described in re.findall(
                r"\\param\s+(\w+)\s*-?(.*?)(?=\\[a-z]|\n\s*\*\s*\n|\Z)", body, flags=re.S
            )
        )
        as_of = re.search(r"deprecated as of CUDA (\d+\.\d+)", body)
        replacement = re.search(r"non-deprecated function ::(cuda\w+)", body)
        blocks.append(
            (
                end_line,
                DocFacts(
                    tuple(dict.fromkeys(returns)),
                    tuple(notes),
                    end_line,
                    params=params,
                    deprecated_as_of=as_of.group(1) if as_of else None,
                    replacement=replacement.group(1) if replacement else None,
                ),
            )
        )
    return blocks


def attach_docs(
    prototypes: list[CPrototype], blocks: list[tuple[int, DocFacts]], reach: int = 8
) -> dict[str, DocFacts]:
    """The doc block that ends just above each prototype (within `reach` lines, nothing between)."""
    attached: dict[str, DocFacts] = {}
    ends = sorted(blocks, key=lambda block: block[0])
    lines = sorted(p.line for p in prototypes)
    for prototype in prototypes:
        candidates = [facts for end, facts in ends if end < prototype.line]
        if not candidates:
            continue
        facts = candidates[-1]
        between = [line for line in lines if facts.line < line < prototype.line]
        if prototype.line - facts.line <= reach and not between:
            attached[prototype.name] = facts
    return attached


def declared_names(root: Path) -> set[str]:
    """Every function name an unpacked nvidia-cuda-runtime wheel of any version declares in
    cuda_runtime_api.h, the names the header #defines to a versioned entry point included."""
    return {record["name"] for record in extract({SOURCES[0]: root})["records"]}


def extract(paths: Mapping[str, Path]) -> dict[str, Any]:
    """Read cuda_runtime_api.h from the unpacked nvidia-cuda-runtime-cu12 wheel."""
    root = Path(paths["nvidia-cuda-runtime-cu12"])
    include = find_include_dir(root, CUDA_INCLUDE_DIR, CUDA_HEADER)
    preprocessor = Preprocessor(
        include_root=include,
        defines=CUDA_DEFINES,
        protected=CUDA_MARKERS | {"__dv"},
        emit=[CUDA_HEADER],
    )
    prototypes = read_prototypes(
        preprocessor, CUDA_HEADER, markers=CUDA_MARKERS, name_pattern=r"cuda\w+"
    )
    docs = attach_docs(
        prototypes,
        doc_blocks((include / CUDA_HEADER).read_text(encoding="utf-8", errors="replace")),
    )
    records: dict[str, dict[str, Any]] = {}
    for prototype in prototypes:
        if prototype.has_body:
            continue
        record = prototype.as_dict()
        facts = docs.get(prototype.name)
        record["doc_returns"] = list(facts.returns) if facts else []
        record["doc_notes"] = list(facts.notes) if facts else []
        record["doc_line"] = facts.line if facts else None
        record["doc_params"] = dict(facts.params) if facts else {}
        record["doc_deprecated_as_of"] = facts.deprecated_as_of if facts else None
        record["doc_replacement"] = facts.replacement if facts else None
        if prototype.name in records:
            raise HeaderParseError(
                f"{CUDA_HEADER}:{prototype.line}: {prototype.name} declared twice "
                f"(first at line {records[prototype.name]['line']})"
            )
        records[prototype.name] = record
    for alias, target in preprocessor.table.function_aliases(records, CUDA_API_WRAPPERS).items():
        # The name a program calls (`cudaGetDeviceProperties`) for a versioned entry point the
        # header #defines it to: the same function under the name the code spells.
        records[alias] = {**records[target], "name": alias, "alias_of": target}
    return {
        "model": "cuda",
        "sources": pins(SOURCES),
        "header_files": [[CUDA_HEADER, sha256_file(include / CUDA_HEADER)]],
        "records": sorted(records.values(), key=lambda r: r["name"]),
    }
