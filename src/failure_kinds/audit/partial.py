"""The mergeable partial report: the record totals, one tally per kind field (its kinds, servers and
stages, the stages of each kind, absent and null apart), one entry per file part, and the report built
from it. Two partials of consecutive input merge into the partial of the whole; the report of a merge is
the report of one pass over the same input, however the input was cut.

Locations are ``(file index, line)`` pairs relative to the partial. A partial that starts in the middle
of a file (``continuation=True``) numbers its lines from 1; the merge shifts them by the line count of
the previous part of that file, so physical line numbers stay exact however a file is cut.

A partial travels pickled between this audit's own processes only: never load one from a source you do
not trust (unpickling runs code).
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, TypeAlias

import failure_kinds

from .report import FileReport, Report, kind_rows, server_totals, stage_rows
from .settings import (
    KIND_STAGES,
    NAMESPACED,
    SERVER,
    UNDECLARED,
    UNMOVED,
    AuditSettings,
    FieldTally,
    Location,
    Shift,
    Tally,
    earliest,
    limit_stages,
    shorten,
    stage_category,
)
from .sources import ABSENT, BLANK, INVALID, UNPARSEABLE, make_decoder

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any, Final

    from .sources import Decoder


class Coded(Protocol):
    """One batch of one path's values counted where they were read (a Parquet column, in Arrow)."""

    def __len__(self) -> int: ...
    def values(self) -> list[object]: ...
    def pairs(self, stages: Column) -> Counted: ...


Column: TypeAlias = list[object] | Coded
Pair: TypeAlias = tuple[object, object]  # (kind, stage)
Counted: TypeAlias = Counter[object] | list[tuple[Pair, int]]

BOM: Final = b"\xef\xbb\xbf"
# Per file and field, the first this many records without the field are read whole for the paths where
# they hold a registered kind (``kinds_at``): bounded work, and the same records however a file is cut.
PROBED: Final = 100
# How deep and how wide such a record is searched.
_PROBE_DEPTH: Final = 8
_PROBE_KEYS: Final = 1_000
# Categories remembered per partial (or per engine worker): enough for every value all its batches keep.
_KNOWN_CATEGORIES: Final = 200_000


@dataclass
class FilePart:
    """One file, or the part of one file, that a partial read; the lists hold one entry per field."""

    path: str
    unit: str = "line"
    """"line" for JSON Lines, "row" for tables (a location shows as ``path:row N``)."""
    continuation: bool = False
    """This part starts in the middle of the file: it continues the previous partial's last file."""
    records: int = 0
    lines: int = 0
    """Physical lines (or rows) read, blank ones included: what later parts of the file are shifted by."""
    error: str | None = None
    with_kind: list[int] = dataclasses.field(default_factory=list[int])
    present: list[bool] = dataclasses.field(default_factory=list[bool])
    """Some record holds the field (null included)."""
    absent: list[int] = dataclasses.field(default_factory=list[int])
    kinds_at: list[dict[str, int]] = dataclasses.field(default_factory=list[dict[str, int]])
    """Paths where the first PROBED records without the field hold a registered kind -> the number of
    the first such record among them."""

    def copy(self) -> FilePart:
        copied = dataclasses.replace(self)
        copied.with_kind, copied.present, copied.absent = [*self.with_kind], [*self.present], [*self.absent]
        copied.kinds_at = [found.copy() for found in self.kinds_at]
        return copied

    def absorb(self, later: FilePart) -> None:
        """Add ``later``, the part of the same file that follows this one."""
        self.records += later.records
        self.lines += later.lines
        self.error = self.error or later.error
        for index, found in enumerate(later.kinds_at):
            for path, number in found.items():
                if number + self.absent[index] < PROBED:
                    self.kinds_at[index].setdefault(path, number + self.absent[index])
            self.with_kind[index] += later.with_kind[index]
            self.present[index] = self.present[index] or later.present[index]
            self.absent[index] += later.absent[index]


