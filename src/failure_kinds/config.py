"""A project's own failure-kinds configuration: the namespaced kinds it declares.

An environment that reports ``<server>:<kind>`` names declares the kinds of its server once, in the
``[tool.failure-kinds]`` table of its ``pyproject.toml``::

    [tool.failure-kinds]
    generate = "src/swe_env/failure_kinds_declared.py"   # optional: where `failure-kinds generate` writes

    [tool.failure-kinds.namespaces]
    swe_env = ["patch_apply_failed", "test_collection_error"]

Without ``--config`` the nearest ``pyproject.toml`` is used, found by walking up from the working
directory; one without the table declares nothing. ``--config FILE`` names the file instead: a file named
``pyproject.toml`` is read at ``[tool.failure-kinds]`` as usual, any other file (``failure-kinds.toml``,
say) holds the same keys at its top level (``generate = ...`` and a ``[namespaces]`` table).

A table spelled almost so (``[tool.failure_kinds]``, ``[tool.FailureKinds]``, ``[tool.failurekinds]``,
``[tool.failure-kind]``) is not read, and is named in :attr:`ProjectConfig.warnings` as the likely
misspelling it is, for the command to show; other tools' tables are left alone.

Anything malformed is a :class:`ConfigError` whose message names the file and the entry.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from failure_kinds import FailureKindsError
from failure_kinds._display import plain, shown

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

PYPROJECT: Final = "pyproject.toml"
# The key of our table under [tool], and its header.
TOOL_KEY: Final = "failure-kinds"
TABLE: Final = f"tool.{TOOL_KEY}"
# A configuration file larger than this is refused rather than read: it cannot be a real one, and a
# device or a runaway file must not cost unbounded memory.
SIZE_LIMIT: Final = 4 * 1024 * 1024

_NAME_PATTERN: Final = re.compile(r"[a-z][a-z0-9_]*")
_KEYS: Final = ("generate", "namespaces")
_BARE_KEY: Final = re.compile(r"[A-Za-z0-9_-]+")
# A value quoted in a message is cut to this many characters.
_SHOWN_LIMIT: Final = 80
# A path that needs escaping is shown quoted and cut to this many characters.
_PATH_LIMIT: Final = 1000


class ConfigError(FailureKindsError, ValueError):
    """The configuration cannot be read or is malformed; the message names the file and the entry.
    ``whole_file``: the file itself could not be read as TOML, so it may be another tool's file that
    only happens to be the nearest pyproject.toml."""

    def __init__(self, message: str, *, whole_file: bool = False) -> None:
        super().__init__(message)
        self.whole_file: bool = whole_file


@dataclass(frozen=True)
class ProjectConfig:
    """What a project declares. ``path`` is the file it came from (None when no file was found);
    ``namespaces`` maps each declared server to its kind names (without the ``server:`` prefix), in the
    order written; ``generate_path`` is where the generated module goes, relative paths resolved against
    the configuration file's directory."""

    path: Path | None = None
    namespaces: dict[str, tuple[str, ...]] = field(default_factory=dict[str, tuple[str, ...]])
    generate_path: Path | None = None
    # What is not an error but is likely a mistake, one line each, for the command to show on stderr.
    warnings: tuple[str, ...] = ()

    def declared_names(self) -> frozenset[str]:
        """Every declared kind as its full ``server:kind`` name."""
        return frozenset(f"{server}:{kind}" for server, kinds in self.namespaces.items() for kind in kinds)


def load_config(
    config_file: str | os.PathLike[str] | None = None, start: Path | None = None
) -> ProjectConfig:
    """The configuration in ``config_file``, or else in the nearest ``pyproject.toml`` at or above
    ``start`` (default: the working directory). Raises :class:`ConfigError` naming what is wrong."""
    if config_file is not None:
        path = Path(config_file)
        document = _read_toml(path)
        if path.name == PYPROJECT:
            return _parse(path, *_tool_table(path, document), TABLE)
        return _parse(path, document, (), "")
    if start is None:
        try:
            start = Path.cwd()
        except OSError:
            # The working directory was removed or cannot be read: no configuration can be found there.
            return ProjectConfig()
    found = find_pyproject(start)
    if found is None:
        return ProjectConfig()
    return _parse(found, *_tool_table(found, _read_toml(found)), TABLE)


