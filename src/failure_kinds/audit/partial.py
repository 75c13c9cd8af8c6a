"""The mergeable partial report (totals, first locations, the capped tallies of values and servers, one
entry per file part), its JSON form, and the report built from it. Two partials of consecutive input
merge into the partial of the whole; the report of a merge is the report of one pass over the same input.

Locations are ``(file index, line)`` pairs relative to the partial. A partial that starts in the middle
of a file (``continuation=True``) numbers its lines from 1; the merge shifts them by the line count of
the previous part of that file, so physical line numbers stay exact however a file is cut.
"""

# The JSON form's shapes are built in steps and walked as the plain objects they are:
# pyright: reportConstantRedefinition=false, reportUnknownArgumentType=false, reportUnknownVariableType=false

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass
from typing import Any, cast

from failure_kinds._display import escaped, shown

from .errors import AuditError
from .render import FileReport, Report, kind_rows, server_totals
from .settings import (
    CAPPED,
    NAMESPACED,
    SERVER,
    UNDECLARED,
    AuditSettings,
    Location,
    Pins,
    Shift,
    Tally,
    check_aliases,
    earliest,
    key_problem,
    shorten,
)
from .sources import BLANK, UNPARSEABLE, hashable, make_decoder

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Final

    from .sources import Decoder

# A server first met in a batch: (index of its first value or -1, server, records, value).
ServerEvent = tuple[int, str, int, str]

BOM: Final = b"\xef\xbb\xbf"
# The totals of a partial and of its report, and the first locations (in the order of the JSON forms).
TOTALS: Final = ("records", "with_kind", "without_kind", "invalid", "unparseable")
FIELDS: Final = (*TOTALS, "first_invalid", "first_unparseable", "overlong", "first_overlong")
# Categories remembered per partial (or per engine worker): enough for every value all its batches keep.
_KNOWN_CATEGORIES: Final = 200_000


@dataclass
class FilePart:
    """One file, or the part of one file, that a partial read."""

    path: str
    unit: str = "line"
    """"line" for JSON Lines, "row" for tables (a location shows as ``path:row N``)."""
    continuation: bool = False
    """This part starts in the middle of the file: it continues the previous partial's last file."""
    records: int = 0
    lines: int = 0
    """Physical lines (or rows) read, blank ones included: what later parts of the file are shifted by."""
    error: str | None = None


