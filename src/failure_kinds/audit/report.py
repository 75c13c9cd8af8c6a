"""The audit's report of each field: its totals, one row per kept value and one overflow row per capped
category (each with its records per stage), the stage rows, the per-server totals and the files, built
from a partial's tallies (``render`` writes it as text and JSON)."""

from __future__ import annotations

import dataclasses
from typing import cast

import failure_kinds

from .settings import (
    ALIASED,
    LEGACY,
    MALFORMED,
    NAMESPACED,
    REGISTERED,
    UNDECLARED,
    UNREGISTERED,
    cut_names,
    shorten,
    shown_value,
)
from .sources import INVALID, OTHER

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections import Counter
    from collections.abc import Callable
    from typing import Final

    from .settings import AuditSettings, FieldTally, Location, Tally


INVALID_STAGE: Final = "(invalid)"  # in a kind's stages: a stage that is not a string
OTHER_STAGE: Final = "(other)"  # in a kind's stages: a stage without a row of its own (past the cap)


@dataclasses.dataclass
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
    """For an unregistered or undeclared value: the name it most likely meant; for a malformed one, its
    lower-case form where that is registered or declared."""
    canonical: str | None = None
    """The registered kind the value counts as: itself when registered, an alias's kind, an older label's
    replacement; None when it counts as none."""
    replacement: str | None = None
    """For an older label (legacy, or aliased by the user): the kind the vocabulary says replaced it, None
    when no single one did; for a deprecated registered kind: the kind to write instead."""
    note: str | None = None
    """For an older label: the vocabulary's one line on it (why it has no single replacement, say)."""
    by_stage: list[tuple[str | None, int]] = dataclasses.field(default_factory=list[tuple[str | None, int]])
    """Its records per stage, by count: the stage, None for none, INVALID_STAGE or OTHER_STAGE."""

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
            "by_stage": [{"stage": stage, "count": count} for stage, count in self.by_stage],
        }


@dataclasses.dataclass
class StageRow:
    """One distinct stage, the overflow row of the unregistered ones (value None, category
    unregistered), or the stages that are not strings (value None, category invalid)."""

    value: str | None
    count: int
    category: str
    """registered (a FailureStage), legacy (an older stage label), unregistered or invalid."""
    first_seen: str
    suggestion: str | None = None
    replacement: str | None = None
    length: int = 0
    """The stage's full length in characters (0 for an overflow or invalid row)."""

    def to_json(self) -> dict[str, object]:
        return {
            "value": self.value,
            "length": self.length,
            "count": self.count,
            "category": self.category,
            "first_seen": self.first_seen,
            "suggestion": self.suggestion,
            "replacement": self.replacement,
        }


@dataclasses.dataclass
class FileReport:
    """What one input gave: its records, those with a kind, the error that stopped reading it, if any,
    and when no record has the field, the paths where its records hold registered kinds."""

    path: str
    records: int = 0
    error: str | None = None
    with_kind: int = 0
    kinds_at: list[str] | None = None

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {
            "path": self.path,
            "records": self.records,
            "error": self.error,
            "with_kind": self.with_kind,
        }
        if self.kinds_at is not None:
            data["kinds_at"] = [*self.kinds_at]
        return data