def find_pyproject(start: Path) -> Path | None:
    """The first ``pyproject.toml`` in ``start`` or a directory above it."""
    try:
        directory = start.absolute()
    except OSError:
        return None
    for folder in (directory, *directory.parents):
        candidate = folder / PYPROJECT
        try:
            if candidate.exists() and not candidate.is_dir():
                return candidate
        except OSError:
            continue
    return None


def _read_toml(path: Path) -> dict[str, object]:
    import tomllib

    try:
        # Opened without blocking so a FIFO named like a config file cannot hang the command.
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as error:
        raise ConfigError(f"{shown_path(path)}: {_reason(error)}", whole_file=True) from None
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise ConfigError(f"{shown_path(path)}: not a regular file", whole_file=True)
        with os.fdopen(descriptor, "rb", closefd=False) as file:
            data = file.read(SIZE_LIMIT + 1)
    except OSError as error:
        raise ConfigError(f"{shown_path(path)}: {_reason(error)}", whole_file=True) from None
    finally:
        os.close(descriptor)
    if len(data) > SIZE_LIMIT:
        raise ConfigError(
            f"{shown_path(path)}: larger than {SIZE_LIMIT // (1024 * 1024)} MiB", whole_file=True
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(f"{shown_path(path)}: not UTF-8 (byte {error.start})", whole_file=True) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{shown_path(path)}: invalid TOML: {error}", whole_file=True) from None
    except RecursionError:
        raise ConfigError(f"{shown_path(path)}: invalid TOML: nested too deeply", whole_file=True) from None


def _reason(error: OSError) -> str:
    # In the words every command uses for a file it cannot read ("no such file"), the audit's; imported
    # only then, as the audit package is not needed to read a configuration.
    from failure_kinds.audit.errors import describe_read_error

    return describe_read_error(error)


def _tool_table(path: Path, document: dict[str, object]) -> tuple[dict[str, object], tuple[str, ...]]:
    """The ``[tool.failure-kinds]`` table of a pyproject.toml, and a warning for each table under
    ``[tool]`` that is a likely misspelling of it: not read, so not silently."""
    tool = _table(document.get("tool", {}))
    if tool is None:
        raise ConfigError(f"{shown_path(path)}: [tool] must be a table")
    table = _table(tool.get(TOOL_KEY, {}))
    if table is None:
        raise ConfigError(f"{shown_path(path)}: [{TABLE}] must be a table")
    misspelt = [key for key in tool if key != TOOL_KEY and _misspells_ours(key)]
    # Each is written as in a table header: bare when it can be, else quoted and escaped.
    headers = [key if _BARE_KEY.fullmatch(key) else shown(key, _SHOWN_LIMIT) for key in misspelt]
    warnings = tuple(
        f"{shown_path(path)}: [tool.{header}] is not read; did you mean [{TABLE}]?" for header in headers
    )
    return table, warnings


def _misspells_ours(key: str) -> bool:
    """Whether the ``[tool]`` key ``key`` is most likely our table's key written wrong: in any case or
    separators (``_``, ``-``, ``.``, spaces, or none), with a typo, or cut short, as the closest match
    the package suggests kinds with judges it."""
    from failure_kinds._suggest import closest

    # Case and separators are folded first: the matcher would read "FaIlUrE" as words of a camel-case
    # name, which a table key is not.
    return closest(re.sub(r"[-_.\s]+", "-", key.strip().lower()), (TOOL_KEY,)) is not None


def _table(value: object) -> dict[str, object] | None:
    """``value`` as a TOML table, or None when it is something else."""
    if not isinstance(value, dict):
        return None
    # TOML keys are always strings; the copy only tells the type checker so.
    return {str(key): item for key, item in value.items()}  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]


