"""Builders of small, schema-complete USIS entries for the tests (the fixtures are made from these)."""

from __future__ import annotations

import copy
import json
from typing import Any

from usis.formal.expander import expand

NULL_VARIANTS = {
    "nonblocking": None,
    "blocking": None,
    "persistent": None,
    "neighborhood": None,
    "host": None,
    "gpu": None,
}


def parameter(
    name: str,
    kind: str | None,
    direction: str = "in",
    c_type: str = "int",
    length: int | str | None = None,
    memory_space: str | None = None,
    pointer: bool | None = None,
) -> dict[str, Any]:
    return {
        "name": name,
        "kind": kind,
        "direction": direction,
        "desc": f"the {name} argument",
        "binding_type": {
            "c": c_type,
            "fortran90": None,
            "fortran08": None,
            "lis": None,
            "cpp": None,
        },
        "asynchronous": False,
        "constant": False,
        "pointer": pointer,
        "array_type": None if length is None else "variable",
        "func_type": None,
        "length": length,
        "parameter_bindings": ["c"],
        "root_only": False,
        "constraints": {"not_null": None, "value_range": None, "paired_with": None},
        "memory_space": memory_space,
    }


def entry(
    model: str,
    name: str,
    api_group: str | None,
    parameters: list[dict[str, Any]],
    signature: str | None = None,
    header: str = "mpi.h",
    blocking: bool = True,
    collective: bool = False,
) -> dict[str, Any]:
    return {
        "identity": {
            "model": model,
            "name": name,
            "api_group": api_group,
            "since": "MPI-1.0" if model == "mpi" else None,
            "deprecated_in": None,
            "standard_refs": [],
            "desc": f"{name} for the tests.",
            "type_family": None,
        },
        "bindings": {
            "c": {
                "expressible": True,
                "header": header,
                "signature": signature or f"int {name}(void)",
            },
            "fortran90": None,
            "fortran08": None,
            "lis": None,
            "cpp": None,
        },
        "execution": {
            "blocking": blocking,
            "execute_once": False,
            "collective": collective,
            "thread_safety": None,
            "launch": "cpu",
            "runs_on": "cpu",
            "gpu_scope": None,
            "stages": None,
            "locality": None,
            "completion": None,
            "procedure_class": "b-op" if blocking else "nb-op",
        },
        "semantics": {
            "collective": None,
            "point_to_point": None,
            "one_sided": None,
            "atomic": None,
            "memory": None,
            "formal": None,
        },
        "parameters": parameters,
        "return": {
            "kind": "ERROR_CODE",
            "value_kind": None,
            "binding_type": {
                "c": "int",
                "fortran90": None,
                "fortran08": None,
                "lis": None,
                "cpp": None,
            },
            "possible_errors": [],
            "possible_successes": [],
        },
        "tool_integration": {
            "profiling_name": None,
            "invariants": [],
            "buffer_aliasing": None,
            "context_dependencies": [],
        },
        "relationships": {"variants": dict(NULL_VARIANTS), "superseded_by": None, "supersedes": []},
    }


def collective_semantics(
    kind: str, reduction: bool = False, in_place: bool = False
) -> dict[str, Any]:
    return {
        "type": kind,
        "root_involved": kind in ("broadcast", "reduce", "scatter", "gather"),
        "in_place": in_place,
        "comm_scope": "both",
        "algorithm_class": "one_to_all" if kind == "broadcast" else "all_to_all",
        "reduction_op": reduction,
        "topology_aware": False,
    }


EXTENT = {"count_ref": "param:count", "datatype_ref": "param:datatype"}
# The formal assignments of the fixture's MPI_Bcast and MPI_Recv, before expansion.
BCAST_ASSIGNMENT = {
    "shape_ref": "collective.broadcast",
    "bindings": {
        "buffer": "param:buffer",
        "extent": EXTENT,
        "root": "param:root",
        "comm": "param:comm",
    },
}
RECV_ASSIGNMENT = {
    "shape_ref": "p2p.recv",
    "bindings": {
        "buffer": "param:buf",
        "extent": EXTENT,
        "peer": "param:source",
        "tag": "param:tag",
        "comm": "param:comm",
    },
}


