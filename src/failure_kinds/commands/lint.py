"""``failure-kinds lint``: the findings of :mod:`failure_kinds.lint` as text, JSON, GitHub Actions workflow
commands or SARIF, and ``--fix`` and ``--diff`` through :mod:`failure_kinds._fix` (docs/lint.md)."""

from __future__ import annotations

import itertools
import json
import os
import re
import sys

import failure_kinds
import failure_kinds._fix as fixing
import failure_kinds.lint as lint
from failure_kinds._display import escaped, plain
from failure_kinds._streams import BROKEN_PIPE, error_line, lose_output, output_lost, reason, write_output
from failure_kinds.commands import EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE, UsageError, load_project_config
from failure_kinds.lint import CODES

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

    from failure_kinds._fix import Change
    from failure_kinds.lint import Checker, Finding, Fix


def run(arguments: argparse.Namespace) -> int:
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
    notes: list[str] = []
    checker = lint.Checker(arguments.fields or lint.DEFAULT_FIELDS, config.namespaces, arguments.unsafe_fixes)
    findings, unreadable = lint.lint_paths(arguments.paths, checker, notes)
    if lint.NO_INPUT in notes:
        # An error, not a finding: `lint ... || test $? -eq 1` then fails on a wrong or empty directory
        # instead of uploading an empty log.
        notes.remove(lint.NO_INPUT)
        unreadable.append(lint.NO_INPUT)
    changed = False
    fixable: dict[tuple[str, Fix], Change] = {}
    if arguments.fix or arguments.diff or arguments.format == "sarif":
        findings, changed = _fix(checker, findings, unreadable, notes, fixable, arguments)
    if arguments.diff:
        pass  # the diff is the whole output, as it can be applied with patch
    elif arguments.format == "json":
        write_output(json.dumps([finding.to_json() for finding in findings], indent=2) + "\n")
    elif arguments.format == "github":
        write_output("".join(github_command(finding) for finding in findings))
    elif arguments.format == "sarif":
        write_output(json.dumps(sarif_log(findings, fixable), indent=2) + "\n")
    else:
        write_output("".join(f"{finding}\n" for finding in findings))
    for note in notes:
        error_line(f"failure-kinds lint: note: {note}")
    for problem in unreadable:
        error_line(f"failure-kinds lint: {problem}")
    if unreadable:
        return EXIT_USAGE
    return EXIT_FINDINGS if (changed if arguments.diff else findings) else EXIT_CLEAN


def _fix(
    checker: Checker,
    findings: list[Finding],
    unreadable: list[str],
    notes: list[str],
    fixable: dict[tuple[str, Fix], Change],
    arguments: argparse.Namespace,
) -> tuple[list[Finding], bool]:
    """Apply (--fix), show as a diff (--diff) or add to ``fixable`` (SARIF) the fixes of ``findings``: the
    findings left, and whether anything was (or would be) changed. Each file is read and linted again, so a
    fix is computed on the very bytes it rewrites; a file that cannot be fixed safely keeps its findings
    with a note, in every mode; a rewritten file is linted once more."""
    relinted: dict[str, list[Finding]] = {}
    changed = False
    for path in dict.fromkeys(finding.path for finding in findings if finding.fix is not None):
        shown = plain(path, lint.PATH_LIMIT)
        try:
            before = lint.read_source(path)
            if not isinstance(before, bytes):  # a path named, not walked, is never skipped
                continue
            relinted[path] = checker.check_source(before, path)
        except lint._Unreadable as error:  # pyright: ignore[reportPrivateUsage]
            unreadable.append(f"{shown}: {error}")
            continue
        try:
            after, changes = fixing.apply(before, [finding.fix for finding in relinted[path] if finding.fix])
            if changes:
                fixing.check_replaceable(path, after)
            if changes and arguments.fix:
                fixing.replace_file(path, before, after)
        except fixing.Unfixable as error:
            notes.append(f"{shown}: not fixed: {error}")
            changed = True
            continue
        changed = changed or bool(changes)
        fixable.update(((path, change.fix), change) for change in changes)
        if changes and arguments.diff:
            _write_bytes(fixing.unified_diff(path, before, after))
            if fixing.diff_name(path)[1]:
                notes.append(
                    f"{shown}: outside the working directory, so patch -p0 and git apply do not apply its "
                    "diff; run the lint from a directory that holds it"
                )
        elif changes and arguments.fix:
            relinted[path] = checker.check_source(after, path)
            report = "".join(
                f"{shown}:{fix.line}:{column} {fix.old} -> {fix.new}\n" for fix, _, column in changes
            )
            if arguments.format == "text":
                write_output(report)
            else:
                error_line(report.rstrip("\n"))
    if arguments.fix:  # a file's findings are together in the list
        files = itertools.groupby(findings, key=lambda finding: finding.path)
        findings = [finding for path, found in files for finding in relinted.get(path, found)]
    return findings, changed


