"""The relayout command: `schema` prints the request's JSON Schema, `check` answers what a request does
to a kernel's arrays, `examples` runs the worked examples of a reference document such as docs/layout.md."""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from relayout.algebra.state import check_sizes
from relayout.arrays import parse_arrays
from relayout.check import RequestsCheck, check_requests
from relayout.errors import RequestError
from relayout.models import Requests, requests_schema_text

__all__ = ["Example", "main", "read_examples", "run_example"]

EXIT_ACCEPTED, EXIT_REFUSED, EXIT_MALFORMED = 0, 1, 2
EXAMPLE_FENCE = re.compile(r"^```json relayout-example[^\n]*\n(?P<body>.*?)^```\s*$", re.M | re.S)


@dataclass(frozen=True)
class Example:
    """One worked example of a document: where it is, and what it runs."""

    line: int
    title: str
    arrays: dict[str, Any]
    sizes: dict[str, int]
    ranks: int | None
    requests: Any
    expect: str  # "accepted" or the start of the expected refusal


def read_examples(text: str) -> list[Example]:
    """Every ```json relayout-example block of a Markdown text, in order."""
    examples = []
    for match in EXAMPLE_FENCE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        try:
            data = json.loads(match.group("body"))
        except json.JSONDecodeError as error:
            raise ValueError(f"example at line {line} is not JSON: {error}") from None
        unknown = set(data) - {"title", "arrays", "sizes", "ranks", "requests", "expect"}
        if unknown:
            raise ValueError(f"example at line {line}: unknown keys {sorted(unknown)}")
        examples.append(
            Example(
                line=line,
                title=data.get("title", f"example at line {line}"),
                arrays=data["arrays"],
                sizes=data.get("sizes", {}),
                ranks=data.get("ranks"),
                requests=data["requests"],
                expect=data.get("expect", "accepted"),
            )
        )
    return examples


def run_example(example: Example) -> tuple[RequestsCheck, bool]:
    """Check an example; the answer and whether it matches the example's expectation."""
    answer = check_requests(example.requests, example.arrays, example.sizes, example.ranks)
    if example.expect == "accepted":
        return answer, answer.accepted
    return answer, (not answer.accepted) and (answer.refusal or "").startswith(example.expect)


def describe(example: Example, answer: RequestsCheck) -> str:
    """What the request does to each array, readably."""
    lines = [f"== {example.title} (line {example.line})"]
    requests = Requests.validate(example.requests)
    specs = parse_arrays(example.arrays)
    lines.append("   arrays: " + ", ".join(f"{name} {spec}" for name, spec in specs.items()))
    if example.sizes:
        lines.append("   sizes:  " + ", ".join(f"{k} = {v}" for k, v in example.sizes.items()))
    for index, operation in enumerate(requests.operations):
        fields = operation.model_dump(mode="json", exclude_defaults=True)
        action = fields.pop("action")
        lines.append(f"   [{index}] {action} " + json.dumps(fields, sort_keys=True))
    if not answer.accepted:
        lines.append(f"   refused: {answer.refusal}")
        return "\n".join(lines)
    for name, checked in (answer.arrays or {}).items():
        extents = "".join(f"[{extent}]" for extent in checked.extents)
        notes = []
        if checked.zips:
            notes.append(
                f"zips {', '.join(checked.zips)}"
                + (f" at dim {checked.dim}" if checked.dim is not None else "")
            )
        if checked.unzips:
            notes.append(f"part of {checked.unzips}")
        if checked.format:
            notes.append(f"sparse {checked.format}")
        suffix = f"  ({'; '.join(notes)})" if notes else ""
        lines.append(f"   -> {name}: {checked.dtype} {extents}{suffix}")
        if checked.typedef:
            lines.append(f"      {checked.typedef}")
        lines.append(f"      {checked.declaration}")
    if answer.plan is not None:
        lines.append("   plan: " + json.dumps(answer.plan.model_dump(mode="json")))
    return "\n".join(lines)


def _parse_assignments(items: Sequence[str], what: str) -> dict[str, str]:
    result = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise ValueError(f"{what} {item!r} is not NAME=VALUE")
        result[name.strip()] = value.strip()
    return result


def _command_schema(_: argparse.Namespace) -> int:
    sys.stdout.write(requests_schema_text())
    return EXIT_ACCEPTED


def _command_check(args: argparse.Namespace) -> int:
    try:
        text = Path(args.request).read_text() if args.request != "-" else sys.stdin.read()
    except OSError as error:
        print(f"relayout check: cannot read {args.request}: {error}", file=sys.stderr)
        return EXIT_MALFORMED
    try:
        requests = Requests.validate(text)
    except RequestError as error:
        print(f"malformed request: {error}", file=sys.stderr)
        return EXIT_MALFORMED
    try:
        arrays = _parse_assignments(args.array, "--array")
        sizes = {k: int(v) for k, v in _parse_assignments(args.size, "--size").items()}
        parse_arrays(arrays)
        check_sizes(sizes)
    except ValueError as error:
        print(f"relayout check: {error}", file=sys.stderr)
        return EXIT_MALFORMED
    answer = check_requests(requests, arrays, sizes, args.ranks)
    print(json.dumps(answer.to_dict(), indent=2))
    if not answer.accepted:
        print(answer.refusal, file=sys.stderr)
        return EXIT_REFUSED
    return EXIT_ACCEPTED


def _command_examples(args: argparse.Namespace) -> int:
    try:
        examples = read_examples(Path(args.document).read_text())
    except (OSError, ValueError) as error:
        print(f"relayout examples: {error}", file=sys.stderr)
        return EXIT_MALFORMED
    failures = 0
    for example in examples:
        answer, matches = run_example(example)
        print(describe(example, answer))
        if not matches:
            failures += 1
            print(f"   !! expected {example.expect!r}")
        print()
    print(f"{len(examples)} examples, {failures} not as documented")
    return EXIT_ACCEPTED if failures == 0 else EXIT_REFUSED


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="relayout", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    schema = commands.add_parser(
        "schema", help="print the request's JSON Schema, every $ref inlined"
    )
    schema.set_defaults(run=_command_schema)
    check = commands.add_parser(
        "check",
        help="what a request does to a kernel's arrays (exit 0 accepted, 1 refused, 2 malformed)",
    )
    check.add_argument("request", help="the request's JSON file ('-' for stdin)")
    check.add_argument(
        "--array",
        action="append",
        default=[],
        metavar="NAME=SPEC",
        help="an array, in kernel order: e.g. A=fp64[N,N]:inout, x=fp64[N], S=csr:fp64[M,N]",
    )
    check.add_argument(
        "--size", action="append", default=[], metavar="SYM=INT", help="bind a size symbol"
    )
    check.add_argument(
        "--ranks", type=int, default=None, metavar="P", help="the rank count (plans)"
    )
    check.set_defaults(run=_command_check)
    examples = commands.add_parser(
        "examples", help="run a document's ```json relayout-example blocks"
    )
    examples.add_argument("document", help="a Markdown file, e.g. docs/layout.md")
    examples.set_defaults(run=_command_examples)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    code: int = args.run(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
