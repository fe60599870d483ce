"""The kernel catalog: each kernels/<name>/ folder holds manifest.yaml (arrays, sizes, scalars,
presets, precisions, default distribution, workspace), reference.py (numpy) and solution.c."""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

import numpy as np
import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from hb.kernels import inputs
from hb.precision import TOLERANCE_MATRIX, Tolerance

CATALOG_DIR = Path(__file__).resolve().parent
PRESETS = ("S", "M", "L")

Intent = Literal["in", "inout", "out"]
Track = Literal["scientific_computing", "loop_level", "machine_learning"]
# Berkeley's dwarfs (Asanović et al., "The Landscape of Parallel Computing Research", 2006), with
# Monte Carlo kept beside MapReduce as the first list had it.
Dwarf = Literal[
    "dense_linear_algebra",
    "sparse_linear_algebra",
    "spectral_methods",
    "n_body_methods",
    "structured_grids",
    "unstructured_grids",
    "monte_carlo",
    "map_reduce",
    "combinational_logic",
    "graph_traversal",
    "dynamic_programming",
    "backtrack_branch_and_bound",
    "graphical_models",
    "finite_state_machines",
]


class ArrayDecl(BaseModel):
    """One array argument: its shape over the size symbols, intent, element kind and storage."""

    model_config = ConfigDict(extra="forbid")

    name: str
    shape: list[str | int]
    intent: Intent
    # "float" is the problem precision; an integer kind is fixed whatever the precision.
    dtype: Literal["float", "int64", "int32"] = "float"
    # A sparse array is passed in its canonical CSR form: <name>_data, <name>_indices, <name>_indptr.
    format: Literal["dense", "csr"] = "dense"

    @property
    def is_floating(self) -> bool:
        return self.dtype == "float"

    @property
    def is_sparse(self) -> bool:
        return self.format != "dense"

    @property
    def is_output(self) -> bool:
        return self.intent in ("out", "inout")


class ScalarDecl(BaseModel):
    """One scalar argument: a floating scalar takes the problem precision, an int is int64_t."""

    model_config = ConfigDict(extra="forbid")

    name: str
    type: Literal["float", "int"]
    value: float


class BandDecl(BaseModel):
    """One precision's grading band in a tolerance override."""

    model_config = ConfigDict(extra="forbid")

    rtol: float = Field(ge=0)
    atol: float = Field(ge=0)


class ToleranceDecl(BaseModel):
    """A kernel's own grading band where TOLERANCE_MATRIX cannot hold (an iterative solver's
    stopping test, a reduction over many terms): a band per precision it widens, and why."""

    model_config = ConfigDict(extra="forbid")

    reason: str = Field(min_length=1)
    bands: dict[str, BandDecl] = Field(min_length=1)


