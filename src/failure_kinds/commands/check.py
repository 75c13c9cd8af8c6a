"""``failure-kinds check``: the category of each name, and the name most likely meant."""

from __future__ import annotations

import itertools
import json

from failure_kinds._streams import stdin_bytes, write_output
from failure_kinds.commands import EXIT_CLEAN, EXIT_FINDINGS, UsageError, load_project_config

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Collection, Iterable, Iterator, Mapping
    from typing import BinaryIO

# A name, given on the command line or read from stdin, is cut to this many characters (no kind comes
# close), and names are checked and printed in batches of CHECK_BATCH, so `check` holds bounded memory and
# prints bounded lines whatever it is given.
NAME_LIMIT = 1024
CHECK_BATCH = 10_000
# The categories a name may have without failing the check.
CLEAN_CATEGORIES = frozenset({"registered", "namespaced"})
# What a malformed name should have been, as the run-time warning says it.
MALFORMED = "expected <server>:<kind> in lower case"


def run(arguments: argparse.Namespace) -> int:
    names: Iterable[str] = map(bounded, arguments.names)
    if arguments.names == ["-"]:
        stream = stdin_bytes()
        if stream is None:
            raise UsageError("- reads standard input, which is closed")
        names = stdin_names(stream)
    elif "-" in arguments.names:
        raise UsageError("- reads names from stdin and cannot be mixed with names")
    namespaces = load_project_config(arguments).namespaces
    clean = True
    written = 0
    pending = iter(names)
    while batch := list(itertools.islice(pending, CHECK_BATCH)):
        verdicts = [check_name(name, namespaces) for name in batch]
        clean = clean and all(verdict["category"] in CLEAN_CATEGORIES for verdict in verdicts)
        if arguments.format == "json":
            # One JSON array, written a batch at a time, exactly as json.dumps(..., indent=2) lays it out.
            items = ",\n".join(
                "  " + json.dumps(verdict, indent=2).replace("\n", "\n  ") for verdict in verdicts
            )
            write_output(("[\n" if written == 0 else ",\n") + items)
        else:
            write_output(render_text(verdicts))
        written += len(verdicts)
    if arguments.format == "json":
        write_output("[]\n" if written == 0 else "\n]\n")
    return EXIT_CLEAN if clean else EXIT_FINDINGS


def bounded(name: str) -> str:
    """``name`` as checked and shown: cut at NAME_LIMIT characters when longer, and marked with "...",
    which no kind contains. The one cut of a name, from the command line or from stdin."""
    return name if len(name) <= NAME_LIMIT else name[:NAME_LIMIT] + "..."


def stdin_names(data: BinaryIO) -> Iterator[str]:
    """Non-blank lines without their line ends, each :func:`bounded`; of a line longer than NAME_LIMIT
    only the first NAME_LIMIT + 1 characters are held, and the rest is skipped as it is read."""
    import io

    # Decoded as UTF-8 whatever the locale says, with surrogateescape so a byte that is not UTF-8 is kept
    # (and shown escaped) rather than ending the run; a byte-order mark at the start is dropped.
    stream = io.TextIOWrapper(data, encoding="utf-8-sig", errors="surrogateescape", newline="")
    while line := stream.readline(NAME_LIMIT + 1):
        overlong = len(line) > NAME_LIMIT and not line.endswith(("\n", "\r"))
        if overlong:
            while (rest := stream.readline(64 * 1024)) and not rest.endswith(("\n", "\r")):
                pass
        name = line.rstrip("\r\n")
        if overlong or name.strip():
            yield bounded(name)


def check_name(name: str, namespaces: Mapping[str, Collection[str]] | None = None) -> dict[str, str | None]:
    """The category of ``name`` (registered, namespaced, undeclared when its server's declaration in
    ``namespaces`` does not list it, legacy for an older label, malformed when it contains ":" but is
    not ``<server>:<kind>``, or unregistered); for undeclared, malformed and unregistered names the name
    most likely meant; for an older label and a deprecated kind the kind that replaces it (None for an
    older label without a single replacement)."""
    from failure_kinds._runtime import category

    found = category(name, namespaces or {})
    if found == "unregistered" and ":" in name:
        # As the lint's FK002: meant as a namespaced kind, and written wrong.
        found = "malformed"
    suggestion = replacement = None
    if found in ("unregistered", "undeclared", "malformed"):
        from failure_kinds._suggest import suggest_any

        suggestion = suggest_any(name, namespaces or {})
    elif found == "legacy":
        from failure_kinds.history import older_label

        label = older_label(name)
        replacement = label.replacement if label is not None else None
    elif found == "registered":
        from failure_kinds import FailureKind

        successor = FailureKind(name).replaced_by
        replacement = None if successor is None else successor.value
    return {"name": name, "category": found, "suggestion": suggestion, "replacement": replacement}


def render_text(verdicts: list[dict[str, str | None]]) -> str:
    from failure_kinds._display import plain  # a name read from stdin cannot forge a line of output

    names = [plain(str(verdict["name"]), NAME_LIMIT) for verdict in verdicts]
    width = max((len(name) for name in names), default=0)
    lines: list[str] = []
    for name, verdict in zip(names, verdicts, strict=True):
        line = f"{name:<{width}}  {verdict['category']}"
        if verdict["category"] == "malformed":
            line += f" ({MALFORMED})"
        if verdict["suggestion"] is not None:
            line += f", did you mean {verdict['suggestion']!r}?"
        elif verdict["category"] == "legacy":
            replacement = verdict["replacement"]
            line += ", no single replacement" if replacement is None else f", use {replacement!r}"
        elif verdict["replacement"] is not None:
            line += f", deprecated: use {verdict['replacement']!r}"
        lines.append(line)
    return "".join(line + "\n" for line in lines)
