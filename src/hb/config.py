"""The judge's configuration: config.yaml (or --config FILE) validated into one pydantic model,
with the environment's overrides (HB_DATA_DIR, HB_DATABASE_URL, HPCAGENT_BENCH_REQUESTS_*)."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RequestsSection(_Section):
    """requests: what a setup allows (spec §0). None means "not set here": the defaults apply."""

    allow: list[str] | str | None = None
    precisions: list[str] | str | None = None
    grid: Literal["agent", "task"] = "agent"


class GradingSection(_Section):
    datatype: str = "fp64"
    reps: int = Field(5, ge=1)
    warmup: int = Field(1, ge=0)
    preset: str = "S"
    public_seed: int = 0
    hidden_seed: int = 8675309
    precision_override_kernels: list[str] = Field(default_factory=list)
    allow_agent_build_tokens: bool = False


class SandboxSection(_Section):
    """Limits every build and run gets (ARCHITECTURE.md: untrusted code in a child process)."""

    timeout_s: float = 60.0
    build_timeout_s: float = 120.0
    cpu_s: int = 120
    memory_mb: int = 8192
    nproc: int = 256
    fsize_mb: int = 1024
    threads: int = 0  # OMP_NUM_THREADS; 0 lets the runtime pick
    uid_base: int = (
        61000  # each running child takes its own uid from [uid_base, uid_base + uid_count)
    )
    uid_count: int = 64


class RecordSection(_Section):
    database: str | None = None


class MpiSection(_Section):
    """mpi: distributed grades (spec §3, docs/distributed.md). The launcher is a template over
    {mpiexec}, {ranks} and {hostfile}; the allowlists hold "kernel" or "kernel.array" entries and
    restrict nothing when unset (None)."""

    grade_distributed: bool = False
    ranks: int = Field(4, ge=1)
    residency: Literal["host", "device"] = "host"
    rank_counts: list[int] = Field(default_factory=lambda: [1, 2, 4])
    launcher: str = "{mpiexec} -n {ranks}"
    hostfile: str | None = None
    replicatable_allowlist: list[str] | None = None
    layout_flexible_allowlist: list[str] | None = None


class ServiceSection(_Section):
    host: str = "127.0.0.1"
    port: int = 8800
    workers: int = Field(2, ge=1)


class Config(_Section):
    data_dir: Path = Path("data")
    requests: RequestsSection = Field(default_factory=RequestsSection)
    grading: GradingSection = Field(default_factory=GradingSection)
    sandbox: SandboxSection = Field(default_factory=SandboxSection)
    record: RecordSection = Field(default_factory=RecordSection)
    mpi: MpiSection = Field(default_factory=MpiSection)
    service: ServiceSection = Field(default_factory=ServiceSection)
    # The environment the allowances are read from (HPCAGENT_BENCH_REQUESTS_*); kept here so a
    # test or a service instance is not tied to the process environment.
    environment: dict[str, str] = Field(default_factory=dict, exclude=True)

    @property
    def database_url(self) -> str:
        url = self.environment.get("HB_DATABASE_URL") or self.record.database
        return url or f"sqlite:///{(self.data_dir / 'hb.sqlite3').resolve()}"

    @property
    def build_cache_dir(self) -> Path:
        return self.data_dir / "build-cache"

    @property
    def sandbox_dir(self) -> Path:
        return self.data_dir / "sandbox"


def load_config(path: str | Path | None = None, environ: dict[str, str] | None = None) -> Config:
    """The configuration from `path` (default: ./config.yaml where it exists) and the environment.

    HB_DATA_DIR wins over the file's data_dir, HB_DATABASE_URL over record.database.
    """
    env = dict(os.environ if environ is None else environ)
    raw: dict = {}
    if path is None and Path("config.yaml").is_file():
        path = "config.yaml"
    if path is not None:
        loaded = yaml.safe_load(Path(path).read_text()) or {}
        if not isinstance(loaded, dict):
            raise ValueError(
                f"{path}: expected a mapping at the top level, got {type(loaded).__name__}"
            )
        raw = loaded
    if env.get("HB_DATA_DIR"):
        raw["data_dir"] = env["HB_DATA_DIR"]
    config = Config.model_validate(raw)
    config.environment = env
    return config


EXPERIMENTS_FILE = Path(__file__).resolve().parents[2] / "experiments" / "experiments.toml"


def request_presets(path: Path = EXPERIMENTS_FILE) -> dict[str, dict[str, list[str]]]:
    """The [requests.<preset>] tables of experiments.toml: allow, and precisions where cast is."""
    with open(path, "rb") as handle:
        document = tomllib.load(handle)
    presets: dict[str, dict[str, list[str]]] = document.get("requests", {})
    return presets


def preset_environment(preset: str, path: Path = EXPERIMENTS_FILE) -> dict[str, str]:
    """The HPCAGENT_BENCH_REQUESTS_* keys a setup's env carries for a request preset."""
    presets = request_presets(path)
    if preset not in presets:
        raise KeyError(f"unknown request preset {preset!r}; experiments.toml has {sorted(presets)}")
    entry = presets[preset]
    return {
        "HPCAGENT_BENCH_REQUESTS_ALLOW": ",".join(entry.get("allow", [])),
        "HPCAGENT_BENCH_REQUESTS_PRECISIONS": ",".join(entry.get("precisions", [])),
    }
