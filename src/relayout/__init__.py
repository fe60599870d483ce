"""relayout: a request language for how an array reaches a kernel, and the kernels that convert it."""

from relayout.algebra.lower import NodeLayout, PointerLayout, lower_single_node
from relayout.algebra.state import BIJECTION_CHECK_LIMIT, CellMap, StructType
from relayout.arrays import ArraySpec, parse_arrays
from relayout.check import CheckedArray, RequestsCheck, c_declarations, c_signature
from relayout.errors import RequestError
from relayout.models import (
    OPERATION_ADAPTER,
    RECORDED_VERSION,
    REQUESTS_ADAPTER,
    Requests,
    requests_schema,
    requests_schema_text,
)
from relayout.plan import ArrayPlan, Axis, DistributionPlan
from relayout.types import RELAYOUT_C_NAMES, CNames

__all__ = [
    "BIJECTION_CHECK_LIMIT",
    "OPERATION_ADAPTER",
    "RECORDED_VERSION",
    "RELAYOUT_C_NAMES",
    "REQUESTS_ADAPTER",
    "ArrayPlan",
    "ArraySpec",
    "Axis",
    "CNames",
    "CellMap",
    "CheckedArray",
    "DistributionPlan",
    "NodeLayout",
    "PointerLayout",
    "RequestError",
    "Requests",
    "RequestsCheck",
    "StructType",
    "c_declarations",
    "c_signature",
    "lower_single_node",
    "parse_arrays",
    "requests_schema",
    "requests_schema_text",
]
