"""``failure-kinds export``, ``diff`` and ``generate``: the vocabulary as data and as source, and the
typed module of the project's declared kinds written in place."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from failure_kinds._streams import error_line, read_regular, reason, write_output
from failure_kinds.commands import EXIT_CLEAN, EXIT_FINDINGS, UsageError, load_project_config
from failure_kinds.config import ConfigError, ProjectConfig, shown_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable


def export(arguments: argparse.Namespace) -> int:
    from failure_kinds.export import json_schema, vocabulary

    config = load_project_config(arguments)
    if arguments.format in ("typescript", "go"):
        import failure_kinds.codegen as codegen

        render = codegen.typescript if arguments.format == "typescript" else codegen.go
        write_output(_rendered(config, lambda: render(config.namespaces)))
    else:
        # The declarations are part of the export only when a configuration was read.
        found = config.path is not None or arguments.config is not None
        namespaces = dict(config.namespaces) if found else None
        data = json_schema(namespaces) if arguments.format == "jsonschema" else vocabulary(namespaces)
        write_output(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return EXIT_CLEAN


def diff(arguments: argparse.Namespace) -> int:
    from failure_kinds.export import changes, read_export

    found = changes(read_export(arguments.old), read_export(arguments.new))
    compatible = not any(change.breaks for change in found)
    if arguments.format == "json":
        fields = ("change", "name", "old", "new", "breaks")
        listed = [{field: getattr(change, field) for field in fields} for change in found]
        write_output(json.dumps({"compatible": compatible, "changes": listed}, indent=2) + "\n")
    else:
        write_output("".join(f"{change.line}\n" for change in found) or "no changes\n")
    return EXIT_CLEAN if compatible else EXIT_FINDINGS


def _rendered(config: ProjectConfig, render: Callable[[], str]) -> str:
    try:
        return render()
    except ConfigError as error:
        where = shown_path(config.path) if config.path is not None else "configuration"
        raise UsageError(f"{where}: {error}") from None


def generate(arguments: argparse.Namespace) -> int:
    from failure_kinds.codegen import render_module

    config = load_project_config(arguments)
    if config.path is None and arguments.config is None:
        raise UsageError("no pyproject.toml here or above; pass --config FILE")
    source = _rendered(config, lambda: render_module(config)).encode()
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
    # A symbolic link stays a link: the file it leads to is the one compared and written.
    target = Path(os.path.realpath(given)) if os.path.islink(given) else given
    if config.path is not None and _same_file(target, config.path):
        raise UsageError(
            f"{shown_path(given)} is the configuration this run read; the module needs a file of its own "
            "(--output PATH or generate = ...)"
        )
    shown = shown_path(target)
    if target != given:
        shown += f" (through the symbolic link {shown_path(given)})"
    current = _read(target, len(source))
    if current == source:
        write_output(f"{shown} is up to date\n")
        return EXIT_CLEAN
    if arguments.check:
        state = "missing" if current is None else "out of date"
        error_line(f"failure-kinds generate: {shown} is {state}; run failure-kinds generate")
        return EXIT_FINDINGS
    _write(target, source)
    write_output(f"wrote {shown}\n")
    return EXIT_CLEAN


def _same_file(path: Path, other: Path) -> bool:
    with contextlib.suppress(OSError, ValueError):  # ``path`` does not exist yet
        return os.path.samefile(path, other)
    return False


def _read(path: Path, limit: int) -> bytes | None:
    """The module's first ``limit + 1`` bytes (enough to tell it differs), or None when there is none."""
    try:
        data = read_regular(path, limit)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as error:
        raise UsageError(f"{shown_path(path)}: {reason(error)}") from None
    if isinstance(data, str):
        raise UsageError(f"{shown_path(path)}: {data}")
    return data


def _write(path: Path, data: bytes) -> None:
    """Replace the file in one step, so a reader never sees half a module."""
    import tempfile

    if not path.parent.is_dir():
        raise UsageError(f"{shown_path(path)}: the directory {shown_path(path.parent)} does not exist")
    temporary = None
    try:
        descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
        # mkstemp makes the file private; a module is as readable as any file the user creates.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, path)
    except (OSError, ValueError) as error:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
        raise UsageError(f"{shown_path(path)}: {reason(error)}") from None