class PartialReport:
    """The audit of some consecutive input, mergeable with the partial of the input that follows."""

    def __init__(self, settings: AuditSettings, pins: Pins | None = None, fast: bool = True) -> None:
        self.settings: AuditSettings = settings
        self.fast: bool = fast
        pins = pins or Pins()
        self.records: int = 0
        self.with_kind: int = 0
        self.without_kind: int = 0
        self.invalid: int = 0
        self.unparseable: int = 0
        self.first_invalid: Location | None = None
        self.first_unparseable: Location | None = None
        self.overlong: int = 0
        """Lines longer than the line cap (counted as unparseable too)."""
        self.first_overlong: Location | None = None
        self.values: Tally = Tally(settings.distinct_limit, CAPPED, pins.values)
        self.servers: Tally = Tally(settings.distinct_limit, frozenset({SERVER}), pins.servers)
        self.files: list[FilePart] = []
        self._decoder: Decoder | None = None
        self.known_categories: dict[str, str] = {}
        """Values (up to the value cut) -> their category under these settings, as found: an engine
        hands every batch a worker runs the same dict, so a value is categorised once per worker."""

    # Counting

    def start_file(self, path: str, *, continuation: bool = False, unit: str = "line") -> FilePart:
        """Begin a file (or, with ``continuation``, a part of a file that starts after its first line)."""
        part = FilePart(path, unit=unit, continuation=continuation)
        self.files.append(part)
        return part

    def add_lines(self, lines: list[bytes], ascii: bool = False, longest: int | None = None) -> None:
        """Decode and count the next lines of the current file: one line each, with or without its line
        end (``ascii``: the caller knows all their bytes are; ``longest``: that none is longer). A line
        longer than the line cap counts as unparseable, unless it is white space only: a blank line
        whatever its length."""
        cap = self.settings.line_bytes
        if longest is None:
            longest = max(map(len, lines), default=0)
        if longest > cap:  # the length with the line end: only a first sieve
            start = 0
            for index, line in enumerate(lines):
                if len(line) - line.endswith(b"\n") > cap and not line.isspace():
                    self._add_lines(lines[start:index], ascii)
                    self.add_overlong()
                    start = index + 1
            lines = lines[start:]
        self._add_lines(lines, ascii)

    def _add_lines(self, lines: list[bytes], ascii: bool) -> None:
        if not lines:
            return
        part = self.files[-1]
        if part.lines == 0 and not part.continuation and lines[0].startswith(BOM):
            lines, ascii = [lines[0][len(BOM) :], *lines[1:]], False
        decoder = self._decoder
        if decoder is None:
            decoder = self._decoder = make_decoder(self.settings.field.split("."), self.fast)
        if b"" in lines or b"\n" in lines:
            # Empty lines are left out before decoding, which would take the careful path for them;
            # the lines list still gives every value its physical line.
            present = [line for line in lines if line and line != b"\n"]
            self._add(decoder.batch(present, ascii) if present else [], len(lines), lines)
        else:
            self._add(decoder.batch(lines, ascii), len(lines), None)

    def add_overlong(self) -> None:
        """The next line of the current file is longer than the line cap: unparseable, and noted."""
        if self.first_overlong is None:
            self.first_overlong = (len(self.files) - 1, self.files[-1].lines + 1)
        self.overlong += 1
        self.add_values([UNPARSEABLE])

    def add_blank(self, lines: int) -> None:
        """The next ``lines`` lines of the current file are blank (not records, but lines)."""
        self.files[-1].lines += lines

    def add_values(self, values: list[object]) -> None:
        """Count the next lines (or rows) of the current file, already decoded: each a str (with a kind),
        None (without), INVALID or any non-string value (invalid), UNPARSEABLE, or BLANK (not a record)."""
        self._add(values, len(values), None)

    def _add(self, values: list[object], lines: int, sparse: list[bytes] | None) -> None:
        part = self.files[-1]
        blank = self._tally(values, len(self.files) - 1, part.lines + 1, sparse) + lines - len(values)
        records = lines - blank
        part.records += records
        part.lines += lines
        self.records += records

    def add_error(self, error: str) -> None:
        """The current file could not be read (to its end): the first error is reported."""
        part = self.files[-1]
        if part.error is None:
            part.error = error

    def _tally(
        self, values: list[object], file_index: int, first_line: int, sparse: list[bytes] | None
    ) -> int:
        """Add one batch to the counts; return how many of its values were BLANK. With ``sparse``,
        ``values`` are those of its non-empty lines."""
        positions: list[int] = []

        def line_of(index: int) -> int:
            if sparse is None:
                return first_line + index
            if not positions:
                positions.extend(number for number, line in enumerate(sparse) if line and line != b"\n")
            return first_line + positions[index]

        values_tally = self.values
        counts, categories = values_tally.counts, values_tally.categories
        try:
            tally = Counter(values)
        except TypeError:
            tally = Counter(map(hashable, values))
        limit = self.settings.value_chars
        blank = 0
        new: list[str] = []
        server_events: list[ServerEvent] = []
        for value, count in tally.items():
            if type(value) is str:
                self.with_kind += count
                # A value longer than the cut is kept under its key, never under itself: a crafted value
                # that spells another's key must not count as it.
                known = counts.get(value) if len(value) <= limit else None
                if known is None:
                    new.append(value)
                else:
                    counts[value] = known + count
                    if categories[value] == NAMESPACED or categories[value] == UNDECLARED:
                        self._count_server(value, count, server_events)
            elif value is None:
                self.without_kind += count
            elif value is BLANK:
                blank += count
            elif value is UNPARSEABLE:
                self.unparseable += count
                if self.first_unparseable is None:
                    self.first_unparseable = (file_index, line_of(values.index(UNPARSEABLE)))
            else:
                self.invalid += count
                if self.first_invalid is None:
                    self.first_invalid = (file_index, line_of(_first_invalid(values)))
        if new:
            settings = self.settings
            known_categories = self.known_categories
            first_index = _first_indexes(values, new)
            new.sort(key=first_index.__getitem__)
            for value in new:
                count = tally[value]
                location = (file_index, line_of(first_index[value]))
                key = shorten(value, limit)
                known = counts.get(key)
                if known is not None:  # a long value seen before: only its key is kept
                    counts[key] = known + count
                    category = categories[key]
                else:
                    category = known_categories.get(value) or settings.category(value)
                    if key is value and len(known_categories) < _KNOWN_CATEGORIES:
                        known_categories[value] = category
                    values_tally.add_new(key, category, count, location)
                if category in (NAMESPACED, UNDECLARED):
                    self._count_server(value, count, server_events, first_index[value])
        if server_events:
            servers = self.servers
            # Where known values of servers not counted yet first occur: found in one pass for all.
            unplaced = [value for index, _, _, value in server_events if index < 0]
            if unplaced:
                found = _first_indexes(values, unplaced)
                server_events = [
                    (found[value] if index < 0 else index, server, count, value)
                    for index, server, count, value in server_events
                ]
            server_events.sort()
            for index, server, count, _ in server_events:
                known = servers.counts.get(server)
                if known is None:
                    servers.add_new(server, SERVER, count, (file_index, line_of(index)))
                else:
                    servers.counts[server] = known + count
        return blank

    def _count_server(self, value: str, count: int, events: list[ServerEvent], index: int = -1) -> None:
        server = shorten(value.partition(":")[0], self.settings.value_chars)
        servers = self.servers.counts
        known = servers.get(server)
        if known is not None:
            servers[server] = known + count
        else:  # new here, or past the cap: counted in input order once the batch is through
            events.append((index, server, count, value))

    # Merging

    def merge(self, later: PartialReport) -> PartialReport:
        """This partial followed by ``later``: a new partial (neither input changes)."""
        return merge((self, later))

    def copy(self) -> PartialReport:
        """An equal partial that shares nothing mutable with this one."""
        copied = PartialReport(self.settings, fast=self.fast)
        for name in FIELDS:
            setattr(copied, name, getattr(self, name))
        copied.values = self.values.copy()
        copied.servers = self.servers.copy()
        copied.files = [dataclasses.replace(part) for part in self.files]
        return copied

    def absorb(self, later: PartialReport) -> None:
        """Add ``later``, the partial of the input that follows, to this one in place (``later`` does not
        change). The cost grows with ``later``, not with this partial: how engines fold their parts."""
        if later.settings != self.settings:
            raise ValueError("partial reports of different settings (field, aliases, declarations, caps)")
        joined = bool(self.files and later.files and later.files[0].continuation)
        if joined and self.files[-1].path != later.files[0].path:
            raise ValueError(
                f"{later.files[0].path!r} continues a file, but the partial before it ends in "
                f"{self.files[-1].path!r}"
            )
        shift = Shift(len(self.files) - 1, self.files[-1].lines) if joined else Shift(len(self.files), 0)
        for name in FIELDS:
            mine, theirs = getattr(self, name), getattr(later, name)
            if name.startswith("first_"):
                setattr(self, name, earliest(mine, None if theirs is None else shift(theirs)))
            else:
                setattr(self, name, mine + theirs)
        self.values.absorb(later.values, shift)
        self.servers.absorb(later.servers, shift)
        parts = iter(later.files)
        if joined:
            last, part = self.files[-1], next(parts)
            last.records += part.records
            last.lines += part.lines
            last.error = last.error or part.error
        self.files.extend(dataclasses.replace(part) for part in parts)

    def __getstate__(self) -> dict[str, object]:
        # An engine's workers send their partials pickled: the counts, not the decoder, which is made
        # again when lines are added.
        return {**self.__dict__, "_decoder": None, "known_categories": {}}

    @property
    def exact(self) -> bool:
        """False when a merge could not know every kept value's count: audit again with ``pins()``."""
        return not self.values.uncertain and not self.servers.uncertain

    def pins(self) -> Pins:
        """The kept values and servers: what every part counts exactly in a second pass."""
        return Pins(self.values.kept_keys(), self.servers.kept_keys())

    # Serialising

    def to_json(self) -> dict[str, object]:
        """A JSON-ready dict; ``PartialReport.from_json`` reads it back into an equal partial."""
        data: dict[str, object] = {"version": FORMAT_VERSION, "settings": self.settings.to_json()}
        for name in FIELDS:
            value = getattr(self, name)
            data[name] = list(value) if isinstance(value, tuple) else value
        data |= {"values": self.values.to_json(), "servers": self.servers.to_json()}
        return data | {"files": [dataclasses.asdict(part) for part in self.files]}

    @classmethod
    def from_json(cls, data: Mapping[str, object], fast: bool = True) -> PartialReport:
        check_partial(data)  # every field, so nothing below meets what a real partial cannot hold
        top = cast("dict[str, Any]", data)
        settings = AuditSettings.from_json(top["settings"])
        partial = cls(settings, fast=fast)
        for name in FIELDS:
            setattr(partial, name, tuple(top[name]) if isinstance(top[name], list) else top[name])
        partial.values = Tally.from_json(top["values"], settings.distinct_limit, CAPPED)
        partial.servers = Tally.from_json(top["servers"], settings.distinct_limit, frozenset({SERVER}))
        partial.files = [
            FilePart(*(part[field.name] for field in dataclasses.fields(FilePart))) for part in top["files"]
        ]
        return partial

    # The report

    def location(self, location: Location | None) -> str | None:
        """``path:line`` (or ``path:row N``) of a location of this partial."""
        if location is None:
            return None
        index, line = location
        part = self.files[index]
        return f"{part.path}:{line}" if part.unit == "line" else f"{part.path}:{part.unit} {line}"

    def report(self) -> Report:
        """The report of everything this partial holds."""
        settings = self.settings
        report = Report(settings.field)
        for attribute in FIELDS:
            total = getattr(self, attribute)
            setattr(report, attribute, self.location(total) if attribute.startswith("first_") else total)
        report.kinds = kind_rows(self.values, settings, self.location)
        report.namespaces, report.namespaces_overflow = server_totals(self.servers, settings.value_chars)
        report.files = [FileReport(part.path, part.records, part.error) for part in self.files]
        return report