class PartialReport:
    """The audit of some consecutive input, mergeable with the partial of the input that follows."""

    def __init__(self, settings: AuditSettings, fast: bool = True) -> None:
        self.settings: AuditSettings = settings
        self.fast: bool = fast
        self.records: int = 0
        self.unparseable: int = 0
        self.first_unparseable: Location | None = None
        self.overlong: int = 0
        """Lines longer than the line cap (counted as unparseable too)."""
        self.first_overlong: Location | None = None
        self.fields: list[FieldTally] = [FieldTally(settings) for _ in settings.fields]
        self.files: list[FilePart] = []
        paths = settings.paths
        self._positions: list[tuple[int, int]] = [
            (paths.index(field), paths.index(stage))
            for field, stage in zip(settings.fields, settings.stages, strict=True)
        ]
        self._decoder: Decoder | None = None
        self.known_categories: dict[str, str] = {}
        """Values (up to the value cut) -> their category under these settings, as found: an engine
        hands every batch a worker runs the same dict, so a value is categorised once per worker."""

    # Counting

    def start_file(self, path: str, *, continuation: bool = False, unit: str = "line") -> FilePart:
        """Begin a file (or, with ``continuation``, a part of a file that starts after its first line)."""
        count = len(self.fields)
        part = FilePart(path, unit, continuation, 0, 0, None, [0] * count, [False] * count, [0] * count)
        part.kinds_at = [{} for _ in range(count)]
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
            decoder = self._decoder = make_decoder(self.settings.paths, self.fast)
        self._add(decoder.batch(lines, ascii), lines)

    def add_overlong(self) -> None:
        """The next line of the current file is longer than the line cap: unparseable, and noted."""
        if self.first_overlong is None:
            self.first_overlong = (len(self.files) - 1, self.files[-1].lines + 1)
        self.overlong += 1
        self._add([[UNPARSEABLE] for _ in self.settings.paths], None)

    def add_blank(self, lines: int) -> None:
        """The next ``lines`` lines of the current file are blank (not records, but lines)."""
        self.files[-1].lines += lines

    def add_columns(self, columns: Sequence[Column]) -> None:
        """Count the next lines (or rows) of the current file, already decoded: per path of
        ``settings.paths``, one value per line: a str, None (null), ABSENT, any other value (invalid), or
        the line's UNPARSEABLE or BLANK (not a record) in every column."""
        self._add(columns, None)

    def add_error(self, error: str) -> None:
        """The current file could not be read (to its end): the first error is reported."""
        part = self.files[-1]
        if part.error is None:
            part.error = error

    def _add(self, columns: Sequence[Column], decoded: list[bytes] | None) -> None:
        part = self.files[-1]
        file_index, first_line = len(self.files) - 1, part.lines + 1
        firsts = [FirstIndex(column) for column in columns]
        blank = 0
        for number, (kind_at, stage_at) in enumerate(self._positions):
            kinds, first = columns[kind_at], firsts[kind_at]
            pairs = _pairs(kinds, columns[stage_at])
            counts = self._tally(number, pairs, first, firsts[stage_at], file_index, first_line)
            if number == 0:
                blank = counts[BLANK]
                if unparseable := counts[UNPARSEABLE]:
                    self.unparseable += unparseable
                    if self.first_unparseable is None:
                        self.first_unparseable = (file_index, first_line + first.listed().index(UNPARSEABLE))
            part.with_kind[number] += counts[str]
            if counts[None] or counts[str] or counts[INVALID]:
                part.present[number] = True
            if absent := counts[ABSENT]:
                if not part.present[number] and part.absent[number] < PROBED and decoded is not None:
                    self._probe(part, number, first.listed(), decoded)
                part.absent[number] += absent
        records = len(columns[0]) - blank
        part.records += records
        part.lines += len(columns[0])
        self.records += records

    def _tally(
        self,
        number: int,
        pairs: Counted,
        first_kind: FirstIndex,
        first_stage: FirstIndex,
        file_index: int,
        first_line: int,
    ) -> dict[object, int]:
        """Count one batch of one field, its records counted per kind or per (kind, stage) (``_pairs``);
        return its records by what they hold: str (a kind), None, ABSENT, INVALID, BLANK and UNPARSEABLE."""
        field, limit = self.fields[number], self.settings.value_chars
        found: dict[object, int] = dict.fromkeys((None, ABSENT, INVALID, BLANK, UNPARSEABLE), 0)
        kind_counts: dict[str, int] = {}
        stage_counts: dict[str, int] = {}
        staged: list[tuple[str, object, int]] = []  # (kind, stage key, records) of the kinds with a stage
        if isinstance(pairs, dict):  # no record of the batch has a stage: its kinds alone are counted
            for kind, count in pairs.items():
                if type(kind) is str:
                    kind_counts[kind] = count
                else:
                    found[kind if kind in _NOT_KINDS else INVALID] += count
        else:
            for (kind, stage), count in pairs:
                if type(kind) is str:
                    kind_counts[kind] = kind_counts.get(kind, 0) + count
                else:
                    found[kind if kind in _NOT_KINDS else INVALID] += count
                    if kind is BLANK or kind is UNPARSEABLE:
                        continue  # no record, or no object: no stage either
                if type(stage) is str:
                    stage_counts[stage] = stage_counts.get(stage, 0) + count
                    stage_key: object = stage if len(stage) <= limit else shorten(stage, limit)
                elif stage is None or stage is ABSENT:
                    continue
                else:
                    stage_key = INVALID
                    field.stage_invalid += count
                    if field.first_stage_invalid is None:
                        field.first_stage_invalid = (file_index, first_line + first_stage.invalid())
                if type(kind) is str:
                    staged.append((kind, stage_key, count))
        found[str] = sum(kind_counts.values())
        field.with_kind += found[str]
        field.null += found[None]
        field.absent += found[ABSENT]
        if found[INVALID]:
            field.invalid += found[INVALID]
            if field.first_invalid is None:
                field.first_invalid = (file_index, first_line + first_kind.invalid())
        if kind_counts:
            self._count_kinds(field, kind_counts, staged, first_kind, file_index, first_line)
        if stage_counts:
            tally = field.stages
            fresh: Tally | None = None  # the stages new here, admitted together
            for value, count in stage_counts.items():
                key = value if len(value) <= limit else shorten(value, limit)
                if key in tally.counts:
                    tally.counts[key] += count
                else:
                    fresh = fresh or Tally(tally.limit, tally.capped)
                    location = (file_index, first_line + first_stage(value))
                    fresh.keep(key, stage_category(value), count, location)
            if fresh is not None:
                tally.absorb(fresh, UNMOVED)
        return found

    def _count_kinds(
        self,
        field: FieldTally,
        kind_counts: dict[str, int],
        staged: list[tuple[str, object, int]],
        first: FirstIndex,
        file_index: int,
        first_line: int,
    ) -> None:
        """Count the kinds of one batch, and the records of its ``staged`` kinds per stage."""
        tally, settings = field.kinds, self.settings
        counts, categories = tally.counts, tally.categories
        limit, known_categories = settings.value_chars, self.known_categories
        servers, server_counts = field.servers, field.servers.counts
        # A server not counted yet -> its records in this batch and its first value: values come in the
        # order the batch first holds them.
        new_servers: dict[str, list[Any]] = {}
        placed: dict[str, str] = {}  # value -> category, for the staged kinds' overflow rows
        fresh: Tally | None = None  # the kinds new here, admitted together once the batch is counted
        for value, count in kind_counts.items():
            # A value longer than the cut is kept under its key, never under itself: a crafted value that
            # spells another's key must not count as it.
            key = value if len(value) <= limit else shorten(value, limit)
            known = counts.get(key)
            if known is not None:
                counts[key] = known + count
                category = categories[key]
            elif key in tally.lost:
                category = tally.add_lost(key, count)
            else:
                cached = known_categories.get(value) if len(value) <= limit else None
                category = settings.category(value) if cached is None else cached
                if cached is None and len(value) <= limit and len(known_categories) < _KNOWN_CATEGORIES:
                    known_categories[value] = category
                fresh = fresh or Tally(tally.limit, tally.capped)
                fresh.keep(key, category, count, (file_index, first_line + first(value)))
            if staged:
                placed[value] = category
            if category in (NAMESPACED, UNDECLARED):
                server = value.partition(":")[0]
                if len(server) > limit:
                    server = shorten(server, limit)
                known = server_counts.get(server)
                if known is not None:
                    server_counts[server] = known + count
                elif server in new_servers:
                    new_servers[server][0] += count
                else:
                    new_servers[server] = [count, value]
        if fresh is not None:
            dropped = tally.absorb(fresh, UNMOVED)
            if field.by_stage:  # only a kind with stages has any to move
                for lost, category in dropped:
                    field.drop_kind(lost, category)
        fresh_servers: Tally | None = None
        for server, (count, value) in new_servers.items():
            if server in servers.lost:
                servers.add_lost(server, count)
            else:
                fresh_servers = fresh_servers or Tally(servers.limit, servers.capped)
                fresh_servers.keep(server, SERVER, count, (file_index, first_line + first(value)))
        if fresh_servers is not None:
            servers.absorb(fresh_servers, UNMOVED)
        # Once every value of the batch is counted, as one met late may have taken an earlier one's row.
        grown: dict[int, Counter[object]] = {}
        for value, stage, count in staged:
            key = value if len(value) <= limit else shorten(value, limit)
            if key in counts:
                stages = field.by_stage.get(key) or field.by_stage.setdefault(key, Counter())
            else:
                stages = field.overflow_by_stage.setdefault(placed[value], Counter())
            stages[stage] += count
            if len(stages) > KIND_STAGES:
                grown[id(stages)] = stages
        for stages in grown.values():
            limit_stages(stages)

    def _probe(self, part: FilePart, number: int, kinds: list[object], lines: list[bytes]) -> None:
        """Read whole the records of this batch without the field, up to the file's first PROBED, for
        the paths where they hold a registered kind."""
        seen = part.absent[number]
        for index, value in enumerate(kinds):
            if seen >= PROBED:
                return
            if value is not ABSENT:
                continue
            try:
                document: object = json.loads(lines[index].removeprefix(BOM))
            except (ValueError, RecursionError):
                document = None
            for path in kind_paths(document):
                part.kinds_at[number].setdefault(path, seen)
            seen += 1

    # Merging

    def merge(self, later: PartialReport) -> PartialReport:
        """This partial followed by ``later``: a new partial (neither input changes)."""
        return merge((self, later))

    def copy(self) -> PartialReport:
        """An equal partial that shares nothing mutable with this one."""
        return copy.deepcopy(self)

    def absorb(self, later: PartialReport) -> None:
        """Add ``later``, the partial of the input that follows, to this one in place (``later`` does not
        change). The cost grows with ``later``, not with this partial: how engines fold their parts."""
        if later.settings != self.settings:
            raise ValueError("partial reports of different settings (fields, aliases, declarations, caps)")
        joined = bool(self.files and later.files and later.files[0].continuation)
        if joined and self.files[-1].path != later.files[0].path:
            raise ValueError(
                f"{later.files[0].path!r} continues a file, but the partial before it ends in "
                f"{self.files[-1].path!r}"
            )
        shift = Shift(len(self.files) - 1, self.files[-1].lines) if joined else Shift(len(self.files), 0)
        for name in ("records", "unparseable", "overlong"):
            setattr(self, name, getattr(self, name) + getattr(later, name))
        for name in ("first_unparseable", "first_overlong"):
            theirs = getattr(later, name)
            setattr(self, name, earliest(getattr(self, name), None if theirs is None else shift(theirs)))
        for mine, theirs in zip(self.fields, later.fields, strict=True):
            mine.absorb(theirs, shift)
        parts = iter(later.files)
        if joined:
            self.files[-1].absorb(next(parts))
        self.files.extend(part.copy() for part in parts)

    def __getstate__(self) -> dict[str, object]:
        # An engine's workers send their partials pickled: the counts, not the decoder, which is made
        # again when lines are added.
        return {**self.__dict__, "_decoder": None, "known_categories": {}}

    # The report

    def location(self, location: Location | None) -> str | None:
        """``path:line`` (or ``path:row N``) of a location of this partial."""
        if location is None:
            return None
        index, line = location
        part = self.files[index]
        return f"{part.path}:{line}" if part.unit == "line" else f"{part.path}:{part.unit} {line}"

    def report(self) -> Report:
        """The report of everything this partial holds: the first field's, with the other fields'
        reports in its ``also``."""
        settings, location = self.settings, self.location
        reports: list[Report] = []
        for number, field in enumerate(self.fields):
            report = Report(settings.fields[number], settings.stages[number], self.records)
            report.with_kind, report.null, report.absent = field.with_kind, field.null, field.absent
            report.without_kind = field.null + field.absent
            report.invalid, report.first_invalid = field.invalid, location(field.first_invalid)
            report.unparseable, report.first_unparseable = self.unparseable, location(self.first_unparseable)
            report.overlong, report.first_overlong = self.overlong, location(self.first_overlong)
            report.kinds = kind_rows(field, settings, location)
            report.stages = stage_rows(field, settings, location)
            report.namespaces, report.namespaces_overflow = server_totals(field.servers, settings.value_chars)
            report.files = [
                FileReport(
                    part.path,
                    part.records,
                    part.error,
                    part.with_kind[number],
                    None if part.present[number] or not part.absent[number] else _paths(part, number),
                )
                for part in self.files
            ]
            reports.append(report)
        first = reports[0]
        first.also = reports[1:]
        return first


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


