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
    from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
    from pathlib import Path
    from typing import NoReturn, TextIO

    from _typeshed import SupportsWrite

    from failure_kinds.config import ProjectConfig

EXIT_CLEAN = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2


class UsageError(Exception):
    """A mistake in how the command was called or in what it was given; reported in one line, exit 2."""


# Standard output, written only through write_output. Once it fails, the reason is kept here and further
# output is dropped, so a run still finishes its work, its stderr diagnostics and its exit code.
_output_lost: str | None = None
_BROKEN_PIPE = "the reader of standard output went away"


def write_output(text: str) -> None:
    """Write ``text`` to stdout, flushed, never raising: if the reader has gone (a closed pipe) or stdout is
    closed or full, remember why and drop this and every later write. main() then exits with the code the
    run earned after a closed pipe, and with a one-line error and exit 2 when stdout was closed or full."""
    global _output_lost
    if _output_lost is not None or not text:
        return
    stream = sys.stdout
    if stream is None:
        # Started with descriptor 1 closed (`>&-`): the interpreter leaves sys.stdout unset.
        _output_lost = "standard output is closed"
        return
    try:
        try:
            stream.write(text)
        except UnicodeEncodeError:
            # A name the output's encoding cannot show (an ASCII locale) is written escaped, not refused:
            # the findings matter more than their spelling. Nothing was written: encoding comes first.
            encoding = stream.encoding or "utf-8"
            stream.write(text.encode(encoding, "backslashreplace").decode(encoding, "replace"))
        stream.flush()
    except BrokenPipeError:
        _lose_output(_BROKEN_PIPE)
    except (OSError, ValueError) as error:
        # ValueError: a stream closed by someone else ("I/O operation on closed file").
        _lose_output(f"cannot write to standard output: {_reason(error)}")


def _reset_output() -> None:
    global _output_lost
    _output_lost = None


def _lose_output(reason: str) -> None:
    global _output_lost
    _output_lost = reason
    # What is still buffered would fail again when the interpreter flushes at exit (a second message and
    # exit status 120), so descriptor 1 now leads nowhere and the buffer drains there.
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass  # not a real descriptor (an in-process test's capture): nothing is flushed at exit


