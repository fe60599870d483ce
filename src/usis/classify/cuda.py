"""Classify the CUDA runtime's functions into complete USIS entries.

Blocking behaviour follows the runtime's documented synchronization rules: the `\\note_sync` /
`\\note_async` markers of each function's doc comment, and the curated rules of
curated/cuda/synchronization.yaml; `launch` is cpu+gpu exactly for the functions the header marks
`__cudart_builtin__` (also offered by the device runtime).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache, partial
from typing import Any

from usis.cheader.declarations import render_signature
from usis.curated import check_release_since, cite, load
from usis.entry_builder import (
    ClassifyError,
    EntryBuilder,
    Identity,
    ParameterFacts,
    Provenance,
    ToolIntegration,
    apply_since,
    c_bindings,
    c_return,
    context_dependency,
    declared_parameter,
    default_direction,
    empty_semantics,
    execution,
    is_pointer,
    memory,
    note_declared_parameter,
)

MODEL = "cuda"
HEADER = "cuda_runtime_api.h"


def words_of(name: str) -> list[str]:
    """CamelCase and snake_case words of an API name, lower-cased."""
    # `Memcpy3D` reads `memcpy 3d`, not `memcpy3 d`.
    spaced = re.sub(r"([a-z])([1-3])D", r"\1 \2d ", name.replace("_", " "))
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", spaced)
    spaced = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", spaced)
    words = [word.lower() for word in spaced.split()]
    # `P2P` splits as `p2 p`; it is one word.
    joined: list[str] = []
    for word in words:
        if joined and joined[-1] == "p2" and word == "p":
            joined[-1] = "p2p"
        else:
            joined.append(word)
    return joined


# ---------------------------------------------------------------------------------------------
# CUDA runtime rules

# First verb of the name (after the object words) -> description template.
VERB_PHRASES = {
    "get": "Reports {rest} of {object}",
    "set": "Sets {rest} of {object}",
    "create": "Creates {object}{rest_with}",
    "destroy": "Destroys {object}",
    "query": "Reports without blocking whether {object} work has completed",
    "synchronize": "Blocks the host until {object} work has completed",
    "launch": "Launches {object}{rest_with}",
    "add": "Adds {rest} to {object}",
    "remove": "Removes {rest} from {object}",
    "register": "Registers {object}{rest_with}",
    "unregister": "Unregisters {object}{rest_with}",
    "enable": "Enables {rest} for {object}",
    "disable": "Disables {rest} for {object}",
    "instantiate": "Instantiates {object} as an executable graph{rest_with}",
    "clone": "Clones {object}",
    "debug": "Writes a debug description of {object}{rest_with}",
    "retain": "Retains a reference to {object}",
    "release": "Releases {object}",
    "map": "Maps {object}{rest_with}",
    "unmap": "Unmaps {object}{rest_with}",
    "record": "Records {object} on a stream{rest_with}",
    "wait": "Makes {object} wait{rest_with}",
    "reset": "Resets {object}",
    "attach": "Attaches {rest} to {object}",
    "begin": "Begins {rest} on {object}",
    "end": "Ends {rest} on {object}",
    "copy": "Copies {rest} of {object}",
    "update": "Updates {object}{rest_with}",
    "upload": "Uploads {object} to its device",
    "export": "Exports {object}{rest_with}",
    "import": "Imports {object}{rest_with}",
    "elapsed": "Reports the elapsed time in milliseconds between two recorded events",
    "is": "Reports whether {object}{rest_with}",
    "can": "Reports whether {object} can {rest}",
    "choose": "Chooses {object}{rest_with}",
    "find": "Finds {object}{rest_with}",
    "prefetch": "Prefetches {object}{rest_with}",
    "advise": "Gives a usage hint for {object}{rest_with}",
    "trim": "Releases unused memory of {object}",
    "free": "Frees {object}{rest_with}",
    "alloc": "Allocates {object}{rest_with}",
    "exit": "Cleans up {object}",
    "flush": "Flushes {object}{rest_with}",
    "peek": "Reports {rest} of {object} without resetting it",
    "memcpy": "Copies memory{rest_with}",
    "memset": "Fills memory with a byte value{rest_with}",
    "malloc": "Allocates memory{rest_with}",
    "join": "Joins {object}{rest_with}",
    "insert": "Inserts {rest} into {object}",
    "open": "Opens {object}{rest_with}",
    "close": "Closes {object}{rest_with}",
    "load": "Loads {object}{rest_with}",
    "unload": "Unloads {object}",
    "signal": "Signals {object}{rest_with}",
    "init": "Initializes {object}{rest_with}",
    "enumerate": "Lists {rest} of {object}",
    "exchange": "Exchanges {rest} of {object}",
}
# Verbs that act on a part of their object when the name gives one (cudaGraphDestroyNode,
# cudaCtxResetPersistingL2Cache).
PART_PHRASES = {
    "destroy": "Destroys a {rest} of {object}",
    "reset": "Resets the {rest} of {object}",
    # cudaGraphRetainUserObject / cudaGraphReleaseUserObject: a user object's reference held by
    # a graph, not the graph.
    "retain": "Retains a {rest} reference in {object}",
    "release": "Releases a {rest} reference held by {object}",
    "wait": "Makes {object} wait for an {rest}",
    "is": "Reports whether {object} is {rest}",
}
# Objects whose name alone reads wrong after a verb: cudaHostAlloc allocates host memory.
OBJECT_PHRASES: dict[tuple[str, ...], str] = {("host",): "host memory"}
# The verb alone, for names whose object follows it (cudaGetTextureObjectResourceDesc).
SIMPLE_VERBS = {
    "get": "Reports",
    "set": "Sets",
    "create": "Creates",
    "destroy": "Destroys",
    "register": "Registers",
    "unregister": "Unregisters",
    "launch": "Launches",
    "signal": "Signals",
    "wait": "Waits on",
    "import": "Imports",
    "export": "Exports",
    "choose": "Chooses",
    "free": "Frees",
    "alloc": "Allocates",
    "init": "Initializes",
    "open": "Opens",
    "close": "Closes",
}


# Abbreviations of the runtime's names, spelled out in descriptions.
SPELLED_OUT = {
    "mem": "memory",
    "params": "parameters",
    "info": "information",
    "exec": "executable",
    "attr": "attribute",
    "ipc": "interprocess",
    "ctx": "context",
}
# What a free acts on when the name gives no object (cudaFree) or only the kind of memory
# (cudaFreeHost).
MEMORY_OBJECTS = {(): "device memory", ("host",): "page-locked host memory"}


def cuda_description(name: str) -> str:
    """A one-sentence description from the function's name: verb, object and complement, with the
    clause of a versioned entry point (`_v2`) or a stream-ordered form (`...Async`)."""
    clauses = []
    versioned = re.fullmatch(r"(\w+?)_v(\d+)", name)
    if versioned:
        name = versioned.group(1)
        clauses.append(f"version {versioned.group(2)} of the entry point")
    if name.endswith("Async") and name != "cudaAsync":
        name = name.removesuffix("Async")
        clauses.append("ordered on a stream, returning before the work is done")
    sentence = name_sentence(name).removesuffix(".")
    return sentence + "".join(f"; {clause}" for clause in clauses) + "."


def name_sentence(name: str) -> str:
    words = [SPELLED_OUT.get(word, word) for word in words_of(name.removeprefix("cuda"))]
    if words[0] == "occupancy":
        return f"Computes an occupancy figure for a kernel: the {' '.join(words[1:])}."
    # A graph node accessor names its node kind before the verb (cudaGraphEventRecordNodeGetEvent
    # gets the event of an event-record node): the verb is the word after `node`.
    after_node = next(
        (i + 1 for i, w in enumerate(words[:-1]) if w == "node" and words[i + 1] in VERB_PHRASES),
        None,
    )
    for index, word in enumerate(words):
        # memcpy/memset/malloc are verbs only at the start (cudaMemcpyAsync); elsewhere they
        # name an object (cudaGraphMemcpyNodeSetParams).
        if word in ("memcpy", "memset", "malloc") and index > 0:
            continue
        if after_node is not None and index != after_node:
            continue
        if word in VERB_PHRASES:
            verb = word
            object_words = words[:index]
            rest_words = words[index + 1 :]
            break
    else:
        return f"Runtime call {name}; its name reads: {' '.join(words)}."
    if verb in ("memcpy", "memset", "malloc"):
        sentence = VERB_PHRASES[verb].format(
            object="", rest="", rest_with=(" (" + " ".join(rest_words) + ")") if rest_words else ""
        )
        return sentence + "."
    if verb == "free" and tuple(object_words + rest_words) in MEMORY_OBJECTS:
        memory_object = MEMORY_OBJECTS[tuple(object_words + rest_words)]
        return f"{SIMPLE_VERBS[verb]} {memory_object}."
    if not object_words and rest_words and verb in SIMPLE_VERBS:
        # cudaCreateTextureObject: the words after the verb are its object.
        return f"{SIMPLE_VERBS[verb]} the {' '.join(rest_words)}."
    if object_words == ["interprocess"] and rest_words:
        # cudaIpcGetMemHandle: an interprocess memory handle.
        verb_phrase = SIMPLE_VERBS.get(verb) or VERB_PHRASES[verb].split()[0]
        return f"{verb_phrase} an interprocess {' '.join(rest_words)}."
    the_object = OBJECT_PHRASES.get(tuple(object_words)) or (
        ("the " + " ".join(object_words)) if object_words else "the current device"
    )
    if verb in PART_PHRASES and object_words and rest_words:
        # cudaGraphDestroyNode destroys a node of a graph, not the graph.
        sentence = PART_PHRASES[verb].format(object=the_object, rest=" ".join(rest_words))
        return sentence + "."
    rest = " ".join(rest_words) if rest_words else "the settings"
    rest_with = (" (" + " ".join(rest_words) + ")") if rest_words else ""
    sentence = VERB_PHRASES[verb].format(object=the_object, rest=rest, rest_with=rest_with)
    return sentence[0].upper() + sentence[1:] + "."


@dataclass(frozen=True)
class SyncRule:
    """A curated synchronization rule: which functions it covers and what it fixes."""

    rule_id: str
    pattern: re.Pattern[str]
    facts: Mapping[str, Any]
    source: str


@cache
def sync_rules() -> tuple[SyncRule, ...]:
    document = load(f"{MODEL}/synchronization.yaml")
    rules = []
    for item in document["rules"]:
        rules.append(SyncRule(item["id"], re.compile(item["match"]), item["facts"], item["source"]))
    return tuple(rules)


@cache
def curated_groups() -> tuple[tuple[re.Pattern[str], str | None, str], ...]:
    document = load(f"{MODEL}/groups.yaml")
    return tuple(
        (re.compile(item["match"]), item["api_group"], item["id"]) for item in document["groups"]
    )


def cuda_api_group(name: str) -> tuple[str | None, str]:
    for pattern, group, rule_id in curated_groups():
        if pattern.search(name):
            return group, rule_id
    raise ClassifyError(
        f"cuda:{name}: no api_group rule in curated/cuda/groups.yaml matches; add one "
        "(the last rule should catch everything)"
    )


STREAM_TYPES = ("cudaStream_t",)
DEVICE_PARAMETER_NAMES = {"device", "peerDevice", "srcDevice", "dstDevice", "dev"}
BUFFER_PARAMETER_NAMES = {
    "devPtr",
    "ptr",
    "dst",
    "src",
    "pHost",
    "pDevice",
    "dptr",
    "data",
    "symbol",
}


# What a `\\param` line of the runtime's doc comments says about a non-const pointer, first match
# wins: read only (freed, registered, passed on, listed), updated in place, or written.
DOC_DIRECTIONS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "in",
        re.compile(
            r"to free|to page-lock|to unregister|previously allocated|returned by|passed (to|into)"
            r"|to be passed|to pass|to set\b|to add\b|to map\b|to unmap\b|^arguments$|^options for"
            r"|^option values|^list of|^array of|to query|^host pointer$|requested host pointer"
            r"|kernel parameters|^address of memory|^memory to free|^resources to|must be a pointer",
            re.I,
        ),
    ),
    ("inout", re.compile(r"swap with|^see description$|to convert$", re.I)),
    (
        "out",
        re.compile(
            r"\breturn(s|ed)?\b|\bto store\b|\bnewly\b|\bcreated\b|to create\b|\bretrieved\b"
            r"|\bcaptured\b|time between|^destination|where .* returned|^pointer to allocated",
            re.I,
        ),
    ),
)


def parameter_doc(record: Mapping[str, Any], index: int, name: str) -> str | None:
    """The `\\param` text of a parameter: by name, or by position where the doc comment names
    the parameters differently from the prototype but lists as many."""
    documented: Mapping[str, str] = record.get("doc_params", {})
    if name in documented:
        return documented[name]
    if len(documented) == len(record["parameters"]):
        return list(documented.values())[index]
    return None


def documented_direction(c_type: str, text: str | None) -> tuple[str, str] | None:
    """The direction a non-const pointer's doc text states and the words that state it, or None
    where it is silent (or the declaration settles it: a value, or a pointer to const, is only
    read)."""
    if text is None or not is_pointer(c_type) or default_direction(c_type) == "in":
        return None
    for direction, pattern in DOC_DIRECTIONS:
        found = pattern.search(text)
        if found:
            return direction, found.group(0)
    return None


def cuda_parameter(
    record: Mapping[str, Any], declared: Mapping[str, Any], stream_ordered: bool
) -> tuple[ParameterFacts, str]:
    """Kind, direction, memory space and description of one runtime parameter, with its rule."""
    name, c_type = declared["name"] or "", declared["type"]
    function = record["name"]
    direction = default_direction(c_type)
    base_type = c_type.replace("const ", "").rstrip("*").strip()
    if base_type in STREAM_TYPES:
        out = is_pointer(c_type)
        return (
            ParameterFacts(
                "STREAM",
                "out" if out else "in",
                "the stream created" if out else "the stream the work is ordered on",
            ),
            "param-stream",
        )
    if name in DEVICE_PARAMETER_NAMES and base_type == "int":
        return (
            ParameterFacts("DEVICE", direction, "a device number"),
            "param-device",
        )
    if base_type == "cudaError_t":
        return ParameterFacts("ERROR_CODE", direction, "an error code"), "param-error"
    if base_type == "void" and is_pointer(c_type) and name in BUFFER_PARAMETER_NAMES | {"devPtr"}:
        if function.startswith(("cudaMemcpy", "cudaMemset")) and name in ("dst", "src", "devPtr"):
            space = "either" if function.startswith("cudaMemcpy") else "device"
            role = {"dst": "destination", "src": "source", "devPtr": "destination"}[name]
            length = next(
                (
                    p["name"]
                    for p in record["parameters"]
                    if p["name"] in ("count", "sizeBytes", "size")
                ),
                None,
            )
            return (
                ParameterFacts(
                    "BUFFER",
                    "out" if role == "destination" else "in",
                    f"the {role} memory",
                    memory_space=space,
                    length=length if "2D" not in function and "3D" not in function else "*",
                    asynchronous=stream_ordered,
                ),
                "param-copy-buffer",
            )
        allocation_space: str | None = None
        if function in (
            "cudaMalloc",
            "cudaMallocAsync",
            "cudaMallocPitch",
            "cudaFree",
            "cudaFreeAsync",
        ):
            allocation_space = "device"
        elif function in (
            "cudaMallocHost",
            "cudaHostAlloc",
            "cudaFreeHost",
            "cudaHostRegister",
            "cudaHostUnregister",
        ):
            allocation_space = "host"
        elif function in ("cudaMallocManaged",):
            allocation_space = "unified"
        if allocation_space is not None:
            return (
                ParameterFacts(
                    "BUFFER",
                    "out" if c_type.count("*") == 2 else direction,
                    "the allocation" if c_type.count("*") == 2 else "the memory concerned",
                    memory_space=allocation_space,
                ),
                "param-allocation",
            )
        return ParameterFacts(None, direction, "a pointer the call reads or sets"), "param-pointer"
    if name in ("count", "sizeBytes") and function.startswith(("cudaMemcpy", "cudaMemset")):
        return ParameterFacts("COUNT", "in", "the number of bytes"), "param-count"
    if name == "value" and function.startswith("cudaMemset"):
        return ParameterFacts("SCALAR", "in", "the byte value to write"), "param-scalar"
    if not is_pointer(c_type) and base_type in (
        "size_t",
        "unsigned int",
        "int",
        "float",
        "unsigned long long",
        "dim3",
    ):
        return ParameterFacts("SCALAR", "in", None), "param-scalar"
    return ParameterFacts(None, direction, None), "param-other"


def cuda_facts(record: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The synchronization facts of one function: the first curated rule that matches it wins."""
    for rule in sync_rules():
        if rule.pattern.search(record["name"]):
            return dict(rule.facts), [rule.rule_id, rule.source]
    raise ClassifyError(
        f"cuda:{record['name']}: no synchronization rule in curated/cuda/synchronization.yaml "
        "matches; add one (the last rule should catch everything)"
    )


