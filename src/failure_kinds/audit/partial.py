"""The mergeable partial report: what an audit of some lines found, in a form that combines.

A ``PartialReport`` holds everything the final report is made of: the record totals, the first location
of an invalid and of an unparseable record, the count, category and first location of every kept value,
one overflow bucket per capped category, the per-server totals (capped the same way, see ``tally``), and
one entry per file or file part read. Two partials of consecutive input merge into the partial of the
whole; the merge is associative, and the report of a merge is identical to the report of one pass over the
same input (see ``failure_kinds.audit`` for the engine-facing API and its example).

Locations are ``(file index, line)`` pairs relative to the partial. A partial that starts in the middle
of a file (``continuation=True``) numbers its lines from 1; the merge shifts them by the line count of
the previous part of that file, so physical line numbers stay exact however a file is cut.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, cast

import failure_kinds

from . import wire
from .decoding import BLANK, UNPARSEABLE, hashable, make_decoder
from .render import (
    CATEGORY_ORDER,
    FileReport,
    KindRow,
    Report,
    closest_declared,
    describe_older,
    names,
    successor,
)
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
    Pins,
    shorten,
    shown_value,
)
from .tally import Shift, Tally, earliest, spill

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Final

    from .decoding import Decoder
    from .wire import Location

BOM: Final = b"\xef\xbb\xbf"
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

    def copy(self) -> FilePart:
        return FilePart(self.path, self.unit, self.continuation, self.records, self.lines, self.error)

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "unit": self.unit,
            "continuation": self.continuation,
            "records": self.records,
            "lines": self.lines,
            "error": self.error,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> FilePart:
        error = data["error"]
        return cls(
            path=str(data["path"]),
            unit=str(data["unit"]),
            continuation=bool(data["continuation"]),
            records=cast("int", data["records"]),
            lines=cast("int", data["lines"]),
            error=None if error is None else str(error),
        )


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

    def add_lines(self, lines: list[bytes]) -> None:
        """Decode and count the next lines of the current file: one line each, with or without its line
        end. A line longer than the line cap counts as unparseable, unless it is white space only: a
        blank line whatever its length, as the readers count it."""
        cap = self.settings.line_bytes
        start = 0
        for index, line in enumerate(lines):
            if len(line) - line.endswith(b"\n") > cap and not line.isspace():
                self.add_read_lines(lines[start:index])
                self.add_overlong()
                start = index + 1
        self.add_read_lines(lines[start:] if start else lines)

    def add_read_lines(self, lines: list[bytes], ascii: bool = False) -> None:
        """``add_lines`` for lines none of which is over the line cap (``ascii``: all their bytes are)."""
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
            part = self.files[-1]
            self.first_overlong = (len(self.files) - 1, part.lines + 1)
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
        counts = values_tally.counts
        categories = values_tally.categories
        try:
            tally = Counter(values)
        except TypeError:
            tally = Counter(map(hashable, values))
        limit = self.settings.value_chars
        blank = 0
        new: list[str] = []
        server_events: list[tuple[int, str, int, str]] = []
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

    def _count_server(
        self,
        value: str,
        count: int,
        events: list[tuple[int, str, int, str]],
        index: int = -1,
    ) -> None:
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
        result = self.copy()
        result.absorb(later)
        return result

    def copy(self) -> PartialReport:
        """An equal partial that shares nothing mutable with this one."""
        copied = PartialReport(self.settings, fast=self.fast)
        copied.records = self.records
        copied.with_kind = self.with_kind
        copied.without_kind = self.without_kind
        copied.invalid = self.invalid
        copied.unparseable = self.unparseable
        copied.first_invalid = self.first_invalid
        copied.first_unparseable = self.first_unparseable
        copied.overlong = self.overlong
        copied.first_overlong = self.first_overlong
        copied.values = self.values.copy()
        copied.servers = self.servers.copy()
        copied.files = [part.copy() for part in self.files]
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
        self.records += later.records
        self.with_kind += later.with_kind
        self.without_kind += later.without_kind
        self.invalid += later.invalid
        self.unparseable += later.unparseable
        self.first_invalid = earliest(self.first_invalid, shift.optional(later.first_invalid))
        self.first_unparseable = earliest(self.first_unparseable, shift.optional(later.first_unparseable))
        self.overlong += later.overlong
        self.first_overlong = earliest(self.first_overlong, shift.optional(later.first_overlong))
        self.values.absorb(later.values, shift)
        self.servers.absorb(later.servers, shift)
        for index, part in enumerate(later.files):
            if index == 0 and joined:
                last = self.files[-1]
                last.records += part.records
                last.lines += part.lines
                last.error = last.error or part.error
            else:
                self.files.append(part.copy())

    def __getstate__(self) -> dict[str, object]:
        # An engine's workers send their partials pickled (see tasks.packed): the counts, not the
        # decoder, which is made again when lines are added.
        state = dict(self.__dict__)
        state["_decoder"] = None
        state["known_categories"] = {}
        return state

    @property
    def exact(self) -> bool:
        """False when a merge could not know every kept value's count (see the module docstring)."""
        return not self.values.uncertain and not self.servers.uncertain

    def pins(self) -> Pins:
        """The kept values and servers: what every part counts exactly in a second pass."""
        return Pins(self.values.kept_keys(), self.servers.kept_keys())

    # Serialising

    def to_json(self) -> dict[str, object]:
        """A JSON-ready dict; ``PartialReport.from_json`` reads it back into an equal partial."""
        return {
            "version": wire.FORMAT_VERSION,
            "settings": self.settings.to_json(),
            "records": self.records,
            "with_kind": self.with_kind,
            "without_kind": self.without_kind,
            "invalid": self.invalid,
            "unparseable": self.unparseable,
            "first_invalid": None if self.first_invalid is None else list(self.first_invalid),
            "first_unparseable": None if self.first_unparseable is None else list(self.first_unparseable),
            "overlong": self.overlong,
            "first_overlong": None if self.first_overlong is None else list(self.first_overlong),
            "values": self.values.to_json(),
            "servers": self.servers.to_json(),
            "files": [part.to_json() for part in self.files],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, object], fast: bool = True) -> PartialReport:
        wire.check_partial(data)  # every field, so nothing below meets what a real partial cannot hold
        top = cast("dict[str, Any]", data)
        settings = AuditSettings.from_json(top["settings"])
        partial = cls(settings, fast=fast)
        for key in ("records", "with_kind", "without_kind", "invalid", "unparseable", "overlong"):
            setattr(partial, key, top[key])
        for key in ("first_invalid", "first_unparseable", "first_overlong"):
            setattr(partial, key, None if top[key] is None else tuple(top[key]))
        partial.values = Tally.from_json(top["values"], settings.distinct_limit, CAPPED)
        partial.servers = Tally.from_json(top["servers"], settings.distinct_limit, frozenset({SERVER}))
        partial.files = [FilePart.from_json(part) for part in top["files"]]
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
        report.records = self.records
        report.with_kind = self.with_kind
        report.without_kind = self.without_kind
        report.invalid = self.invalid
        report.unparseable = self.unparseable
        report.first_invalid = self.location(self.first_invalid)
        report.first_unparseable = self.location(self.first_unparseable)
        report.overlong = self.overlong
        report.first_overlong = self.location(self.first_overlong)
        values = self.values
        overflow: dict[str, tuple[int, Location]] = dict(values.overflow)
        name_of = names(settings)
        rows: list[KindRow] = []
        for key, count in values.counts.items():
            category = values.categories[key]
            first = values.first[key]
            if key in values.extras:  # counted exactly for a merge, but past the cap: an overflow record
                spill(overflow, category, count, first)
                continue
            value, length = shown_value(key, settings.value_chars)
            row = KindRow(value, count, category, self.location(first) or "", length)
            if category == REGISTERED:
                row.canonical = name_of(key)
                row.replacement = successor(row.canonical)
            elif category in (ALIASED, LEGACY):
                name = name_of(key)
                describe_older(row, name)
                if category == ALIASED:
                    row.canonical = None if name is None else settings.aliases.get(name)
            elif category == UNDECLARED:
                row.suggestion = closest_declared(value, settings.namespaces)
            elif category == UNREGISTERED:
                row.suggestion = failure_kinds.suggest(value)
            rows.append(row)
        rows.sort(key=lambda row: (-row.count, row.value or "", row.length))
        for category in sorted(overflow, key=CATEGORY_ORDER.index):
            count, first = overflow[category]
            rows.append(KindRow(None, count, category, self.location(first) or ""))
        report.kinds = rows
        servers = self.servers
        namespaces: dict[str, int] = {}
        namespaces_overflow = sum(count for count, _ in servers.overflow.values())
        for server, count in servers.counts.items():
            if server in servers.extras:
                namespaces_overflow += count
            else:
                shown = shown_value(server, settings.value_chars)[0]
                namespaces[shown] = namespaces.get(shown, 0) + count
        report.namespaces = dict(sorted(namespaces.items(), key=lambda item: (-item[1], item[0])))
        report.namespaces_overflow = namespaces_overflow
        report.files = [FileReport(part.path, part.records, part.error) for part in self.files]
        return report


def merge(partials: Iterable[PartialReport]) -> PartialReport:
    """The partials of consecutive input, in input order, merged into one (ValueError when empty)."""
    merged: PartialReport | None = None
    for partial in partials:
        if merged is None:
            merged = partial.copy()  # the one accumulator: each later part is folded into it
        else:
            merged.absorb(partial)
    if merged is None:
        raise ValueError("merge() needs at least one partial report")
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
