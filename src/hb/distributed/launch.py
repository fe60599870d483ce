"""Starting the driver on P ranks: the launcher command line from a configured template (mpiexec on
one machine, mpiexec with a hostfile or srun on a cluster) and a run with a wall-clock timeout that
ends the launcher's whole process group, so a crashed or hung rank leaves no process behind; the
launcher, hostfile and rank counts the config's mpi section sets."""

from __future__ import annotations

import dataclasses
import os
import shlex
import signal
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hb.distributed.driver import mpiexec_path
from hb.execution import sandbox

# On one machine: MPICH's hydra, which starts every rank locally and lets 4 ranks share 2 cores.
LOCAL_LAUNCHER = "{mpiexec} -n {ranks}"
# The fields a launcher template may use.
TEMPLATE_FIELDS = ("mpiexec", "ranks", "hostfile")


class LauncherError(ValueError):
    """A launcher template that cannot be expanded; the message says which field was wrong."""


def launcher_command(
    template: str,
    ranks: int,
    program: str | Path,
    arguments: Sequence[str] = (),
    *,
    hostfile: str | Path | None = None,
    mpiexec: str | None = None,
) -> list[str]:
    """The argv that starts `program arguments...` on `ranks` ranks under `template`.

    The template is a shell-like command with {ranks}, {hostfile} and {mpiexec} fields
    ("{mpiexec} -n {ranks} -f {hostfile}", "srun -n {ranks} --kill-on-bad-exit=1"); the program
    and its arguments follow it. Fields are substituted per word after splitting, so a path with
    spaces stays one word.
    """
    if ranks < 1:
        raise LauncherError(f"ranks: expected at least 1, got {ranks}")
    words = shlex.split(template)
    if not words:
        raise LauncherError("launcher template is empty; expected e.g. '{mpiexec} -n {ranks}'")
    values = {
        "ranks": str(ranks),
        "mpiexec": mpiexec or mpiexec_path(),
        "hostfile": "" if hostfile is None else str(hostfile),
    }
    used: set[str] = set()
    for word in words:
        for _, field, _, _ in string.Formatter().parse(word):
            if field is None:
                continue
            if field not in TEMPLATE_FIELDS:
                raise LauncherError(
                    f"launcher template {template!r}: unknown field {{{field}}}; "
                    f"expected any of {['{' + f + '}' for f in TEMPLATE_FIELDS]}"
                )
            used.add(field)
    if "ranks" not in used:
        raise LauncherError(f"launcher template {template!r} never names {{ranks}}")
    if "hostfile" in used and hostfile is None:
        raise LauncherError(
            f"launcher template {template!r} names {{hostfile}} but no hostfile is configured"
        )
    command = [word.format(**values) for word in words]
    return [*command, str(program), *arguments]


# Variables passed through from the judge's environment: the basics, and whatever configures MPICH,
# its transports and a cluster launcher (srun inside an allocation needs SLURM_*). Nothing else
# reaches the submission.
PASSED_VARIABLES = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "LD_LIBRARY_PATH")
PASSED_PREFIXES = ("MPIR_CVAR_", "MPICH_", "HYDRA_", "UCX_", "FI_", "SLURM_", "PMI_")


def launcher_environment(base: Mapping[str, str] | None = None, threads: int = 1) -> dict[str, str]:
    """The environment the launcher runs with: the passed-through variables of `base` (default:
    the judge's environment) and one OpenMP thread per rank unless told otherwise.

    Oversubscription needs nothing more from MPICH: hydra binds no rank to a core by default, and
    a rank waiting in MPI yields the processor every MPIR_CVAR_POLLS_BEFORE_YIELD polls.
    """
    source = os.environ if base is None else base
    env = {
        name: value
        for name, value in source.items()
        if name in PASSED_VARIABLES or name.startswith(PASSED_PREFIXES)
    }
    env.setdefault("PATH", "/usr/bin:/bin")
    env["OMP_NUM_THREADS"] = str(max(1, threads))
    return env


@dataclass
class LaunchResult:
    """How a launched run ended."""

    command: list[str]
    returncode: int
    timed_out: bool
    wall_s: float
    stdout: str
    stderr: str

    def failure(self) -> str | None:
        """A one-line reason when the run did not finish cleanly, else None."""
        if self.timed_out:
            return f"the MPI run exceeded its wall-clock limit after {self.wall_s:.1f} s and was killed"
        if self.returncode != 0:
            detail = _failure_detail(self.stdout, self.stderr)
            if self.returncode < 0:
                return f"the MPI run was ended by {signal.Signals(-self.returncode).name}{detail}"
            return f"the MPI run exited with status {self.returncode}{detail}"
        return None


def _failure_detail(stdout: str, stderr: str) -> str:
    # Hydra reports a rank's death on stdout as "... EXIT STRING: Segmentation fault (signal 11)";
    # the driver's own complaints ("hb driver, rank 3: ...") go to stderr.
    lines = [line.strip() for line in (stderr + "\n" + stdout).splitlines() if line.strip()]
    chosen = [line for line in lines if "EXIT STRING" in line or line.startswith("hb driver")]
    if not chosen:
        chosen = [line for line in stderr.splitlines() if line.strip()][-3:]
    return f": {' | '.join(chosen[:3])}" if chosen else ""


def box_limits(timeout_s: float, limits: sandbox.Limits | None = None) -> sandbox.Limits:
    """The box a local run starts in: the judge's (or the default) box with the run's wall-clock
    limit; the launcher, hydra's proxies and every rank share it (one cgroup for all their memory
    and processes), and each process inherits its rlimits."""
    return dataclasses.replace(limits or sandbox.Limits(), timeout_s=timeout_s)


def run_launcher(
    box: sandbox.Box,
    command: Sequence[str],
    timeout_s: float,
    env: Mapping[str, str] | None = None,
) -> LaunchResult:
    """Run `command` in `box` (its run directory the working directory) with a wall-clock limit;
    on timeout, and after every run, every process of the box is ended."""
    ended = box.run(
        command, env if env is not None else launcher_environment(), timeout_s,
        (".launch.stdout", ".launch.stderr"),
    )  # fmt: skip
    returncode = ended.returncode
    name = ended.signal_name
    if name is not None and returncode > 0:
        returncode = -signal.Signals[name].value if name.startswith("SIG") else returncode
    return LaunchResult(
        command=list(command),
        returncode=returncode,
        timed_out=ended.timed_out,
        wall_s=ended.wall_s,
        stdout=ended.stdout,
        stderr=ended.stderr,
    )


# The scaling points when mpi.rank_counts is not configured.
DEFAULT_RANK_COUNTS = (1, 2, 4)


def launcher_settings(mpi_section: Any) -> tuple[str, str | None, tuple[int, ...]]:
    """(launcher template, hostfile, rank counts) from the config's mpi section; the fields
    mpi.launcher, mpi.hostfile and mpi.rank_counts fall back to one-machine mpiexec, no hostfile
    and (1, 2, 4) where the section does not declare them."""
    template = getattr(mpi_section, "launcher", None) or LOCAL_LAUNCHER
    hostfile = getattr(mpi_section, "hostfile", None)
    counts = getattr(mpi_section, "rank_counts", None) or DEFAULT_RANK_COUNTS
    return template, (str(hostfile) if hostfile else None), tuple(int(c) for c in counts)