@dataclasses.dataclass
class Report:
    """What an audit found at one field. ``records == with_kind + without_kind + invalid + unparseable``
    and ``without_kind == absent + null``; the rows of a category (its overflow row included) add up to
    its records; the per-server totals (plus ``namespaces_overflow``) add up to the namespaced and
    undeclared records. ``also``: the reports of the further fields, in the order given."""

    field: str
    stage: str = "stage"
    records: int = 0
    with_kind: int = 0
    without_kind: int = 0
    absent: int = 0
    null: int = 0
    invalid: int = 0
    unparseable: int = 0
    first_invalid: str | None = None
    first_unparseable: str | None = None
    overlong: int = 0
    """Lines longer than the line cap, among the unparseable ones."""
    first_overlong: str | None = None
    kinds: list[KindRow] = dataclasses.field(default_factory=list[KindRow])
    stages: list[StageRow] = dataclasses.field(default_factory=list[StageRow])
    namespaces: dict[str, int] = dataclasses.field(default_factory=dict[str, int])
    namespaces_overflow: int = 0
    """Records of servers past the distinct cap, counted together."""
    files: list[FileReport] = dataclasses.field(default_factory=list[FileReport])
    notes: list[str] = dataclasses.field(default_factory=list[str])
    """Remarks for stderr, such as a directory without any input file in it."""
    field_missing: bool = False
    """No record has the field at all (neither a value nor null there): the audit checked nothing, and
    ``--strict`` fails."""
    field_suggestion: str | None = None
    """Then the path where the records hold registered kinds, or None."""
    also: list[Report] = dataclasses.field(default_factory=list["Report"])

    @property
    def failed_files(self) -> list[FileReport]:
        return [file for file in self.files if file.error is not None]

    @property
    def unregistered(self) -> list[KindRow]:
        return [row for row in self.kinds if row.category in (UNREGISTERED, MALFORMED)]

    @property
    def undeclared(self) -> list[KindRow]:
        return [row for row in self.kinds if row.category == UNDECLARED]

    @property
    def legacy(self) -> list[KindRow]:
        """Rows of older labels that no alias maps: each fails ``--strict``, replacement or not."""
        return [row for row in self.kinds if row.category == LEGACY]

    @property
    def never_seen(self) -> str:
        """Why the field was never seen, when ``field_missing``: what the note and the text's
        ``field`` line say."""
        from failure_kinds._display import plain

        if self.absent:
            return f"no record has the field {plain(self.field)}"
        if self.records:
            return "no record could be read as a JSON object"
        return "no input holds a record" if self.files else "no input file was found"

    @property
    def findings(self) -> bool:
        """Whether ``--strict`` fails on this field: a value not registered, an older label, a stage
        not registered, or a field no record has."""
        stages = any(row.category in (UNREGISTERED, LEGACY) for row in self.stages)
        return bool(self.unregistered or self.undeclared or self.legacy or stages or self.field_missing)

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
            "stage": self.stage,
            "field_missing": self.field_missing,
            "field_suggestion": self.field_suggestion,
            "records": self.records,
            "with_kind": self.with_kind,
            "without_kind": self.without_kind,
            "absent": self.absent,
            "null": self.null,
            "invalid": self.invalid,
            "unparseable": self.unparseable,
            "first_invalid": self.first_invalid,
            "first_unparseable": self.first_unparseable,
            "overlong": self.overlong,
            "first_overlong": self.first_overlong,
            "kinds": [row.to_json() for row in self.kinds],
            "stages": [row.to_json() for row in self.stages],
            "namespaces": self.namespaces,
            "namespaces_overflow": self.namespaces_overflow,
            "canonical": self.canonical_totals(),
            "not_seen": self.not_seen,
            "files": [file.to_json() for file in self.files],
        }


CATEGORY_ORDER = [MALFORMED, UNREGISTERED, NAMESPACED, UNDECLARED]


def _by_stage(
    counts: Counter[object] | None, records: int, kept: dict[str, int], limit: int
) -> list[tuple[str | None, int]]:
    """A row's records per stage; those with no stage are the ones ``counts`` leaves out, and a stage
    without a row of its own (not in ``kept``) counts as OTHER."""
    if counts is None:
        return [(None, records)]
    staged = counts.total()
    rows: list[tuple[str | None, int]] = [(None, records - staged)] if records > staged else []
    other = 0
    for stage, count in counts.items():
        if stage is OTHER or (type(stage) is str and stage not in kept):
            other += count
        elif stage is INVALID:
            rows.append((INVALID_STAGE, count))
        elif count:
            rows.append((shown_value(cast("str", stage), limit)[0], count))
    if other:
        rows.append((OTHER_STAGE, other))
    return sorted(rows, key=lambda row: (-row[1], row[0] is None, row[0] or ""))


