"""The audit's report: totals, one row per kept value (plus one overflow row per capped category), the
per-server totals and the per-file results, built from a partial report."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import failure_kinds

from .settings import (
    ALIASED,
    LEGACY,
    NAMESPACED,
    REGISTERED,
    UNDECLARED,
    UNREGISTERED,
    shorten,
    shown_value,
)
from .tally import spill

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from .partial import PartialReport
    from .settings import AuditSettings
    from .wire import Location


@dataclass
class KindRow:
    """One distinct value found at the field, or (value None) the overflow row of a category."""

    value: str | None
    """The value, cut to the audit's value cut (see ``length``); None for an overflow row."""
    count: int
    category: str
    first_seen: str
    length: int = 0
    """The value's full length in characters (0 for an overflow row)."""
    suggestion: str | None = None
    """For an unregistered or undeclared value: the name it most likely meant."""
    canonical: str | None = None
    """The registered kind the value counts as: itself when registered, an alias's kind, an older label's
    replacement; None when it counts as none."""
    replacement: str | None = None
    """For an older label (legacy, or aliased by the user): the kind the vocabulary says replaced it, None
    when no single one did; for a deprecated registered kind: the kind to write instead."""
    note: str | None = None
    """For an older label: the vocabulary's one line on it (why it has no single replacement, say)."""

    def to_json(self) -> dict[str, object]:
        return {
            "value": self.value,
            "length": self.length,
            "count": self.count,
            "category": self.category,
            "suggestion": self.suggestion,
            "canonical": self.canonical,
            "replacement": self.replacement,
            "note": self.note,
            "first_seen": self.first_seen,
        }


@dataclass
class FileReport:
    """What one input gave: its records, and the error that stopped reading it, if any."""

    path: str
    records: int = 0
    error: str | None = None

    def to_json(self) -> dict[str, object]:
        return {"path": self.path, "records": self.records, "error": self.error}


@dataclass
class Report:
    """What an audit found. ``records == with_kind + without_kind + invalid + unparseable``; the rows
    of a category (its overflow row included) add up to its records; the per-server totals (plus
    ``namespaces_overflow``) add up to the namespaced and undeclared records."""

    field: str
    records: int = 0
    with_kind: int = 0
    without_kind: int = 0
    invalid: int = 0
    unparseable: int = 0
    first_invalid: str | None = None
    first_unparseable: str | None = None
    overlong: int = 0
    """Lines longer than the line cap, among the unparseable ones."""
    first_overlong: str | None = None
    kinds: list[KindRow] = dataclasses.field(default_factory=list[KindRow])
    namespaces: dict[str, int] = dataclasses.field(default_factory=dict[str, int])
    namespaces_overflow: int = 0
    """Records of servers past the distinct cap, counted together."""
    files: list[FileReport] = dataclasses.field(default_factory=list[FileReport])
    notes: list[str] = dataclasses.field(default_factory=list[str])
    """Remarks for stderr, such as a directory without any input file in it."""
    field_missing: bool = False
    """No record has the field at all (neither a value nor null there), as far as the records looked at
    show (see ``fields``): the audit checked nothing, and ``--strict`` fails."""
    field_suggestion: str | None = None
    """Then the field the records have that is most like it, or None."""

    @property
    def failed_files(self) -> list[FileReport]:
        return [file for file in self.files if file.error is not None]

    @property
    def unregistered(self) -> list[KindRow]:
        return [row for row in self.kinds if row.category == UNREGISTERED]

    @property
    def undeclared(self) -> list[KindRow]:
        return [row for row in self.kinds if row.category == UNDECLARED]

    @property
    def legacy(self) -> list[KindRow]:
        """Rows of older labels that no alias maps: each fails ``--strict``, replacement or not."""
        return [row for row in self.kinds if row.category == LEGACY]

    def canonical_totals(self) -> dict[str, int]:
        """Records per registered kind once aliased labels and older labels with a replacement are
        counted with the kind they stand for."""
        totals: dict[str, int] = {}
        for row in self.kinds:
            if row.canonical is not None:
                totals[row.canonical] = totals.get(row.canonical, 0) + row.count
        return dict(sorted(totals.items(), key=lambda item: (-item[1], item[0])))

    @property
    def not_seen(self) -> list[str]:
        """The registered kinds no record counts as (under its own name, an alias or an older label)."""
        seen = self.canonical_totals()
        return sorted(kind for kind in failure_kinds.FAILURE_KINDS if kind not in seen)

    def to_json(self) -> dict[str, object]:
        return {
            "field": self.field,
            "field_missing": self.field_missing,
            "field_suggestion": self.field_suggestion,
            "records": self.records,
            "with_kind": self.with_kind,
            "without_kind": self.without_kind,
            "invalid": self.invalid,
            "unparseable": self.unparseable,
            "first_invalid": self.first_invalid,
            "first_unparseable": self.first_unparseable,
            "overlong": self.overlong,
            "first_overlong": self.first_overlong,
            "kinds": [row.to_json() for row in self.kinds],
            "namespaces": self.namespaces,
            "namespaces_overflow": self.namespaces_overflow,
            "canonical": self.canonical_totals(),
            "not_seen": self.not_seen,
            "files": [file.to_json() for file in self.files],
        }


