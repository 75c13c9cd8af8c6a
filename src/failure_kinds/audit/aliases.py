"""Aliases: labels counted as the registered kind they stand for (``--alias``, ``--aliases``). An alias of an
older label overrides the replacement the vocabulary gives it (see ``failure_kinds.history``)."""

from __future__ import annotations

import os
import stat

import failure_kinds

from .errors import AuditError, describe_read_error

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

# An alias file larger than this is refused: it cannot be a real one, and a device must not be read whole.
ALIAS_FILE_LIMIT = 4 * 1024 * 1024


def check_aliases(aliases: dict[str, str]) -> None:
    """Raise AuditError unless every alias maps an unregistered label to a registered kind."""
    for old, new in aliases.items():
        pair = f"alias {_label(old)} = {_label(new)}"
        if not failure_kinds.is_registered(new):
            hint = failure_kinds.suggest(new)
            raise AuditError(
                f"{pair}: {_label(new)} is not a registered kind"
                + (f"; did you mean {hint!r}?" if hint else "")
            )
        if failure_kinds.is_registered(old):
            raise AuditError(f"{pair}: {_label(old)} is already a registered kind")


def parse_alias_option(text: str) -> tuple[str, str]:
    """``OLD=NEW`` from the command line."""
    old, separator, new = text.partition("=")
    if not separator or not old or not new:
        raise AuditError(f"--alias {_label(text)}: expected OLD=NEW")
    return old, new


def _label(value: str) -> str:
    from failure_kinds._display import shown

    return shown(value, 80)


def merged_aliases(path: str | None, options: Iterable[str]) -> dict[str, str]:
    """The aliases of the ``--aliases`` file ``path`` (None: none) with the ``--alias OLD=NEW`` options
    over them: the command line wins over the file, so one run can correct a file it shares with others.
    One label given two different kinds on the command line is a usage error."""
    from .render import printable

    aliases = load_alias_file(path) if path is not None else {}
    given: dict[str, str] = {}
    for option in options:
        old, new = parse_alias_option(option)
        if given.setdefault(old, new) != new:
            raise AuditError(
                f"--alias {printable(old)} is given twice, as {printable(given[old])} and as {printable(new)}"
            )
    aliases.update(given)
    return aliases


def load_alias_file(path: str) -> dict[str, str]:
    """The ``[aliases]`` table of a TOML file: ``old = "new"`` lines."""
    import tomllib

    from .render import printable

    shown = printable(path)
    try:
        with open(path, "rb") as file:
            if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
                raise AuditError(f"--aliases {shown}: not a regular file")
            data = file.read(ALIAS_FILE_LIMIT + 1)
    except OSError as error:
        raise AuditError(f"--aliases {shown}: {describe_read_error(error)}") from None
    if len(data) > ALIAS_FILE_LIMIT:
        raise AuditError(f"--aliases {shown}: larger than {ALIAS_FILE_LIMIT:,} bytes, not an alias file")
    try:
        document = tomllib.loads(data.decode())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise AuditError(f"--aliases {shown}: not valid TOML ({error})") from None
    except RecursionError:
        raise AuditError(f"--aliases {shown}: nested too deeply to read") from None
    table = document.get("aliases")
    if not isinstance(table, dict):
        raise AuditError(f'--aliases {shown}: no [aliases] table (old = "new" lines under [aliases])')
    from typing import cast

    aliases: dict[str, str] = {}
    for old, new in cast("dict[str, object]", table).items():
        if not isinstance(new, str):
            raise AuditError(
                f"--aliases {shown}: the alias for {_label(old)} must be a string, not {type(new).__name__}"
            )
        aliases[old] = new
    return aliases
