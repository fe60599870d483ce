"""Configuration: the repository's config.yaml and experiments.toml parse, the environment's
overrides apply, and every request preset resolves to valid allowances."""

from __future__ import annotations

from pathlib import Path

import pytest

from hb.config import EXPERIMENTS_FILE, load_config, preset_environment, request_presets
from hb.requests_api import RequestAllowances

REPOSITORY = Path(__file__).resolve().parents[2]


def test_repository_config_is_the_documented_default() -> None:
    config = load_config(REPOSITORY / "config.yaml", environ={})
    assert (config.service.host, config.service.port) == ("127.0.0.1", 8800)
    assert config.database_url.startswith("sqlite:///") and config.database_url.endswith(
        "data/hb.sqlite3"
    )


def test_environment_overrides(tmp_path: Path) -> None:
    config = load_config(
        None, environ={"HB_DATA_DIR": str(tmp_path), "HB_DATABASE_URL": "postgresql://x@h/db"}
    )
    assert config.data_dir == tmp_path and config.database_url == "postgresql://x@h/db"


def test_unknown_section_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("grading: {reps: 3, colour: blue}\n")
    with pytest.raises(ValueError, match="colour"):
        load_config(path, environ={})


def test_request_presets_are_the_specs() -> None:
    presets = request_presets(EXPERIMENTS_FILE)
    assert {name: set(entry["allow"]) for name, entry in presets.items()} == {
        "none": set(),
        "default": {"load"},
        "scaling": {"load", "distribute", "layout"},
        "layout": {"load", "layout"},
        "mixed-precision": {"load", "cast"},
        "placement": {"load", "place"},
    }
    assert presets["mixed-precision"]["precisions"] == ["fp32", "fp16", "bf16"]
    assert not any("sparse_format" in entry["allow"] for entry in presets.values())


@pytest.mark.parametrize(
    "preset", ["none", "default", "scaling", "layout", "mixed-precision", "placement"]
)
def test_each_preset_resolves_through_the_environment(preset: str, tmp_path: Path) -> None:
    environment = {"HB_DATA_DIR": str(tmp_path), **preset_environment(preset)}
    allowances = RequestAllowances.from_config(load_config(None, environ=environment))
    assert allowances.allow == set(request_presets()[preset]["allow"])


@pytest.mark.parametrize(
    ("sandbox", "message"),
    [
        ("{cpus: 'one'}", r"sandbox\.cpus: 'one' is not a core or a range of cores"),
        ("{cpus: '3-1'}", r"sandbox\.cpus: '3-1' is not a range of cores below"),
        ("{cpus: '0-99999'}", r"sandbox\.cpus: '0-99999' is not a range of cores below"),
        ("{cpus: '1,,2'}", r"sandbox\.cpus: '' is not a core or a range of cores"),
    ],
)
def test_cores_that_cannot_be_given_are_refused_with_where(
    tmp_path: Path, sandbox: str, message: str
) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(f"sandbox: {sandbox}\n")
    with pytest.raises(ValueError, match=message):
        load_config(path, environ={})


def test_cores_reach_every_timed_box(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("sandbox: {cpus: '1-3,5'}\n")
    assert load_config(path, environ={}).sandbox.limits().cpus == "1-3,5"