def merge(partials: Iterable[PartialReport]) -> PartialReport:
    """The partials of consecutive input, in input order, merged into one (ValueError when empty)."""
    rest = iter(partials)
    first = next(rest, None)
    if first is None:
        raise ValueError("merge() needs at least one partial report")
    merged = first.copy()  # the one accumulator: each later part is folded into it
    for partial in rest:
        merged.absorb(partial)
    return merged


def _first_indexes(values: list[object], wanted: list[str]) -> dict[str, int]:
    if len(wanted) <= 8:
        return {value: values.index(value) for value in wanted}
    # Many new values in one batch: one pass instead of a search each.
    remaining = set(wanted)
    found: dict[str, int] = {}
    for index, value in enumerate(values):
        if type(value) is str and value in remaining:
            found[value] = index
            remaining.discard(value)
            if not remaining:
                break
    return found


def _first_invalid(values: list[object]) -> int:
    for index, value in enumerate(values):
        if value is not None and type(value) is not str and value is not BLANK and value is not UNPARSEABLE:
            return index
    raise AssertionError("no invalid value in a batch that counted one")


# The partial's JSON form, described once (``PARTIAL``) and checked by one walk, then held to what a real
# partial can be: totals that add up, the categories the settings give, locations inside the partial's
# files, keys as ``settings.shorten`` makes them. Anything else is a ValueError naming the field.
FORMAT_VERSION = 1
MAX_COUNT = (1 << 63) - 1  # past it, rendering a share would overflow a float

