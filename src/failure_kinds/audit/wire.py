"""Reading partial reports back from JSON: the text may come from another process or machine, so every
field is checked, and anything unexpected is a ValueError rather than a wrong count."""

from __future__ import annotations

Location = tuple[int, int]
"""(index into a partial's files, line or row number within that file part, from 1)."""

FORMAT_VERSION = 1


def mapping(value: object) -> dict[str, object]:
    if not isinstance(value, dict):
        raise ValueError(f"expected an object in a partial report, got {type(value).__name__}")
    from typing import cast  # here: typing is costly to import, and only this reads JSON back

    return cast("dict[str, object]", value)


def sequence(value: object) -> list[object]:
    if not isinstance(value, list | tuple):
        raise ValueError(f"expected a list in a partial report, got {type(value).__name__}")
    from typing import cast

    return list(cast("list[object]", value))


def integer(value: object) -> int:
    if type(value) is not int:
        raise ValueError(f"expected an integer in a partial report, got {type(value).__name__}")
    return value


def location(value: object) -> Location:
    index, line = sequence(value)
    return (integer(index), integer(line))


def optional_location(value: object) -> Location | None:
    return None if value is None else location(value)
