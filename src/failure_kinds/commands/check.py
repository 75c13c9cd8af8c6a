"""``failure-kinds check``: the category of each name, and the name most likely meant."""

from __future__ import annotations

import itertools
import json

from failure_kinds._streams import stdin_bytes, write_output
from failure_kinds.commands import EXIT_CLEAN, EXIT_FINDINGS, UsageError, load_project_config

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Collection, Iterator, Mapping
    from typing import BinaryIO

# A name is cut to this many characters (no kind comes close), and names are checked and printed in
# batches, so `check` holds bounded memory and prints bounded lines whatever it is given.
NAME_LIMIT = 1024
CHECK_BATCH = 10_000


def run(arguments: argparse.Namespace) -> int:
    names: Iterator[str] = map(_bounded, arguments.names)
    if arguments.names == ["-"]:
        stream = stdin_bytes()
        if stream is None:
            raise UsageError("- reads standard input, which is closed")
        names = _stdin_names(stream)
    elif "-" in arguments.names:
        raise UsageError("- reads names from stdin and cannot be mixed with names")
    namespaces = load_project_config(arguments).namespaces
    clean, written = True, 0
    while batch := list(itertools.islice(names, CHECK_BATCH)):
        verdicts = [check_name(name, namespaces) for name in batch]
        clean = clean and all(verdict["category"] in ("registered", "namespaced") for verdict in verdicts)
        if arguments.format == "json":
            # One JSON array, written a batch at a time, exactly as json.dumps(..., indent=2) lays it out.
            items = (json.dumps(verdict, indent=2).replace("\n", "\n  ") for verdict in verdicts)
            write_output(("[\n  " if written == 0 else ",\n  ") + ",\n  ".join(items))
        else:
            write_output(_text(verdicts))
        written += len(verdicts)
    if arguments.format == "json":
        write_output("[]\n" if written == 0 else "\n]\n")
    return EXIT_CLEAN if clean else EXIT_FINDINGS


def _bounded(name: str) -> str:
    """The one cut of a name, from the command line or stdin, marked with "...", which no kind contains."""
    return name if len(name) <= NAME_LIMIT else name[:NAME_LIMIT] + "..."


def _stdin_names(data: BinaryIO) -> Iterator[str]:
    """Non-blank lines, each cut; of a longer line only NAME_LIMIT + 1 characters are ever held."""
    import io

    # UTF-8 whatever the locale says, with surrogateescape so a byte that is not UTF-8 is kept (and shown
    # escaped) rather than ending the run; a byte-order mark at the start is dropped.
    stream = io.TextIOWrapper(data, encoding="utf-8-sig", errors="surrogateescape", newline="")
    while line := stream.readline(NAME_LIMIT + 1):
        overlong = len(line) > NAME_LIMIT and not line.endswith(("\n", "\r"))
        while overlong and (rest := stream.readline(64 * 1024)) and not rest.endswith(("\n", "\r")):
            pass
        name = line.rstrip("\r\n")
        if overlong or name.strip():
            yield _bounded(name)


def check_name(name: str, namespaces: Mapping[str, Collection[str]]) -> dict[str, str | None]:
    """The name's category, the name most likely meant when it is not known, and the kind that
    replaces an older label or a deprecated kind."""
    from failure_kinds import FailureKind
    from failure_kinds._runtime import classify
    from failure_kinds._suggest import suggest_any
    from failure_kinds.history import OLDER_LABELS

    found = classify(name, namespaces)
    suggestion = replacement = None
    if found in ("unregistered", "undeclared", "malformed"):
        suggestion = suggest_any(name, namespaces)
    elif found == "legacy":
        replacement = OLDER_LABELS[name].replacement
    elif found == "registered" and (successor := FailureKind(name).replaced_by) is not None:
        replacement = successor.value
    return {"name": name, "category": found, "suggestion": suggestion, "replacement": replacement}


def _text(verdicts: list[dict[str, str | None]]) -> str:
    from failure_kinds._display import plain  # a name read from stdin cannot forge a line of output

    names = [plain(str(verdict["name"]), NAME_LIMIT) for verdict in verdicts]
    width = max(map(len, names))
    lines: list[str] = []
    for name, verdict in zip(names, verdicts, strict=True):
        category, suggestion, replacement = verdict["category"], verdict["suggestion"], verdict["replacement"]
        line = f"{name:<{width}}  {category}"
        if category == "malformed":
            line += " (expected <server>:<kind> in lower case)"
        if suggestion is not None:
            line += f", did you mean {suggestion!r}?"
        elif category == "legacy":
            line += ", no single replacement" if replacement is None else f", use {replacement!r}"
        elif replacement is not None:
            line += f", deprecated: use {replacement!r}"
        lines.append(line + "\n")
    return "".join(lines)
