"""The `usis` command: show, find, validate, diff, stats, build and fetch over the USIS corpora,
and site / serve for the explorer."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from usis.api import MODELS, Corpus, leaves, load

STAGE_NAMES = ("extract", "classify", "assign", "assemble", "validate", "provenance", "split")


def dumps(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)


def shorten(text: str | None, width: int) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= width else text[: width - 1] + "…"


def render_entry(key: str, entry: Mapping[str, Any]) -> str:
    """A readable page for one entry."""
    identity, execution, semantics = entry["identity"], entry["execution"], entry["semantics"]
    lines = [f"{key}  ({identity['name']}, {identity['model']})"]
    if identity["desc"]:
        lines.append(f"  {identity['desc']}")
    facts = [
        f"group {identity['api_group'] or '-'}",
        f"since {identity['since'] or '-'}",
    ]
    if identity["deprecated_in"]:
        facts.append(f"deprecated in {identity['deprecated_in']}")
    if identity["type_family"]:
        facts.append(f"types {', '.join(identity['type_family'])}")
    lines.append("  " + "; ".join(facts))
    c_binding = entry["bindings"]["c"]
    if c_binding and c_binding["signature"]:
        lines += ["", f"  {c_binding['signature']}    [{c_binding['header']}]"]
    lines += [
        "",
        "execution: "
        + ", ".join(
            f"{name}={execution[name]}"
            for name in ("blocking", "collective", "procedure_class", "completion", "launch")
            if execution[name] is not None
        ),
    ]
    for name in ("collective", "point_to_point", "one_sided", "atomic", "memory"):
        if semantics[name] is not None:
            values = ", ".join(f"{k}={v}" for k, v in sorted(semantics[name].items()))
            lines.append(f"{name}: {values}")
    if entry["parameters"]:
        lines += ["", "parameters:"]
        width = max(len(p["name"]) for p in entry["parameters"])
        for parameter in entry["parameters"]:
            c_type = parameter["binding_type"]["c"] or "-"
            lines.append(
                f"  {parameter['name']:<{width}}  {parameter['direction']:<5} "
                f"{parameter['kind'] or '-':<13} {c_type}"
            )
    returned = entry["return"]
    lines += ["", f"returns: {returned['kind']} ({returned['binding_type']['c'] or '-'})"]
    variants = {k: v for k, v in entry["relationships"]["variants"].items() if v}
    links = [f"{k} -> {v}" for k, v in sorted(variants.items())]
    if entry["relationships"]["superseded_by"]:
        links.append(f"superseded by {entry['relationships']['superseded_by']}")
    links += [f"supersedes {k}" for k in entry["relationships"]["supersedes"]]
    if links:
        lines += ["", "related: " + "; ".join(links)]
    formal = semantics["formal"]
    if formal is not None:
        lines += ["", "formal:"]
        for participant in formal["participants"]:
            lines.append(
                f"  participant {participant['id']} ({participant['role_kind']}, "
                f"{participant['cardinality']}): {participant['selector']}"
            )
        for access in formal["data_flow"]:
            source = access.get("source")
            origin = (
                f" <- {source.get('kind')} {source.get('ref') or source.get('via')}"
                if source
                else ""
            )
            lines.append(
                f"  {access['id']}: {access.get('participant') or '*'} {access['op']} "
                f"{access.get('buffer') or ''}{origin}"
            )
        matching = formal["sync"]["matching"]
        if matching:
            lines.append(
                f"  matching {matching.get('kind')} on {', '.join(matching.get('match_keys', []))}"
            )
    return "\n".join(lines)


def table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in [header, *rows]
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)


def read_document(path: str) -> Any:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SystemExit(f"usis: {path}: no such file") from None
    except json.JSONDecodeError as error:
        raise SystemExit(f"usis: {path}: not JSON ({error})") from None


def command_show(arguments: argparse.Namespace) -> int:
    from usis.api import shipped_entry

    entry = shipped_entry(arguments.key)
    if entry is None:
        try:
            entry = load_for_key(arguments.key).raw(arguments.key)
        except KeyError as error:
            print(f"usis show: {error.args[0]}", file=sys.stderr)
            return 1
    print(dumps(entry) if arguments.json else render_entry(arguments.key, entry))
    return 0


def load_for_key(key: str) -> Corpus:
    """Only the model a key names, so that a cold `usis show` reads one file."""
    model = key.split(":", 1)[0]
    try:
        return load(model) if model in MODELS else load()
    except LookupError:
        return load()


def command_find(arguments: argparse.Namespace) -> int:
    corpus = load(arguments.model) if arguments.model else load()
    keys = corpus.find(
        model=arguments.model,
        api_group=arguments.group,
        collective=True if arguments.collective else None,
        blocking=arguments.blocking,
        text=" ".join(arguments.text) if arguments.text else None,
    )
    rows = []
    for key in keys:
        entry = corpus.raw(key)
        rows.append(
            [
                key,
                entry["identity"]["api_group"] or "-",
                "yes" if entry["execution"]["blocking"] else "no",
                "yes" if entry["execution"]["collective"] else "no",
                shorten(entry["identity"]["desc"], 60),
            ]
        )
    if rows:
        print(table(rows, ["KEY", "GROUP", "BLOCKING", "COLLECTIVE", "DESCRIPTION"]))
    print(f"{len(rows)} entr{'y' if len(rows) == 1 else 'ies'}", file=sys.stderr)
    return 0


def shipped_keys() -> set[str]:
    """Keys of every shipped corpus: a file checked from the command line may be a selection of
    shipped entries whose cross-references name entries it does not hold."""
    return set(load().keys())


def command_validate(arguments: argparse.Namespace) -> int:
    from usis.validate import entries_of, validate_entries, wrapper_findings

    document = read_document(arguments.file)
    try:
        entries = entries_of(document)
    except ValueError as error:
        print(f"usis validate: {arguments.file}: {error}", file=sys.stderr)
        return 1
    findings = wrapper_findings(document) + validate_entries(entries, shipped_keys())
    for finding in findings:
        print(finding)
    if findings:
        print(f"{len(findings)} finding(s) in {len(entries)} entries", file=sys.stderr)
        return 1
    print(f"{arguments.file}: {len(entries)} entries, no findings", file=sys.stderr)
    return 0


def diff_entries(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """Lines: `+ key`, `- key`, and `~ key: path: old -> new` per changed field."""
    lines = [f"- {key}" for key in sorted(set(old) - set(new))]
    lines += [f"+ {key}" for key in sorted(set(new) - set(old))]
    for key in sorted(set(old) & set(new)):
        before, after = leaves(old[key]), leaves(new[key])
        for path in sorted(set(before) | set(after)):
            if path not in after:
                lines.append(f"~ {key}: {path}: {json.dumps(before[path])} -> (absent)")
            elif path not in before:
                lines.append(f"~ {key}: {path}: (absent) -> {json.dumps(after[path])}")
            elif before[path] != after[path] or type(before[path]) is not type(after[path]):
                lines.append(
                    f"~ {key}: {path}: {json.dumps(before[path])} -> {json.dumps(after[path])}"
                )
    return lines


def command_diff(arguments: argparse.Namespace) -> int:
    from usis.validate import entries_of

    sides = []
    for path in (arguments.a, arguments.b):
        try:
            sides.append(entries_of(read_document(path)))
        except ValueError as error:
            print(f"usis diff: {path}: {error}", file=sys.stderr)
            return 2
    old, new = sides
    lines = diff_entries(old, new)
    for line in lines:
        print(line)
    added = len(set(new) - set(old))
    removed = len(set(old) - set(new))
    # A changed line is `~ key: path: ...`; a key holds one colon (`model:function_key`).
    changed = len({line[2:].split(": ", 1)[0] for line in lines if line.startswith("~")})
    print(f"{added} added, {removed} removed, {changed} changed", file=sys.stderr)
    return 0


def corpus_stats(corpus: Corpus) -> dict[str, Any]:
    from usis.provenance.records import method_mix

    stats: dict[str, Any] = {"models": {}}
    families = corpus.families()
    for model in corpus.models:
        entries = corpus.documents[model]["entries"]
        type_families = [family for family in families if family.startswith(f"{model}:")]
        members = {member for family in type_families for member in families[family]}
        with_formal = sum(1 for e in entries.values() if e["semantics"]["formal"] is not None)
        groups: dict[str, int] = {}
        for entry in entries.values():
            group = entry["identity"]["api_group"] or "none"
            groups[group] = groups.get(group, 0) + 1
        stats["models"][model] = {
            "entries": len(entries),
            # A function family: a `{T}` family entry, or a routine that belongs to none.
            "families": len(entries) - len(members),
            "type_families": len(type_families),
            "with_formal": with_formal,
            "formal_coverage": round(with_formal / len(entries), 4) if entries else 0.0,
            "api_groups": dict(sorted(groups.items())),
            "provenance": method_mix(
                entries, {key: corpus.provenance_records(key) for key in entries}
            ),
        }
    stats["total_entries"] = len(corpus)
    return stats


def command_stats(arguments: argparse.Namespace) -> int:
    stats = corpus_stats(load())
    if arguments.json:
        print(dumps(stats))
        return 0
    rows = []
    for model, numbers in stats["models"].items():
        mix = numbers["provenance"]
        total = sum(mix.values()) or 1
        rows.append(
            [
                model,
                str(numbers["entries"]),
                f"{numbers['families']} ({numbers['type_families']} {{T}})",
                f"{numbers['with_formal']} ({numbers['formal_coverage']:.0%})",
                " ".join(f"{name} {count / total:.0%}" for name, count in mix.items()),
            ]
        )
    print(table(rows, ["MODEL", "ENTRIES", "FAMILIES", "FORMAL", "PROVENANCE (values by method)"]))
    print(f"{stats['total_entries']} entries in all")
    return 0


def command_build(arguments: argparse.Namespace) -> int:
    from usis.build import BuildError, build
    from usis.validate import ValidationFailed

    out = Path(arguments.out) if arguments.out else None
    until = arguments.stage or "split"
    try:
        build(
            models=arguments.model or None,
            until=until,
            out_dir=out if until == "split" else None,
            checkpoint_dir=out,
        )
    except ValidationFailed as failure:
        for finding in failure.findings:
            print(finding)
        print(f"usis build: failed with {len(failure.findings)} finding(s)", file=sys.stderr)
        return 1
    except BuildError as error:
        print(f"usis build: {error}", file=sys.stderr)
        return 1
    return 0


def command_fetch(arguments: argparse.Namespace) -> int:
    from usis.sources.fetch import FetchError, fetch
    from usis.sources.manifest import load_manifest, sources_for_model

    manifest = load_manifest()
    models = arguments.model or list(MODELS)
    status = 0
    for model in models:
        for source in sources_for_model(model, manifest):
            try:
                path = fetch(source)
            except FetchError as error:
                print(f"usis fetch: {model}: {error}", file=sys.stderr)
                status = 1
                continue
            print(f"{model}: {source.name} {source.version} -> {path}", file=sys.stderr)
    return status


def command_history(arguments: argparse.Namespace) -> int:
    import usis.curated
    from usis.history import SERIES, HistoryError, history_document, read_series, write_history
    from usis.sources.fetch import FetchError

    status = 0
    for model in arguments.model or sorted(SERIES):
        series = SERIES[model]
        try:
            declared, read = read_series(series)
        except (FetchError, HistoryError) as error:
            print(f"usis history: {model}: {error}", file=sys.stderr)
            status = 1
            continue
        corpus = load(model)
        prefix = f"{model}:"
        families = {
            family.removeprefix(prefix): [member.removeprefix(prefix) for member in members]
            for family, members in corpus.families().items()
        }
        document = history_document(
            series,
            declared,
            read,
            keep={key.removeprefix(prefix) for key in corpus},
            families=families,
        )
        path = write_history(model, document, Path(usis.curated.__file__).parent)
        print(
            f"{model}: {len(document['since'])} dated, {len(document['undated'])} undated "
            f"from {len(read)} wheels -> {path}",
            file=sys.stderr,
        )
    return status


def command_site(arguments: argparse.Namespace) -> int:
    from usis.site import SiteError, old_corpus, write_site

    try:
        diff = old_corpus(arguments.diff) if arguments.diff else None
    except SiteError as error:
        print(f"usis site: {error}", file=sys.stderr)
        return 2
    out = Path(arguments.out_dir)
    summary = write_site(out, diff=diff)
    print(
        f"{out / 'index.html'}: {summary.entries} entries in {summary.chunks} data files, "
        f"{summary.bytes / 1e6:.1f} MB",
        file=sys.stderr,
    )
    return 0


def command_serve(arguments: argparse.Namespace) -> int:
    import tempfile

    from usis.site import serve, write_site

    if arguments.dir:
        directory = Path(arguments.dir)
        if not (directory / "index.html").is_file():
            print(
                f"usis serve: {directory}: no index.html (write one with usis site)",
                file=sys.stderr,
            )
            return 2
    else:
        directory = Path(tempfile.mkdtemp(prefix="usis-site-"))
        write_site(directory)
    try:
        serve(directory, arguments.port)
    except OSError as error:
        print(f"usis serve: 127.0.0.1:{arguments.port}: {error.strerror or error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    return 0


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="usis", description=__doc__)
    commands = top.add_subparsers(dest="command", required=True)

    show = commands.add_parser("show", help="one entry, readable (or --json)")
    show.add_argument("key", help="model:function_key, e.g. mpi:mpi_bcast")
    show.add_argument("--json", action="store_true", help="the entry's shipped JSON")
    show.set_defaults(run=command_show)

    find = commands.add_parser("find", help="a table of matching entries")
    find.add_argument("--model", choices=MODELS)
    find.add_argument("--collective", action="store_true", help="only collective calls")
    blocking = find.add_mutually_exclusive_group()
    blocking.add_argument("--blocking", dest="blocking", action="store_true", default=None)
    blocking.add_argument("--nonblocking", dest="blocking", action="store_false")
    find.add_argument("--group", help="identity.api_group, e.g. one_sided")
    find.add_argument("text", nargs="*", help="words to look for in key, name and description")
    find.set_defaults(run=command_find)

    validate = commands.add_parser("validate", help="schema and consistency findings of a file")
    validate.add_argument("file", help="a shipped corpus file or a bare {key: entry} map")
    validate.set_defaults(run=command_validate)

    diff = commands.add_parser("diff", help="entries added, removed and changed field by field")
    diff.add_argument("a")
    diff.add_argument("b")
    diff.set_defaults(run=command_diff)

    stats = commands.add_parser("stats", help="entries per model, formal coverage, provenance mix")
    stats.add_argument("--json", action="store_true")
    stats.set_defaults(run=command_stats)

    build = commands.add_parser("build", help="rebuild the corpora from the pinned sources")
    build.add_argument("--model", action="append", choices=MODELS, help="repeatable; default all")
    build.add_argument("--stage", choices=STAGE_NAMES, help="stop after this stage")
    build.add_argument(
        "--out", help="write every stage's checkpoint (and, for a full build, the files) here"
    )
    build.set_defaults(run=command_build)

    site = commands.add_parser("site", help="write the explorer, a static site, to OUT_DIR")
    site.add_argument("out_dir")
    site.add_argument(
        "--diff", metavar="OLD_DIR_OR_RELEASE",
        help="also show what changed since a directory of corpus files or a git revision",
    )  # fmt: skip
    site.set_defaults(run=command_site)

    serve = commands.add_parser("serve", help="serve the explorer on 127.0.0.1")
    serve.add_argument("--port", type=int, default=8765)
    serve.add_argument("--dir", help="a site written by usis site (default: write one now)")
    serve.set_defaults(run=command_serve)

    fetch = commands.add_parser("fetch", help="download and cache the pinned sources")
    fetch.add_argument("--model", action="append", choices=MODELS, help="repeatable; default all")
    fetch.set_defaults(run=command_fetch)

    history = commands.add_parser(
        "history", help="date the NVIDIA models' functions from a series of published wheels"
    )
    history.add_argument(
        "--model", action="append", choices=("cuda", "nccl", "nvshmem"), help="repeatable"
    )
    history.set_defaults(run=command_history)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    arguments = parser().parse_args(argv)
    try:
        status: int = arguments.run(arguments)
    except BrokenPipeError:
        return 0
    return status


if __name__ == "__main__":
    sys.exit(main())
