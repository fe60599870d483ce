"""The hb command: serve the judge, grade a file in process (submit), check a request, list the
tasks and the recorded grades, report the leaderboards, verify a suspect grade, and regenerate the
agent tool's requests schema."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from hb.agent import REQUESTS_SCHEMA_PATH
from hb.config import Config, load_config

SCHEMA_PATH = REQUESTS_SCHEMA_PATH


def _config(args: argparse.Namespace) -> Config:
    return load_config(args.config)


def _read_requests(path: str | None) -> Any:
    if path is None:
        return None
    return Path(path).read_text()


def _table(rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from hb.service import create_app

    config = _config(args)
    host = args.host or config.service.host
    port = args.port or config.service.port
    uvicorn.run(create_app(config), host=host, port=port, log_level="info")
    return 0


def cmd_submit(args: argparse.Namespace) -> int:
    from hb.envelope import Submission
    from hb.service import JudgeHandler, RequestFault, UnknownKernel

    config = _config(args)
    if args.route == "submit" and args.preset is not None:
        print(
            f"hb submit: --preset applies to --route score only; --route submit grades at the "
            f"configured preset (grading.preset: {config.grading.preset})",
            file=sys.stderr,
        )
        return 2
    try:
        submission = Submission(
            kernel=args.kernel,
            language=args.language,
            source=Path(args.file).read_text(),
            requests=_read_requests(args.requests),
            preset=args.preset,
        )
    except ValidationError as error:
        print(
            f"hb submit: {error.errors(include_url=False)[0]['msg'].removeprefix('Value error, ')}",
            file=sys.stderr,
        )
        return 2
    try:
        outcome = JudgeHandler(config).grade(submission, args.route)
    except RequestFault as fault:
        print(f"hb submit: refused: {fault.detail}", file=sys.stderr)
        return 2
    except UnknownKernel as error:
        print(f"hb submit: {error.args[0]}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(outcome.model_dump(mode="json"), indent=2, sort_keys=True))
    else:
        print(_table(outcome.summary_rows()))
    return 0 if outcome.correct else 1


def cmd_check(args: argparse.Namespace) -> int:
    from hb.envelope import RequestsCheckBody
    from hb.service import JudgeHandler, UnknownKernel

    try:
        body = RequestsCheckBody(
            kernel=args.kernel, language=args.language, requests=_read_requests(args.requests)
        )
    except ValidationError as error:
        print(
            f"hb check: {error.errors(include_url=False)[0]['msg'].removeprefix('Value error, ')}",
            file=sys.stderr,
        )
        return 2
    try:
        answer = JudgeHandler(_config(args)).check(body)
    except UnknownKernel as error:
        print(f"hb check: {error.args[0]}", file=sys.stderr)
        return 2
    print(json.dumps(answer, indent=2, sort_keys=True))
    return 0 if answer["accepted"] else 1


def cmd_tasks(args: argparse.Namespace) -> int:
    from hb import abi, kernels

    rows = [["kernel", "precisions", "signature (fp64 or first precision)"]]
    listing = []
    for name in kernels.kernel_names():
        manifest = kernels.load_manifest(name)
        signature = abi.default_signature(manifest, manifest.precisions[0])
        rows.append([name, ",".join(manifest.precisions), signature])
        listing.append({"kernel": name, "precisions": manifest.precisions, "signature": signature})
    print(json.dumps(listing, indent=2) if args.json else _table(rows))
    return 0


def cmd_task(args: argparse.Namespace) -> int:
    from hb.service import JudgeHandler, UnknownKernel

    try:
        task = JudgeHandler(_config(args)).task(args.kernel)
    except UnknownKernel as error:
        print(f"hb task: {error.args[0]}", file=sys.stderr)
        return 2
    sections: dict[str, str] = task["prompt_sections"]
    if args.section is not None:
        if args.section not in sections:
            print(
                f"hb task: {args.kernel}'s prompt has no section {args.section!r}; it has "
                f"{list(sections)}",
                file=sys.stderr,
            )
            return 2
        sys.stdout.write(sections[args.section])
    elif args.json:
        print(json.dumps(task, indent=2, sort_keys=True))
    else:
        sys.stdout.write(task["prompt"])
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    from hb.agent import mcp_server

    try:
        return mcp_server.main(args)
    except mcp_server.ToolError as error:
        print(f"hb mcp: {error}", file=sys.stderr)
        return 2


def _kernel_list(text: str | None) -> list[str] | None:
    return [k.strip() for k in text.split(",") if k.strip()] if text else None


def cmd_problems(args: argparse.Namespace) -> int:
    from hb.agent import experiments

    experiment = experiments.load_experiment(args.experiment)
    for line in experiments.problem_lines(experiment, _kernel_list(args.kernels)):
        print(line.model_dump_json())
    return 0


def cmd_experiment(args: argparse.Namespace) -> int:
    from hb.agent import experiments

    experiment = experiments.load_experiment(args.name)
    if args.action == "render":
        for path in experiments.render(experiment, Path(args.out or experiments.RENDERED_DIR)):
            print(f"wrote {path}")
        return 0
    if not args.agent:
        print("hb experiment run: --agent COMMAND is required", file=sys.stderr)
        return 2
    if args.judge and args.judges:
        print("hb experiment run: give --judge or --judges, not both", file=sys.stderr)
        return 2
    try:
        report = experiments.run_experiment(
            experiment, args.agent, judge_url=args.judge, only=_kernel_list(args.kernels),
            rounds=args.rounds, budget_s=args.budget_s,
            out=Path(args.out) if args.out else None, judges=_kernel_list(args.judges) or (),
        )  # fmt: skip
    except RuntimeError as error:
        print(f"hb experiment run: {error}", file=sys.stderr)
        return 2
    table = _table(report.summary)
    (report.directory / "summary.txt").write_text(table + "\n")
    print(table)
    print(f"\nrun {report.agent_id}: {report.directory}")
    return 0 if all(run.status == "ok" for run in report.runs) else 1


def cmd_agent(args: argparse.Namespace) -> int:
    from hb.agent import scripted

    return scripted.main()


def cmd_grades(args: argparse.Namespace) -> int:
    from hb import results_db

    engine = results_db.connect(_config(args).database_url)
    rows = results_db.list_grades(engine, args.kernel, args.route, args.limit)
    if args.json:
        print(json.dumps(rows, indent=2, default=str))
        return 0
    from hb.judge.outcome import TABLE_HEADER, GradeOutcome

    print(_table([TABLE_HEADER, *(GradeOutcome.from_record(row).table_row() for row in rows)]))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    import sqlalchemy as sa

    from hb import report, results_db

    url = _config(args).database_url
    try:
        engine = results_db.connect(url)
        written = report.write_report(engine, Path(args.out), args.experiment)
    except sa.exc.SQLAlchemyError as error:
        shown = sa.engine.make_url(url).render_as_string(hide_password=True)
        reason = getattr(error, "orig", None) or error
        print(f"hb report: cannot read the database {shown}: {reason}", file=sys.stderr)
        return 2
    print(f"wrote {written}")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from hb.service import JudgeHandler, RequestFault

    handler = JudgeHandler(_config(args))
    try:
        answer = handler.verify(args.grade_id, Path(args.source).read_text())
    except RequestFault as fault:
        print(f"hb verify: {fault.detail}", file=sys.stderr)
        return 2
    print(answer.model_dump_json(indent=2))
    return 0 if answer.verified else 1


def cmd_scale(args: argparse.Namespace) -> int:

    try:
        return scale_command(args, _config(args))
    except (KeyError, ValueError, RuntimeError) as error:
        message = error.args[0] if isinstance(error, KeyError) and error.args else error
        print(f"hb scale: {message}", file=sys.stderr)
        return 2


def cmd_schema(args: argparse.Namespace) -> int:
    from hb.requests_api import requests_schema_text

    text = requests_schema_text()
    if args.write:
        SCHEMA_PATH.write_text(text)
        print(f"wrote {SCHEMA_PATH}")
    else:
        sys.stdout.write(text)
    return 0


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="hb", description=__doc__)
    top.add_argument(
        "--config", help="config.yaml to read (default: ./config.yaml where it exists)"
    )
    commands = top.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", help="run the HTTP judge")
    serve.add_argument("--host", help="default 127.0.0.1 (service.host)")
    serve.add_argument("--port", type=int, help="default 8800 (service.port)")
    serve.set_defaults(run=cmd_serve)

    submit = commands.add_parser(
        "submit", help="grade a source file in process and print the grade"
    )
    submit.add_argument("file")
    submit.add_argument("--kernel", required=True)
    submit.add_argument("--language", default="c")
    submit.add_argument("--requests", help="a JSON file holding the request")
    submit.add_argument(
        "--preset",
        help="S, M or L for --route score (default: grading.preset, the only preset of --route submit)",
    )
    submit.add_argument("--route", default="score", choices=["score", "submit"])
    submit.add_argument("--json", action="store_true")
    submit.set_defaults(run=cmd_submit)

    check = commands.add_parser("check", help="check a request against a kernel, building nothing")
    check.add_argument("--kernel", required=True)
    check.add_argument("--language", default="c")
    check.add_argument("--requests", help="a JSON file holding the request")
    check.set_defaults(run=cmd_check)

    tasks = commands.add_parser("tasks", help="list the kernels and their C signatures")
    tasks.add_argument("--json", action="store_true")
    tasks.set_defaults(run=cmd_tasks)

    task = commands.add_parser(
        "task", help="print a kernel's task prompt as GET /task/{kernel} gives it"
    )
    task.add_argument("kernel")
    task.add_argument("--section", help="print one section (intro, semantics, ..., response)")
    task.add_argument("--json", action="store_true", help="the whole task view as JSON")
    task.set_defaults(run=cmd_task)

    mcp = commands.add_parser(
        "mcp", help="serve the agent tools of one task over MCP on stdio, calling a judge"
    )
    from hb.agent.mcp_server import add_arguments as add_mcp_arguments

    add_mcp_arguments(mcp)
    mcp.set_defaults(run=cmd_mcp)

    problems = commands.add_parser(
        "problems", help="print an experiment's problem lines, one JSON line per (task, setup)"
    )
    problems.add_argument("--experiment", required=True, help="an experiment of experiments.toml")
    problems.add_argument("--kernels", help="only these kernels (comma-separated)")
    problems.set_defaults(run=cmd_problems)

    experiment = commands.add_parser(
        "experiment", help="render an experiment's setups, or run an agent over its problems"
    )
    experiment.add_argument("action", choices=["render", "run"])
    experiment.add_argument("name", help="an experiment of experiments/experiments.toml")
    experiment.add_argument("--agent", help="run: the agent command, run once per problem line")
    experiment.add_argument(
        "--judge", help="run: grade every setup on this judge (default: start one per setup)"
    )
    experiment.add_argument(
        "--judges", help="run: a campaign: spread the problem lines over these judges (URLs, "
        "comma-separated; they share one PostgreSQL database), each to one serving its task",
    )  # fmt: skip
    experiment.add_argument("--kernels", help="run: only these kernels (comma-separated)")
    experiment.add_argument("--rounds", type=int, default=1, help="run: agent runs per problem")
    experiment.add_argument(
        "--budget-s", type=float, help="run: each agent run's wall-clock budget (default: the "
        "experiment's budget_s)",
    )  # fmt: skip
    experiment.add_argument(
        "--out", help="render: the directory (default .rendered); run: the run directory"
    )
    experiment.set_defaults(run=cmd_experiment)

    agent = commands.add_parser("agent", help="run a reference agent against `hb mcp`")
    agent.add_argument("kind", choices=["scripted"])
    agent.set_defaults(run=cmd_agent)

    grades = commands.add_parser("grades", help="list recorded grades, newest first")
    grades.add_argument("--kernel")
    grades.add_argument("--route")
    grades.add_argument("--limit", type=int, default=20)
    grades.add_argument("--json", action="store_true")
    grades.set_defaults(run=cmd_grades)

    report = commands.add_parser(
        "report", help="write report.md and PNG plots of the leaderboards from the database"
    )
    report.add_argument("--experiment", help="only this experiment (default: every one)")
    report.add_argument("--out", required=True, help="the directory to write")
    report.set_defaults(run=cmd_report)

    verify = commands.add_parser(
        "verify",
        help="regrade a suspect grade's source; credit its speedup when the regrade confirms it",
    )
    verify.add_argument("grade_id", type=int)
    verify.add_argument("--source", required=True, help="the graded source (its sha256 is checked)")
    verify.set_defaults(run=cmd_verify)

    scale = commands.add_parser(
        "scale",
        help="grade one MPI submission at each rank count; print time and efficiency, write a PNG",
    )

    add_scale_arguments(scale)
    scale.set_defaults(run=cmd_scale)

    schema = commands.add_parser(
        "schema", help="print (or --write) the agent tool's requests schema"
    )
    schema.add_argument("--write", action="store_true")
    schema.set_defaults(run=cmd_schema)
    for sub in (serve, submit, check, tasks, task, mcp, problems, experiment, agent, grades,
                report, verify, scale, schema):  # fmt: skip
        sub.add_argument("--config", default=argparse.SUPPRESS, help="config.yaml to read")
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if not hasattr(args, "config"):
        args.config = None
    command = f"hb {args.command}"
    try:
        return int(args.run(args))
    except OSError as error:
        # A file named on the command line (a source, a request, a config) that cannot be read.
        where = f"{error.filename}: " if error.filename else ""
        print(f"{command}: cannot read {where}{error.strerror or error}", file=sys.stderr)
        return 2
    except (ValueError, yaml.YAMLError) as error:
        # A config or request file that does not validate: its message says what and where.
        print(f"{command}: {error}", file=sys.stderr)
        return 2


def add_scale_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of `hb scale` (the CLI adds a subparser and calls scale_command)."""
    parser.add_argument("kernel", help="catalog kernel, e.g. scaled_add")
    parser.add_argument("file", help="the C source defining <kernel>_mpi_<precision>")
    parser.add_argument(
        "--requests", help="JSON file with the request (startup.grid and operations)"
    )
    parser.add_argument(
        "--precision", choices=["fp64", "fp32"], help="default: the config's grading.datatype"
    )
    parser.add_argument("--preset", default="S")
    parser.add_argument("--ranks", help="comma-separated rank counts (default: mpi.rank_counts)")
    parser.add_argument("--out", default="scaling", help="directory for the table and scaling.png")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per rank count")