def kind_rows(
    field: FieldTally, settings: AuditSettings, location: Callable[[Location], str | None]
) -> list[KindRow]:
    """The report's rows of a field: one per kept value, by count, then one overflow row per category."""
    from failure_kinds._suggest import suggest_any
    from failure_kinds.history import older_label

    values = field.kinds
    limit, cut = settings.value_chars, cut_names(settings)

    def name_of(key: str) -> str | None:  # a kept key longer than the cut is some name's cut key
        return key if len(key) <= limit else cut.get(key)

    rows: list[KindRow] = []
    for key, count in values.counts.items():
        category, first = values.categories[key], values.first[key]
        value, length = shown_value(key, limit)
        by_stage = _by_stage(field.by_stage.get(key), count, field.stages.counts, limit)
        row = KindRow(value, count, category, location(first) or "", length, by_stage=by_stage)
        if category == REGISTERED:
            row.canonical = name_of(key)
            if row.canonical in failure_kinds.FAILURE_KINDS:  # deprecated: the kind to write instead
                successor = failure_kinds.FailureKind(row.canonical).replaced_by
                row.replacement = None if successor is None else successor.value
        elif category in (ALIASED, LEGACY):
            name = name_of(key)
            older = older_label(name)
            if older is not None:
                row.replacement, row.note = older.replacement, older.note
            if category == ALIASED:
                row.canonical = None if name is None else settings.aliases.get(name)
            elif older is not None:  # an older label without an alias counts as its replacement
                row.canonical = older.replacement
        elif category == MALFORMED:
            lower = value.lower()
            server, _, kind = lower.partition(":")
            if lower in failure_kinds.FAILURE_KINDS or kind in settings.namespaces.get(server, ()):
                row.suggestion = lower
        elif category == UNDECLARED:
            row.suggestion = suggest_any(value, settings.namespaces)
        elif category == UNREGISTERED:
            row.suggestion = failure_kinds.suggest(value)
        rows.append(row)
    rows.sort(key=lambda row: (-row.count, row.value or "", row.length))
    for category in sorted(values.overflow, key=CATEGORY_ORDER.index):
        count, first = values.overflow[category]
        by_stage = _by_stage(field.overflow_by_stage.get(category), count, field.stages.counts, limit)
        rows.append(KindRow(None, count, category, location(first) or "", by_stage=by_stage))
    return rows


def stage_rows(
    field: FieldTally, settings: AuditSettings, location: Callable[[Location], str | None]
) -> list[StageRow]:
    """The report's stage rows: one per kept stage, by count, then the overflow and the invalid rows."""
    from failure_kinds._stages import Stage
    from failure_kinds._suggest import closest
    from failure_kinds.history import OLDER_STAGES

    tally, limit = field.stages, settings.value_chars
    rows: list[StageRow] = []
    for key, count in tally.counts.items():
        category, (value, length) = tally.categories[key], shown_value(key, limit)
        row = StageRow(value, count, category, location(tally.first[key]) or "", length=length)
        if category == LEGACY:  # its key may be cut: the older label whose key it is
            row.replacement = next(new for old, new in OLDER_STAGES.items() if shorten(old, limit) == key)
        elif category == UNREGISTERED:
            # An older label's look-alike (verifer) means what replaced it.
            renamed = [old for old, new in OLDER_STAGES.items() if new is not None]
            near = closest(value, [*(stage.value for stage in Stage), *renamed])
            row.suggestion = OLDER_STAGES.get(near, near) if near is not None else None
        rows.append(row)
    rows.sort(key=lambda row: (-row.count, row.value or ""))
    for category, (count, first) in tally.overflow.items():
        rows.append(StageRow(None, count, category, location(first) or ""))
    if field.first_stage_invalid is not None:
        rows.append(StageRow(None, field.stage_invalid, "invalid", location(field.first_stage_invalid) or ""))
    return rows


def server_totals(servers: Tally, value_chars: int) -> tuple[dict[str, int], int]:
    """The per-server totals of a tally, by count, and the records of servers past the cap."""
    namespaces: dict[str, int] = {}
    namespaces_overflow = sum(count for count, _ in servers.overflow.values())
    for server, count in servers.counts.items():
        shown = shown_value(server, value_chars)[0]
        namespaces[shown] = namespaces.get(shown, 0) + count
    return dict(sorted(namespaces.items(), key=lambda item: (-item[1], item[0]))), namespaces_overflow