def mini_corpus() -> dict[str, Any]:
    """A handful of valid MPI and SHMEM entries that together pass every rule."""
    buffer = parameter("buffer", "BUFFER", "inout", "void*", "count", "host", True)
    common = [
        parameter("count", "COUNT"),
        parameter("datatype", "DATATYPE", c_type="MPI_Datatype"),
    ]
    bcast = entry(
        "mpi",
        "MPI_Bcast",
        "collective",
        [
            buffer,
            *common,
            parameter("root", "RANK"),
            parameter("comm", "COMMUNICATOR", c_type="MPI_Comm"),
        ],
        collective=True,
    )
    bcast["semantics"]["collective"] = collective_semantics("broadcast")
    bcast["tool_integration"]["buffer_aliasing"] = "forbidden"
    bindings = BCAST_ASSIGNMENT["bindings"]
    bcast["semantics"]["formal"] = expand(copy.deepcopy(BCAST_ASSIGNMENT))
    bcast["relationships"]["variants"]["nonblocking"] = "mpi:mpi_ibcast"

    ibcast = copy.deepcopy(bcast)
    ibcast["identity"]["name"] = "MPI_Ibcast"
    ibcast["execution"]["blocking"] = False
    ibcast["execution"]["procedure_class"] = "nb-op"
    ibcast["execution"]["completion"] = "ic"
    ibcast["parameters"].append(
        parameter("request", "REQUEST", "out", "MPI_Request*", pointer=True)
    )
    ibcast["semantics"]["formal"] = expand(
        {
            "shape_ref": ["collective.broadcast", "request.post"],
            "bindings": {**bindings, "request": "param:request"},
        }
    )
    ibcast["relationships"]["variants"] = {**NULL_VARIANTS, "blocking": "mpi:mpi_bcast"}

    send_buffer = parameter("sendbuf", "BUFFER", "in", "const void*", "count", "host", True)
    recv_buffer = parameter("recvbuf", "BUFFER", "out", "void*", "count", "host", True)
    allreduce = entry(
        "mpi",
        "MPI_Allreduce",
        "collective",
        [
            send_buffer,
            recv_buffer,
            *common,
            parameter("op", "OPERATION", c_type="MPI_Op"),
            parameter("comm", "COMMUNICATOR", c_type="MPI_Comm"),
        ],
        collective=True,
    )
    allreduce["semantics"]["collective"] = collective_semantics("allreduce", True, True)
    allreduce["tool_integration"]["buffer_aliasing"] = "in_place_only"
    allreduce["semantics"]["formal"] = expand(
        {
            "shape_ref": "collective.allreduce",
            "bindings": {
                "send_buffer": "param:sendbuf",
                "recv_buffer": "param:recvbuf",
                "extent": EXTENT,
                "operation": "param:op",
                "comm": "param:comm",
            },
        }
    )

    recv = entry(
        "mpi",
        "MPI_Recv",
        "point_to_point",
        [
            parameter("buf", "BUFFER", "out", "void*", "count", "host", True),
            *common,
            parameter("source", "RANK"),
            parameter("tag", "TAG"),
            parameter("comm", "COMMUNICATOR", c_type="MPI_Comm"),
            parameter("status", "STATUS", "out", "MPI_Status*", pointer=True),
        ],
    )
    recv["semantics"]["point_to_point"] = {
        "direction": "receive",
        "synchronous": None,
        "buffered": None,
        "ready": None,
    }
    recv["tool_integration"]["buffer_aliasing"] = "forbidden"
    recv["semantics"]["formal"] = expand(copy.deepcopy(RECV_ASSIGNMENT))

    rank = entry(
        "mpi",
        "MPI_Comm_rank",
        "query",
        [
            parameter("comm", "COMMUNICATOR", c_type="MPI_Comm"),
            parameter("rank", "RANK", "out", "int*", pointer=True),
        ],
    )
    init = entry("mpi", "MPI_Init", "management", [])
    init["execution"]["execute_once"] = True

    old_extent = entry("mpi", "MPI_Type_extent", None, [])
    old_extent["identity"]["deprecated_in"] = "MPI-2.0"
    old_extent["relationships"]["superseded_by"] = "mpi:mpi_type_get_extent"
    new_extent = entry("mpi", "MPI_Type_get_extent", None, [])
    new_extent["relationships"]["supersedes"] = ["mpi:mpi_type_extent"]

    # Through JSON, so that entries never share parameter objects with each other.
    return json.loads(
        json.dumps(
            {
                "mpi:mpi_allreduce": allreduce,
                "mpi:mpi_bcast": bcast,
                "mpi:mpi_comm_rank": rank,
                "mpi:mpi_ibcast": ibcast,
                "mpi:mpi_init": init,
                "mpi:mpi_recv": recv,
                "mpi:mpi_type_extent": old_extent,
                "mpi:mpi_type_get_extent": new_extent,
            }
        )
    )
