"""The machine_learning track's generated shards: the counter-based generator against splitmix64's
sequential definition in C, every rank's tiles against the whole arrays, and distributed grades
whose ranks' tiles the supervisor generates (baselines on 1, 2 and 4 ranks, hostile ranks)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from hb import kernels, requests_api
from hb.distributed.driver import build_driver, mpicc_path, mpiexec_path
from hb.distributed.engine import grade_distributed
from hb.distributed.grade import grade_submission, lower_plan
from hb.distributed.policy import default_plan, default_requests
from hb.judge.grading import rep_seed
from hb.kernels import CATALOG_DIR
from hb.kernels import inputs as shards

needs_mpi = pytest.mark.skipif(
    not (Path(mpicc_path()).exists() and Path(mpiexec_path()).exists()),
    reason="MPICH's mpicc and mpiexec are not beside the interpreter (make setup installs them)",
)

# splitmix64 as its authors define it: a state advanced by GAMMA, each output the state mixed.
SPLITMIX_C = r"""
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
static uint64_t next(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
int main(int argc, char **argv) {
    /* seed, stream, count: the stream state is output stream + 1 from the seed, then count outputs. */
    uint64_t state = strtoull(argv[1], NULL, 10), stream = 0;
    long which = atol(argv[2]), count = atol(argv[3]);
    for (long s = 0; s <= which; ++s) stream = next(&state);
    for (long i = 0; i < count; ++i) {
        uint64_t word = next(&stream);
        double unit = (double)(word >> 11) * 0x1.0p-53;
        printf("%" PRIu64 " %a\n", word, unit);
    }
    return 0;
}
"""


@pytest.fixture(scope="module")
def splitmix(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("splitmix")
    (directory / "splitmix.c").write_text(SPLITMIX_C)
    program = directory / "splitmix"
    subprocess.run(["gcc", "-O2", "-o", str(program), str(directory / "splitmix.c")], check=True)
    return program


def test_the_generator_is_splitmix64_bit_for_bit_on_random_keys(splitmix: Path) -> None:
    rng = np.random.default_rng(20261201)
    for _ in range(6):
        seed = int(rng.integers(0, 2**63)) * 2 + int(rng.integers(0, 2))
        stream = int(rng.integers(0, 9))
        lines = subprocess.run(
            [str(splitmix), str(seed), str(stream), "300"], check=True, capture_output=True,
            text=True,
        ).stdout.split("\n")  # fmt: skip
        words = np.array([int(line.split()[0]) for line in lines if line], dtype=np.uint64)
        units = np.array([float.fromhex(line.split()[1]) for line in lines if line])
        flat = np.arange(300, dtype=np.int64)
        assert np.array_equal(shards.words_at(seed, stream, flat), words)
        assert np.array_equal(
            shards.uniform_at(seed, stream, flat, 0.0, 1.0, np.dtype("f8")), units
        )
        # Any index on its own is its element of the stream, dead cells read zero.
        picked = rng.permutation(300)[:40]
        alone = shards.words_at(seed, stream, picked.astype(np.int64))
        assert np.array_equal(alone, words[picked])
        with_dead = shards.uniform_at(
            seed, stream, np.array([-1, 5, -1]), -2.0, 3.0, np.dtype("f8")
        )
        assert with_dead[0] == 0.0 and with_dead[2] == 0.0
        assert with_dead[1] == -2.0 + 5.0 * units[5]


def test_the_ranges_follow_each_kernels_conditioning() -> None:
    sizes = {"N": 4, "K": 64, "M": 3}
    ranges = kernels.input_ranges(kernels.load_manifest("matmul_bias_relu"), sizes)
    assert ranges["X"] == (-1.0, 1.0) and ranges["Y"] is None
    assert ranges["W"] == ranges["b"] == (-0.125, 0.125)
    assert kernels.input_ranges(kernels.load_manifest("gelu"), {"N": 8})["x"] == (-4.0, 4.0)
    assert kernels.input_ranges(kernels.load_manifest("layernorm"), {"N": 2, "D": 2})["x"] == (
        -1.0,
        1.0,
    )
    # Integer or sparse arrays (and inputs with structure beyond a range) keep make_inputs.
    for name in ("embedding_gather", "cross_entropy", "kl_divergence", "jacobi_2d"):
        assert not kernels.generated_inputs(kernels.load_manifest(name)), name


@pytest.mark.parametrize("name", ["gelu", "adam_update", "mlp_block", "softmax", "rmsnorm"])
@pytest.mark.parametrize("precision", ["fp64", "fp32"])
def test_make_inputs_is_the_generator_and_stays_in_range(name: str, precision: str) -> None:
    manifest = kernels.load_manifest(name)
    sizes = manifest.preset_sizes("S")
    dtype = np.dtype({"fp64": np.float64, "fp32": np.float32}[precision])
    inputs = kernels.make_inputs(manifest, sizes, 41, dtype)
    wide = kernels.generate_whole(manifest, sizes, 41, np.dtype(np.float64))
    for array, bounds in kernels.input_ranges(manifest, sizes).items():
        assert inputs[array].dtype == dtype and inputs[array].shape == manifest.shape_of(
            array, sizes
        )
        # fp32 is the float64 value rounded once.
        assert np.array_equal(inputs[array], wide[array].astype(dtype))
        if bounds is None:
            assert not inputs[array].any()
        else:
            assert bounds[0] <= wide[array].min() and wide[array].max() < bounds[1]
            assert np.ptp(wide[array]) > 0.5 * (bounds[1] - bounds[0])


@pytest.mark.parametrize("name", ["gelu", "matmul_bias_relu", "layernorm", "swiglu"])
@pytest.mark.parametrize("ranks", [1, 2, 3, 4])
def test_every_ranks_generated_tile_is_its_slice_of_the_whole_array(name: str, ranks: int) -> None:
    from relayout.distribution import pack

    manifest = kernels.load_manifest(name)
    sizes = manifest.preset_sizes("S")
    plan = default_plan(manifest, ranks)
    job = kernels.generation_job(manifest, sizes, [rep_seed(9, 0), rep_seed(9, 1)])
    for seed in job["seeds"]:
        whole = kernels.make_inputs(manifest, sizes, seed, np.dtype(np.float64))
        for entry, array in zip(job["arrays"], manifest.arrays, strict=True):
            shape = manifest.shape_of(array, sizes)
            for rank in range(ranks):
                at = plan.tile_indices(array.name, shape, rank)
                tile = shards.generated_tile(entry, seed, at, np.dtype(np.float64))
                assert np.array_equal(tile, pack(whole[array.name].reshape(-1), at))


def mpi_source(name: str) -> str:
    return (CATALOG_DIR / name / "solution_mpi.c").read_text()


@needs_mpi
@pytest.mark.mpi
@pytest.mark.parametrize("ranks", [1, 2, 4])
@pytest.mark.parametrize("name", ["gelu", "matmul_bias_relu"])
def test_ml_baselines_are_correct_on_generated_shards(
    name: str, ranks: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    manifest = kernels.load_manifest(name)
    result = grade_submission(
        manifest, default_requests(manifest, ranks), mpi_source(name), "fp64", ranks=ranks,
        directory=tmp_path_factory.mktemp(f"{name}-{ranks}"), seed=5, reps=2, warmup=1,
        build_directory=tmp_path_factory.getbasetemp() / "ml-shard-builds",
    )  # fmt: skip
    assert result.failure is None, result.failure
    assert result.correct, result.mismatches
    assert len(result.rep_seconds) == 2


@needs_mpi
@pytest.mark.mpi
def test_the_ranks_tiles_come_from_the_seeds_not_from_staged_arrays(tmp_path: Path) -> None:
    # Given the arrays of other seeds as `inputs`, the generated tiles are graded against them:
    # the gathered outputs are those of the seeds' arrays, so the grade is incorrect.
    manifest = kernels.load_manifest("gelu")
    sizes = manifest.preset_sizes("S")
    built = build_driver(manifest, "fp64", mpi_source("gelu"), tmp_path / "build")
    assert built.program is not None, built.log
    seeds = [rep_seed(3, r) for r in range(2)]
    dtype = np.dtype(np.float64)
    reference = kernels.load_reference("gelu").reference
    plan = default_plan(manifest, 2)

    def graded(inputs_seeds: list[int], directory: str) -> bool:
        inputs = [kernels.make_inputs(manifest, sizes, s, dtype) for s in inputs_seeds]
        return grade_distributed(
            built.program, manifest, "fp64", plan, sizes, {}, inputs, reference,
            tmp_path / directory, reps=1, warmup=1, shard_seeds=seeds,
        ).correct  # fmt: skip

    assert graded(seeds, "same")
    assert not graded([s + 1 for s in seeds], "other")


HOSTILE_GELU = r"""
#include <mpi.h>
#include <stdint.h>
#include <math.h>
/* Rank 1 overwrites its input tile with zeros, then computes on what it left there. */
void gelu_mpi_fp64(const double *restrict x, double *restrict y, int64_t N, MPI_Comm comm,
                   void *workspace, int64_t workspace_bytes) {
    int rank;
    MPI_Comm_rank(comm, &rank);
    if (rank == 1) for (int64_t i = 0; i < N; ++i) ((double *)x)[i] = 0.0;
    for (int64_t i = 0; i < N; ++i) y[i] = 0.5 * x[i] * (1.0 + erf(x[i] * 0.70710678118654752440));
}
"""

POISONING_GELU = r"""
#include <mpi.h>
#include <stdint.h>
#include <math.h>
/* Correct, then every rank zeroes its input tile, as if to make the next rep's inputs easy. */
void gelu_mpi_fp64(const double *restrict x, double *restrict y, int64_t N, MPI_Comm comm,
                   void *workspace, int64_t workspace_bytes) {
    for (int64_t i = 0; i < N; ++i) y[i] = 0.5 * x[i] * (1.0 + erf(x[i] * 0.70710678118654752440));
    for (int64_t i = 0; i < N; ++i) ((double *)x)[i] = 0.0;
}
"""


@needs_mpi
@pytest.mark.mpi
@pytest.mark.parametrize(
    ("source", "correct"),
    [(HOSTILE_GELU, False), (POISONING_GELU, True)],
    ids=["overwriting-its-input-tile-is-incorrect", "zeros-left-for-the-next-rep-are-overwritten"],
)
def test_a_rank_cannot_choose_its_own_inputs(source: str, correct: bool, tmp_path: Path) -> None:
    # A rank that overwrites its tile computes on other inputs than the reference's; zeros left
    # behind for the next rep are overwritten, each rep's tiles generated anew with the box frozen.
    manifest = kernels.load_manifest("gelu")
    result = grade_submission(
        manifest, default_requests(manifest, 2), source, "fp64", ranks=2,
        directory=tmp_path, seed=5, reps=2, warmup=1,
    )  # fmt: skip
    assert result.failure is None, result.failure
    assert result.correct is correct, result.mismatches
    assert bool(result.mismatches) is not correct


def test_the_ml_tracks_distributed_grades_still_refuse_casts() -> None:
    manifest = kernels.load_manifest("gelu")
    document = json.loads(default_requests(manifest, 2).to_json())
    document["operations"].append({"action": "cast", "array": "x", "to": "fp16"})
    requests = requests_api.Requests.validate(document)
    refusal = requests_api.cast_refusal(
        requests, "gelu", fp64_only=False, track=manifest.track, distributed=True
    )
    assert refusal is not None and "machine_learning track" in refusal
    assert "generate their own shards" in refusal
    assert (
        requests_api.cast_refusal(requests, "gelu", fp64_only=False, track=manifest.track) is None
    )
    # The lowering itself takes the cast: the refusal is the track's, not the grid's.
    lower_plan(requests, manifest, "fp64", 2, manifest.preset_sizes("S"))