def classify_cuda_record(record: Mapping[str, Any]) -> tuple[dict[str, Any], Provenance]:
    name = record["name"]
    where = f"{HEADER}:{record['line']}"
    notes = Provenance("classify/cuda.py")
    facts, (rule_id, source) = cuda_facts(record)
    origin = cite(f"{MODEL}/synchronization.yaml", f"{rule_id} ({source})")
    notes_doc = set(record.get("doc_notes", []))
    has_stream = any(p["type"] == "cudaStream_t" for p in record["parameters"])
    # The doc comment's own markers override the name rule where they speak.
    blocking = facts["blocking"]
    if "note_sync" in notes_doc and facts.get("follow_doc_notes", True):
        blocking = True
    if "note_async" in notes_doc and facts.get("follow_doc_notes", True):
        blocking = False
    stream_ordered = bool(facts.get("stream_ordered")) and (
        has_stream or facts.get("implicit_stream", False)
    )
    device_runtime = "__cudart_builtin__" in record["markers"]
    launch = "cpu+gpu" if device_runtime else "cpu"
    runs_on = facts.get("runs_on", "gpu" if stream_ordered else "cpu")
    section = execution(
        blocking=blocking,
        launch=launch,
        runs_on=runs_on,
        gpu_scope="thread" if device_runtime else None,
        locality="local",
        completion="stream_ordered" if stream_ordered else None,
        # nb-op only where the call leaves work pending (ordered on a stream); a query that
        # returns at once without blocking is neither.
        procedure_class="b-op" if blocking else ("nb-op" if stream_ordered else None),
    )
    for field_name in ("blocking", "runs_on", "completion", "procedure_class"):
        notes.curated(f"/execution/{field_name}", origin)
    if {"note_sync", "note_async"} & notes_doc:
        notes.source(
            "/execution/blocking",
            f"{where} doc comment \\{sorted({'note_sync', 'note_async'} & notes_doc)[0]}",
        )
    notes.source("/execution/launch", f"{where} markers {' '.join(record['markers'])}")
    notes.rule("/execution/gpu_scope", "device-runtime-thread-scope")
    semantics = empty_semantics()
    if facts.get("memory"):
        local, reuse = (
            ("after_wait", "after_wait")
            if stream_ordered or not blocking
            else ("after_return", "after_return")
        )
        semantics["memory"] = memory(local, None, reuse, fence=facts.get("fence", "none"))
        notes.curated("/semantics/memory", origin)
    parameters = []
    buffer_count = 0
    for index, declared in enumerate(record["parameters"]):
        parameter_facts, parameter_rule = cuda_parameter(record, declared, stream_ordered)
        if parameter_facts.kind == "BUFFER":
            buffer_count += 1
        stated = documented_direction(
            declared["type"], parameter_doc(record, index, declared["name"] or "")
        )
        if stated is not None:
            parameter_facts.direction = stated[0]
        parameters.append(declared_parameter(declared, parameter_facts))
        note_declared_parameter(notes, index, where, parameter_rule)
        if stated is not None:
            notes.source(
                f"/parameters/{index}/direction",
                f"{where} doc comment \\param {declared['name']}: '{stated[1]}'",
            )
    dependencies = []
    for dependency in facts.get("context_dependencies", []):
        dependencies.append(
            context_dependency(
                dependency["field"],
                dependency["default"],
                dependency["depends_on"],
                dependency["note"],
            )
        )
    for parameter in parameters:
        if parameter.memory_space == "either":
            dependencies.append(
                context_dependency(
                    f"param:{parameter.name}.memory_space",
                    "either",
                    [
                        "the cudaMemcpyKind argument",
                        "where the pointer was allocated (unified addressing)",
                    ],
                    "Host or device memory, as the copy kind says; with cudaMemcpyDefault the "
                    "runtime infers it from the pointer.",
                )
            )
    if dependencies:
        notes.curated("/tool_integration/context_dependencies", origin)
    group, group_rule = cuda_api_group(name)
    notes.curated("/identity/api_group", cite(f"{MODEL}/groups.yaml", group_rule))
    return_type = record["return_type"]
    if return_type == "cudaError_t":
        returned = record.get("doc_returns", [])
        # A code the runtime documents as not an error (cudaErrorNotReady of a query) is a
        # success outcome.
        not_errors = {"cudaSuccess", *facts.get("successes", [])}
        errors = [code for code in returned if code not in not_errors]
        successes = [code for code in returned if code in not_errors] or ["cudaSuccess"]
        return_section = c_return(
            return_type, kind="ERROR_CODE", errors=errors, successes=successes
        )
        notes.source("/return/possible_errors", f"{where} doc comment \\return")
    elif return_type == "const char*":
        return_section = c_return(return_type, kind="value", value_kind="STRING")
    else:
        return_section = c_return(return_type, kind="value" if return_type != "void" else "void")
    notes.rule("/return/kind", "return-kind")
    # Our own words: built from the name (the header's \\brief is NVIDIA's prose, not copied),
    # hand-written in curated/cuda/entries.yaml where the name misleads.
    identity = Identity(MODEL, name, api_group=group, desc=cuda_description(name))
    notes.rule("/identity/desc", "description-from-name")
    if record.get("deprecated", False):
        as_of = record.get("doc_deprecated_as_of")
        identity.deprecated_in = f"CUDA-{as_of}" if as_of else deprecated_version(name)
        notes.source(
            "/identity/deprecated_in",
            f"{where} __CUDA_DEPRECATED"
            + (f", doc comment: deprecated as of CUDA {as_of}" if as_of else ""),
        )
    entry = EntryBuilder(
        identity=identity,
        bindings=c_bindings(
            HEADER, render_signature(name, record["return_type"], record["parameters"])
        ),
        execution=section,
        semantics=semantics,
        parameters=parameters,
        returns=return_section,
        tool_integration=ToolIntegration(
            buffer_aliasing=("forbidden" if buffer_count >= 2 else "allowed")
            if buffer_count
            else None,
            context_dependencies=dependencies,
        ),
    ).build()
    if record.get("alias_of"):
        alias = f"{HEADER} #define {name} {record['alias_of']}: the name programs call"
        notes.source("/identity/name", alias)
        notes.source("/bindings/c/signature", f"{where} ({record['alias_of']}), {alias}")
    else:
        notes.source("/identity/name", where)
        notes.source("/bindings/c/signature", where)
    notes.rule("/tool_integration/buffer_aliasing", "aliasing-by-buffer-count")
    return entry, notes


