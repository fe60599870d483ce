"""The shipped CUDA runtime corpus (counts, hand-checked entries, provenance, agreement with the
header when it is cached) and what the extract reads from the header's doc comments."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.usis.corpus import assert_golden, cached_source_or_skip, shipped, shipped_provenance
from usis.cheader.declarations import CPrototype
from usis.classify import cuda as classify_cuda
from usis.extract import cuda as extract_cuda


def entries() -> dict[str, Any]:
    return shipped("cuda", "final")["entries"]


# ---------------------------------------------------------------------------------------------
# The doc comments (the header reader itself: tests/usis/test_cheader.py)


def test_doc_comments_attach_their_return_codes_and_notes() -> None:
    text = "\n".join(
        [
            "/**",
            " * \\brief Copies.",
            " * \\return",
            " * ::cudaSuccess,",
            " * ::cudaErrorInvalidValue",
            " * \\note_sync",
            " */",
            "extern cudaError_t cudaCopy(void);",
        ]
    )
    prototype = CPrototype("cudaCopy", "cudaError_t", (), (), False, "h", 8, False)
    facts = extract_cuda.attach_docs([prototype], extract_cuda.doc_blocks(text))["cudaCopy"]
    assert facts.returns == ("cudaSuccess", "cudaErrorInvalidValue")
    assert facts.notes == ("note_sync",)


# ---------------------------------------------------------------------------------------------
# The shipped corpus


def test_every_function_of_the_runtime_header_is_an_entry() -> None:
    assert len(entries()) >= 300
    assert all(key.startswith("cuda:cuda") for key in entries())
    assert shipped("cuda", "final")["sources"][0][0] == "nvidia-cuda-runtime-cu12"


def test_launch_is_cpu_or_cpu_plus_gpu_and_gpu_scope_goes_with_the_device_runtime() -> None:
    for key, entry in entries().items():
        execution = entry["execution"]
        assert execution["launch"] in ("cpu", "cpu+gpu"), key
        assert (execution["gpu_scope"] == "thread") == (execution["launch"] == "cpu+gpu"), key
    device_runtime = [k for k, e in entries().items() if e["execution"]["launch"] == "cpu+gpu"]
    assert {"cuda:cudaMalloc", "cuda:cudaMemcpyAsync", "cuda:cudaDeviceSynchronize"} <= set(
        device_runtime
    )


def test_device_and_stream_parameters_have_their_kinds() -> None:
    kinds = {
        (key, p["name"]): p["kind"] for key, entry in entries().items() for p in entry["parameters"]
    }
    assert kinds[("cuda:cudaSetDevice", "device")] == "DEVICE"
    assert kinds[("cuda:cudaDeviceCanAccessPeer", "peerDevice")] == "DEVICE"
    assert kinds[("cuda:cudaStreamSynchronize", "stream")] == "STREAM"
    assert kinds[("cuda:cudaStreamCreate", "pStream")] == "STREAM"
    streams = [k for k in kinds if k[1] == "stream" and "cudaStream" not in k[0]]
    assert streams and all(kinds[k] == "STREAM" for k in streams)


def test_stream_ordered_calls_do_not_block_and_copies_follow_the_documented_rules() -> None:
    for key, entry in entries().items():
        execution = entry["execution"]
        if execution["completion"] == "stream_ordered":
            assert execution["blocking"] is False, key
            assert execution["runs_on"] == "gpu", key
        if key.startswith("cuda:cudaMemcpy") and not key.endswith("Async"):
            assert execution["blocking"] is True, key


# Hand-checked against the CUDA Runtime API reference 12.9: pointer -> value.
GOLDEN: dict[str, dict[str, Any]] = {
    "cuda:cudaMalloc": {
        "/bindings/c/signature": "cudaError_t cudaMalloc(void **devPtr, size_t size)",
        "/execution/blocking": True,
        "/execution/launch": "cpu+gpu",
        "/execution/runs_on": "cpu",
        "/parameters/0/kind": "BUFFER",
        "/parameters/0/direction": "out",
        "/parameters/0/memory_space": "device",
        "/return/kind": "ERROR_CODE",
        "/return/possible_errors": ["cudaErrorInvalidValue", "cudaErrorMemoryAllocation"],
    },
    "cuda:cudaMemcpy": {
        "/bindings/c/signature": "cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)",
        "/execution/blocking": True,
        "/execution/launch": "cpu",
        "/execution/completion": None,
        "/parameters/0/memory_space": "either",
        "/parameters/0/length": "count",
        "/parameters/2/kind": "COUNT",
        "/tool_integration/buffer_aliasing": "forbidden",
        "/tool_integration/context_dependencies/0/field": "execution.blocking",
    },
    "cuda:cudaMemcpyAsync": {
        "/execution/blocking": False,
        "/execution/launch": "cpu+gpu",
        "/execution/runs_on": "gpu",
        "/execution/completion": "stream_ordered",
        "/execution/procedure_class": "nb-op",
        "/parameters/4/kind": "STREAM",
        "/parameters/0/asynchronous": True,
        "/semantics/memory/buffer_reuse": "after_wait",
    },
    "cuda:cudaStreamSynchronize": {
        "/execution/blocking": True,
        "/execution/launch": "cpu",
        "/identity/api_group": "synchronization",
        "/parameters/0/kind": "STREAM",
        "/return/possible_errors": ["cudaErrorInvalidResourceHandle"],
    },
    "cuda:cudaDeviceSynchronize": {
        "/execution/blocking": True,
        "/execution/launch": "cpu+gpu",
        "/identity/api_group": "synchronization",
        "/parameters": [],
        "/semantics/memory/fence_semantics": "local",
    },
    "cuda:cudaEventRecord": {
        "/bindings/c/signature": "cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)",
        "/execution/blocking": False,
        "/execution/completion": "stream_ordered",
        "/parameters/1/kind": "STREAM",
    },
    "cuda:cudaLaunchKernel": {
        "/execution/blocking": False,
        "/execution/runs_on": "gpu",
        "/execution/completion": "stream_ordered",
        "/execution/launch": "cpu",
        "/parameters/5/kind": "STREAM",
    },
    "cuda:cudaGraphLaunch": {
        "/bindings/c/signature": "cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream)",
        "/execution/blocking": False,
        "/execution/completion": "stream_ordered",
        "/identity/since": "CUDA-10.0",
    },
    "cuda:cudaFree": {
        "/execution/blocking": True,
        "/parameters/0/memory_space": "device",
        "/parameters/0/constraints/not_null": False,
    },
    "cuda:cudaSetDevice": {
        "/parameters/0/kind": "DEVICE",
        "/identity/api_group": "management",
        "/execution/launch": "cpu",
    },
    "cuda:cudaGetDevice": {
        "/parameters/0/kind": "DEVICE",
        "/parameters/0/direction": "out",
        "/identity/api_group": "query",
        "/execution/launch": "cpu+gpu",
    },
    "cuda:cudaThreadSynchronize": {
        "/identity/deprecated_in": "CUDA-4.0",
        "/execution/blocking": True,
    },
}


@pytest.mark.parametrize("key", sorted(GOLDEN))
def test_hand_checked_entries(key: str) -> None:
    assert_golden(key, entries()[key], GOLDEN[key])


def test_every_golden_value_set_by_classify_has_a_provenance_record() -> None:
    provenance = shipped_provenance("cuda")
    for key in GOLDEN:
        records = provenance[key]
        assert records, key
        for record in records.values():
            assert record["stage"] and record["method"] and record["from"], key


# ---------------------------------------------------------------------------------------------
# Agreement with the header, when it is cached


def test_rebuilding_from_the_cached_header_reproduces_the_shipped_entries() -> None:
    source = cached_source_or_skip("nvidia-cuda-runtime-cu12", "cuda")
    extracted = extract_cuda.extract({"nvidia-cuda-runtime-cu12": source})
    classified = classify_cuda.classify(json.loads(json.dumps(extracted)))
    assert set(classified["entries"]) == set(entries())
    for key, entry in classified["entries"].items():
        shipped_entry = entries()[key]
        assert entry["bindings"] == shipped_entry["bindings"], key
        assert entry["execution"] == shipped_entry["execution"], key


def test_graph_node_accessors_and_part_verbs_read_as_what_they_do() -> None:
    from usis.classify.cuda import cuda_description

    assert cuda_description("cudaGraphEventRecordNodeGetEvent") == (
        "Reports event of the graph event record node."
    )
    assert cuda_description("cudaGraphDestroyNode") == "Destroys a node of the graph."
    assert cuda_description("cudaGraphReleaseUserObject") == (
        "Releases a user object reference held by the graph."
    )
    assert cuda_description("cudaIpcGetMemHandle") == "Reports an interprocess memory handle."
    assert cuda_description("cudaHostAlloc") == "Allocates host memory."
    assert cuda_description("cudaStreamIsCapturing") == "Reports whether the stream is capturing."
    assert cuda_description("cudaGraphDestroy") == "Destroys the graph."
