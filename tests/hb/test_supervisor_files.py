"""The files between the judge and its supervisor: a rep's inputs read into buffers made once per
grade, and every rep's outputs written in place into one file laid out before the first call."""

from __future__ import annotations

import stat
from pathlib import Path

import numpy as np
import pytest

from hb.execution import supervisor


def test_inputs_are_read_into_the_same_buffers_rep_after_rep(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    held: dict[str, np.ndarray] = {}
    first = None
    for rep in range(3):
        arrays = {
            "x": rng.random(1000),
            "a": np.asfortranarray(rng.random((7, 5)).astype(np.float32)),
            "n": np.arange(6, dtype=np.int64).reshape(2, 3) * rep,
            "empty": np.zeros(0),
        }
        np.savez(tmp_path / f"inputs_{rep}.npz", **arrays)  # type: ignore[arg-type]
        loaded = supervisor.load_into(tmp_path / f"inputs_{rep}.npz", held)
        assert list(loaded) == list(arrays)
        for name, array in arrays.items():
            assert loaded[name].dtype == array.dtype and loaded[name].shape == array.shape
            assert np.array_equal(loaded[name], array)
        if first is None:
            first = {name: array.ctypes.data for name, array in loaded.items() if array.size}
        else:  # refilled, not made again
            assert {n: a.ctypes.data for n, a in loaded.items() if a.size} == first


def test_a_shape_that_changes_gets_a_buffer_of_its_own(tmp_path: Path) -> None:
    held: dict[str, np.ndarray] = {}
    np.savez(tmp_path / "a.npz", x=np.ones(4))
    np.savez(tmp_path / "b.npz", x=np.full(9, 2.0))
    assert np.array_equal(supervisor.load_into(tmp_path / "a.npz", held)["x"], np.ones(4))
    assert np.array_equal(supervisor.load_into(tmp_path / "b.npz", held)["x"], np.full(9, 2.0))


def test_inputs_the_judge_never_writes_are_refused_by_name(tmp_path: Path) -> None:
    np.savez_compressed(tmp_path / "packed.npz", x=np.ones(64))
    with pytest.raises(ValueError, match=r"packed.npz: x is compressed"):
        supervisor.load_into(tmp_path / "packed.npz", {})
    np.savez(tmp_path / "objects.npz", x=np.array([{"a": 1}], dtype=object))
    with pytest.raises(ValueError, match=r"objects.npz: x holds Python objects"):
        supervisor.load_into(tmp_path / "objects.npz", {})
    np.savez(tmp_path / "short.npz", x=np.ones(4096))
    data = (tmp_path / "short.npz").read_bytes()
    (tmp_path / "short.npz").write_bytes(data[:2000] + data[-200:])
    with pytest.raises(ValueError):
        supervisor.load_into(tmp_path / "short.npz", {})


def test_every_reps_outputs_come_back_from_one_file_made_before_the_first_call(
    tmp_path: Path,
) -> None:
    like = {"y": np.zeros(1000), "c": np.zeros((3, 4), dtype=np.float32), "e": np.zeros(0)}
    outputs = supervisor.Outputs(tmp_path, reps=3)
    outputs.prepare(like)
    path = tmp_path / supervisor.OUTPUTS_FILE
    made = path.stat()
    assert stat.S_IMODE(made.st_mode) == 0o600
    assert made.st_size == 3 * outputs.record and outputs.record >= 8000 + 48
    written = []
    for rep in range(3):
        rep_outputs = {
            "y": np.full(1000, float(rep)),
            "c": np.asfortranarray(np.arange(12, dtype=np.float32).reshape(3, 4) + rep),
            "e": np.zeros(0),
        }
        outputs.write(rep, rep_outputs)
        written.append(rep_outputs)
    assert path.stat().st_size == made.st_size  # written in place
    for rep, expected in enumerate(written):
        got = supervisor.read_outputs(tmp_path, outputs.layout(), rep)
        assert list(got) == list(expected)
        for name, array in expected.items():
            assert got[name].dtype == array.dtype and np.array_equal(got[name], array)
    with pytest.raises(ValueError, match=r"rep 1: y changed its shape or type"):
        outputs.write(1, {**written[1], "y": np.zeros(999)})


def test_a_truncated_outputs_file_is_an_error_not_a_short_array(tmp_path: Path) -> None:
    outputs = supervisor.Outputs(tmp_path, reps=2)
    outputs.write(0, {"y": np.ones(512)})
    with open(tmp_path / supervisor.OUTPUTS_FILE, "r+b") as handle:
        handle.truncate(outputs.record + 100)
    assert np.array_equal(supervisor.read_outputs(tmp_path, outputs.layout(), 0)["y"], np.ones(512))
    with pytest.raises(ValueError, match=r"y: the outputs of rep 1 are truncated"):
        supervisor.read_outputs(tmp_path, outputs.layout(), 1)
