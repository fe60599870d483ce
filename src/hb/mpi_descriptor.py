"""The distribution a distributed grade starts from: a kernel's default MPI distribution (its
manifest's `distribution`) as a DistributionPlan and as the short-form request shown to the agent."""

from __future__ import annotations

from typing import Any

from hb.kernels import Manifest
from hb.requests_api import DistributionPlan, Requests


def default_grid(manifest: Manifest) -> list[str]:
    """The grid extents over P the kernel's default distribution uses ([] when it has none)."""
    if not manifest.distribution:
        return []
    return [str(extent) for extent in manifest.distribution.get("grid", [])]


def default_plan_document(manifest: Manifest, ranks: int) -> dict[str, Any]:
    """The default distribution as a plan document at `ranks` (the grid evaluated there)."""
    if not manifest.distribution:
        raise ValueError(f"{manifest.name} declares no default distribution")
    grid = Requests.validate({"startup": {"grid": default_grid(manifest)}}).grid_at(ranks)
    return {"grid": list(grid), "arrays": manifest.distribution.get("arrays", {})}


def default_requests(manifest: Manifest, ranks: int = 4) -> Requests:
    """The kernel's default distribution as short-form distribute / replicate operations
    (Requests.from_plan), with the grid kept as the manifest's expressions over P."""
    if DistributionPlan is None:
        raise NotImplementedError(
            "relayout.plan.DistributionPlan is not available in this checkout"
        )
    plan = DistributionPlan.model_validate(default_plan_document(manifest, ranks))
    short_form = Requests.from_plan(plan)
    document = json_of(short_form)
    document.setdefault("startup", {})["grid"] = default_grid(manifest)
    return Requests.validate(document)


def json_of(requests: Requests) -> dict[str, Any]:
    import json

    text = requests.to_json()
    return json.loads(text) if text else {}