def _write_bytes(data: bytes) -> None:
    """``data`` on stdout as it is: a diff is in each file's own encoding, which no text stream speaks."""
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None or output_lost() is not None:  # a test's capture, or a reader gone
        write_output(data.decode("utf-8", "surrogateescape"))
        return
    try:
        sys.stdout.flush()
        buffer.write(data)
        buffer.flush()
    except BrokenPipeError:
        lose_output(BROKEN_PIPE)
    except (OSError, ValueError) as error:
        lose_output(f"cannot write to standard output: {reason(error)}")


def github_command(finding: Finding) -> str:
    """``finding`` as a GitHub Actions ``::error`` or ``::warning`` workflow command (its code's level),
    escaped as GitHub documents; the runner decodes it, so the ``file`` property is the path itself."""
    # A line break is GitHub's to encode; any other character that is not printable is shown escaped.
    message = re.sub(r"[^\r\n]+", lambda match: escaped(match[0]), finding.message)
    place = f"line={finding.line},col={finding.col}"
    properties = f"file={_property(finding.path)},{place},title={_property(finding.code)}"
    return f"::{finding.level} {properties}::{_data(message)}\n"


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def sarif_log(findings: list[Finding], fixable: dict[tuple[str, Fix], Change]) -> dict[str, object]:
    """The findings as one SARIF 2.1.0 run, in the subset GitHub code scanning reads, with the fixes
    ``--fix`` would make; paths relative to the working directory (``%SRCROOT%``), links resolved."""
    root = os.path.realpath(os.getcwd())
    rules = [
        {
            "id": code,
            "shortDescription": {"text": meaning.summary},
            "fullDescription": {"text": meaning.advice},
            "help": {"text": f"{code}: {meaning.summary}. {meaning.advice}"},
            "defaultConfiguration": {"level": meaning.level},
        }
        for code, meaning in CODES.items()
    ]
    results: list[dict[str, object]] = []
    for finding in findings:
        real = os.path.realpath(finding.path)
        relative = os.path.relpath(real, root)
        outside = relative == os.pardir or relative.startswith(os.pardir + os.sep)
        artifact = (
            {"uri": _file_uri(real)} if outside else {"uri": _quoted(relative), "uriBaseId": "%SRCROOT%"}
        )
        region = {"startLine": finding.line, "startColumn": finding.col}
        if finding.end is not None:
            region.update(endLine=finding.end[0], endColumn=finding.end[1])
        result: dict[str, object] = {"ruleId": finding.code, "ruleIndex": list(CODES).index(finding.code)}
        result.update(level=finding.level, message={"text": escaped(finding.message)})
        result["locations"] = [{"physicalLocation": {"artifactLocation": artifact, "region": region}}]
        results.append(result)
        change = fixable.get((finding.path, finding.fix)) if finding.fix is not None else None
        if change is not None:
            fix, start = change.fix, change.column
            deleted = {"startLine": fix.line, "startColumn": start, "endLine": fix.line}
            deleted["endColumn"] = start + len(fix.old)
            replacement = {"deletedRegion": deleted, "insertedContent": {"text": fix.new}}
            changes = [{"artifactLocation": artifact, "replacements": [replacement]}]
            description = {"text": f"Replace {fix.old!r} with {fix.new!r}."}
            result["fixes"] = [{"description": description, "artifactChanges": changes}]
    driver = {"name": "failure-kinds", "version": failure_kinds.__version__, "rules": rules}
    base = {"%SRCROOT%": {"uri": _file_uri(os.path.join(root, ""))}}
    run: dict[str, object] = {"tool": {"driver": driver}, "originalUriBaseIds": base}
    run.update(columnKind="unicodeCodePoints", results=results)
    return {"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0", "runs": [run]}


def _file_uri(absolute: str) -> str:
    return "file://" + _quoted(absolute)


def _quoted(path: str) -> str:
    from urllib.parse import quote

    # Of the file name's own bytes, so a name that is not UTF-8 still names that file.
    return quote(os.fsencode(path.replace(os.sep, "/")), safe="/")
