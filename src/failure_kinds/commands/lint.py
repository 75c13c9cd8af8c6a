"""``failure-kinds lint``: misspelled failure kinds in Python source, found by :mod:`failure_kinds.lint`."""

from __future__ import annotations

import json

from failure_kinds._streams import error_line, write_output
from failure_kinds.commands import EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE, load_project_config

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


def run(arguments: argparse.Namespace) -> int:
    import failure_kinds.lint as lint

    config = load_project_config(arguments)
    fields = arguments.fields or list(lint.DEFAULT_FIELDS)
    findings, unreadable = lint.lint_paths(arguments.paths, fields, config.namespaces)
    if arguments.format == "json":
        write_output(json.dumps([finding.to_json() for finding in findings], indent=2) + "\n")
    else:
        write_output("".join(f"{finding}\n" for finding in findings))
    for problem in unreadable:
        error_line(f"failure-kinds lint: {problem}")
    if unreadable:
        return EXIT_USAGE
    return EXIT_FINDINGS if findings else EXIT_CLEAN