@cache
def deprecations() -> Mapping[str, Any]:
    document: Mapping[str, Any] = load(f"{MODEL}/deprecations.yaml")
    return document


def deprecated_version(name: str) -> str | None:
    for item in deprecations()["deprecations"]:
        if re.search(item["match"], name):
            return str(item["deprecated_in"])
    return None


@cache
def curated_overrides(model: str) -> Mapping[str, Any]:
    """Hand-checked facts per function (descriptions, formal assignments), by key."""
    document: Mapping[str, Any] = load(f"{model}/entries.yaml")
    return document.get("entries", {})


def apply_overrides(
    model: str, key: str, entry: dict[str, Any], notes: Provenance, formal: dict[str, Any]
) -> None:
    """Put the curated facts of `key` into its entry: each a JSON pointer and a value."""
    curated = curated_overrides(model).get(key)
    if not curated:
        return
    source = curated["source"]
    for pointer, value in curated.get("set", {}).items():
        conflict = (
            check_release_since(model, key.partition(":")[2], value)
            if pointer == "/identity/since"
            else None
        )
        if conflict is not None:
            raise ClassifyError(
                f"{key}: curated/{model}/entries.yaml sets since {value}, but {conflict}"
            )
        target: Any = entry
        parts = [
            part.replace("~1", "/").replace("~0", "~") for part in pointer.strip("/").split("/")
        ]
        for part in parts[:-1]:
            target = target[int(part)] if isinstance(target, list) else target[part]
        last = parts[-1]
        if isinstance(target, list):
            target[int(last)] = value
        elif last not in target:
            raise ClassifyError(f"{key}: curated pointer {pointer} names no field of the entry")
        else:
            target[last] = value
        notes.curated(pointer, cite(f"{model}/entries.yaml", f"{key} ({source})"))
    if "formal" in curated:
        formal[key] = curated["formal"]
        notes.curated("/semantics/formal", cite(f"{model}/entries.yaml", f"{key} ({source})"))


