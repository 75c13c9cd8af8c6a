"""The ``failure-kinds`` command: parses the arguments, runs the subcommand, and turns every
:class:`failure_kinds.FailureKindsError` into one line on stderr and exit 2, here only."""

from __future__ import annotations

import argparse
import signal
import sys

import failure_kinds
import failure_kinds._signals as _signals
import failure_kinds._streams as streams
from failure_kinds.commands import EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any, NoReturn

    from _typeshed import SupportsWrite

__all__ = ["EXIT_CLEAN", "EXIT_FINDINGS", "EXIT_USAGE", "UsageError", "build_parser", "main"]
# The longest usage error shown, in characters; an argument can be as long as the system allows.
_MESSAGE_LIMIT = 400


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors naming the closest valid choice or option, the same on every
    supported Python, and its help written through streams.write_output."""

    # Each subcommand's parser by name, for errors that belong to a subcommand; set by build_parser.
    subcommands: Mapping[str, argparse.ArgumentParser] = {}

    def __init__(self, **arguments: Any) -> None:
        super().__init__(formatter_class=_Paragraphs, **arguments)

    def error(self, message: str) -> NoReturn:
        # argparse puts arguments into some messages as they were typed: escaped and cut like any value.
        from failure_kinds._display import escaped

        streams.error_line(f"{self.prog}: error: {escaped(message, _MESSAGE_LIMIT)} (see {self.prog} --help)")
        raise SystemExit(EXIT_USAGE)

    def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
        if message and (file is None or file is sys.stdout):
            streams.write_output(message)
        elif message:
            streams.error_line(message.rstrip("\n"))

    def _check_value(self, action: argparse.Action, value: object) -> None:
        # Replaces argparse's own message, whose quoting differs between Python versions.
        if action.choices is None or value in action.choices:
            return
        choices = [str(choice) for choice in action.choices]
        closest = _closest(str(value), choices)
        meant = "" if closest is None else f", did you mean {closest!r}?"
        raise argparse.ArgumentError(
            action, f"invalid choice: {value!r}{meant} (choose from {', '.join(choices)})"
        )

    def parse_args(self, args: Sequence[str] | None = None) -> argparse.Namespace:  # type: ignore[override]
        arguments, extras = self.parse_known_args(args)
        if extras:
            # Named after the subcommand, whose --help lists its options.
            parsers = [self, *([self.subcommands[arguments.command]] if arguments.command else [])]
            options = [
                option for parser in parsers for action in parser._actions for option in action.option_strings
            ]
            typed = [extra.partition("=")[0] for extra in extras if extra.startswith("-") and extra != "-"]
            closest = next(filter(None, (_closest(word, options) for word in typed)), None)
            meant = "" if closest is None else f"; did you mean {closest}?"
            parsers[-1].error(f"unrecognized arguments: {' '.join(extras)}{meant}")
        return arguments


class _Paragraphs(argparse.HelpFormatter):
    """Fills each paragraph of a description on its own, so its first stays the one line that says what
    the command does."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        fill = super()._fill_text
        return "\n\n".join(fill(part, width, indent) for part in text.split("\n\n"))


def _closest(word: str, candidates: Sequence[str]) -> str | None:
    """The core's closest match, else the candidate ``word`` becomes when two neighbouring letters trade
    places (``lsit``), the commonest slip in a short word and one a similarity ratio rates low."""
    from failure_kinds._suggest import closest

    found = closest(word, candidates)
    for candidate in candidates if found is None else ():
        differ = [
            index for index, pair in enumerate(zip(word, candidate, strict=False)) if pair[0] != pair[1]
        ]
        if len(word) == len(candidate) and len(differ) == 2 and differ[1] == differ[0] + 1:
            first, second = differ
            if word[first] == candidate[second] and word[second] == candidate[first]:
                return candidate
    return found


def _config_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--config",
        metavar="FILE",
        help="the project configuration: a pyproject.toml (read at [tool.failure-kinds]) or a TOML file "
        "holding that table's keys at its top level (default: the nearest pyproject.toml at or above the "
        "working directory)",
    )


