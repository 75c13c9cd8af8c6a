"""The mergeable partial report: what an audit of some lines found, in a form that combines.

A ``PartialReport`` holds everything the final report is made of: the record totals, the first location
of an invalid and of an unparseable record, the count, category and first location of every kept value,
one overflow bucket per capped category, the per-server totals (capped the same way), and one entry per
file or file part read. Two partials of consecutive input merge into the partial of the whole; the merge
is associative, and the report of a merge is identical to the report of one pass over the same input
(see ``failure_kinds.audit`` for the engine-facing API and its example).

Locations are ``(file index, line)`` pairs relative to the partial. A partial that starts in the middle
of a file (``continuation=True``) numbers its lines from 1; the merge shifts them by the line count of
the previous part of that file, so physical line numbers stay exact however a file is cut.

The distinct-value cap: each capped category (unregistered, namespaced, undeclared) keeps the first
``distinct_limit`` distinct values in input order and counts the rest in its overflow bucket. Which
values the whole input keeps is decided by the first partials, so a partial that overflowed cannot say
how often it saw a value that only an earlier partial kept. Such a merge is marked inexact; the engine
then audits the parts again with ``pins=merged.pins()``, which makes every part count the globally kept
values exactly, and the second merge is exact. Without overflow in a non-first part, one pass suffices.
"""

from __future__ import annotations

from collections import Counter

import failure_kinds

from .decoding import BLANK, UNPARSEABLE, hashable, make_decoder

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Mapping
    from typing import Final

    from .decoding import Decoder
    from .report import Report

Location = tuple[int, int]
"""(index into the partial's files, line or row number within that file part, from 1)."""

# At most this many distinct values of each capped category get a row of their own; the rest are counted
# together in one overflow row per category. The same cap bounds the servers in the per-server totals.
DISTINCT_LIMIT: Final = 10_000
# A value longer than this many characters is kept cut to it, with its full length and a digest, so a kept
# value costs at most about 4 * VALUE_CHARS bytes however long the value is.
VALUE_CHARS: Final = 256
# A line longer than this many bytes is unparseable and is skipped without being held in memory.
LINE_BYTES: Final = 64 * 1024 * 1024
BOM: Final = b"\xef\xbb\xbf"

REGISTERED: Final = "registered"
NAMESPACED: Final = "namespaced"
UNDECLARED: Final = "undeclared"
ALIASED: Final = "aliased"
UNREGISTERED: Final = "unregistered"
CAPPED: Final = frozenset({NAMESPACED, UNDECLARED, UNREGISTERED})
SERVER: Final = "server"  # the one category of the per-server totals

_FORMAT_VERSION: Final = 1


def category_of(name: str, namespaces: Mapping[str, Collection[str]] | None = None) -> str:
    """registered, namespaced, undeclared or unregistered: what the vocabulary says of ``name`` (no
    aliases). ``undeclared`` only with ``namespaces`` (server -> declared kinds): a namespaced value whose
    server is declared there but whose kind is not."""
    return failure_kinds._category(name, namespaces or {})  # pyright: ignore[reportPrivateUsage]