def scale_command(args: argparse.Namespace, config: Any = None) -> int:
    """Run `hb scale`: print the table, write scaling.png; without --requests the kernel's default
    distribution is used. The launcher, hostfile and rank counts come from `config.mpi` (default:
    the configuration `load_config` finds), the limits from `config.sandbox`. Returns the exit
    status: 0 when at least one point was credited."""
    from hb import kernels
    from hb.distributed.grade import scale_requests
    from hb.distributed.launch import launcher_settings
    from hb.distributed.policy import default_requests
    from hb.precision import precision_of
    from hb.service import JudgeHandler
    from relayout.models import Requests

    config = config or load_config(getattr(args, "config", None))
    manifest = kernels.load_manifest(args.kernel)
    if args.requests:
        requests = Requests.validate(Path(args.requests).read_text())
    else:
        requests = default_requests(manifest)
    if not requests.startup.grid:
        print(
            "hb scale: the request has no startup.grid; scaling needs a distributed request",
            file=sys.stderr,
        )
        return 2
    precision = args.precision or precision_of(config.grading.datatype)
    template, hostfile, configured = launcher_settings(config.mpi)
    counts = tuple(int(c) for c in args.ranks.split(",")) if args.ranks else configured
    # The judge's own refusals, in its order and at the graded sizes, at each rank count: what
    # /score would refuse there, hb scale refuses too.
    refused = []
    for count in counts:
        at = config.model_copy(update={"mpi": config.mpi.model_copy(update={"ranks": count})})
        at.environment = config.environment
        judge = JudgeHandler(at)
        granted = judge.granted_requests(requests, manifest)
        sizes, label = judge.graded_sizes(manifest, args.preset)
        refusal = judge.refusal(requests, granted, manifest, "c", sizes, label)
        if refusal is not None:
            refused.append((count, refusal))
    if len(refused) == len(counts):
        # Refused everywhere: the setup or the kernel refuses it, not one point's grid.
        print(f"hb scale: refused: {refused[0][1]}", file=sys.stderr)
        return 2
    for count, refusal in refused:
        print(f"hb scale: at {count} ranks the judge refuses it: {refusal}", file=sys.stderr)
    points, table, png = scale_requests(
        manifest, requests, Path(args.file).read_text(), precision, directory=Path(args.out),
        rank_counts=counts, preset=args.preset, reps=args.reps, launcher=template,
        hostfile=hostfile, timeout_s=args.timeout, limits=config.sandbox.limits(),
        residency=str(getattr(config.mpi, "residency", "host")),
    )  # fmt: skip
    print(table, end="")
    print(f"plot: {png}")
    return 0 if any(p.credited_s is not None for p in points) else 1


if __name__ == "__main__":
    sys.exit(main())
