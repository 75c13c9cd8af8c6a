"""The subcommands of ``failure-kinds``, one module each; :mod:`failure_kinds.cli` parses and dispatches.

This module holds what they share: the exit codes, the one-line usage error, and the ``--config`` option
with its loading. A subcommand's module is imported only when that subcommand runs.
"""

from __future__ import annotations

from failure_kinds import FailureKindsError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

    from failure_kinds.config import ProjectConfig

EXIT_CLEAN = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2


class UsageError(FailureKindsError):
    """A mistake in how the command was called or in what it was given; reported in one line, exit 2."""


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
    a usage error. What the configuration only warns about (a misspelled table) goes to stderr."""
    from failure_kinds._streams import error_line
    from failure_kinds.config import ConfigError, load_config

    try:
        config = load_config(arguments.config)
    except ConfigError as error:
        # A broken pyproject.toml found above the working directory may belong to another tool's project.
        found = error.whole_file and not arguments.config
        hint = " (name the project's configuration with --config FILE)" if found else ""
        raise UsageError(f"{error}{hint}") from None
    for warning in config.warnings:
        error_line(f"failure-kinds {arguments.command}: warning: {warning}")
    return config
