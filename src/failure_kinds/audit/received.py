"""What a partial report read back from JSON may hold: every field is checked before anything is built.

The text may come from another process, another machine or a file, so ``check_partial`` holds it to what
a real partial can be (see ``PartialReport.to_json`` for the format): every key present with its type,
counts from 0 to MAX_COUNT, totals that add up (records per category, per file, per kept value and
overflow row, per server), categories the settings would give each value, locations inside the files
the partial has, and kept keys in the form ``settings.shorten`` makes. Anything else is a ValueError that
names the field, such as ``partial report: values.kept[3][2]: 'cancelled' is registered, not
unregistered``. A partial that passes always makes a report that renders.
"""

from __future__ import annotations

import copy
import re
from typing import cast  # typing is costly to import: this module is loaded only to read partials back

from .errors import AuditError
from .settings import (
    ALIASED,
    CAPPED,
    LEGACY,
    NAMESPACED,
    REGISTERED,
    SERVER,
    UNDECLARED,
    UNREGISTERED,
    AuditSettings,
    shorten,
)
from .wire import FORMAT_VERSION, Location

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

# No audit counts more records, lines or bytes than fit a signed 64-bit integer; past it, rendering a
# share would overflow a float.
MAX_COUNT: Final = (1 << 63) - 1
UNITS: Final = ("line", "row")
VALUE_CATEGORIES: Final = frozenset({REGISTERED, NAMESPACED, UNDECLARED, ALIASED, LEGACY, UNREGISTERED})
# The categories of known names (registered kinds, older labels, aliases): a cut key in one of them must be
# such a name's cut key, which keeps too little of its value to be checked otherwise.
NAMED_CATEGORIES: Final = (REGISTERED, LEGACY, ALIASED)
# What follows the NUL of a cut key: the full length and a 24-digit digest (see settings.shorten).
_CUT_TAIL: Final = re.compile(r"([1-9][0-9]{0,18}):[0-9a-f]{24}")

PARTIAL_KEYS: Final = (
    "version",
    "settings",
    "records",
    "with_kind",
    "without_kind",
    "invalid",
    "unparseable",
    "first_invalid",
    "first_unparseable",
    "overlong",
    "first_overlong",
    "values",
    "servers",
    "files",
)
SETTINGS_KEYS: Final = ("field", "aliases", "namespaces", "distinct_limit", "value_chars", "line_bytes")
FILE_KEYS: Final = ("path", "unit", "continuation", "records", "lines", "error")
TALLY_KEYS: Final = ("kept", "extras", "overflow", "pinned", "uncertain")


def check_partial(data: object) -> None:
    """ValueError naming the field for anything in ``data`` that a partial report's JSON cannot hold."""
    version = _object(data, "").get("version")
    if type(version) is not int or version != FORMAT_VERSION:
        raise _wrong("version", f"not a partial report of format version {FORMAT_VERSION}")
    top = _object(data, "", PARTIAL_KEYS)
    settings = _settings(top["settings"])
    files = _files(top["files"])
    lines = [part_lines for _, part_lines in files]
    totals = {key: _count(top[key], key) for key in ("records", "with_kind", "without_kind", "invalid")}
    totals["unparseable"] = _count(top["unparseable"], "unparseable")
    overlong = _count(top["overlong"], "overlong")
    parts = totals.pop("records")
    if parts != sum(totals.values()):
        raise _wrong("records", f"{parts} is not with_kind + without_kind + invalid + unparseable")
    if overlong > totals["unparseable"]:
        raise _wrong("overlong", f"{overlong} is more than the {totals['unparseable']} unparseable records")
    for count, key in (
        (totals["invalid"], "first_invalid"),
        (totals["unparseable"], "first_unparseable"),
        (overlong, "first_overlong"),
    ):
        if top[key] is None:
            if count:
                raise _wrong(key, f"missing for {count} records")
        elif not count:
            raise _wrong(key, "set, but no record is counted there")
        else:
            _location(top[key], key, lines)
    in_files = sum(records for records, _ in files)
    if in_files != parts:
        raise _wrong("files", f"hold {in_files} records, not the {parts} of the partial")
    values = _Tally(top["values"], "values", settings, lines)
    if values.total != totals["with_kind"]:
        raise _wrong("values", f"count {values.total} records, not the {totals['with_kind']} with a kind")
    servers = _Tally(top["servers"], "servers", settings, lines)
    namespaced = values.total_of(NAMESPACED) + values.total_of(UNDECLARED)
    if servers.total != namespaced:
        raise _wrong("servers", f"count {servers.total} records, not the {namespaced} namespaced ones")