@cache
def since_versions() -> Mapping[str, tuple[str, str]]:
    """Function -> (identity.since, source note) from curated/cuda/versions.yaml."""
    found: dict[str, tuple[str, str]] = {}
    for version, item in load(f"{MODEL}/versions.yaml")["since"].items():
        for function in item["functions"]:
            if function in found:
                raise ClassifyError(f"curated/cuda/versions.yaml lists {function} twice")
            found[function] = (f"CUDA-{version}", item["source"])
    return found


def release_note(name: str, source: str) -> str:
    """The provenance origin of a release-note version of curated/cuda/versions.yaml."""
    return cite(f"{MODEL}/versions.yaml", f"{name} ({source})")


def link_records(
    records: list[Mapping[str, Any]],
    entries: dict[str, dict[str, Any]],
    notes: Mapping[str, Provenance],
) -> None:
    """The edges between runtime functions that the header states: the replacement a deprecated
    function's doc comment names (`... the non-deprecated function ::cudaDeviceReset()`), and
    each X / XAsync pair (the stream-ordered form of X) as its blocking/nonblocking variants."""
    for record in records:
        key = f"{MODEL}:{record['name']}"
        replacement = record.get("doc_replacement")
        if replacement and f"{MODEL}:{replacement}" in entries:
            entries[key]["relationships"]["superseded_by"] = f"{MODEL}:{replacement}"
            notes[key].source(
                "/relationships/superseded_by",
                f"{HEADER}:{record['line']} doc comment: the non-deprecated function {replacement}",
            )
        plain = f"{MODEL}:{record['name'].removesuffix('Async')}"
        if record["name"].endswith("Async") and plain in entries:
            entries[plain]["relationships"]["variants"]["nonblocking"] = key
            entries[key]["relationships"]["variants"]["blocking"] = plain
            notes[plain].rule("/relationships/variants/nonblocking", "async-suffix-variant")
            notes[key].rule("/relationships/variants/blocking", "async-suffix-variant")