# The description: an object is a dict of its keys (``str``: any string keys), a list ``[shape]`` of any
# length, a tuple a list of exactly those shapes, ``(None, shape)`` null or that, a frozenset one of those.
COUNT, POSITIVE, TEXT, FLAG = "count", "positive", "text", "flag"
LOCATION = (COUNT, COUNT)
ENTRY: object = (TEXT, POSITIVE, TEXT, LOCATION)  # [key, count, category, first location]
TALLY: dict[object, object] = {"kept": [ENTRY], "extras": [ENTRY], "overflow": {str: (POSITIVE, LOCATION)}}
TALLY |= {"pinned": [TEXT], "uncertain": [TEXT]}
SETTINGS: dict[object, object] = {"field": TEXT, "aliases": {str: TEXT}, "namespaces": {str: [TEXT]}}
SETTINGS |= dict.fromkeys(("distinct_limit", "value_chars", "line_bytes"), COUNT)
FILE: dict[object, object] = {"path": TEXT, "unit": frozenset({"line", "row"}), "continuation": FLAG}
FILE |= {"records": COUNT, "lines": COUNT, "error": (None, TEXT)}
PARTIAL: dict[object, object] = {"version": COUNT, "settings": SETTINGS}
PARTIAL |= dict.fromkeys((*TOTALS, "overlong"), COUNT)
PARTIAL |= dict.fromkeys((name for name in FIELDS if name.startswith("first_")), (None, LOCATION))
PARTIAL |= {"values": TALLY, "servers": TALLY, "files": [FILE]}