def kind_paths(document: object) -> list[str]:
    """The dotted paths (that ``--field`` can name) where ``document`` holds a registered kind, looking
    at most _PROBE_KEYS keys, _PROBE_DEPTH levels deep."""
    found: list[str] = []
    pending: list[tuple[str, Any, int]] = [("", document, 1)]
    looked = 0
    while pending:
        prefix, value, depth = pending.pop()
        if value.__class__ is not dict:
            continue
        for key, item in value.items():
            looked += 1
            if looked > _PROBE_KEYS:
                return found
            if "." in key or not key:
                continue
            if type(item) is str and item in failure_kinds.FAILURE_KINDS:
                found.append(prefix + key)
            elif item.__class__ is dict and depth < _PROBE_DEPTH:
                pending.append((f"{prefix}{key}.", item, depth + 1))
    return found


def _paths(part: FilePart, number: int) -> list[str]:
    found = part.kinds_at[number]
    return sorted(found, key=lambda path: (found[path], path))


def _pairs(kinds: Column, stages: Column) -> Counted:
    """The records of one batch per kind where none has a stage (a Counter), or else per (kind, stage)."""
    if not isinstance(kinds, list):  # counted where it was read (Arrow)
        return kinds.pairs(stages)
    assert isinstance(stages, list)  # a batch's columns are all lists or all coded
    try:
        if stages.count(ABSENT) == len(stages):
            return Counter(kinds)
        return list(Counter(zip(kinds, stages, strict=True)).items())
    except TypeError:  # a list or an object at a path: INVALID stands for it, as it counts as that
        return _pairs(list(map(_hashable, kinds)), list(map(_hashable, stages)))


