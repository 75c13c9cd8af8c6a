"""A project's configuration: the namespaced kinds it declares in ``[tool.failure-kinds]`` of its
``pyproject.toml`` (or at the top level of another file given by ``--config``), read by tomllib alone.
Anything malformed is a :class:`ConfigError` whose message names the file and the entry."""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from failure_kinds import FailureKindsError
from failure_kinds._display import plain, shown

PYPROJECT = "pyproject.toml"
TOOL_KEY = "failure-kinds"
TABLE = f"tool.{TOOL_KEY}"
# A larger file cannot be a real configuration, and a device or a runaway file must not cost memory.
SIZE_LIMIT = 4 * 1024 * 1024
_NAME = re.compile(r"[a-z][a-z0-9_]*")
_KEYS = ("generate", "namespaces")
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


class ConfigError(FailureKindsError, ValueError):
    """``whole_file``: the file could not be read as TOML, so it may be another tool's pyproject.toml."""

    def __init__(self, message: str, *, whole_file: bool = False) -> None:
        super().__init__(message)
        self.whole_file: bool = whole_file


@dataclass(frozen=True)
class ProjectConfig:
    """``namespaces``: each server's kinds in the order written; ``generate_path`` is resolved against
    the file's directory; ``warnings``: likely mistakes, for the command to show."""

    path: Path | None = None
    namespaces: dict[str, tuple[str, ...]] = field(default_factory=dict[str, tuple[str, ...]])
    generate_path: Path | None = None
    warnings: tuple[str, ...] = ()

    def declared_names(self) -> frozenset[str]:
        return frozenset(f"{server}:{kind}" for server, kinds in self.namespaces.items() for kind in kinds)


def load_config(
    config_file: str | os.PathLike[str] | None = None, start: Path | None = None
) -> ProjectConfig:
    """The configuration in ``config_file``, or else in the nearest ``pyproject.toml`` at or above
    ``start`` (default: the working directory)."""
    if config_file is not None:
        return _parse(Path(config_file))
    try:
        directory = (start or Path.cwd()).absolute()
    except OSError:  # the working directory was removed: nothing can be found there
        return ProjectConfig()
    # Anything but a directory is found, so that a pyproject.toml that is not a regular file is an error.
    candidates = (folder / PYPROJECT for folder in (directory, *directory.parents))
    found = next((path for path in candidates if os.path.exists(path) and not os.path.isdir(path)), None)
    return ProjectConfig() if found is None else _parse(found)


def _read_toml(path: Path) -> dict[str, object]:
    import tomllib

    def refuse(why: str) -> ConfigError:
        return ConfigError(f"{shown_path(path)}: {why}", whole_file=True)

    from failure_kinds._streams import describe_read_error, read_regular

    try:
        data = read_regular(path, SIZE_LIMIT)
    except OSError as error:
        raise refuse(describe_read_error(error)) from None
    if isinstance(data, str):
        raise refuse("not a regular file")
    if len(data) > SIZE_LIMIT:
        raise refuse(f"larger than {SIZE_LIMIT // (1024 * 1024)} MiB")
    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise refuse(f"not UTF-8 (byte {error.start})") from None
    except tomllib.TOMLDecodeError as error:
        raise refuse(f"invalid TOML: {error}") from None
    except RecursionError:
        raise refuse("invalid TOML: nested too deeply") from None


def _tool_table(path: Path, document: dict[str, object]) -> tuple[dict[str, object], tuple[str, ...]]:
    """``[tool.failure-kinds]``, and a warning for each ``[tool]`` table that likely misspells it."""
    from failure_kinds._suggest import closest

    where = shown_path(path)
    tool = _table(document.get("tool", {}))
    if tool is None:
        raise ConfigError(f"{where}: [tool] must be a table")
    table = _table(tool.get(TOOL_KEY, {}))
    if table is None:
        raise ConfigError(f"{where}: [{TABLE}] must be a table")
    # Case and separators are folded first: the matcher would read "FaIlUrE" as words of a camel-case name.
    misspelt = [
        key
        for key in tool
        if key != TOOL_KEY and closest(re.sub(r"[-_.\s]+", "-", key.strip().lower()), (TOOL_KEY,)) is not None
    ]
    headers = [key if _BARE_KEY.fullmatch(key) else shown(key, 80) for key in misspelt]
    return table, tuple(
        f"{where}: [tool.{header}] is not read; did you mean [{TABLE}]?" for header in headers
    )