# The settings last checked, as JSON and built: every partial of one audit has the same ones, and with
# thousands of declared kinds checking them again for each of thousands of partials would cost the most.
_last_settings: tuple[dict[str, object], AuditSettings] | None = None


def _settings(data: object) -> AuditSettings:
    global _last_settings
    fields = _object(data, "settings", SETTINGS_KEYS)
    last = _last_settings
    # Equal JSON is equal settings, but for numbers: True == 1, so their types are checked anew.
    if last is not None and fields == last[0]:
        for key in ("distinct_limit", "value_chars", "line_bytes"):
            _count(fields[key], f"settings.{key}")
        return last[1]
    field = _text(fields["field"], "settings.field")
    if not all(field.split(".")):
        raise _wrong("settings.field", "has an empty segment")
    aliases = _object(fields["aliases"], "settings.aliases", string_keys=True)
    for old, new in aliases.items():
        _text(new, f"settings.aliases[{old!r}]")
    namespaces = _object(fields["namespaces"], "settings.namespaces", string_keys=True)
    for server, kinds in namespaces.items():
        for index, kind in enumerate(_list(kinds, f"settings.namespaces[{server!r}]")):
            _text(kind, f"settings.namespaces[{server!r}][{index}]")
    for key in ("distinct_limit", "value_chars", "line_bytes"):
        _count(fields[key], f"settings.{key}")
    settings = AuditSettings.from_json(fields)
    try:
        from .aliases import check_aliases

        check_aliases(settings.aliases)
    except AuditError as error:
        raise _wrong("settings.aliases", str(error)) from None
    _last_settings = (copy.deepcopy(fields), settings)
    return settings


def _files(data: object) -> list[tuple[int, int]]:
    """(records, lines) of each file part."""
    found: list[tuple[int, int]] = []
    for index, entry in enumerate(_list(data, "files")):
        where = f"files[{index}]"
        part = _object(entry, where, FILE_KEYS)
        _text(part["path"], f"{where}.path")
        if part["unit"] not in UNITS:
            raise _wrong(f"{where}.unit", f"not one of {', '.join(UNITS)}")
        if type(part["continuation"]) is not bool:
            raise _wrong(f"{where}.continuation", "not true or false")
        if part["continuation"] and index:
            raise _wrong(f"{where}.continuation", "only a partial's first file can continue a file")
        if part["error"] is not None:
            _text(part["error"], f"{where}.error")
        records = _count(part["records"], f"{where}.records")
        lines = _count(part["lines"], f"{where}.lines")
        if records > lines:
            raise _wrong(f"{where}.records", f"{records} records in {lines} lines")
        found.append((records, lines))
    return found