def build_parser() -> argparse.ArgumentParser:
    # fmt: off
    parser = _Parser(prog="failure-kinds",
        description="The shared vocabulary of why a rollout failed, and the tools that use it.\n\nList it, "
        "check names against it, audit rollout failure logs, lint Python source for misspelled kinds, and "
        "export and compare the vocabulary as data. The command reference in the documentation has every "
        "detail.",
        epilog="Exit codes: 0 clean, 1 findings (check, audit --strict, lint, generate --check, diff), 2 "
        "usage error or unreadable input.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {failure_kinds.__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    parser.subcommands = commands.choices

    listing = commands.add_parser("list",
        help="print every kind, grouped by domain, and the stages, with their meaning",
        description="Print every kind, grouped by domain, and the stages, with what each means.")
    listing.add_argument("--format", choices=["text", "json", "markdown"], default="text",
        help="text for people (default), json for tools, markdown for documentation")

    check = commands.add_parser("check",
        help="say whether each name is registered, namespaced, undeclared, legacy, malformed or unregistered",
        description="Say whether each NAME is in the vocabulary, and what it most likely meant.\n\n"
        "A name is registered (a deprecated kind with its replacement), namespaced (<server>:<kind>), "
        "undeclared (a kind its server's declaration does not list), legacy (an older label, with its "
        "replacement if it has one), malformed or unregistered.",
        epilog="Exit 0 when every name is registered or namespaced, 1 otherwise, 2 on a usage error.")
    check.add_argument("names", nargs="+", metavar="NAME",
        help="a name to check; a single - reads names from stdin, one a line")
    check.add_argument("--format", choices=["text", "json"], default="text", help="output format")
    _config_option(check)

    audit = commands.add_parser("audit", usage="%(prog)s [options] PATH [PATH ...]",
        help="count the failure kinds in JSON Lines and Parquet rollout logs",
        description="Count the failure kinds in JSON Lines and Parquet rollout logs.\n\nWhich kinds "
        "occurred, which values are not in the vocabulary and what they probably meant, which are older "
        "labels and what replaced them, where each failure happened (its stage), and how the counts regroup "
        "under the current kinds. Every non-blank line is a record: with a kind, without one (absent or "
        "null), invalid or unparseable.",
        epilog="Exit 0 when the audit ran (1 with --strict, see --strict), 2 on a usage error or when an "
        "input could not be read; the readable inputs are still reported.")
    # At least one PATH, checked by the engine: --ray PATH must not leave none here.
    audit.add_argument("paths", nargs="*", metavar="PATH",
        help="a JSON Lines file (.gz is decompressed), a .parquet file, a directory (its *.jsonl, *.ndjson, "
        "*.jsonl.gz, *.ndjson.gz and *.parquet files, recursively), or - for stdin")
    audit.add_argument("--field", action="append", dest="fields", metavar="DOTTED.PATH",
        help="where a kind is in each object, e.g. failure.failure_kind; repeatable, every field audited in "
        "the same pass, one report each (default: failure_kind)")
    audit.add_argument("--stage", action="append", dest="stages", metavar="DOTTED.PATH",
        help="where every field's stage is (default: the key stage beside each field, e.g. failure.stage)")
    audit.add_argument("--alias", action="append", default=[], metavar="OLD=NEW",
        help="count the label OLD as the registered kind NEW, over the replacement the vocabulary gives an "
        "older label (repeatable)")
    audit.add_argument("--aliases", metavar="FILE",
        help='a TOML file of aliases: old = "new" lines under an [aliases] table')
    audit.add_argument("--strict", action="store_true",
        help="exit 1 when, at any field, an unregistered, malformed or undeclared value, an older label "
        "(even one with a replacement) or an unregistered or older stage remains after aliasing, or when "
        "the --field was never seen (no record has it, no record is an object, or no input file)")
    audit.add_argument("--format", choices=["text", "json"], default="text", help="output format")
    audit.add_argument("--decoder", choices=["auto", "stdlib", "msgspec"], default="auto",
        help="JSON decoder: msgspec when installed (the fast extra, e.g. pip install '.[fast]' in a clone; "
        "see the README's Install), else the standard library (default: auto); both give identical reports")
    audit.add_argument("--jobs", type=_jobs, metavar="N",
        help="audit with N processes: large files in byte ranges, files side by side (default: the cores "
        "available; inputs under 32 MB in one process)")
    audit.add_argument("--ray", nargs="?", const="", action=_RayAction, metavar="ADDRESS",
        help="audit as Ray tasks on the cluster at ADDRESS (auto, ray://HOST:PORT, HOST:PORT; default: the "
        "one ray.init() finds, else a local one); paths may be URIs such as s3://bucket/logs/ (needs the "
        "ray extra; see the README's Install)")
    audit.add_argument("--max-line-bytes", type=_byte_size, default=64 << 20, metavar="SIZE",
        help="a longer line is counted as unparseable and skipped without being held in memory (default: "
        "64M; K, M and G suffixes are powers of 1024)")
    _config_option(audit)

    lint = commands.add_parser("lint", help="find misspelled failure kinds in Python source",
        description="Find misspelled failure kinds in Python source.\n\n"
        "Reports the literals written, compared or matched as a kind (the field, names "
        "annotated as a kind, validate_failure_kind and the like) and the constants of "
        "failure_kinds that are unregistered (FK001), malformed (FK002), missing from a "
        "declared namespace (FK003), older labels (FK004) or deprecated (FK005), and each "
        "file that cannot be linted (FK000). '# noqa' or '# noqa: FK001' silences a line. "
        "What is read, and each code: the documentation's lint page (docs/lint.md).",
        epilog="Exit 0 when clean, 1 when there are findings (with --diff: when there is "
        "something to fix), 2 on a usage error, an unreadable file or no input file.")
    lint.add_argument("paths", nargs="+", metavar="PATH",
        help="a Python file, or a directory to search for .py and .pyi files; standard input is not read (a "
        "file named - is ./-)")
    lint.add_argument("--field", action="append", dest="fields", metavar="NAME",
        help="the field name that holds a kind (repeatable; replaces the default, failure_kind)")
    lint.add_argument("--format", choices=["text", "json", "github", "sarif"], default="text",
        help="text (default), json, github: GitHub Actions workflow commands, which show each finding on the "
        "pull request, or sarif: a SARIF 2.1.0 log for GitHub code scanning")
    fixing = lint.add_mutually_exclusive_group()
    fixing.add_argument("--fix", action="store_true",
        help="rewrite the literals of older labels that have a single replacement (FK004), nothing else, "
        "where code writes a kind (not where it compares with one), printing each change as PATH:LINE:COL "
        "OLD -> NEW, then the findings left; every position printed is in the rewritten file; the rest of "
        "the file stays byte for byte")
    fixing.add_argument("--diff", action="store_true",
        help="print what --fix would change as a unified diff, writing nothing; the diff is the whole output "
        "(no findings, whatever --format says)")
    lint.add_argument("--unsafe-fixes", action="store_true",
        help="with --fix or --diff, rewrite older labels where code reads a kind too (comparisons, in tests, "
        "case patterns), which stops it matching older data")
    _config_option(lint)

    generate = commands.add_parser("generate",
        help="write the typed module of the namespaced kinds this project declares",
        description="Write the typed module of the namespaced kinds this project declares.\n\nFrom "
        "[tool.failure-kinds.namespaces]: a Literal alias per server, DeclaredFailureKind, "
        "ProjectFailureKind, one constant per kind, and the declare_namespace calls that turn on the "
        "run-time check when the module is imported.",
        epilog="Exit 0 when written or up to date, 1 with --check when the module is missing or stale, 2 on "
        "a usage error or a malformed declaration.")
    _config_option(generate)
    generate.add_argument("--output", metavar="PATH",
        help="where to write the module, - for stdout (default: generate = ... in [tool.failure-kinds]); a "
        "symbolic link is written through to its target and stays a link; not the configuration this run "
        "reads: the module needs a file of its own")
    generate.add_argument("--check", action="store_true",
        help="write nothing; exit 1 when the module is missing or differs from what would be written")

    export = commands.add_parser("export",
        help="write the vocabulary as JSON, a JSON Schema for a kind's value, TypeScript or Go",
        description="Write the vocabulary as data, or as source for other languages.\n\njson: the "
        "version, every kind with its details, the older labels, the stages and any declared namespaces; "
        "jsonschema: a JSON Schema (2020-12) of exactly the values the runtime accepts silently; typescript, "
        "go: constants, types and checks of the registered and the declared kinds.",
        epilog="Exit 0, or 2 on a usage error or a malformed configuration.")
    export.add_argument("--format", choices=["json", "jsonschema", "typescript", "go"], default="json",
        help="output format: json (default), jsonschema, or the kinds as TypeScript or Go source")
    _config_option(export)

    diff = commands.add_parser("diff", help="compare two JSON exports of the vocabulary",
        description="Compare two JSON exports of the vocabulary: what changed and what breaks.\n\n"
        "OLD and NEW are files written by failure-kinds export --format json. Each added, deprecated, "
        "removed or re-valued kind, stage and older label is one line, incompatible changes first.",
        epilog="Exit 0 when NEW is compatible with OLD, 1 when NEW removes or re-values something, 2 when an "
        "export cannot be read or is not one.")
    diff.add_argument("old", metavar="OLD", help="the earlier export (a JSON file)")
    diff.add_argument("new", metavar="NEW", help="the later export (a JSON file)")
    diff.add_argument("--format", choices=["text", "json"], default="text", help="output format")
    # fmt: on
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    handlers = _signals.catch()
    try:
        return _main(argv)
    except KeyboardInterrupt:
        number = _signals.received
        if number is None or number == signal.SIGINT:
            streams.error_line("failure-kinds: interrupted")
            return 130
        # SIGTERM, SIGHUP: the workers are gone; end as the signal asks.
        _signals.restore(handlers)
        signal.signal(number, signal.SIG_DFL)
        signal.raise_signal(number)
        return 128 + number
    finally:
        _signals.restore(handlers)


def _main(argv: Sequence[str] | None) -> int:
    streams.lose_output(None)
    streams.hold_standard_descriptors()
    parser = build_parser()
    try:
        code = _run(parser, argv)
    except SystemExit as done:  # argparse: --help and --version (0) and usage errors (2)
        code = done.code if isinstance(done.code, int) else EXIT_USAGE
    except MemoryError:  # where no part of the input is left to name (an audit names the files it lost)
        streams.error_line(f"{parser.prog}: error: out of memory")
        return EXIT_USAGE
    except BrokenPipeError:  # only output written around streams.write_output, cut short; the reader is gone
        streams.lose_output(streams.BROKEN_PIPE)
        code = EXIT_CLEAN
    streams.write_output("")  # what is still buffered goes out while a failure can still be reported
    lost = streams.output_lost()
    if lost is not None and lost != streams.BROKEN_PIPE:
        streams.error_line(f"{parser.prog}: error: {lost}")
        return EXIT_USAGE
    return code


def _run(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> int:
    import importlib

    arguments = parser.parse_args(argv)
    command = arguments.command
    if command is None:
        parser.print_usage(sys.stderr)
        parser.error("choose a command")
    try:
        read = {"check": arguments.__dict__.get("names"), "audit": arguments.__dict__.get("paths")}
        if "-" in (read.get(command) or ()) and sys.stdin is None:
            raise UsageError("- reads standard input, which is closed")
        # A subcommand's module is imported only now: --help and a usage error load none of them.
        module = {"list": "listing", "generate": "export", "diff": "export"}.get(command, command)
        function = command if module == "export" else "run"
        code: int = getattr(importlib.import_module(f"failure_kinds.commands.{module}"), function)(arguments)
    except failure_kinds.FailureKindsError as error:
        from failure_kinds._display import escaped

        streams.error_line(f"{parser.prog} {command}: error: {escaped(str(error), 4 * _MESSAGE_LIMIT)}")
        return EXIT_USAGE
    return code


class _RayAction(argparse.Action):
    """``--ray [ADDRESS]``: a value that is not a cluster address is the first path to audit."""

    def __call__(
        self, parser: object, namespace: argparse.Namespace, values: object, option_string: object = None
    ) -> None:
        from failure_kinds.audit.engine import looks_like_address

        value = values if isinstance(values, str) else ""
        if value and not looks_like_address(value):
            namespace.ray_paths = [value]  # read before PATH...: argparse sets those after this
            value = ""
        namespace.ray = value


def _jobs(text: str) -> int:
    """A number of processes, in ASCII digits."""
    if not (text.isascii() and text.isdigit() and len(text) <= 6 and int(text) > 0):
        raise argparse.ArgumentTypeError(f"{text!r}: expected a whole number of processes from 1 to 999999")
    return int(text)


def _byte_size(text: str) -> int:
    """A positive number of bytes, optionally with a K, M or G suffix (powers of 1024)."""
    units = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    number, unit = text.strip(), ""
    if number[-1:].upper() in units:
        number, unit = number[:-1], number[-1:].upper()
    if not (number.isascii() and number.isdigit()) or len(number) > 15 or int(number) == 0:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected a positive number of bytes, e.g. 1048576 or 64M"
        )
    return int(number) * units[unit]
