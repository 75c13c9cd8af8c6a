"""Aliases: legacy labels counted as the registered kind they stand for (``--alias``, ``--aliases``)."""

from __future__ import annotations

import failure_kinds

from .errors import AuditError, describe_read_error


def check_aliases(aliases: dict[str, str]) -> None:
    """Raise AuditError unless every alias maps an unregistered label to a registered kind."""
    for old, new in aliases.items():
        if not failure_kinds.is_registered(new):
            hint = failure_kinds.suggest(new)
            raise AuditError(
                f"alias {old!r} = {new!r}: {new!r} is not a registered kind"
                + (f"; did you mean {hint!r}?" if hint else "")
            )
        if failure_kinds.is_registered(old):
            raise AuditError(f"alias {old!r} = {new!r}: {old!r} is already a registered kind")


def parse_alias_option(text: str) -> tuple[str, str]:
    """``OLD=NEW`` from the command line."""
    old, separator, new = text.partition("=")
    if not separator or not old or not new:
        raise AuditError(f"--alias {text!r}: expected OLD=NEW")
    return old, new


def load_alias_file(path: str) -> dict[str, str]:
    """The ``[aliases]`` table of a TOML file: ``old = "new"`` lines."""
    import tomllib

    try:
        with open(path, "rb") as file:
            document = tomllib.load(file)
    except OSError as error:
        raise AuditError(f"--aliases {path}: {describe_read_error(error)}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise AuditError(f"--aliases {path}: not valid TOML ({error})") from None
    table = document.get("aliases")
    if not isinstance(table, dict):
        raise AuditError(f'--aliases {path}: no [aliases] table (old = "new" lines under [aliases])')
    from typing import cast

    aliases: dict[str, str] = {}
    for old, new in cast("dict[str, object]", table).items():
        if not isinstance(new, str):
            raise AuditError(f"--aliases {path}: the alias for {old!r} must be a string, not {new!r}")
        aliases[old] = new
    return aliases