class _Tally:
    """The checked JSON of one tally (``values`` or ``servers``), and its totals."""

    def __init__(self, data: object, where: str, settings: AuditSettings, lines: list[int]) -> None:
        self.where = where
        self.settings = settings
        self.servers = where == "servers"
        self.capped = frozenset({SERVER}) if self.servers else CAPPED
        self._cut: dict[str, str] | None = None  # cut key -> the category it must have
        fields = _object(data, where, TALLY_KEYS)
        pinned = set(_texts(fields["pinned"], f"{where}.pinned"))
        _texts(fields["uncertain"], f"{where}.uncertain")
        self.totals: dict[str, int] = {}
        kept: dict[str, int] = {}
        seen: set[str] = set()
        limit = settings.value_chars
        for extra, name in ((False, "kept"), (True, "extras")):
            for index, entry in enumerate(_list(fields[name], f"{where}.{name}")):
                # Most entries are plain: checked without naming them, which costs more than the check.
                quick = _plain_entry(entry, limit, lines)
                if quick is None or self._wrong_category(*quick):
                    key, count, category = self._entry(entry, f"{where}.{name}[{index}]", lines)
                else:
                    key, count, category = quick
                if key in seen:
                    raise _wrong(f"{where}.{name}[{index}][0]", f"{_shown(key)} is counted twice")
                seen.add(key)
                if extra:
                    if category not in self.capped or key not in pinned:
                        at = f"{where}.{name}[{index}]"
                        raise _wrong(at, "an extra key is a pinned key of a capped category")
                elif category in self.capped:
                    kept[category] = kept.get(category, 0) + 1
                    if kept[category] > settings.distinct_limit:
                        at = f"{where}.{name}[{index}]"
                        raise _wrong(at, f"more than {settings.distinct_limit} {category} keys kept")
                self.totals[category] = self.totals.get(category, 0) + count
        for category, entry in _object(fields["overflow"], f"{where}.overflow", string_keys=True).items():
            at = f"{where}.overflow[{category!r}]"
            if category not in self.capped:
                raise _wrong(at, "not a capped category")
            items = _list(entry, at)
            if len(items) != 2:
                raise _wrong(at, "not [count, first location]")
            count = _count(items[0], f"{at}[0]")
            if not count:
                raise _wrong(f"{at}[0]", "an overflow row counts at least one record")
            _location(items[1], f"{at}[1]", lines)
            if kept.get(category, 0) != settings.distinct_limit:
                raise _wrong(at, f"overflow before {settings.distinct_limit} {category} keys are kept")
            self.totals[category] = self.totals.get(category, 0) + count
        self.total = sum(self.totals.values())

    def total_of(self, category: str) -> int:
        return self.totals.get(category, 0)

    def _wrong_category(self, key: str, count: int, category: str) -> bool:
        return category != SERVER if self.servers else category != self.settings.category(key)

    def _entry(self, entry: object, at: str, lines: list[int]) -> tuple[str, int, str]:
        """Key, count and category of a kept or extra entry, every part checked and named."""
        items = _list(entry, at)
        if len(items) != 4:
            raise _wrong(at, "not [key, count, category, first location]")
        key = self._key(items[0], f"{at}[0]")
        count = _count(items[1], f"{at}[1]")
        if not count:
            raise _wrong(f"{at}[1]", "a kept key is counted at least once")
        category = self._category(key, items[2], f"{at}[2]")
        _location(items[3], f"{at}[3]", lines)
        return key, count, category

    def _key(self, value: object, where: str) -> str:
        key = _text(value, where)
        limit = self.settings.value_chars
        if len(key) > limit:
            tail = _CUT_TAIL.fullmatch(key, limit + 1)
            if key[limit] != "\x00" or tail is None or int(tail[1]) <= limit:
                raise _wrong(where, f"longer than {limit} characters, but not a cut value's key")
        return key

    def _category(self, key: str, value: object, where: str) -> str:
        category = _text(value, where)
        if self.servers:
            if category != SERVER:
                raise _wrong(where, f"{_shown(category)} is not {SERVER!r}")
            return category
        if category not in VALUE_CATEGORIES:
            raise _wrong(where, f"{_shown(category)} is not a category")
        if len(key) <= self.settings.value_chars:
            expected = self.settings.category(key)
            if category != expected:
                raise _wrong(where, f"{_shown(key)} is {expected}, not {category}")
            return category
        # A cut key keeps too little of its value to say its category, except that a registered kind, an
        # older label or an alias cut the same way has the same key (an alias over an older label wins).
        if self._cut is None:
            import failure_kinds
            from failure_kinds.history import OLDER_LABELS

            limit = self.settings.value_chars
            self._cut = {shorten(name, limit): REGISTERED for name in failure_kinds.FAILURE_KINDS}
            self._cut.update((shorten(name, limit), LEGACY) for name in OLDER_LABELS)
            self._cut.update((shorten(name, limit), ALIASED) for name in self.settings.aliases)
        expected_category = self._cut.get(key)
        if expected_category is not None and category != expected_category:
            raise _wrong(where, f"the key of a cut value is {expected_category}, not {category}")
        if expected_category is None and category in NAMED_CATEGORIES:
            what = "older label" if category == LEGACY else f"{category} kind"
            raise _wrong(where, f"a cut value that is no {what} is counted as one")
        return category


