"""The hb command: serve the judge, grade a file in process (submit), check a request, list the
tasks and the recorded grades, verify a suspect grade, and regenerate the agent tool's requests
schema."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from hb.config import Config, load_config

SCHEMA_PATH = Path(__file__).resolve().parent / "agent" / "requests_schema.json"


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


def cmd_grades(args: argparse.Namespace) -> int:
    from hb import results_db

    engine = results_db.connect(_config(args).database_url)
    rows = results_db.list_grades(engine, args.kernel, args.route, args.limit)
    if args.json:
        print(json.dumps(rows, indent=2, default=str))
        return 0
    from hb.outcome import TABLE_HEADER, GradeOutcome

    print(_table([TABLE_HEADER, *(GradeOutcome.from_record(row).table_row() for row in rows)]))
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
    from hb import mpi_driver

    try:
        return mpi_driver.scale_command(args, _config(args))
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

    grades = commands.add_parser("grades", help="list recorded grades, newest first")
    grades.add_argument("--kernel")
    grades.add_argument("--route")
    grades.add_argument("--limit", type=int, default=20)
    grades.add_argument("--json", action="store_true")
    grades.set_defaults(run=cmd_grades)

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
    from hb.mpi_driver import add_scale_arguments

    add_scale_arguments(scale)
    scale.set_defaults(run=cmd_scale)

    schema = commands.add_parser(
        "schema", help="print (or --write) the agent tool's requests schema"
    )
    schema.add_argument("--write", action="store_true")
    schema.set_defaults(run=cmd_schema)
    for sub in (serve, submit, check, tasks, grades, verify, scale, schema):
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


if __name__ == "__main__":
    sys.exit(main())