class Manifest(BaseModel):
    """A kernel's manifest.yaml, validated."""

    model_config = ConfigDict(extra="forbid")

    name: str
    summary: str
    track: Track
    dwarf: Dwarf
    tags: list[str] = Field(default_factory=list)
    # Where the computation's definition comes from (PolyBench 4.2, NPBench, Rodinia, BLAS, a paper).
    source: str
    # loop_level kernels: the one loop transformation the kernel rewards, in one line.
    transformation: str | None = None
    sizes: list[str]
    arrays: list[ArrayDecl]
    scalars: list[ScalarDecl] = Field(default_factory=list)
    # A preset binds every size symbol (an integer) and may override scalars.
    presets: dict[str, dict[str, int | float]]
    precisions: list[str]
    # The default MPI distribution: grid extents over P and a plan-shaped entry per array.
    distribution: dict[str, Any] | None = None
    workspace_bytes: str = "0"
    # Where the default band cannot hold: the bound per precision and the reason.
    tolerance: ToleranceDecl | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Manifest:
        for precision, band in (self.tolerance.bands if self.tolerance else {}).items():
            if precision not in self.precisions:
                raise ValueError(
                    f"tolerance.bands.{precision}: not one of the kernel's precisions "
                    f"{self.precisions}"
                )
            default = TOLERANCE_MATRIX.get(precision)
            if default is None:
                raise ValueError(f"tolerance.bands.{precision}: not a precision of the judge")
            if band.rtol < default.rtol or band.atol < default.atol:
                raise ValueError(
                    f"tolerance.bands.{precision}: rtol={band.rtol:g} atol={band.atol:g} is "
                    f"narrower than TOLERANCE_MATRIX's (rtol={default.rtol:g} "
                    f"atol={default.atol:g}); an override only widens the band"
                )
        if (self.track == "loop_level") != (self.transformation is not None):
            raise ValueError(
                "transformation: a loop_level kernel states the one loop transformation it "
                "rewards, and only a loop_level kernel does"
            )
        declared = set(self.sizes)
        for array in self.arrays:
            for extent in array.shape:
                if isinstance(extent, str) and extent not in declared:
                    raise ValueError(
                        f"arrays.{array.name}.shape: {extent!r} is not a size symbol ({self.sizes})"
                    )
        scalar_names = {s.name for s in self.scalars}
        for preset, values in self.presets.items():
            unknown = set(values) - declared - scalar_names
            missing = declared - set(values)
            if unknown or missing:
                raise ValueError(
                    f"presets.{preset}: unknown {sorted(unknown)}, missing {sorted(missing)}"
                )
            fractional = sorted(n for n in declared if not isinstance(values[n], int))
            if fractional:
                raise ValueError(f"presets.{preset}: sizes {fractional} must be integers")
        return self

    @property
    def fp64_only(self) -> bool:
        return self.precisions == ["fp64"]

    def tolerance_bands(self) -> dict[str, Tolerance]:
        """The bands this kernel's tolerance override gives, by precision (none without one)."""
        if self.tolerance is None:
            return {}
        return {p: Tolerance(b.rtol, b.atol) for p, b in self.tolerance.bands.items()}

    def preset_sizes(self, preset: str) -> dict[str, int]:
        values = self.presets[preset]
        return {name: int(values[name]) for name in self.sizes}

    def preset_scalars(self, preset: str) -> dict[str, float]:
        values = self.presets[preset]
        return {s.name: float(values.get(s.name, s.value)) for s in self.scalars}

    def workspace_size(self, sizes: dict[str, int]) -> int:
        return int(evaluate_size_expression(self.workspace_bytes, sizes))

    def shape_of(self, array: ArrayDecl | str, sizes: Mapping[str, int]) -> tuple[int, ...]:
        """An array's (or the array named so's) extents at `sizes`: each a size symbol, an
        integer, or an expression over the symbols."""
        declared = self.array(array) if isinstance(array, str) else array
        return tuple(
            int(e) if isinstance(e, int) else evaluate_size_expression(e, dict(sizes))
            for e in declared.shape
        )

    def array(self, name: str) -> ArrayDecl:
        for array in self.arrays:
            if array.name == name:
                return array
        raise KeyError(f"{self.name}: no array {name!r} (arrays: {[a.name for a in self.arrays]})")


def evaluate_size_expression(text: str, sizes: dict[str, int]) -> int:
    """An integer expression over size symbols, evaluated by relayout's int64 evaluator (the one
    every request's expression goes through); ValueError naming the expression otherwise."""
    from relayout import expr

    try:
        tree = expr.parse(text)
        unknown = sorted(tree.symbols() - set(sizes))
        if unknown:
            raise ValueError(f"{text!r}: unknown size symbol(s) {unknown} ({sorted(sizes)})")
        return int(tree.evaluate(sizes))
    except expr.ExprError as error:
        raise ValueError(f"{text!r}: {error}") from None


def kernel_names() -> list[str]:
    """Every kernel of the catalog, in name order."""
    return sorted(p.parent.name for p in CATALOG_DIR.glob("*/manifest.yaml"))


@functools.cache
def load_manifest(name: str) -> Manifest:
    """The validated manifest of kernel `name`; KeyError names the catalog when it is unknown."""
    path = CATALOG_DIR / name / "manifest.yaml"
    if not name.isidentifier() or not path.is_file():
        raise KeyError(f"unknown kernel {name!r}; the catalog has {kernel_names()}")
    manifest = Manifest.model_validate(yaml.safe_load(path.read_text()))
    if manifest.name != name:
        raise ValueError(f"{path}: name {manifest.name!r} differs from its folder {name!r}")
    return manifest