def _table(value: object) -> dict[str, object] | None:
    # TOML keys are always strings; the copy only tells the type checker so.
    return {str(key): item for key, item in value.items()} if isinstance(value, dict) else None  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]


def _parse(path: Path) -> ProjectConfig:
    """The keys sit under [tool.failure-kinds] of a pyproject.toml and at the top level of any other file."""
    from failure_kinds._runtime import all_names, exact_strs

    prefix = TABLE if path.name == PYPROJECT else ""
    table, warnings = _tool_table(path, _read_toml(path)) if prefix else (_read_toml(path), ())
    where = shown_path(path)
    in_table = f" [{prefix}]" if prefix else ""
    namespaces_table = f"[{prefix}.namespaces]" if prefix else "[namespaces]"
    unknown = next((key for key in table if key not in _KEYS), None)
    if unknown is not None:
        message = f"{where}:{in_table} unknown key {shown(unknown, 80)} (known: {', '.join(_KEYS)})"
        if unknown == "tool" and not prefix:  # a [tool.failure-kinds] table copied into a --config file
            message += (
                f"; a file other than {PYPROJECT} holds the keys of [{TABLE}] at its top level:"
                f" write [namespaces], not [{TABLE}.namespaces]"
            )
        raise ConfigError(message)
    declared = _table(table.get("namespaces", {}))
    if declared is None:
        raise ConfigError(f"{where}: {namespaces_table} must be a table of server = [kinds]")
    namespaces: dict[str, tuple[str, ...]] = {}
    for server, kinds in declared.items():
        label = f"{where}: {namespaces_table} {shown(server, 80)}"
        if _NAME.fullmatch(server) is None:
            raise ConfigError(f"{label}: the server name does not match {_NAME.pattern}")
        if not isinstance(kinds, list):
            raise ConfigError(f"{label}: must be a list of kind names (strings)")
        listed: list[object] = kinds  # pyright: ignore[reportUnknownVariableType]
        # A whole list of distinct names passes in one match; any other is walked to name what is wrong.
        if not (listed and exact_strs(listed) and all_names(listed) and len(set(listed)) == len(listed)):  # type: ignore[arg-type]
            seen: set[str] = set()
            for kind in listed:
                if not isinstance(kind, str):
                    raise ConfigError(f"{label}: must be a list of kind names (strings)")
                if _NAME.fullmatch(kind) is None:
                    raise ConfigError(f"{label}: the kind {shown(kind, 80)} does not match {_NAME.pattern}")
                if kind in seen:
                    raise ConfigError(f"{label}: the kind {shown(kind, 80)} is declared twice")
                seen.add(kind)
            raise ConfigError(f"{label}: declares no kinds")
        namespaces[server] = tuple(listed)  # type: ignore[arg-type]
    generate_path: Path | None = None
    if "generate" in table:
        target, label = table["generate"], f"{where}:{in_table} generate"
        if not isinstance(target, str) or not target.strip() or "\x00" in target:
            raise ConfigError(f"{label}: must be the path of a Python file, as a string")
        if not target.endswith(".py"):
            raise ConfigError(f"{label}: {shown(target, 80)} is not a .py file")
        generate_path = path.parent / target
    return ProjectConfig(path=path, namespaces=namespaces, generate_path=generate_path, warnings=warnings)


def shown_path(path: Path) -> str:
    """``path`` for a message: relative to the working directory when below it, and escaped."""
    with contextlib.suppress(ValueError, OSError):
        path = path.relative_to(Path.cwd()) if path.is_absolute() else path
    return plain(os.fsdecode(path), 1000)