def shorten(value: str, limit: int) -> str:
    """The key a value is kept under: itself when at most ``limit`` characters, else its first ``limit``
    characters, a NUL, its length and a digest (so distinct long values stay distinct)."""
    if len(value) <= limit:
        return value
    import hashlib

    digest = hashlib.blake2b(value.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()
    return f"{value[:limit]}\x00{len(value)}:{digest}"


def shown_value(key: str, limit: int) -> tuple[str, int]:
    """What a kept key shows, and the full length of the value it stands for."""
    if len(key) <= limit:
        return key, len(key)
    return key[:limit], int(key[limit + 1 :].partition(":")[0])


class AuditSettings:
    """What decides the counts. Partials merge only when their settings are equal. Immutable."""

    __slots__ = ("aliases", "distinct_limit", "field", "line_bytes", "namespaces", "value_chars")

    def __init__(
        self,
        field: str = "failure_kind",
        aliases: Mapping[str, str] | None = None,
        namespaces: Mapping[str, Iterable[str]] | None = None,
        distinct_limit: int = DISTINCT_LIMIT,
        value_chars: int = VALUE_CHARS,
        line_bytes: int = LINE_BYTES,
    ) -> None:
        self.field: Final[str] = field
        """The dotted path of the kind in each object."""
        self.aliases: Final[dict[str, str]] = dict(aliases or {})
        """Legacy label -> the registered kind it stands for."""
        self.namespaces: Final[dict[str, tuple[str, ...]]] = {
            server: tuple(kinds) for server, kinds in (namespaces or {}).items()
        }
        """Declared namespaces: server -> its kinds (without the prefix)."""
        self.distinct_limit: Final[int] = distinct_limit
        self.value_chars: Final[int] = value_chars
        self.line_bytes: Final[int] = line_bytes

    def _key(self) -> tuple[object, ...]:
        return (
            self.field,
            self.aliases,
            self.namespaces,
            self.distinct_limit,
            self.value_chars,
            self.line_bytes,
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AuditSettings) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash((self.field, self.distinct_limit, self.value_chars, self.line_bytes))

    def __repr__(self) -> str:
        return f"AuditSettings({self.to_json()!r})"

    def category(self, value: str) -> str:
        return ALIASED if value in self.aliases else category_of(value, self.namespaces)

    def to_json(self) -> dict[str, object]:
        return {
            "field": self.field,
            "aliases": dict(self.aliases),
            "namespaces": {server: list(kinds) for server, kinds in self.namespaces.items()},
            "distinct_limit": self.distinct_limit,
            "value_chars": self.value_chars,
            "line_bytes": self.line_bytes,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> AuditSettings:
        namespaces = _mapping(data["namespaces"])
        return cls(
            field=str(data["field"]),
            aliases={str(old): str(new) for old, new in _mapping(data["aliases"]).items()},
            namespaces={
                str(server): tuple(str(kind) for kind in _sequence(kinds))
                for server, kinds in namespaces.items()
            },
            distinct_limit=_integer(data["distinct_limit"]),
            value_chars=_integer(data["value_chars"]),
            line_bytes=_integer(data["line_bytes"]),
        )


class Pins:
    """Values (and servers) every part must count exactly, whatever its own overflow: the kept set of a
    first, inexact merge, handed back to the parts for the second pass. Immutable."""

    __slots__ = ("servers", "values")

    def __init__(self, values: Iterable[str] = (), servers: Iterable[str] = ()) -> None:
        self.values: Final[frozenset[str]] = frozenset(values)
        self.servers: Final[frozenset[str]] = frozenset(servers)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Pins) and (self.values, self.servers) == (other.values, other.servers)

    def __hash__(self) -> int:
        return hash((self.values, self.servers))

    def __repr__(self) -> str:
        return f"Pins({len(self.values)} values, {len(self.servers)} servers)"

    def to_json(self) -> dict[str, object]:
        return {"values": sorted(self.values), "servers": sorted(self.servers)}

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> Pins:
        return cls(
            (str(value) for value in _sequence(data["values"])),
            (str(server) for server in _sequence(data["servers"])),
        )


class FilePart:
    """One file, or the part of one file, that a partial read."""

    __slots__ = ("continuation", "error", "lines", "path", "records", "unit")

    def __init__(
        self,
        path: str,
        unit: str = "line",
        continuation: bool = False,
        records: int = 0,
        lines: int = 0,
        error: str | None = None,
    ) -> None:
        self.path: str = path
        self.unit: str = unit
        """"line" for JSON Lines, "row" for tables (a location shows as ``path:row N``)."""
        self.continuation: bool = continuation
        """This part starts in the middle of the file: it continues the previous partial's last file."""
        self.records: int = records
        self.lines: int = lines
        """Physical lines (or rows) read, blank ones included: what later parts of the file are shifted by."""
        self.error: str | None = error

    def copy(self) -> FilePart:
        return FilePart(self.path, self.unit, self.continuation, self.records, self.lines, self.error)

    def __repr__(self) -> str:
        return f"FilePart({self.to_json()!r})"

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
            records=_integer(data["records"]),
            lines=_integer(data["lines"]),
            error=None if error is None else str(error),
        )