def _plain_entry(entry: object, limit: int, lines: list[int]) -> tuple[str, int, str] | None:
    """Key, count and category of an entry whose parts all have their types and ranges, its key not cut;
    else None (category not checked)."""
    if type(entry) is not list:
        return None
    items = cast("list[object]", entry)
    if len(items) != 4:
        return None
    key, count, category, first = items
    if type(key) is not str or len(key) > limit or type(category) is not str:
        return None
    if type(count) is not int or not 0 < count <= MAX_COUNT or type(first) is not list:
        return None
    location = cast("list[object]", first)
    if len(location) != 2:
        return None
    index, line = location
    if type(index) is not int or type(line) is not int or not 0 <= index < len(lines):
        return None
    return (key, count, category) if 0 < line <= lines[index] else None


def _object(
    value: object, where: str, keys: tuple[str, ...] = (), *, string_keys: bool = False
) -> dict[str, object]:
    """``value`` as an object with every one of ``keys``; with ``string_keys``, every key a string (JSON
    gives nothing else, a dict handed over directly might): needed only where the keys are read."""
    if not isinstance(value, dict):
        raise _wrong(where, f"expected an object, got {_type(value)}")
    fields = cast("dict[object, object]", value)
    if string_keys:
        for key in fields:
            if type(key) is not str:
                raise _wrong(where, f"a key is {_type(key)}, not a string")
    for key in keys:
        if key not in fields:
            raise _wrong(f"{where}.{key}" if where else key, "missing")
    return cast("dict[str, object]", fields)


def _list(value: object, where: str) -> list[object]:
    if not isinstance(value, list | tuple):
        raise _wrong(where, f"expected a list, got {_type(value)}")
    return list(cast("list[object]", value))


def _texts(value: object, where: str) -> list[str]:
    items = _list(value, where)
    if not all(type(item) is str for item in items):
        for index, item in enumerate(items):
            _text(item, f"{where}[{index}]")
    return cast("list[str]", items)


def _text(value: object, where: str) -> str:
    if type(value) is not str:
        raise _wrong(where, f"expected a string, got {_type(value)}")
    return value


def _count(value: object, where: str) -> int:
    if type(value) is not int:
        raise _wrong(where, f"expected an integer, got {_type(value)}")
    if not 0 <= value <= MAX_COUNT:
        raise _wrong(where, "out of range" if value > 0 else "negative")
    return value


def _location(value: object, where: str, lines: list[int]) -> Location:
    items = _list(value, where)
    if len(items) != 2:
        raise _wrong(where, "not [file index, line]")
    index, line = _count(items[0], f"{where}[0]"), _count(items[1], f"{where}[1]")
    if index >= len(lines):
        raise _wrong(f"{where}[0]", f"file {index} of a partial of {len(lines)} files")
    if not 1 <= line <= lines[index]:
        raise _wrong(f"{where}[1]", f"line {line} of a file part of {lines[index]} lines")
    return (index, line)


def _shown(value: str) -> str:
    from failure_kinds._display import shown

    return shown(value, 80)


def _type(value: object) -> str:
    from failure_kinds._display import type_name

    return type_name(value)


def _wrong(where: str, problem: str) -> ValueError:
    from failure_kinds._display import shown_text

    return ValueError(
        f"partial report: {shown_text(where, 200)}: {problem}" if where else f"partial report: {problem}"
    )