def _reason(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return str(error) or type(error).__name__


def _error_line(line: str) -> None:
    """One line on stderr; `print(file=None)` would write to stdout, so a closed stderr gets nothing."""
    if sys.stderr is None:
        return
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors that name the closest valid choice or option, the same on every
    supported Python, and with its help and version written through write_output."""

    # Each subcommand's parser by name, for errors that belong to a subcommand; set by build_parser.
    subcommands: Mapping[str, argparse.ArgumentParser] = {}

    def error(self, message: str) -> NoReturn:
        # One line, so scripts can show it as is; --help has the long form. argparse puts arguments into
        # some messages as they were typed, so a message is escaped and cut like any other shown value.
        shown = _one_line(message, _MESSAGE_LIMIT)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {shown} (see {self.prog} --help)\n")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:
            _error_line(message.rstrip("\n"))
        raise SystemExit(status)

    def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
        if not message:
            return
        if file is None or file is sys.stdout:
            write_output(message)
        else:
            _error_line(message.rstrip("\n"))

    def _check_value(self, action: argparse.Action, value: object) -> None:
        # Replaces argparse's own message, whose quoting differs between Python versions.
        if action.choices is None or value in action.choices:
            return
        choices = [str(choice) for choice in action.choices]
        message = f"invalid choice: {value!r}"
        closest = _closest_word(str(value), choices)
        if closest is not None:
            message += f", did you mean {closest!r}?"
        message += f" (choose from {', '.join(choices)})"
        raise argparse.ArgumentError(action, message)

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: None = None
    ) -> argparse.Namespace:
        arguments, extras = self.parse_known_args(args)
        if extras:
            message = f"unrecognized arguments: {' '.join(extras)}"
            parsers = self._parsers_for(getattr(arguments, "command", None))
            options = [
                option for parser in parsers for action in parser._actions for option in action.option_strings
            ]
            for extra in extras:
                if extra.startswith("-") and extra != "-":
                    closest = _closest_word(extra.partition("=")[0], options)
                    if closest is not None:
                        message += f"; did you mean {closest}?"
                        break
            # Named after the subcommand, whose --help lists its options.
            parsers[-1].error(message)
        return arguments

    def _parsers_for(self, command: str | None) -> list[argparse.ArgumentParser]:
        """Where the mistake was made: this parser and, once one was chosen, its subcommand's parser."""
        parsers: list[argparse.ArgumentParser] = [self]
        if command is not None and command in self.subcommands:
            parsers.append(self.subcommands[command])
        return parsers


# The longest usage error shown, in characters; an argument can be as long as the system allows.
_MESSAGE_LIMIT = 400


def _one_line(text: str, limit: int) -> str:
    """``text`` with every character that is not printable escaped as in a repr (no line break, escape
    sequence or bidirectional override reaches the terminal raw), cut to ``limit`` characters."""
    shown = "".join(
        character if character.isprintable() else repr(character)[1:-1] for character in text[: limit + 1]
    )
    return shown if len(shown) <= limit else shown[: limit - 1] + "\u2026"


def _closest_word(word: str, candidates: Sequence[str]) -> str | None:
    """The candidate fewest typing slips away (a swap of neighbours counts as one), if it is close enough
    to be what was meant; ties go to the first candidate, which is the order --help shows."""
    limit = 1 if len(word) <= 4 else max(2, len(word) // 4)
    best: tuple[int, str] | None = None
    for candidate in candidates:
        distance = _slips(word, candidate)
        if distance <= limit and (best is None or distance < best[0]):
            best = (distance, candidate)
    return best[1] if best is not None else None


def _slips(left: str, right: str) -> int:
    """Edits turning left into right: insertions, deletions, substitutions and swaps of neighbours."""
    if abs(len(left) - len(right)) > 3:
        return max(len(left), len(right))
    previous: list[int] = []
    current = list(range(len(right) + 1))
    for i in range(1, len(left) + 1):
        before, previous, current = previous, current, [i] + [0] * len(right)
        for j in range(1, len(right) + 1):
            cost = 0 if left[i - 1] == right[j - 1] else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and left[i - 1] == right[j - 2] and left[i - 2] == right[j - 1]:
                current[j] = min(current[j], before[j - 2] + 1)
    return current[len(right)]


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
    parser.subcommands = commands.choices

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
        help="say whether each name is registered, namespaced, undeclared or unregistered",
        description="Say for each NAME whether it is registered, a well-formed namespaced extension "
        "(<server>:<kind>), undeclared (a kind its server's declaration in [tool.failure-kinds.namespaces] "
        "does not list), or unregistered, with the kind it most likely meant. "
        "Exit 0 when every name is registered or namespaced, 1 otherwise.",
    )
    check.add_argument(
        "names",
        nargs="+",
        metavar="NAME",
        help="a name to check; a single - reads names from stdin, one a line",
    )
    check.add_argument("--format", choices=["text", "json"], default="text", help="output format")
    add_config_option(check)
    check.set_defaults(run=_run_check)

    audit = commands.add_parser(
        "audit",
        help="count the failure kinds in JSON Lines and Parquet rollout logs",
        description="Count the failure kinds in JSON Lines and Parquet rollout logs (result files, "
        "*_failures.jsonl sidecars, verifier dumps): which kinds occurred, which values are not in the "
        "vocabulary and what they probably meant, and how the counts regroup once legacy labels are "
        "aliased. Every non-blank line is one record: with a kind (a string at the field), without "
        "(absent or null), invalid (another JSON type there) or unparseable (not UTF-8, not JSON, not an "
        "object, or longer than --max-line-bytes). A namespaced value whose server the project declares "
        "(--config) but whose kind it does not is undeclared.",
        epilog="Exit 0 when the audit ran (1 with --strict when unregistered or undeclared values remain), 2 "
        "on a usage error or when an input could not be read; the readable inputs are still reported.",
    )
    audit.add_argument(
        "paths",
        nargs="*",  # at least one, checked by the engine: --ray PATH must not leave none here
        metavar="PATH",
        help="a JSON Lines file (.gz is decompressed), a .parquet file, a directory (its *.jsonl, "
        "*.jsonl.gz and *.parquet files, recursively), or - for stdin",
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
        "--strict",
        action="store_true",
        help="exit 1 when any unregistered or undeclared value remains after aliasing",
    )
    audit.add_argument("--format", choices=["text", "json"], default="text", help="output format")
    audit.add_argument(
        "--decoder",
        choices=["auto", "stdlib", "msgspec"],
        default="auto",
        help="JSON decoder: msgspec when installed (the fast extra, e.g. pip install '.[fast]' in a "
        "clone; see the README's Install), else the standard library (default: auto); both give "
        "identical reports",
    )
    audit.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        help="audit with N processes: large files in byte ranges, files side by side (default: the "
        "cores available; inputs under 32 MB in one process)",
    )
    audit.add_argument(
        "--ray",
        nargs="?",
        const="",
        action=_RayAction,
        metavar="ADDRESS",
        help="audit as Ray tasks on the cluster at ADDRESS (auto, ray://HOST:PORT, HOST:PORT; default: "
        "the one ray.init() finds, else a local one); paths may be URIs such as s3://bucket/logs/ "
        "(needs the ray extra; see the README's Install)",
    )
    audit.add_argument(
        "--max-line-bytes",
        type=_byte_size,
        default=64 << 20,
        metavar="SIZE",
        help="a longer line is counted as unparseable and skipped without being held in memory (default: "
        "64M; K, M and G suffixes are powers of 1024)",
    )
    add_config_option(audit)
    audit.set_defaults(run=_run_audit)

    lint = commands.add_parser(
        "lint",
        help="find misspelled failure kinds in Python source",
        description="Report string literals used as a failure kind in Python source that are neither "
        "registered nor well-formed namespaced kinds, or that a declared namespace does not list: keyword "
        "arguments and dict keys named after the field, subscript and attribute assignments to it, "
        "comparisons with it (==, !=, in, not in) and match cases on it, the same for names and "
        "attributes annotated as a kind in the file, and literals passed to validate_failure_kind, "
        "metric_label, is_registered and is_namespaced. Codes: FK000 file cannot be linted (does not "
        "parse, too deep, too large, unknown encoding), FK001 unregistered kind, FK002 malformed "
        "namespaced kind, FK003 kind missing from its server's declaration. '# noqa' or "
        "'# noqa: FK001' on a line suppresses its findings.",
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
    add_config_option(lint)
    lint.set_defaults(run=_run_lint)

    generate = commands.add_parser(
        "generate",
        help="write the typed module of the namespaced kinds this project declares",
        description="Write a typed Python module for the namespaced kinds declared in "
        "[tool.failure-kinds.namespaces]: a Literal alias per server, DeclaredFailureKind, "
        "ProjectFailureKind (the shared and the declared kinds), one Final constant per kind, and the "
        "failure_kinds.declare_namespace calls that turn on the run-time check when it is imported.",
        epilog="Exit 0 when written or up to date, 1 with --check when the module is missing or stale, 2 on "
        "a usage error or a malformed declaration.",
    )
    add_config_option(generate)
    generate.add_argument(
        "--output",
        metavar="PATH",
        help="where to write the module, - for stdout (default: generate = ... in [tool.failure-kinds])",
    )
    generate.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 when the module is missing or differs from what would be written",
    )
    generate.set_defaults(run=_run_generate)

    return parser