def _parse(path: Path, table: dict[str, object], warnings: tuple[str, ...], prefix: str) -> ProjectConfig:
    """``prefix`` is where the keys sit in the file: "tool.failure-kinds" or "" for the top level."""
    where = shown_path(path)
    in_table = f" [{prefix}]" if prefix else ""
    namespaces_table = f"[{prefix}.namespaces]" if prefix else "[namespaces]"
    for key in table:
        if key not in _KEYS:
            known = ", ".join(_KEYS)
            # A [tool.failure-kinds] table copied from a pyproject.toml into a file given by --config.
            hint = (
                f"; a file other than {PYPROJECT} holds the keys of [{TABLE}] at its top level:"
                f" write [namespaces], not [{TABLE}.namespaces]"
                if key == "tool" and not prefix
                else ""
            )
            raise ConfigError(
                f"{where}:{in_table} unknown key {shown(key, _SHOWN_LIMIT)} (known: {known}){hint}"
            )
    namespaces: dict[str, tuple[str, ...]] = {}
    declared = _table(table.get("namespaces", {}))
    if declared is None:
        raise ConfigError(f"{where}: {namespaces_table} must be a table of server = [kinds]")
    for server, kinds in declared.items():
        label = f"{where}: {namespaces_table} {shown(server, _SHOWN_LIMIT)}"
        if _NAME_PATTERN.fullmatch(server) is None:
            raise ConfigError(f"{label}: the server name does not match {_NAME_PATTERN.pattern}")
        if not isinstance(kinds, list):
            raise ConfigError(f"{label}: must be a list of kind names (strings)")
        if _all_names(kinds):  # pyright: ignore[reportUnknownArgumentType]
            namespaces[server] = tuple(kinds)  # pyright: ignore[reportUnknownArgumentType]
            continue
        names: list[str] = []
        seen: set[str] = set()
        for kind in kinds:  # pyright: ignore[reportUnknownVariableType]
            if not isinstance(kind, str):
                raise ConfigError(f"{label}: must be a list of kind names (strings)")
            if _NAME_PATTERN.fullmatch(kind) is None:
                raise ConfigError(
                    f"{label}: the kind {shown(kind, _SHOWN_LIMIT)} does not match {_NAME_PATTERN.pattern}"
                )
            if kind in seen:
                raise ConfigError(f"{label}: the kind {shown(kind, _SHOWN_LIMIT)} is declared twice")
            seen.add(kind)
            names.append(kind)
        if not names:
            raise ConfigError(f"{label}: declares no kinds")
        namespaces[server] = tuple(names)
    generate_path: Path | None = None
    if "generate" in table:
        target = table["generate"]
        label = f"{where}:{in_table} generate"
        if not isinstance(target, str) or not target.strip() or "\x00" in target:
            raise ConfigError(f"{label}: must be the path of a Python file, as a string")
        if not target.endswith(".py"):
            raise ConfigError(f"{label}: {shown(target, _SHOWN_LIMIT)} is not a .py file")
        generate_path = path.parent / target
    return ProjectConfig(path=path, namespaces=namespaces, generate_path=generate_path, warnings=warnings)


def _all_names(kinds: list[object]) -> bool:
    """Whether ``kinds`` is a non-empty list of distinct kind names, each a plain ``str``: the test the loop
    in _parse makes of each kind, made of the whole list at once. A list that fails it goes through the
    loop, which names what is wrong."""
    from failure_kinds._runtime import all_names, exact_strs

    if not kinds or not exact_strs(kinds):
        return False
    return all_names(kinds) and len(set(kinds)) == len(kinds)  # type: ignore[arg-type]  # each a str


def shown_path(path: Path) -> str:
    """``path`` for a message: relative to the working directory when it is below it, and escaped so a
    file name (which may hold anything a file system allows) cannot forge a line or a terminal sequence."""
    with contextlib.suppress(ValueError, OSError):
        path = path.relative_to(Path.cwd()) if path.is_absolute() else path
    return plain(os.fsdecode(path), _PATH_LIMIT)