def _type_of(value: object) -> str:
    return escaped(type.__getattribute__(type(value), "__qualname__"), 80)


def wrong(where: str, problem: str) -> ValueError:
    return ValueError(f"partial report: {escaped(where, 200) + ': ' if where else ''}{problem}")


def walk(value: object, shape: object, where: str, found: list[tuple[str, Location]]) -> None:
    """Check ``value`` against ``shape``; every location met goes to ``found``, checked once files are."""
    if isinstance(shape, dict):
        if not isinstance(value, dict):
            raise wrong(where, f"expected an object, got {_type_of(value)}")
        fields = cast("dict[object, object]", value)
        for key, item in fields.items() if str in shape else ():  # an object of any string keys
            if type(key) is not str:
                raise wrong(where, f"a key is {_type_of(key)}, not a string")
            walk(item, shape[str], f"{where}[{key!r}]", found)
        for key, item_shape in shape.items() if str not in shape else ():
            if key not in fields:
                raise wrong(f"{where}.{key}" if where else str(key), "missing")
            walk(fields[key], item_shape, f"{where}.{key}" if where else str(key), found)
    elif isinstance(shape, frozenset):
        if type(value) is not str or value not in shape:
            raise wrong(where, f"not one of {', '.join(sorted(cast('frozenset[str]', shape)))}")
    elif isinstance(shape, list | tuple):
        if isinstance(shape, tuple) and shape[0] is None:
            return None if value is None else walk(value, shape[1], where, found)
        if not isinstance(value, list | tuple):
            raise wrong(where, f"expected a list, got {_type_of(value)}")
        items = cast("list[object]", value)
        if isinstance(shape, tuple) and len(items) != len(shape):
            raise wrong(where, f"not a list of {len(shape)} items")
        for index, item in enumerate(items):
            walk(item, shape[index] if isinstance(shape, tuple) else shape[0], f"{where}[{index}]", found)
        if shape == LOCATION:
            found.append((where, cast("Location", tuple(items))))
    elif shape == FLAG and type(value) is not bool:
        raise wrong(where, "not true or false")
    elif shape == TEXT and type(value) is not str:
        raise wrong(where, f"expected a string, got {_type_of(value)}")
    elif shape in (COUNT, POSITIVE) and type(value) is not int:
        raise wrong(where, f"expected an integer, got {_type_of(value)}")
    elif shape in (COUNT, POSITIVE) and not (shape == POSITIVE) <= cast("int", value) <= MAX_COUNT:
        raise wrong(where, "out of range" if cast("int", value) > 0 else "negative or none")
    return None


