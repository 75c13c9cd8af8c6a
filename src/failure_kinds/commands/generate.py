"""``failure-kinds generate``: write (or ``--check``) the typed module of the project's declared kinds."""

from __future__ import annotations

from pathlib import Path

from failure_kinds._streams import error_line, write_output
from failure_kinds.commands import EXIT_CLEAN, EXIT_FINDINGS, UsageError, load_project_config

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


def run(arguments: argparse.Namespace) -> int:
    import failure_kinds.codegen as codegen
    from failure_kinds.config import ConfigError, shown_path

    config = load_project_config(arguments)
    if config.path is None and arguments.config is None:
        raise UsageError("no pyproject.toml here or above; pass --config FILE")
    try:
        source = codegen.render_module(config).encode()
    except ConfigError as error:
        where = shown_path(config.path) if config.path is not None else "configuration"
        raise UsageError(f"{where}: {error}") from None
    if arguments.output == "-":
        if arguments.check:
            raise UsageError("--check compares with a file; --output - has none")
        write_output(source.decode())
        return EXIT_CLEAN
    given = Path(arguments.output) if arguments.output is not None else config.generate_path
    if given is None:
        raise UsageError(
            'where should the module go? set generate = "path/to/module.py" in [tool.failure-kinds] or pass '
            "--output PATH"
        )
    target = codegen.real_target(given)
    if config.path is not None and codegen.same_file(target, config.path):
        raise UsageError(
            f"{shown_path(given)} is the configuration this run read; the module needs a file of its own "
            "(--output PATH or generate = ...)"
        )
    # What the messages name: the file written, and the link the user gave when it leads there.
    shown = shown_path(target)
    if target != given:
        shown += f" (through the symbolic link {shown_path(given)})"
    try:
        current = codegen.read_module(target, limit=len(source))
        if current == source:
            write_output(f"{shown} is up to date\n")
            return EXIT_CLEAN
        if arguments.check:
            state = "missing" if current is None else "out of date"
            error_line(f"failure-kinds generate: {shown} is {state}; run failure-kinds generate")
            return EXIT_FINDINGS
        codegen.write_module(target, source)
    except codegen.WriteError as error:
        raise UsageError(str(error)) from None
    write_output(f"wrote {shown}\n")
    return EXIT_CLEAN
