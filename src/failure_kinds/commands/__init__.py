"""The subcommands of ``failure-kinds``, imported only when one runs (:mod:`failure_kinds.cli` parses and
dispatches), and what they share: the exit codes, the usage error and the project configuration."""

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
    """A mistake in how the command was called or in what it was given."""


def load_project_config(arguments: argparse.Namespace) -> ProjectConfig:
    """The configuration named by ``--config`` or found above; what it warns about goes to stderr."""
    from failure_kinds._streams import error_line
    from failure_kinds.config import ConfigError, load_config

    try:
        config = load_config(arguments.config)
    except ConfigError as error:
        message = str(error)
        if error.whole_file and arguments.config:
            message = f"--config {message}"  # named with its option, as an --aliases FILE is
        elif error.whole_file:
            # A broken pyproject.toml found above the working directory may belong to another tool's project.
            message += " (name the project's configuration with --config FILE)"
        raise UsageError(message) from None
    for warning in config.warnings:
        error_line(f"failure-kinds {arguments.command}: warning: {warning}")
    return config
