"""The judge's configuration: config.yaml (or --config FILE) validated into one pydantic model,
with the environment's overrides (HB_DATA_DIR, HB_DATABASE_URL, HPCAGENT_BENCH_REQUESTS_*), and
what the data directory keeps for it (the hidden seed, the judge's id)."""

from __future__ import annotations

import contextlib
import logging
import os
import platform
import secrets
import socket
import tempfile
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import yaml

if TYPE_CHECKING:
    from hb.execution.sandbox import Limits

from pydantic import BaseModel, ConfigDict, Field, model_validator

from hb.calls import FindingKind

log = logging.getLogger(__name__)

# The data directory and the subdirectories the judge makes in it are its owner's alone, and so
# are the files that hold secrets: the hidden seed and the SQLite database.
PRIVATE_DIRECTORY_MODE = 0o700
PRIVATE_FILE_MODE = 0o600
HIDDEN_SEED_FILE = "hidden_seed"
JUDGE_ID_FILE = "judge_id"


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RequestsSection(_Section):
    """requests: what a setup allows (spec §0). None means "not set here": the defaults apply."""

    allow: list[str] | str | None = None
    precisions: list[str] | str | None = None
    grid: Literal["agent", "task"] = "agent"


class GradingSection(_Section):
    datatype: str = "fp64"
    reps: int = Field(8, ge=1)
    warmup: int = Field(1, ge=0)
    preset: str = "S"
    public_seed: int = Field(0, ge=0)
    # "generate": a random seed made at the judge's first start and kept in
    # <data_dir>/hidden_seed (mode 0600), reused on every later start. An integer set here wins
    # (a test pins it); it must differ from public_seed.
    hidden_seed: int | Literal["generate"] = "generate"
    precision_override_kernels: list[str] = Field(default_factory=list)
    allow_agent_build_tokens: bool = False
    # A measured speedup above this is recorded as suspect and credited 0 until verified again.
    speedup_suspect_above: float = Field(1000.0, gt=0)
    # paired: the baseline and the submission timed alternately in one grade, rep by rep on the
    # same inputs, each in a box of its own; the speedup is the Hodges-Lehmann estimate over the
    # pairs' ratios with its 95% interval (docs/hb.md, "Timing"; at least 6 pairs reach 95%).
    # min_of_k: the fastest timed rep against the fastest baseline timed in the same grade.
    # mannwhitney: only a gain a one-sided Mann-Whitney U test defends at mannwhitney_p is
    # credited (needs reps >= 4 to ever reach p < 0.1).
    timing: Literal["paired", "min_of_k", "mannwhitney"] = "paired"
    mannwhitney_p: float = Field(0.1, gt=0, lt=1)
    # The noise gate of paired timing: while the interval is wider than this fraction of the
    # estimate, rounds of `reps` more pairs (on fresh inputs, in fresh boxes) are timed, up to
    # max_pairs in all; a grade still wider is recorded noisy and credited its lower bound.
    max_relative_ci: float = Field(0.10, gt=0)
    max_pairs: int = Field(24, ge=1)
    # The first `reps` pairs are timed in this many pairs of boxes (each with its own warm-up):
    # a box's placement (which one of a pair the machine favours) then varies within the grade
    # and widens its interval, rather than moving its estimate unseen.
    box_pairs: int = Field(2, ge=1)
    # A pair whose boxes' threads waited for a CPU (or whose host had time stolen) for more than
    # this fraction of its two timed calls is re-timed: left out of the estimate and replaced by
    # a pair on fresh inputs, within max_pairs.
    max_wait: float = Field(0.10, ge=0)
    # Kinds of hb.calls findings that fail a grade; findings otherwise only inform.
    refuse_findings: list[FindingKind] = Field(default_factory=list)

    @model_validator(mode="after")
    def _hidden_seed_is_not_public(self) -> GradingSection:
        if isinstance(self.hidden_seed, int):
            if self.hidden_seed < 0:
                raise ValueError("grading.hidden_seed: a seed is a non-negative integer")
            if self.hidden_seed == self.public_seed:
                raise ValueError(
                    "grading.hidden_seed equals grading.public_seed: /submit would grade the "
                    "public inputs of /score; leave hidden_seed out (generate) or set another"
                )
        return self


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
        61000  # each running box takes its own uid from [uid_base, uid_base + uid_count)
    )
    uid_count: int = 64
    disk_mb: int = 2048  # the run directory's tmpfs
    scratch_mb: int = 256  # the box's /tmp and /dev/shm, each
    cpus: str | None = None  # the cores timed runs are pinned to ("0-1"); None: the judge's own
    # Protections a grade must have (hb.execution.sandbox.PROTECTIONS); a grade without one is refused.
    require: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _known_protections(self) -> SandboxSection:
        from hb.execution.sandbox import PROTECTIONS

        unknown = [p for p in self.require if p not in PROTECTIONS]
        if unknown:
            raise ValueError(
                f"sandbox.require: unknown protection(s) {unknown}; known: {list(PROTECTIONS)}"
            )
        return self

    @model_validator(mode="after")
    def _cores(self) -> SandboxSection:
        from hb.execution.sandbox import cpu_list

        if self.cpus is not None:
            cpu_list(self.cpus, "sandbox.cpus")
        return self

    def limits(self, build: bool = False) -> Limits:
        """The box of a timed run (or, with `build`, of a build: its own timeout, at least
        120 CPU seconds and 4 GiB) under this section."""
        from hb.execution.sandbox import Limits

        common = {
            "nproc": self.nproc, "fsize_bytes": self.fsize_mb << 20, "uid_base": self.uid_base,
            "uid_count": self.uid_count, "disk_bytes": self.disk_mb << 20,
            "scratch_bytes": self.scratch_mb << 20, "require": tuple(self.require),
        }  # fmt: skip
        if build:
            return Limits(
                timeout_s=self.build_timeout_s, cpu_s=max(self.cpu_s, 120),
                memory_bytes=max(self.memory_mb, 4096) << 20, **common,
            )  # fmt: skip
        return Limits(
            timeout_s=self.timeout_s, cpu_s=self.cpu_s, memory_bytes=self.memory_mb << 20,
            cpus=self.cpus, **common,
        )  # fmt: skip


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
    # The judge's stable id, recorded with every grade (judges of a campaign share a database);
    # None: the one generated at the judge's first start and kept in <data_dir>/judge_id.
    judge_id: str | None = Field(None, min_length=1, max_length=200)
    # The kernels this judge grades; None: the whole catalog. A call for another is refused.
    tasks: list[str] | None = None


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

    @property
    def conversion_cache_dir(self) -> Path:
        return self.data_dir / "conversion-cache"

    @property
    def hidden_seed_file(self) -> Path:
        return self.data_dir / HIDDEN_SEED_FILE