@functools.cache
def load_reference(name: str) -> ModuleType:
    """The kernel's reference.py module (reference(), and make_inputs() where it has one)."""
    path = CATALOG_DIR / name / "reference.py"
    spec = importlib.util.spec_from_file_location(f"hb.kernels.{name}.reference", path)
    if spec is None or spec.loader is None:
        raise KeyError(f"{name}: no reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def solution_source(name: str) -> str:
    """The catalog's correct C submission for kernel `name`."""
    load_manifest(name)
    return (CATALOG_DIR / name / "solution.c").read_text()


def pointer_names(manifest: Manifest) -> list[str]:
    """The kernel's pointer arguments before any request: a sparse array's CSR triple in place."""
    names: list[str] = []
    for array in manifest.arrays:
        if array.is_sparse:
            names += [f"{array.name}_data", f"{array.name}_indices", f"{array.name}_indptr"]
        else:
            names.append(array.name)
    return names


def make_inputs(
    manifest: Manifest, sizes: dict[str, int], seed: int, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """Seeded, reproducible problem arrays at the problem precision, keyed by pointer name.

    A kernel's reference.py may define make_inputs() (sparse structure, well-separated particles);
    otherwise inputs are uniform in [-1, 1] and pure outputs start at zero. A machine_learning
    kernel's inputs come from the counter-based generator of hb.kernels.inputs where it applies (a
    distributed grade then generates each rank's shard of exactly these arrays from its indices).
    """
    if generated_inputs(manifest):
        return generate_whole(manifest, sizes, seed, dtype)
    rng = np.random.default_rng(seed)
    reference = load_reference(manifest.name)
    if hasattr(reference, "make_inputs"):
        arrays: dict[str, np.ndarray] = reference.make_inputs(sizes, rng, dtype)
        return {name: np.ascontiguousarray(arrays[name]) for name in pointer_names(manifest)}
    arrays = {}
    for array in manifest.arrays:
        shape = manifest.shape_of(array, sizes)
        kind = dtype if array.is_floating else np.dtype(array.dtype)
        if array.intent == "out":
            arrays[array.name] = np.zeros(shape, dtype=kind)
        elif array.is_floating:
            arrays[array.name] = rng.uniform(-1.0, 1.0, shape).astype(kind)
        else:
            arrays[array.name] = rng.integers(0, 100, shape).astype(kind)
    return arrays


def reference_outputs(
    manifest: Manifest,
    inputs: dict[str, np.ndarray],
    sizes: dict[str, int],
    scalars: dict[str, float],
) -> dict[str, np.ndarray]:
    """The reference's outputs (every inout/out pointer) computed on a copy of the inputs."""
    arrays = {name: value.copy() for name, value in inputs.items()}
    load_reference(manifest.name).reference(arrays, sizes, scalars)
    return {name: arrays[name] for name in output_names(manifest)}


def output_names(manifest: Manifest) -> list[str]:
    """The pointers the judge grades: every array written by the kernel (inout and out)."""
    return [a.name for a in manifest.arrays if a.intent != "in"]


# ---------------------------------------------------------------------------------------------
# The machine_learning track's generated inputs (hb.kernels.inputs)


def generated_inputs(manifest: Manifest) -> bool:
    """Whether the kernel's inputs come from this generator: a machine_learning kernel whose
    arrays are all dense and floating, and whose reference gives each input a range
    (`input_ranges(sizes)`) or keeps the default one (no `make_inputs` of its own)."""
    if manifest.track != "machine_learning":
        return False
    if any(a.is_sparse or not a.is_floating for a in manifest.arrays):
        return False
    reference = load_reference(manifest.name)
    return hasattr(reference, "input_ranges") or not hasattr(reference, "make_inputs")


def input_ranges(manifest: Manifest, sizes: Mapping[str, int]) -> inputs.Ranges:
    """Each array's range at `sizes`, by name: the reference's `input_ranges` (default [-1, 1]
    for an input it does not name), None for a pure output (it starts at zero)."""
    reference = load_reference(manifest.name)
    declared: dict[str, tuple[float, float]] = (
        reference.input_ranges(dict(sizes)) if hasattr(reference, "input_ranges") else {}
    )
    unknown = sorted(set(declared) - {a.name for a in manifest.arrays if a.intent != "out"})
    if unknown:
        raise ValueError(
            f"{manifest.name}: input_ranges names {unknown}, which are not inputs of the kernel"
        )
    ranges: inputs.Ranges = {}
    for array in manifest.arrays:
        if array.intent == "out":
            ranges[array.name] = None
        else:
            low, high = declared.get(array.name, inputs.DEFAULT_RANGE)
            ranges[array.name] = (float(low), float(high))
    return ranges


def generate_whole(
    manifest: Manifest, sizes: Mapping[str, int], seed: int, dtype: np.dtype
) -> dict[str, np.ndarray]:
    """The kernel's whole arrays under `seed` (what the reference is applied to), by name."""
    arrays: dict[str, np.ndarray] = {}
    for index, (name, bounds) in enumerate(input_ranges(manifest, sizes).items()):
        shape = manifest.shape_of(name, sizes)
        if bounds is None:
            arrays[name] = np.zeros(shape, dtype=dtype)
        else:
            flat = np.arange(int(np.prod(shape)), dtype=np.int64)
            arrays[name] = inputs.uniform_at(seed, index, flat, *bounds, dtype).reshape(shape)
    return arrays


def generation_job(
    manifest: Manifest, sizes: Mapping[str, int], seeds: Sequence[int]
) -> dict[str, Any]:
    """What the supervisor needs to generate every rank's tiles itself: each rep's seed and, per
    array in the manifest's order, its stream and range (None: a pure output, zero)."""
    ranges = input_ranges(manifest, sizes)
    return {
        "seeds": [int(s) for s in seeds],
        "arrays": [
            None if bounds is None else {"stream": index, "low": bounds[0], "high": bounds[1]}
            for index, bounds in enumerate(ranges.values())
        ],
    }
