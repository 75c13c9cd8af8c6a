"""The ``failure-kinds`` command: list the vocabulary, check names, audit rollout failure logs, lint source.

Exit codes: 0 clean, 1 findings (where a subcommand says so), 2 usage errors or unreadable input. User
mistakes get one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys

import failure_kinds
from failure_kinds import FailureKind

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import NoReturn, TextIO

EXIT_CLEAN = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2


class UsageError(Exception):
    """A mistake in how the command was called or in what it was given; reported in one line, exit 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # One line, so scripts can show it as is; --help has the long form.
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="failure-kinds",
        description="The shared vocabulary of why a rollout failed: list it, check names against it, "
        "audit rollout failure logs, and lint Python source for misspelled kinds.",
        epilog="Exit codes: 0 clean, 1 findings (check, audit --strict, lint), 2 usage error or "
        "unreadable input.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {failure_kinds.__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    listing = commands.add_parser(
        "list",
        help="print every kind, grouped by domain, with its meaning",
        description="Print every registered failure kind, grouped by domain, with what it means.",
    )
    listing.add_argument(
        "--format",
        choices=["text", "json", "markdown"],
        default="text",
        help="text for people (default), json for tools, markdown for documentation",
    )
    listing.set_defaults(run=_run_list)

    check = commands.add_parser(
        "check",
        help="say whether each name is registered, namespaced or unregistered",
        description="Say for each NAME whether it is registered, a well-formed namespaced extension "
        "(<server>:<kind>), or unregistered, with the kind it most likely meant. "
        "Exit 0 when every name is registered or namespaced, 1 otherwise.",
    )
    check.add_argument(
        "names",
        nargs="+",
        metavar="NAME",
        help="a name to check; a single - reads names from stdin, one a line",
    )
    check.add_argument("--format", choices=["text", "json"], default="text", help="output format")
    check.set_defaults(run=_run_check)

    audit = commands.add_parser(
        "audit",
        help="count the failure kinds in JSON Lines rollout logs",
        description="Count the failure kinds in JSON Lines rollout logs (result files, *_failures.jsonl "
        "sidecars, verifier dumps): which kinds occurred, which values are not in the vocabulary and what "
        "they probably meant, and how the counts regroup once legacy labels are aliased. Every non-blank "
        "line is one record: with a kind (a string at the field), without (absent or null), invalid "
        "(another JSON type there) or unparseable (not UTF-8, not JSON, or not an object).",
        epilog="Exit 0 when the audit ran (1 with --strict when unregistered values remain), 2 on a usage "
        "error or when an input could not be read; the readable inputs are still reported.",
    )
    audit.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="a JSON Lines file (.gz is decompressed), a directory (its *.jsonl and *.jsonl.gz files, "
        "recursively), or - for stdin",
    )
    audit.add_argument(
        "--field",
        default="failure_kind",
        metavar="DOTTED.PATH",
        help="where the kind is in each object, e.g. response.failure_kind (default: failure_kind)",
    )
    audit.add_argument(
        "--alias",
        action="append",
        default=[],
        metavar="OLD=NEW",
        help="count the legacy label OLD as the registered kind NEW (repeatable)",
    )
    audit.add_argument(
        "--aliases",
        metavar="FILE",
        help='a TOML file of aliases: old = "new" lines under an [aliases] table',
    )
    audit.add_argument(
        "--strict", action="store_true", help="exit 1 when any unregistered value remains after aliasing"
    )
    audit.add_argument("--format", choices=["text", "json"], default="text", help="output format")
    audit.add_argument(
        "--decoder",
        choices=["auto", "stdlib", "msgspec"],
        default="auto",
        help="JSON decoder: msgspec when installed (pip install failure-kinds[fast]), else the "
        "standard library (default: auto); both give identical reports",
    )
    audit.set_defaults(run=_run_audit)

    lint = commands.add_parser(
        "lint",
        help="find misspelled failure kinds in Python source",
        description="Report string literals used as a failure kind in Python source that are neither "
        "registered nor well-formed namespaced kinds: keyword arguments and dict keys named after the "
        "field, subscript and attribute assignments to it, comparisons with it (==, !=, in, not in), and "
        "literals passed to validate_failure_kind, metric_label, is_registered and is_namespaced. "
        "Codes: FK000 file does not parse, FK001 unregistered kind, FK002 malformed namespaced kind. "
        "'# noqa' or '# noqa: FK001' on a line suppresses its findings.",
        epilog="Exit 0 when clean, 1 when there are findings, 2 on a usage error or an unreadable file.",
    )
    lint.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="a Python file, or a directory to search for .py and .pyi files",
    )
    lint.add_argument(
        "--field",
        action="append",
        dest="fields",
        metavar="NAME",
        help="the field name that holds a kind (repeatable; replaces the default, failure_kind)",
    )
    lint.add_argument("--format", choices=["text", "json"], default="text", help="output format")
    lint.set_defaults(run=_run_lint)

    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    arguments = parser.parse_args(argv)
    if arguments.command is None:
        parser.print_usage(sys.stderr)
        print(f"{parser.prog}: error: choose a command (see {parser.prog} --help)", file=sys.stderr)
        return EXIT_USAGE
    try:
        code: int = arguments.run(arguments)
        sys.stdout.flush()
    except UsageError as error:
        print(f"{parser.prog} {arguments.command}: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        # The reader went away (`| head`); nothing left to say. Point stdout at devnull so the
        # interpreter's own flush at exit does not complain a second time.
        _silence_stdout()
        return EXIT_CLEAN
    except KeyboardInterrupt:
        print(f"{parser.prog}: interrupted", file=sys.stderr)
        return 130
    return code


def _silence_stdout() -> None:
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


# list


def _run_list(arguments: argparse.Namespace) -> int:
    render = {"text": render_list_text, "json": render_list_json, "markdown": render_list_markdown}
    sys.stdout.write(render[arguments.format]())
    return EXIT_CLEAN


def _by_domain() -> dict[str, list[FailureKind]]:
    domains: dict[str, list[FailureKind]] = {}
    for kind in FailureKind:
        domains.setdefault(kind.domain, []).append(kind)
    return domains


def render_list_text() -> str:
    width = max(len(kind.value) for kind in FailureKind)
    lines: list[str] = []
    for domain, kinds in _by_domain().items():
        lines.append(domain)
        lines.extend(f"  {kind.value:<{width}}  {kind.description}" for kind in kinds)
        lines.append("")
    return "\n".join(lines)


def render_list_json() -> str:
    entries = [
        {"name": kind.name, "value": kind.value, "domain": kind.domain, "description": kind.description}
        for kind in FailureKind
    ]
    return json.dumps(entries, indent=2) + "\n"


def render_list_markdown() -> str:
    lines = ["| Domain | Kind | What went wrong |", "| --- | --- | --- |"]
    for domain, kinds in _by_domain().items():
        lines.extend(f"| {domain} | `{kind.value}` | {kind.description} |" for kind in kinds)
    return "\n".join(lines) + "\n"


# audit


def _run_audit(arguments: argparse.Namespace) -> int:
    import failure_kinds.audit as audit

    try:
        aliases = audit.load_alias_file(arguments.aliases) if arguments.aliases else {}
        aliases.update(audit.parse_alias_option(option) for option in arguments.alias)
        if arguments.decoder == "msgspec" and not audit.fast_available():
            raise audit.AuditError("--decoder msgspec needs msgspec: pip install failure-kinds[fast]")
        report = audit.audit(
            arguments.paths,
            field_path=arguments.field,
            aliases=aliases,
            fast=arguments.decoder != "stdlib",
            progress=sys.stderr,
        )
    except audit.AuditError as error:
        raise UsageError(str(error)) from None
    if arguments.format == "json":
        sys.stdout.write(audit.render_json(report))
    else:
        utf8 = (sys.stdout.encoding or "").lower().replace("-", "") == "utf8"
        sys.stdout.write(audit.render_text(report, bar_character="\u2588" if utf8 else "#"))
    sys.stdout.flush()
    for note in report.notes:
        print(f"failure-kinds audit: note: {note}", file=sys.stderr)
    for file in report.failed_files:
        print(f"failure-kinds audit: {file.path}: {file.error}", file=sys.stderr)
    if report.failed_files:
        return EXIT_USAGE
    if arguments.strict and report.unregistered:
        return EXIT_FINDINGS
    return EXIT_CLEAN


# lint


def _run_lint(arguments: argparse.Namespace) -> int:
    import failure_kinds.lint as lint

    fields = arguments.fields or list(lint.DEFAULT_FIELDS)
    try:
        findings, unreadable = lint.lint_paths(arguments.paths, fields)
    except lint.LintError as error:
        raise UsageError(str(error)) from None
    if arguments.format == "json":
        sys.stdout.write(json.dumps([finding.to_json() for finding in findings], indent=2) + "\n")
    else:
        sys.stdout.write("".join(f"{finding}\n" for finding in findings))
    sys.stdout.flush()
    for problem in unreadable:
        print(f"failure-kinds lint: {problem}", file=sys.stderr)
    if unreadable:
        return EXIT_USAGE
    return EXIT_FINDINGS if findings else EXIT_CLEAN


# check


def _run_check(arguments: argparse.Namespace) -> int:
    names: list[str] = arguments.names
    if names == ["-"]:
        names = list(_stdin_names(sys.stdin))
    elif "-" in names:
        raise UsageError("- reads names from stdin and cannot be mixed with names")
    verdicts = [check_name(name) for name in names]
    if arguments.format == "json":
        sys.stdout.write(json.dumps(verdicts, indent=2) + "\n")
    else:
        sys.stdout.write(render_check_text(verdicts))
    clean = all(verdict["category"] != "unregistered" for verdict in verdicts)
    return EXIT_CLEAN if clean else EXIT_FINDINGS


def _stdin_names(stream: TextIO) -> Iterable[str]:
    for line in stream:
        name = line.rstrip("\r\n")
        if name.strip():
            yield name


def check_name(name: str) -> dict[str, str | None]:
    from failure_kinds.audit import category_of

    category = category_of(name)
    suggestion = failure_kinds.suggest(name) if category == "unregistered" else None
    return {"name": name, "category": category, "suggestion": suggestion}


def render_check_text(verdicts: list[dict[str, str | None]]) -> str:
    from failure_kinds.audit import printable

    shown = [printable(str(verdict["name"])) for verdict in verdicts]
    width = max((len(name) for name in shown), default=0)
    lines: list[str] = []
    for name, verdict in zip(shown, verdicts, strict=True):
        line = f"{name:<{width}}  {verdict['category']}"
        if verdict["suggestion"] is not None:
            line += f", did you mean {verdict['suggestion']!r}?"
        lines.append(line)
    return "".join(line + "\n" for line in lines)