# The subcommands that read stdin for the argument "-", and the argument holding it.
_READS_STDIN = {"check": "names", "audit": "paths"}


def main(argv: Sequence[str] | None = None) -> int:
    _reset_output()
    _hold_standard_descriptors()
    parser = build_parser()
    try:
        code = _run(parser, argv)
    except SystemExit as done:
        # argparse: --help and --version (0) and usage errors (2).
        code = done.code if isinstance(done.code, int) else EXIT_USAGE
    except KeyboardInterrupt:
        _error_line(f"{parser.prog}: interrupted")
        return 130
    except BrokenPipeError:
        # Only output written around write_output gets here, cut short; the reader is gone either way.
        _lose_output(_BROKEN_PIPE)
        code = EXIT_CLEAN
    # Whatever is still buffered goes out now, while a failure can still be reported.
    if sys.stdout is not None and _output_lost is None:
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            _lose_output(_BROKEN_PIPE)
        except (OSError, ValueError) as error:
            _lose_output(f"cannot write to standard output: {_reason(error)}")
    if _output_lost is not None and _output_lost != _BROKEN_PIPE:
        _error_line(f"{parser.prog}: error: {_output_lost}")
        return EXIT_USAGE
    return code


def _run(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> int:
    arguments = parser.parse_args(argv)
    if arguments.command is None:
        parser.print_usage(sys.stderr)
        _error_line(f"{parser.prog}: error: choose a command (see {parser.prog} --help)")
        return EXIT_USAGE
    try:
        reads_stdin = _READS_STDIN.get(arguments.command)
        if reads_stdin is not None and "-" in getattr(arguments, reads_stdin, ()) and sys.stdin is None:
            raise UsageError("- reads standard input, which is closed")
        code: int = arguments.run(arguments)
    except UsageError as error:
        # Escaped and cut here too, whatever the subcommand put into the message.
        _error_line(f"{parser.prog} {arguments.command}: error: {_one_line(str(error), 4 * _MESSAGE_LIMIT)}")
        return EXIT_USAGE
    return code


def _hold_standard_descriptors() -> None:
    """Give a closed descriptor 0, 1 or 2 to /dev/null. Left free, it would be handed to the next file
    opened, an input file could become "stdout", and child processes would inherit it as such. sys.stdin
    and sys.stdout stay None, which is how the command knows they were closed."""
    import os

    for descriptor in (0, 1, 2):
        try:
            os.fstat(descriptor)
        except OSError:
            try:
                held = os.open(os.devnull, os.O_RDWR)
            except OSError:
                return
            if held != descriptor:
                os.dup2(held, descriptor)
                os.close(held)


# list


def _run_list(arguments: argparse.Namespace) -> int:
    render = {"text": render_list_text, "json": render_list_json, "markdown": render_list_markdown}
    write_output(render[arguments.format]())
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


class _RayAction(argparse.Action):
    """``--ray [ADDRESS]``: a value that is not a cluster address is the first path to audit."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[object] | None,
        option_string: str | None = None,
    ) -> None:
        from failure_kinds.audit.engine import looks_like_address

        value = values if isinstance(values, str) else ""
        if value and not looks_like_address(value):
            namespace.ray_paths = [value]  # read before PATH...: argparse sets those after this
            value = ""
        namespace.ray = value


def _run_audit(arguments: argparse.Namespace) -> int:
    import failure_kinds.audit as audit

    config = load_project_config(arguments)
    try:
        aliases = audit.merged_aliases(arguments.aliases or None, arguments.alias)
        if arguments.decoder == "msgspec" and not audit.fast_available():
            raise audit.AuditError(
                "--decoder msgspec needs msgspec, the fast extra (see the README's Install): "
                "pip install '.[fast]' in a clone of failure-kinds"
            )
        report = audit.audit(
            [*getattr(arguments, "ray_paths", []), *arguments.paths],
            arguments.field,
            aliases,
            fast=arguments.decoder != "stdlib",
            progress=sys.stderr,
            namespaces=dict(config.namespaces),
            jobs=arguments.jobs,
            ray=arguments.ray,
            tune_memory=True,
            line_bytes=arguments.max_line_bytes,
        )
    except audit.AuditError as error:
        raise UsageError(str(error)) from None
    if arguments.format == "json":
        write_output(audit.render_json(report))
    else:
        encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
        utf8 = encoding.lower().replace("-", "") == "utf8"
        write_output(audit.render_text(report, bar_character="\u2588" if utf8 else "#"))
    for note in report.notes:
        _error_line(f"failure-kinds audit: note: {note}")
    for file in report.failed_files:
        _error_line(f"failure-kinds audit: {audit.printable(file.path)}: {file.error}")
    if report.failed_files:
        return EXIT_USAGE
    if arguments.strict and (report.unregistered or report.undeclared):
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _byte_size(text: str) -> int:
    """A positive number of bytes, optionally with a K, M or G suffix (powers of 1024)."""
    units = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    number, unit = text.strip(), ""
    if number[-1:].upper() in units:
        number, unit = number[:-1], number[-1:].upper()
    if not number.isdigit() or len(number) > 15 or int(number) == 0:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected a positive number of bytes, e.g. 1048576 or 64M"
        )
    return int(number) * units[unit]


# lint


def _run_lint(arguments: argparse.Namespace) -> int:
    import failure_kinds.lint as lint

    config = load_project_config(arguments)
    fields = arguments.fields or list(lint.DEFAULT_FIELDS)
    findings, unreadable = lint.lint_paths(arguments.paths, fields, config.namespaces)
    if arguments.format == "json":
        write_output(json.dumps([finding.to_json() for finding in findings], indent=2) + "\n")
    else:
        write_output("".join(f"{finding}\n" for finding in findings))
    for problem in unreadable:
        _error_line(f"failure-kinds lint: {problem}")
    if unreadable:
        return EXIT_USAGE
    return EXIT_FINDINGS if findings else EXIT_CLEAN


# check


# A name read from stdin is cut to this many characters (no kind comes close), and names are checked and
# printed in batches of CHECK_BATCH, so `check -` holds bounded memory whatever stream it is given.
NAME_LIMIT = 1024
CHECK_BATCH = 10_000


def _run_check(arguments: argparse.Namespace) -> int:
    import itertools

    names: Iterable[str] = arguments.names
    if arguments.names == ["-"]:
        names = _stdin_names(sys.stdin)
    elif "-" in arguments.names:
        raise UsageError("- reads names from stdin and cannot be mixed with names")
    namespaces = load_project_config(arguments).namespaces
    clean = True
    written = 0
    stream = iter(names)
    while batch := list(itertools.islice(stream, CHECK_BATCH)):
        verdicts = [check_name(name, namespaces) for name in batch]
        clean = clean and all(verdict["category"] in ("registered", "namespaced") for verdict in verdicts)
        if arguments.format == "json":
            # One JSON array, written a batch at a time, exactly as json.dumps(..., indent=2) lays it out.
            items = ",\n".join(
                "  " + json.dumps(verdict, indent=2).replace("\n", "\n  ") for verdict in verdicts
            )
            write_output(("[\n" if written == 0 else ",\n") + items)
        else:
            write_output(render_check_text(verdicts))
        written += len(verdicts)
    if arguments.format == "json":
        write_output("[]\n" if written == 0 else "\n]\n")
    return EXIT_CLEAN if clean else EXIT_FINDINGS


def _stdin_names(stream: TextIO) -> Iterator[str]:
    """Non-blank lines without their line ends; a line longer than NAME_LIMIT is cut there (marked with
    "...", which no kind contains) and the rest of it skipped without being held."""
    # Bytes decoded as UTF-8 whatever the locale says, with surrogateescape so a byte that is not UTF-8
    # is kept (and shown escaped) rather than ending the run; a byte-order mark at the start is dropped.
    buffer = getattr(stream, "buffer", None)
    if buffer is not None:
        import io

        stream = io.TextIOWrapper(buffer, encoding="utf-8-sig", errors="surrogateescape", newline="")
    while line := stream.readline(NAME_LIMIT + 1):
        if len(line) > NAME_LIMIT and not line.endswith("\n"):
            while (rest := stream.readline(64 * 1024)) and not rest.endswith("\n"):
                pass
            yield line[:NAME_LIMIT] + "..."
            continue
        name = line.rstrip("\r\n")
        if name.strip():
            yield name


def check_name(name: str, namespaces: Mapping[str, Collection[str]] | None = None) -> dict[str, str | None]:
    """The category of ``name`` (registered, namespaced, undeclared when its server's declaration in
    ``namespaces`` does not list it, or unregistered) and, for the last two, the name most likely meant."""
    category = failure_kinds._category(name, namespaces or {})  # pyright: ignore[reportPrivateUsage]
    suggestion = None
    if category in ("unregistered", "undeclared"):
        suggestion = failure_kinds._suggest_any(name, namespaces or {})  # pyright: ignore[reportPrivateUsage]
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


# generate


def add_config_option(command: argparse.ArgumentParser) -> None:
    """``--config FILE``, the same for every subcommand that reads the project's declarations."""
    command.add_argument(
        "--config",
        metavar="FILE",
        help="the project configuration: a pyproject.toml (read at [tool.failure-kinds]) or a TOML file "
        "holding that table's keys at its top level (default: the nearest pyproject.toml at or above the "
        "working directory)",
    )


def load_project_config(arguments: argparse.Namespace) -> ProjectConfig:
    """The configuration named by ``--config`` or found above the working directory; a malformed one is
    a usage error."""
    from failure_kinds.config import ConfigError, load_config

    try:
        return load_config(arguments.config)
    except ConfigError as error:
        # A broken pyproject.toml found above the working directory may belong to another tool's project.
        found = error.whole_file and not arguments.config
        hint = " (name the project's configuration with --config FILE)" if found else ""
        raise UsageError(f"{error}{hint}") from None


def _run_generate(arguments: argparse.Namespace) -> int:
    from pathlib import Path

    from failure_kinds.codegen import render_module
    from failure_kinds.config import ConfigError, shown_path

    config = load_project_config(arguments)
    if config.path is None and arguments.config is None:
        raise UsageError("no pyproject.toml here or above; pass --config FILE")
    try:
        source = render_module(config).encode()
    except ConfigError as error:
        where = shown_path(config.path) if config.path is not None else "configuration"
        raise UsageError(f"{where}: {error}") from None
    if arguments.output == "-":
        if arguments.check:
            raise UsageError("--check compares with a file; --output - has none")
        write_output(source.decode())
        return EXIT_CLEAN
    target = Path(arguments.output) if arguments.output is not None else config.generate_path
    if target is None:
        raise UsageError(
            'where should the module go? set generate = "path/to/module.py" in [tool.failure-kinds] or pass '
            "--output PATH"
        )
    shown = shown_path(target)
    current = _read_generated(target, limit=len(source))
    if arguments.check:
        if current == source:
            write_output(f"{shown} is up to date\n")
            return EXIT_CLEAN
        state = "missing" if current is None else "out of date"
        _error_line(f"failure-kinds generate: {shown} is {state}; run failure-kinds generate")
        return EXIT_FINDINGS
    if current == source:
        write_output(f"{shown} is up to date\n")
        return EXIT_CLEAN
    _write_atomically(target, source)
    write_output(f"wrote {shown}\n")
    return EXIT_CLEAN


def _read_generated(path: Path, limit: int) -> bytes | None:
    """The file's first ``limit + 1`` bytes (enough to tell it differs), or None when it does not exist."""
    import os
    import stat

    from failure_kinds.config import shown_path

    try:
        # Not blocking, so a FIFO where the module should be cannot hang the command.
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None
    except OSError as error:
        raise UsageError(f"{shown_path(path)}: {_reason(error)}") from None
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise UsageError(f"{shown_path(path)}: not a regular file")
        with os.fdopen(descriptor, "rb", closefd=False) as file:
            return file.read(limit + 1)
    except OSError as error:
        raise UsageError(f"{shown_path(path)}: {_reason(error)}") from None
    finally:
        os.close(descriptor)


def _write_atomically(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` in one step, so a reader never sees half a module."""
    import contextlib
    import os
    import tempfile

    from failure_kinds.config import shown_path

    folder = path.parent
    if not folder.is_dir():
        raise UsageError(f"{shown_path(path)}: the directory {shown_path(folder)} does not exist")
    try:
        descriptor, temporary = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as error:
        raise UsageError(f"{shown_path(path)}: {_reason(error)}") from None
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
        # mkstemp makes the file private; a module is as readable as any file the user creates.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, path)
    except OSError as error:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise UsageError(f"{shown_path(path)}: {_reason(error)}") from None