class Tally:
    """Counts per key with the distinct cap of the capped categories: kept keys in input order, one
    overflow bucket per category, and pinned keys counted exactly even past the cap."""

    __slots__ = (
        "capped",
        "categories",
        "counts",
        "extras",
        "first",
        "kept",
        "limit",
        "overflow",
        "pinned",
        "uncertain",
    )

    def __init__(self, limit: int, capped: frozenset[str], pinned: frozenset[str] = frozenset()) -> None:
        self.limit: int = limit
        self.capped: frozenset[str] = capped
        self.pinned: frozenset[str] = pinned
        self.counts: dict[str, int] = {}
        self.first: dict[str, Location] = {}
        self.categories: dict[str, str] = {}
        # How many keys of each capped category are kept in input order (pinned extras not included).
        self.kept: dict[str, int] = {}
        # Keys counted only because they are pinned: past the cap, so in the overflow row of the report.
        self.extras: set[str] = set()
        # category -> [records, first location] of what went past the cap.
        self.overflow: dict[str, tuple[int, Location]] = {}
        # Counted keys whose count may lack records that a merged part put in its overflow bucket (it
        # could not know the key would be kept). Harmless once such a key is itself past the cap.
        self.uncertain: set[str] = set()

    def add_new(self, key: str, category: str, count: int, location: Location) -> None:
        """Count ``key`` (not yet counted here) seen first at ``location``; calls come in input order."""
        if category in self.capped:
            kept = self.kept.get(category, 0)
            if kept >= self.limit:
                if key not in self.pinned:
                    records, first = self.overflow.get(category, (0, location))
                    self.overflow[category] = (records + count, first)
                    return
                self.extras.add(key)
            else:
                self.kept[category] = kept + 1
        self.counts[key] = count
        self.first[key] = location
        self.categories[key] = category

    def overflowed(self, category: str) -> bool:
        return category in self.overflow

    def kept_keys(self) -> frozenset[str]:
        return frozenset(
            key
            for key, category in self.categories.items()
            if category in self.capped and key not in self.extras
        )

    def shifted(self, shift: _Shift) -> Tally:
        moved = Tally(self.limit, self.capped, self.pinned)
        moved.counts = dict(self.counts)
        moved.first = {key: shift(location) for key, location in self.first.items()}
        moved.categories = dict(self.categories)
        moved.kept = dict(self.kept)
        moved.extras = set(self.extras)
        moved.overflow = {
            category: (count, shift(first)) for category, (count, first) in self.overflow.items()
        }
        moved.uncertain = set(self.uncertain)
        return moved

    def merged(self, later: Tally) -> Tally:
        """This tally followed by ``later`` (already shifted)."""
        pinned = self.pinned & later.pinned
        result = Tally(self.limit, self.capped, pinned)
        # Which keys the whole keeps: this tally's kept keys, then (while a category has room) the keys
        # ``later`` kept that this tally never saw, in their input order.
        kept: dict[str, None] = {}
        for key in self.categories:
            if key not in self.extras:
                kept[key] = None
        room = {category: self.limit - count for category, count in self.kept.items()}
        for key in sorted(later.categories, key=later.first.__getitem__):
            category = later.categories[key]
            if key in later.extras or key in self.categories:
                continue
            if category in self.capped:
                if self.overflowed(category) or room.get(category, self.limit) <= 0:
                    continue
                room[category] = room.get(category, self.limit) - 1
            kept[key] = None
        overflow = dict(self.overflow)
        for category, (count, first) in later.overflow.items():
            _spill(overflow, category, count, first)
        # Pinned keys past the cap stay counted (as extras), so a later merge still knows them exactly.
        keys = list(kept) + [
            key
            for key in self.categories.keys() | later.categories.keys()
            if key in pinned and key not in kept
        ]
        for key in self.categories.keys() | later.categories.keys():
            if key in kept or key in pinned:
                continue
            # Past the cap of the whole: its records go to the overflow bucket.
            category = self.categories.get(key) or later.categories[key]
            for side in (self, later):
                if key in side.counts:
                    _spill(overflow, category, side.counts[key], side.first[key])
        for key in sorted(keys, key=lambda key: self.first.get(key) or later.first[key]):
            category = self.categories.get(key) or later.categories[key]
            count = 0
            for side in (self, later):
                known = side.counts.get(key)
                if known is not None:
                    count += known
                    if key in side.uncertain:
                        result.uncertain.add(key)
                elif category in side.capped and side.overflowed(category) and key not in side.pinned:
                    result.uncertain.add(key)  # ``side`` may have counted it in its overflow bucket
            result.counts[key] = count
            result.first[key] = self.first[key] if key in self.first else later.first[key]
            result.categories[key] = category
            if key in kept:
                if category in self.capped:
                    result.kept[category] = result.kept.get(category, 0) + 1
            else:
                result.extras.add(key)
        result.overflow = overflow
        return result

    def to_json(self) -> dict[str, object]:
        return {
            "kept": [
                [key, self.counts[key], self.categories[key], list(self.first[key])]
                for key in self.counts
                if key not in self.extras
            ],
            "extras": [
                [key, self.counts[key], self.categories[key], list(self.first[key])]
                for key in sorted(self.extras)
            ],
            "overflow": {
                category: [count, list(first)] for category, (count, first) in self.overflow.items()
            },
            "pinned": sorted(self.pinned),
            "uncertain": sorted(self.uncertain),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, object], limit: int, capped: frozenset[str]) -> Tally:
        tally = cls(limit, capped, frozenset(str(key) for key in _sequence(data["pinned"])))
        for extra, entries in ((False, data["kept"]), (True, data["extras"])):
            for entry in _sequence(entries):
                key, count, category, first = _sequence(entry)
                key, category = str(key), str(category)
                tally.counts[key] = _integer(count)
                tally.categories[key] = category
                tally.first[key] = _location(first)
                if extra:
                    tally.extras.add(key)
                elif category in capped:
                    tally.kept[category] = tally.kept.get(category, 0) + 1
        for category, entry in _mapping(data["overflow"]).items():
            count, first = _sequence(entry)
            tally.overflow[str(category)] = (_integer(count), _location(first))
        tally.uncertain = {str(key) for key in _sequence(data["uncertain"])}
        return tally