def make_private_dir(path: Path) -> None:
    """Create `path` and its missing parents with mode 0700. A directory that already exists
    keeps its mode (it may be shared: the judge does not change it), with a warning when group or
    others can reach it."""
    missing: list[Path] = []
    probe = path
    while not probe.exists():
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    for directory in reversed(missing):
        try:
            directory.mkdir(mode=PRIVATE_DIRECTORY_MODE)
        except FileExistsError:
            continue
        os.chmod(directory, PRIVATE_DIRECTORY_MODE)  # whatever the umask left
    if not missing and path.is_dir() and path.stat().st_mode & 0o077:
        log.warning(
            "%s already exists with mode %o: group and others can reach the judge's files",
            path,
            path.stat().st_mode & 0o777,
        )


def prepare_data_dir(config: Config) -> None:
    """The data directory and the subdirectories the judge keeps there, each created 0700."""
    make_private_dir(config.data_dir)
    for directory in (config.build_cache_dir, config.sandbox_dir, config.conversion_cache_dir):
        make_private_dir(directory)


def hidden_seed(config: Config) -> int:
    """The seed of /submit's hidden inputs: grading.hidden_seed where the configuration sets an
    integer, else the one kept in <data_dir>/hidden_seed, generated (63 random bits, never the
    public seed) and written with mode 0600 on the judge's first start."""
    configured = config.grading.hidden_seed
    if isinstance(configured, int):
        return configured
    path = config.hidden_seed_file
    make_private_dir(config.data_dir)
    if path.exists():
        return _read_hidden_seed(path, config.grading.public_seed)
    seed = secrets.randbits(63)
    while seed == config.grading.public_seed:
        seed = secrets.randbits(63)
    # Written whole to a private temporary file, then linked into place: a judge starting beside
    # this one reads either no file or the complete one, and the first link wins.
    descriptor, staged = tempfile.mkstemp(prefix=".hidden_seed-", dir=config.data_dir)
    try:
        with os.fdopen(descriptor, "w") as handle:
            handle.write(f"{seed}\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(staged, PRIVATE_FILE_MODE)
        try:
            os.link(staged, path)
        except FileExistsError:
            pass  # another judge's seed came first: that one is kept
        except OSError:  # a file system without hard links
            _write_exclusive(path, seed)
    finally:
        os.unlink(staged)
    return _read_hidden_seed(path, config.grading.public_seed)


def judge_id(config: Config) -> str:
    """The judge's id: service.judge_id where the configuration sets it, else the one kept in
    <data_dir>/judge_id, generated ("judge-" and 8 random hex digits) at the judge's first start."""
    if config.service.judge_id is not None:
        return config.service.judge_id
    path = config.data_dir / JUDGE_ID_FILE
    make_private_dir(config.data_dir)
    if not path.exists():
        # Written whole, then linked into place: a judge starting beside this one reads either
        # no file or the complete one, and the first link wins.
        staged = config.data_dir / f".{JUDGE_ID_FILE}-{secrets.token_hex(4)}"
        staged.write_text(f"judge-{secrets.token_hex(4)}\n")
        with contextlib.suppress(FileExistsError):
            os.link(staged, path)
        staged.unlink()
    kept = path.read_text().strip()
    if not kept or len(kept) > 200:
        raise ValueError(f"{path}: expected the judge's id on one line; remove it to generate one")
    return kept


def machine_name() -> str:
    """This machine as grades record it: the host name and the CPU model."""
    model = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return f"{socket.gethostname()} ({model})"


def _write_exclusive(path: Path, seed: int) -> None:
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE_MODE)
    except FileExistsError:
        return
    with os.fdopen(descriptor, "w") as handle:
        handle.write(f"{seed}\n")


def _read_hidden_seed(path: Path, public_seed: int) -> int:
    if path.stat().st_mode & 0o077:
        os.chmod(path, PRIVATE_FILE_MODE)
    text = path.read_text().strip()
    # The messages never quote the file: what it holds is the secret.
    if not text.isdigit():
        raise ValueError(
            f"{path}: expected the hidden seed (one non-negative integer); remove the file to "
            "generate a new one (that changes /submit's inputs)"
        )
    seed = int(text)
    if seed == public_seed:
        raise ValueError(
            f"{path}: the hidden seed equals grading.public_seed; remove the file to generate "
            "a new one"
        )
    return seed


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