def build_report(partial: PartialReport) -> Report:
    settings = partial.settings
    report = Report(settings.field)
    report.records = partial.records
    report.with_kind = partial.with_kind
    report.without_kind = partial.without_kind
    report.invalid = partial.invalid
    report.unparseable = partial.unparseable
    report.first_invalid = partial.location(partial.first_invalid)
    report.first_unparseable = partial.location(partial.first_unparseable)
    report.overlong = partial.overlong
    report.first_overlong = partial.location(partial.first_overlong)
    values = partial.values
    overflow: dict[str, tuple[int, Location]] = dict(values.overflow)
    name_of = _names(settings)
    rows: list[KindRow] = []
    for key, count in values.counts.items():
        category = values.categories[key]
        first = values.first[key]
        if key in values.extras:  # counted exactly for a merge, but past the cap: an overflow record
            spill(overflow, category, count, first)
            continue
        value, length = shown_value(key, settings.value_chars)
        row = KindRow(value, count, category, partial.location(first) or "", length)
        if category == REGISTERED:
            row.canonical = name_of(key)
            row.replacement = _successor(row.canonical)
        elif category in (ALIASED, LEGACY):
            name = name_of(key)
            _describe_older(row, name)
            if category == ALIASED:
                row.canonical = None if name is None else settings.aliases.get(name)
        elif category == UNDECLARED:
            row.suggestion = _closest_declared(value, settings.namespaces)
        elif category == UNREGISTERED:
            row.suggestion = failure_kinds.suggest(value)
        rows.append(row)
    rows.sort(key=lambda row: (-row.count, row.value or "", row.length))
    for category in sorted(overflow, key=_CATEGORY_ORDER.index):
        count, first = overflow[category]
        rows.append(KindRow(None, count, category, partial.location(first) or ""))
    report.kinds = rows
    servers = partial.servers
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
    report.files = [FileReport(part.path, part.records, part.error) for part in partial.files]
    return report


_CATEGORY_ORDER = [UNREGISTERED, NAMESPACED, UNDECLARED]


def _names(settings: AuditSettings) -> Callable[[str], str | None]:
    """The name a kept key of a registered, aliased or older label stands for. Such a name longer than the
    value cut is kept under its cut key, so the cut keys of every known name are made once, when first
    needed (a partial read back holds no other cut key in those categories, see ``received``)."""
    limit = settings.value_chars
    cut: dict[str, str] = {}

    def name_of(key: str) -> str | None:
        if len(key) <= limit:
            return key
        if not cut:
            from failure_kinds.history import OLDER_LABELS

            for name in (*failure_kinds.FAILURE_KINDS, *OLDER_LABELS, *settings.aliases):
                cut[shorten(name, limit)] = name
        return cut.get(key)

    return name_of


def _successor(name: str | None) -> str | None:
    """The kind that replaces the registered kind ``name`` when it is deprecated, else None."""
    if name is None or name not in failure_kinds.FAILURE_KINDS:
        return None
    successor = failure_kinds.FailureKind(name).replaced_by
    return None if successor is None else successor.value


def _describe_older(row: KindRow, name: str | None) -> None:
    """An older label's replacement and note; for a legacy row (no alias) the replacement is canonical."""
    from failure_kinds.history import older_label

    older = older_label(name)
    if older is None:
        return
    row.replacement, row.note = older.replacement, older.note
    if row.category == LEGACY:
        row.canonical = older.replacement


def _closest_declared(value: str, namespaces: dict[str, tuple[str, ...]]) -> str | None:
    """The declared ``server:kind`` an undeclared value most likely meant."""
    from failure_kinds._suggest import suggest_any

    return suggest_any(value, namespaces)
