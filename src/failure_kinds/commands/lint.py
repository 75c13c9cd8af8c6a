"""``failure-kinds lint``: misspelled failure kinds in Python source, found by :mod:`failure_kinds.lint`,
shown as text, JSON, GitHub Actions workflow commands or SARIF (:mod:`failure_kinds._sarif`); ``--fix``
and ``--diff`` rewrite older labels."""

from __future__ import annotations

import json

from failure_kinds._streams import error_line, write_output
from failure_kinds.commands import (
    EXIT_CLEAN,
    EXIT_FINDINGS,
    EXIT_USAGE,
    UsageError,
    load_project_config,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Iterator

    from failure_kinds.lint import Checker, Finding, Fix


def run(arguments: argparse.Namespace) -> int:
    import failure_kinds.lint as lint

    if "-" in arguments.paths:
        # Source has a name its findings point into and --fix rewrites; a stream has neither.
        raise UsageError(
            "- would be standard input, which lint does not read: name files or directories (a file named - "
            "as ./-)"
        )
    if arguments.unsafe_fixes and not (arguments.fix or arguments.diff):
        # Alone it would change nothing, and only drop the hint that --fix leaves a read alone.
        raise UsageError("--unsafe-fixes goes with --fix or --diff")
    if "" in (arguments.fields or ()):
        raise UsageError("--field '' is empty: name the field that holds a kind, as audit --field does")
    config = load_project_config(arguments)
    fields = arguments.fields or list(lint.DEFAULT_FIELDS)
    notes: list[str] = []
    unsafe = arguments.unsafe_fixes
    findings, unreadable = lint.lint_paths(
        arguments.paths, fields, config.namespaces, notes, unsafe_fixes=unsafe
    )
    changed = False
    fixable: set[tuple[str, Fix]] = set()
    sarif = arguments.format == "sarif"
    if arguments.fix or arguments.diff or sarif:
        checker = lint.Checker(fields, config.namespaces, unsafe_fixes=unsafe)
        mode = "fix" if arguments.fix else "diff" if arguments.diff else "sarif"
        text = arguments.format == "text"
        findings, changed = _fix(checker, findings, unreadable, notes, fixable, mode=mode, text=text)
    if arguments.diff:
        pass  # the diff is the whole output, as it can be applied with patch
    elif arguments.format == "json":
        write_output(json.dumps([finding.to_json() for finding in findings], indent=2) + "\n")
    elif arguments.format == "github":
        write_output("".join(github_command(finding) for finding in findings))
    elif arguments.format == "sarif":
        from failure_kinds._sarif import log

        write_output(json.dumps(log(findings, fixable), indent=2) + "\n")
    else:
        write_output("".join(f"{finding}\n" for finding in findings))
    for note in notes:
        error_line(f"failure-kinds lint: note: {note}")
    for problem in unreadable:
        error_line(f"failure-kinds lint: {problem}")
    if unreadable:
        return EXIT_USAGE
    if lint.NO_INPUT in notes:
        return EXIT_FINDINGS
    if arguments.diff:
        return EXIT_FINDINGS if changed else EXIT_CLEAN
    return EXIT_FINDINGS if findings else EXIT_CLEAN


def _fix(
    checker: Checker,
    findings: list[Finding],
    unreadable: list[str],
    notes: list[str],
    fixable: set[tuple[str, Fix]],
    *,
    mode: str,
    text: bool,
) -> tuple[list[Finding], bool]:
    """Apply (``mode`` "fix"), show as a diff ("diff") or add to ``fixable`` with their paths ("sarif")
    the fixes of ``findings``; the findings left, and whether anything was (or would be) changed. A file
    that cannot be fixed safely is left alone, with a note saying why, and keeps its findings: the same
    in every mode, so a diff or a SARIF fix is exactly what --fix writes. Each file is read again and
    linted from those very bytes, so a fix is never applied to text it was not computed on; a rewritten
    file is linted once more, so what is left is reported where it now is, not where it was before."""
    import failure_kinds._fix as fixing
    import failure_kinds.lint as lint
    from failure_kinds._display import plain

    write = mode == "fix"
    paths = list(dict.fromkeys(finding.path for finding in findings if finding.fix is not None))
    # The findings of each file read again: of its rewritten text when it was written.
    relinted: dict[str, list[Finding]] = {}
    changed = False
    for path in paths:
        shown = plain(path, lint.PATH_LIMIT)
        try:
            before = lint.read_source(path)
        except lint._Unreadable as error:  # pyright: ignore[reportPrivateUsage]
            unreadable.append(f"{shown}: {error}")
            continue
        if before is None:
            continue
        current = checker.check_source(before, path)
        fixes = [finding.fix for finding in current if finding.fix is not None]
        try:
            after, applied = fixing.apply(before, fixes)
            if applied:
                fixing.check_replaceable(path, after)
            if applied and write:
                fixing.replace_file(path, before, after)
            elif applied and mode == "diff":
                _write_bytes(fixing.unified_diff(path, before, after))
                if fixing.diff_name(path)[1]:
                    notes.append(
                        f"{shown}: outside the working directory, so patch -p0 and git apply do not apply "
                        "its diff; run the lint from a directory that holds it"
                    )
            fixable.update((path, fix) for fix in applied)
        except fixing.Unfixable as error:
            notes.append(f"{shown}: not fixed: {error}")
            relinted[path] = current
            changed = True
            continue
        if not applied:
            relinted[path] = current
            continue
        changed = True
        if write:
            relinted[path] = checker.check_source(after, path)
            report = "".join(f"{change}\n" for change in _changes(shown, before, applied))
            if text:
                write_output(report)
            else:
                error_line(report.rstrip("\n"))
    if not write:
        return findings, changed
    left: list[Finding] = []
    for index, finding in enumerate(findings):
        if finding.path not in relinted:
            left.append(finding)
        elif index == 0 or findings[index - 1].path != finding.path:
            # A file's findings are together in the list; the first of them stands for them all.
            left.extend(relinted[finding.path])
    return left, changed


def _write_bytes(data: bytes) -> None:
    """``data`` on stdout as it is: a diff is in each file's own encoding, which no text stream speaks."""
    import sys

    from failure_kinds._streams import BROKEN_PIPE, lose_output, output_lost, reason

    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None or output_lost() is not None:  # a test's capture, or a reader gone
        write_output(data.decode("utf-8", "surrogateescape"))
        return
    try:
        sys.stdout.flush()
        buffer.write(data)
        buffer.flush()
    except (OSError, ValueError) as error:
        broken = isinstance(error, BrokenPipeError)
        lose_output(BROKEN_PIPE if broken else f"cannot write to standard output: {reason(error)}")


def _changes(shown: str, before: bytes, applied: list[Fix]) -> Iterator[str]:
    """``PATH:LINE:COL OLD -> NEW`` for each fix applied, at the column where the new literal is: an
    earlier literal rewritten on the same line moves it by the difference of their lengths."""
    from failure_kinds._columns import Columns

    columns = Columns(before)
    moved: dict[int, int] = {}
    for fix in sorted(applied, key=lambda item: (item.line, item.offset)):
        column = columns.column(fix.line, fix.offset) + moved.get(fix.line, 0)
        moved[fix.line] = moved.get(fix.line, 0) + len(fix.new) - len(fix.old)
        yield f"{shown}:{fix.line}:{column} {fix.old} -> {fix.new}"


def github_command(finding: Finding) -> str:
    """``finding`` as a GitHub Actions ``::error`` workflow command, escaped exactly as GitHub documents:
    ``%``, CR and LF in the message, those and ``:`` and ``,`` in a property. The runner decodes them, so
    the ``file`` property is the path itself (a name holding a line break included), or the annotation
    would point at a file that does not exist."""
    message = finding.message
    if not message.isprintable():
        from failure_kinds._display import escaped

        # A line break is GitHub's to encode; any other character that is not printable (a terminal
        # escape quoted from a parser message) would reach the log raw, so it is shown escaped.
        message = "".join(character if character in "\r\n" else escaped(character) for character in message)
    place = f"line={finding.line},col={finding.col}"
    properties = f"file={_property(finding.path)},{place},title={_property(finding.code)}"
    return f"::error {properties}::{_data(message)}\n"


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")