def classify(extracted: dict[str, Any]) -> dict[str, Any]:
    """Turn the extracted runtime declarations into complete entries with provenance."""
    if extracted.get("model") != MODEL:
        raise ClassifyError(f"classify.cuda: expected model 'cuda', got {extracted.get('model')!r}")
    entries: dict[str, dict[str, Any]] = {}
    provenance: dict[str, dict[str, dict[str, str]]] = {}
    formal: dict[str, dict[str, Any]] = {}
    notes_of: dict[str, Provenance] = {}
    for record in extracted["records"]:
        key = f"{MODEL}:{record['name']}"
        entry, notes = classify_cuda_record(record)
        apply_since(
            record["name"],
            entry,
            notes,
            since_versions().get(record["name"]),
            partial(release_note, record["name"]),
        )
        entries[key] = entry
        notes_of[key] = notes
    link_records(extracted["records"], entries, notes_of)
    for key, entry in entries.items():
        apply_overrides(MODEL, key, entry, notes_of[key], formal)
        provenance[key] = notes_of[key].sorted_records()
    unknown = sorted(set(curated_overrides(MODEL)) - set(entries))
    if unknown:
        raise ClassifyError(
            f"curated/cuda/entries.yaml names functions the header lacks: {unknown}"
        )
    return {
        "model": MODEL,
        "sources": extracted["sources"],
        "entries": dict(sorted(entries.items())),
        "formal": dict(sorted(formal.items())),
        "provenance": dict(sorted(provenance.items())),
    }