class _Shift:
    """Moves a later partial's locations behind an earlier one's."""

    __slots__ = ("files", "lines")

    def __init__(self, files: int, lines: int) -> None:
        self.files: int = files
        self.lines: int = lines  # added to lines of the later partial's first file (a continuation)

    def __call__(self, location: Location) -> Location:
        index, line = location
        return (index + self.files, line + self.lines if index == 0 else line)

    def optional(self, location: Location | None) -> Location | None:
        return None if location is None else self(location)


def _spill(overflow: dict[str, tuple[int, Location]], category: str, count: int, first: Location) -> None:
    known = overflow.get(category)
    overflow[category] = (count, first) if known is None else (known[0] + count, min(known[1], first))


def _earliest(one: Location | None, other: Location | None) -> Location | None:
    if one is None:
        return other
    if other is None:
        return one
    return min(one, other)


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
        if not lines:
            return
        cap = self.settings.line_bytes
        if max(map(len, lines)) > cap:
            overlong = [
                index
                for index, line in enumerate(lines)
                if len(line) - line.endswith(b"\n") > cap and not line.isspace()
            ]
            if overlong:
                start = 0
                for index in overlong:
                    self.add_lines(lines[start:index])
                    self.add_overlong()
                    start = index + 1
                self.add_lines(lines[start:])
                return
        if getattr(lines, "overlong", False):
            self.add_overlong()
            return
        self.add_read_lines(lines, b"" in lines)

    def add_read_lines(self, lines: list[bytes], empty: bool = False) -> None:
        """``add_lines`` for lines as ``sources.read_batches`` yields them: none over the line cap, each
        ending with its newline but maybe the last, none empty unless ``empty``."""
        part = self.files[-1]
        if part.lines == 0 and not part.continuation and lines[0].startswith(BOM):
            lines = [lines[0][len(BOM) :], *lines[1:]]  # no longer known to be ASCII: checked per line
        decoder = self._decoder
        if decoder is None:
            decoder = self._decoder = make_decoder(self.settings.field.split("."), self.fast)
        ascii: bool = getattr(lines, "ascii", False)
        if empty or b"\n" in lines:
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
                    category = settings.category(value)
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
        if later.settings != self.settings:
            raise ValueError("partial reports of different settings (field, aliases, declarations, caps)")
        joined = bool(self.files and later.files and later.files[0].continuation)
        if joined and self.files[-1].path != later.files[0].path:
            raise ValueError(
                f"{later.files[0].path!r} continues a file, but the partial before it ends in "
                f"{self.files[-1].path!r}"
            )
        shift = _Shift(len(self.files) - 1, self.files[-1].lines) if joined else _Shift(len(self.files), 0)
        result = PartialReport(self.settings, fast=self.fast)
        result.records = self.records + later.records
        result.with_kind = self.with_kind + later.with_kind
        result.without_kind = self.without_kind + later.without_kind
        result.invalid = self.invalid + later.invalid
        result.unparseable = self.unparseable + later.unparseable
        result.first_invalid = _earliest(self.first_invalid, shift.optional(later.first_invalid))
        result.first_unparseable = _earliest(self.first_unparseable, shift.optional(later.first_unparseable))
        result.overlong = self.overlong + later.overlong
        result.first_overlong = _earliest(self.first_overlong, shift.optional(later.first_overlong))
        result.values = self.values.merged(later.values.shifted(shift))
        result.servers = self.servers.merged(later.servers.shifted(shift))
        files = [part.copy() for part in self.files]
        for index, part in enumerate(later.files):
            if index == 0 and joined:
                last = files[-1]
                last.records += part.records
                last.lines += part.lines
                last.error = last.error or part.error
            else:
                files.append(part.copy())
        result.files = files
        return result

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
            "version": _FORMAT_VERSION,
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
        if data.get("version") != _FORMAT_VERSION:
            raise ValueError(f"not a partial report of format version {_FORMAT_VERSION}")
        settings = AuditSettings.from_json(_mapping(data["settings"]))
        partial = cls(settings, fast=fast)
        partial.records = _integer(data["records"])
        partial.with_kind = _integer(data["with_kind"])
        partial.without_kind = _integer(data["without_kind"])
        partial.invalid = _integer(data["invalid"])
        partial.unparseable = _integer(data["unparseable"])
        first_invalid, first_unparseable = data["first_invalid"], data["first_unparseable"]
        partial.first_invalid = None if first_invalid is None else _location(first_invalid)
        partial.first_unparseable = None if first_unparseable is None else _location(first_unparseable)
        partial.overlong = _integer(data["overlong"])
        first_overlong = data["first_overlong"]
        partial.first_overlong = None if first_overlong is None else _location(first_overlong)
        partial.values = Tally.from_json(_mapping(data["values"]), settings.distinct_limit, CAPPED)
        partial.servers = Tally.from_json(
            _mapping(data["servers"]), settings.distinct_limit, frozenset({SERVER})
        )
        partial.files = [FilePart.from_json(_mapping(part)) for part in _sequence(data["files"])]
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
        from .report import build_report

        return build_report(self)


def merge(partials: Iterable[PartialReport]) -> PartialReport:
    """The partials of consecutive input, in input order, merged into one (ValueError when empty)."""
    merged: PartialReport | None = None
    for partial in partials:
        merged = partial if merged is None else merged.merge(partial)
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


# Reading serialised partials back: the JSON may come from anywhere, so every field is checked.


def _mapping(value: object) -> dict[str, object]:
    if not isinstance(value, dict):
        raise ValueError(f"expected an object in a partial report, got {type(value).__name__}")
    from typing import cast

    return cast("dict[str, object]", value)


def _sequence(value: object) -> list[object]:
    if not isinstance(value, list | tuple):
        raise ValueError(f"expected a list in a partial report, got {type(value).__name__}")
    from typing import cast

    return list(cast("list[object]", value))


def _integer(value: object) -> int:
    if type(value) is not int:
        raise ValueError(f"expected an integer in a partial report, got {type(value).__name__}")
    return value


def _location(value: object) -> Location:
    index, line = _sequence(value)
    return (_integer(index), _integer(line))
