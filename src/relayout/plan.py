"""Distribution plans: the DistributionPlan a distributed program lowers to (block, cyclic,
block_cyclic per axis, or replicated; relayout.distribution lowers it) and its short form back as
a request's JSON (short_form, which Requests.from_plan reads)."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    model_serializer,
    model_validator,
)

__all__ = [
    "ArrayPlan",
    "Axis",
    "DistributionPlan",
    "short_form",
]


class Axis(BaseModel):
    """How one dimension of an array is cut over a grid dimension (grid_dim None: kept whole)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    grid_dim: int | None = Field(ge=0)
    scheme: Literal["block", "cyclic", "block_cyclic"] = "block"
    block_size: int = Field(default=1, ge=1)

    @model_validator(mode="after")
    def _consistent(self) -> Axis:
        if self.block_size != 1 and self.scheme != "block_cyclic":
            raise ValueError("block_size applies only to scheme block_cyclic")
        if self.grid_dim is None and (self.scheme != "block" or self.block_size != 1):
            raise ValueError("an axis kept whole (grid_dim null) takes no scheme or block_size")
        return self

    @model_serializer(mode="plain")
    def _without_defaults(self) -> dict[str, Any]:
        data: dict[str, Any] = {"grid_dim": self.grid_dim}
        if self.scheme != "block":
            data["scheme"] = self.scheme
        if self.block_size != 1:
            data["block_size"] = self.block_size
        return data

    @property
    def cyclic_block(self) -> int | None:
        """The block of a cyclic family scheme (cyclic is block_cyclic(1)); None for block or
        for an axis kept whole."""
        if self.grid_dim is None or self.scheme == "block":
            return None
        return 1 if self.scheme == "cyclic" else self.block_size

    def same_split(self, other: Axis) -> bool:
        """Both axes cut the same way: the same grid dimension, scheme and block."""
        return self.grid_dim == other.grid_dim and self.cyclic_block == other.cyclic_block


class ArrayPlan(BaseModel):
    """One array's distribution: its axes, or replicated; location only when a place names it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    axes: list[Axis] = Field(default_factory=list)
    replicated: bool = False
    location: Literal["host", "device"] | None = None

    @model_serializer(mode="plain")
    def _without_defaults(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        if self.axes:
            data["axes"] = [axis._without_defaults() for axis in self.axes]
        if self.replicated:
            data["replicated"] = True
        if self.location is not None:
            data["location"] = self.location
        return data

    @property
    def distributed_grid_dims(self) -> frozenset[int]:
        """The grid dimensions the array's axes are dealt over (none when replicated)."""
        return frozenset(axis.grid_dim for axis in self.axes if axis.grid_dim is not None)


class DistributionPlan(BaseModel):
    """The plan a scatter reads: grid extents and, per array, its axes or replication.

    Its JSON leaves every default out (scheme block, block_size 1, no location, no axes for a
    replicated array) but always names an axis's grid_dim, null for a dimension kept whole.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    grid: list[int]
    arrays: dict[str, ArrayPlan]

    @model_validator(mode="after")
    def _consistent(self) -> DistributionPlan:
        # Only plans that plan_requests can give back: the short form of p must plan to p.
        if not self.grid:
            raise ValueError("grid: a plan's grid has at least one dimension")
        for k, extent in enumerate(self.grid):
            if extent < 1:
                raise ValueError(f"grid[{k}]: {extent} ranks; a grid extent is at least 1")
        equal_edges = len(set(self.grid)) <= 1
        for name, array in self.arrays.items():
            where = f"arrays.{name}"
            if array.replicated and array.axes:
                raise ValueError(f"{where}: a replicated array takes no axes")
            if not array.replicated and all(axis.grid_dim is None for axis in array.axes):
                raise ValueError(
                    f"{where}: neither replicated nor distributed (every axis grid_dim null)"
                )
            used: set[int] = set()
            for d, axis in enumerate(array.axes):
                if axis.grid_dim is None:
                    continue
                at = f"{where}.axes[{d}]"
                if axis.grid_dim >= len(self.grid):
                    raise ValueError(
                        f"{at}: grid_dim {axis.grid_dim} is beyond the grid's "
                        f"{len(self.grid)} dimension(s)"
                    )
                if axis.grid_dim in used:
                    raise ValueError(f"{at}: grid_dim {axis.grid_dim} distributes two axes")
                used.add(axis.grid_dim)
                if axis.scheme != "block" and not equal_edges:
                    raise ValueError(
                        f"{at}: a {axis.scheme} axis needs an equal-edge grid, not {self.grid}; "
                        "use block, or a grid such as ['root(P, 2)', 'root(P, 2)']"
                    )
        return self

    @model_serializer(mode="plain")
    def _without_defaults(self) -> dict[str, Any]:
        return {
            "grid": list(self.grid),
            "arrays": {name: plan._without_defaults() for name, plan in self.arrays.items()},
        }

    def to_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"))

    @classmethod
    def parse(cls, obj: Any) -> DistributionPlan:
        """A plan from a DistributionPlan, a dict or JSON text; ValueError saying what is wrong."""
        if isinstance(obj, DistributionPlan):
            return obj
        if isinstance(obj, str | bytes):
            obj = json.loads(obj)
        try:
            return cls.model_validate(obj)
        except ValidationError as error:
            first = error.errors(include_url=False)[0]
            where = ".".join(str(part) for part in first.get("loc", ()))
            message = str(first.get("msg")).removeprefix("Value error, ")
            raise ValueError(f"plan {where + ': ' if where else ''}{message}") from None


def short_form(plan: Any) -> dict[str, Any]:
    """The short form of a plan as a request's JSON object (Requests.from_plan validates it):
    startup.grid with its extents, then per array distribute (one per distributed axis) or
    replicate, and place where the plan names a location."""
    parsed = DistributionPlan.parse(plan)
    operations: list[dict[str, Any]] = []
    for name, array_plan in parsed.arrays.items():
        if array_plan.replicated:
            operations.append({"action": "replicate", "array": name})
        for dim, axis in enumerate(array_plan.axes):
            if axis.grid_dim is None:
                continue
            operation: dict[str, Any] = {
                "action": "distribute",
                "array": name,
                "grid_dim": axis.grid_dim,
                "dim": dim,
                "scheme": axis.scheme,
            }
            if axis.scheme == "block_cyclic":
                operation["block_size"] = axis.block_size
            operations.append(operation)
        if array_plan.location is not None:
            operations.append({"action": "place", "array": name, "on": array_plan.location})
    return {"startup": {"grid": list(parsed.grid)}, "operations": operations}