def _hashable(value: object) -> object:
    """A list or object at a path stands in the tally as INVALID, which is what it counts as."""
    return value if value.__class__ in (str, type(None)) or value in _NOT_KINDS else INVALID


_NOT_KINDS: Final = (None, ABSENT, BLANK, UNPARSEABLE)


class FirstIndex:
    """Where a value is first in one column of a batch: a search for each of the few values new to a
    tally; past the distinct cap every batch can hold thousands, which one pass over the batch finds
    instead. A coded column is made a list only when a first index is asked for."""

    __slots__ = ("column", "found", "searches", "values")

    def __init__(self, column: Column) -> None:
        self.column: Column = column
        self.values: list[object] | None = None
        self.searches: int = 0
        self.found: dict[object, int] | None = None

    def listed(self) -> list[object]:
        """The column's values, in order."""
        if self.values is None:
            self.values = self.column if isinstance(self.column, list) else self.column.values()
        return self.values

    def __call__(self, value: object) -> int:
        if self.found is None:
            self.searches += 1
            if self.searches <= _SEARCHES:
                return self.listed().index(value)
            values = self.listed()
            try:  # from the last to the first, so each value keeps its first index: one pass in C
                self.found = dict(zip(reversed(values), range(len(values) - 1, -1, -1), strict=True))
            except TypeError:  # a list or an object among them (an invalid value), which no key is
                self.found = {}
                for index, item in enumerate(values):
                    if type(item) is str and item not in self.found:
                        self.found[item] = index
        return self.found[value]

    def invalid(self) -> int:
        """The first invalid value: neither a string nor None, nor a line's marker."""
        for index, value in enumerate(self.listed()):
            if value is not None and type(value) is not str and value not in (BLANK, UNPARSEABLE, ABSENT):
                return index
        raise AssertionError("no invalid value in a batch that counted one")


_SEARCHES: Final = 8
