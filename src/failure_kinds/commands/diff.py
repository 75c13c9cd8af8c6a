"""``failure-kinds diff OLD NEW``: what changed between two exports, and whether NEW is compatible."""

from __future__ import annotations

from failure_kinds._streams import write_output
from failure_kinds.commands import EXIT_CLEAN, EXIT_FINDINGS, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


def run(arguments: argparse.Namespace) -> int:
    from failure_kinds.export import ExportError, compare, read_export

    try:
        old = read_export(arguments.old)
        new = read_export(arguments.new)
    except ExportError as error:
        raise UsageError(str(error)) from None
    lines, compatible = compare(old, new)
    write_output("".join(f"{line}\n" for line in lines or ["no changes"]))
    return EXIT_CLEAN if compatible else EXIT_FINDINGS