def check_partial(data: object) -> None:
    """ValueError naming the field for anything in ``data`` that a partial report's JSON cannot hold."""
    if not isinstance(data, dict) or cast("dict[str, object]", data).get("version") != FORMAT_VERSION:
        raise wrong("version", f"not a partial report of format version {FORMAT_VERSION}")
    found: list[tuple[str, Location]] = []
    walk(data, PARTIAL, "", found)
    top, counts = cast("dict[str, Any]", data), cast("dict[str, int]", data)
    if not all(top["settings"]["field"].split(".")):
        raise wrong("settings.field", "has an empty segment")
    settings = AuditSettings.from_json(top["settings"])
    try:
        check_aliases(settings.aliases)
    except AuditError as error:
        raise wrong("settings.aliases", str(error)) from None
    files = cast("list[dict[str, int]]", top["files"])
    for index, part in enumerate(files):
        if part["continuation"] and index:
            raise wrong(f"files[{index}].continuation", "only a partial's first file can continue a file")
        if part["records"] > part["lines"]:
            raise wrong(f"files[{index}].records", f"{part['records']} records in {part['lines']} lines")
    for where, (index, line) in found:
        if index >= len(files):
            raise wrong(f"{where}[0]", f"file {index} of a partial of {len(files)} files")
        if not 1 <= line <= files[index]["lines"]:
            raise wrong(f"{where}[1]", f"line {line} of a file part of {files[index]['lines']} lines")
    records, unparseable, overlong = counts["records"], counts["unparseable"], counts["overlong"]
    if records != counts["with_kind"] + counts["without_kind"] + counts["invalid"] + unparseable:
        raise wrong("records", f"{records} is not with_kind + without_kind + invalid + unparseable")
    if overlong > unparseable:
        raise wrong("overlong", f"{overlong} is more than the {unparseable} unparseable records")
    for key in ("invalid", "unparseable", "overlong"):
        if (top[f"first_{key}"] is None) == bool(counts[key]):
            raise wrong(f"first_{key}", f"not set for {counts[key]} records, or set for none")
    if (in_files := sum(part["records"] for part in files)) != records:
        raise wrong("files", f"hold {in_files} records, not the {records} of the partial")
    totals: dict[str, Counter[str]] = {}
    for name, capped in (("values", CAPPED), ("servers", frozenset({SERVER}))):
        tally, seen, kept = top[name], set[str](), Counter[str]()
        total = totals[name] = Counter[str]()
        for extra in ("kept", "extras"):
            for index, (key, count, category, _) in enumerate(tally[extra]):
                at = f"{name}.{extra}[{index}]"
                if key in seen:
                    raise wrong(f"{at}[0]", f"{shown(key, 80)} is counted twice")
                if (problem := key_problem(settings, key, category, name == "servers")) is not None:
                    raise wrong(f"{at}[{problem[0]}]", problem[1])
                if extra == "extras" and (category not in capped or key not in tally["pinned"]):
                    raise wrong(at, "an extra key is a pinned key of a capped category")
                if extra == "kept" and category in capped:
                    kept[category] += 1
                    if kept[category] > settings.distinct_limit:
                        raise wrong(at, f"more than {settings.distinct_limit} {category} keys kept")
                seen.add(key)
                total[category] += count
        for category, (count, _) in tally["overflow"].items():
            at = f"{name}.overflow[{category!r}]"
            if category not in capped:
                raise wrong(at, "not a capped category")
            if kept[category] != settings.distinct_limit:
                raise wrong(at, f"overflow before {settings.distinct_limit} {category} keys are kept")
            total[category] += count
    values, servers = totals["values"].total(), totals["servers"].total()
    if values != counts["with_kind"]:
        raise wrong("values", f"count {values} records, not the {counts['with_kind']} with a kind")
    namespaced = totals["values"][NAMESPACED] + totals["values"][UNDECLARED]
    if servers != namespaced:
        raise wrong("servers", f"count {servers} records, not the {namespaced} namespaced ones")
