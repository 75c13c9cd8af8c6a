"""The audit's report written as text for people (one section per field) and as JSON for tools; and the
progress line on stderr, shown only on a terminal."""

from __future__ import annotations

import json
import re
import time
import unicodedata
from json.encoder import encode_basestring_ascii as quoted

from failure_kinds._display import escaped, plain

from .report import INVALID_STAGE, OTHER_STAGE
from .settings import LEGACY, MALFORMED, REGISTERED, UNREGISTERED

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Any, ClassVar, Final

    from .report import KindRow, Report, StageRow


# A value is shown in the text table cut to this many characters (the JSON report keeps more).
VALUE_WIDTH: Final = 60
# The text report lists every file that failed and at most this many of the others.
FILES_LISTED: Final = 20
# The text report's lines wrap at this many columns (a single word longer than that, a path, stays whole).
COLUMNS: Final = 100
_WORDS: Final = re.compile(r" *[^ ]+")
# Joins words a wrap must not part (a stage and its count): shown as a space. A value holding one is
# shown escaped, so the glue is never the data's.
_GLUE: Final = "\u00a0"


def shown_location(location: str) -> str:
    """A ``path:line`` as printed: the path part escaped like any name."""
    path, separator, line = location.rpartition(":")
    return plain(path) + separator + line if separator else plain(location)


def plural(count: int, word: str) -> str:
    """``1 record``, ``2 records``, with thousands separators."""
    return f"{count:,} {word}" if count == 1 else f"{count:,} {word}s"


def _percent(count: int, total: int) -> str:
    return f"{100 * count / total:5.1f}%" if total else "    -"


def columns(text: str) -> int:
    """The terminal columns ``text`` takes: a wide or full-width character (CJK) takes two."""
    return len(text) if text.isascii() else sum(1 + (unicodedata.east_asian_width(c) in "WF") for c in text)


def _wrapped(line: str, indent: int) -> list[str]:
    """``line`` as is when it fits in COLUMNS, else wrapped at spaces, the rest indented ``indent``; a
    word wider than that (a long path) stays whole, on a line of its own."""
    if columns(line) <= COLUMNS:
        return [line.replace(_GLUE, " ")]
    lines = [""]
    for word in _WORDS.findall(line):
        if lines[-1].strip() and columns(lines[-1] + word) > COLUMNS:
            lines.append(" " * indent + word.lstrip(" "))
        else:
            lines[-1] += word
    return [line.replace(_GLUE, " ") for line in lines]


def _with_notes(line: str, notes: str, separator: str = "  ") -> list[str]:
    """``line`` with ``notes`` beside it when both fit in COLUMNS, else the notes wrapped under it."""
    if not notes:
        return [line.rstrip()]
    if columns(line + separator + notes) <= COLUMNS:
        return [(line + separator + notes).replace(_GLUE, " ")]
    return [line.rstrip(), *_wrapped(" " * 6 + notes, 6)]


_UNPARSEABLE: Final = "not UTF-8, not JSON, or not a JSON object"
# What needs action, in this order, and what addresses it.
_SECTIONS: Final = (
    "malformed",
    "unregistered",
    "undeclared",
    "legacy",
    "aliased",
    "namespaced",
    "registered",
)
_STRICT: Final = "; --strict fails on them"
_ACTIONS: Final = {
    "malformed": (
        "value",
        " with a colon but not in the form <server>:<kind> in lower case: fix the producers" + _STRICT,
    ),
    "unregistered": (
        "value",
        " not in the vocabulary: fix the producers (failure-kinds lint finds them in code), "
        "or map them with --aliases FILE" + _STRICT,
    ),
    "undeclared": (
        "kind",
        " that a declared server lacks: declare them ([tool.failure-kinds.namespaces]) "
        "or fix the producers" + _STRICT,
    ),
    "legacy": (
        "older label",
        ": in code, failure-kinds lint finds them and its --fix rewrites those with one replacement; "
        "in logs, map them with --aliases FILE" + _STRICT,
    ),
}


def _actions(report: Report, number_width: int) -> list[str]:
    """A line for each category that needs action, saying what addresses it."""
    found: list[tuple[str, int, str]] = []
    if report.failed_files:
        what = "inputs not read to the end: the error beside each under files: says why"
        found.append(("unreadable", len(report.failed_files), what))
    if report.field_missing:
        what = report.never_seen
        if report.field_suggestion is not None:
            what += f"; did you mean {plain(report.field_suggestion)}? (--field PATH)"
        found.append(("field", report.records, what + "; --strict fails on it"))
    for category, (noun, what) in _ACTIONS.items():
        if rows := [row for row in report.kinds if row.category == category]:
            distinct = sum(1 for row in rows if row.value is not None)
            found.append((category, sum(row.count for row in rows), plural(distinct, noun) + what))
    stages = [row for row in report.stages if row.category in (UNREGISTERED, LEGACY)]
    if stages:
        what = " that no FailureStage names: fix the producers to write the stage each means (below)"
        what += _STRICT
        distinct = sum(1 for row in stages if row.value is not None)
        found.append(("stage", sum(row.count for row in stages), plural(distinct, "stage") + what))
    overlong = ""
    if report.first_overlong is not None:
        longer, where = plural(report.overlong, "line"), shown_location(report.first_overlong)
        overlong = f"; {longer} over the line cap (--max-line-bytes), first at {where}"
    for label, count, what, first, more in (
        ("invalid", report.invalid, "a number, bool, object or list at the field", report.first_invalid, ""),
        ("unparseable", report.unparseable, _UNPARSEABLE, report.first_unparseable, overlong),
    ):
        if count:
            where = f"first at {shown_location(first or '')}{more}"
            found.append((label, count, f"{what}: fix its producer; {where}"))
    if not found:
        return []
    lines = ["needs action:"]
    for label, count, what in found:
        lines += _wrapped(f"  {label:<15}{count:>{number_width},}  {what}", 19 + number_width)
    return [*lines, ""]


def render_text(report: Report, bar_character: str = "#") -> str:
    """The report as text: one section per field, in the order the fields were given."""
    return "\n".join(_field_text(one, bar_character) for one in (report, *report.also))


def _field_text(report: Report, bar_character: str) -> str:
    lines = [*_wrapped(f"failure kinds at {report.field!r} in {plural(len(report.files), 'file')}", 2), ""]
    number_width = max(len(f"{report.records:,}"), 5)
    lines += _actions(report, number_width)
    unparseable = _UNPARSEABLE + (f"; {report.overlong:,} over the line cap" if report.overlong else "")
    for label, count, note in (
        ("records", report.records, ""),
        ("with a kind", report.with_kind, ""),
        ("without a kind", report.without_kind, f"field absent {report.absent:,}, null {report.null:,}"),
        ("invalid", report.invalid, "field holds a number, bool, object or list"),
        ("unparseable", report.unparseable, unparseable),
    ):
        percent = _percent(count, report.records) if label != "records" else "      "
        lines.append(f"  {label:<15}{count:>{number_width},}  {percent}  {note}".rstrip())
    rows = report.kinds
    if rows:
        lines += ["", f"shares below are of the {plural(report.with_kind, 'record')} with a kind"]
    biggest = max((row.count for row in rows), default=0)
    shown_values = {
        id(row): f"(other {row.category} values)" if row.value is None else _shown_value(row.value)
        for row in rows
    }
    totals = report.canonical_totals()
    # One width for the rows and the regrouped kinds: an alias's kind or a replacement may be longer than
    # every value seen. The bars give way to a wide value, so that a row fits in COLUMNS.
    width = max((columns(label) for label in (*shown_values.values(), *totals)), default=0)
    bar_width = max(8, min(24, COLUMNS - 14 - width - number_width))

    def row_line(label: str, count: int, largest: int, extra: str = "") -> list[str]:
        bar = bar_character * max(1, round(bar_width * count / largest)) if largest else ""
        label += " " * (width - columns(label))
        line = f"  {label}  {count:>{number_width},}  {_percent(count, report.with_kind)}  {bar:<{bar_width}}"
        return _with_notes(line, extra)

    for category in _SECTIONS:
        section = [row for row in rows if row.category == category]
        if not section:
            continue
        total = sum(row.count for row in section)
        distinct = sum(1 for row in section if row.value is not None)
        lines += ["", f"{category}: {distinct:,} distinct, {plural(total, 'record')}"]
        for row in section:
            extras: list[str] = []
            if row.value is not None and max(row.length, columns(row.value)) > VALUE_WIDTH:
                extras.append(f"{row.length:,} characters")
            extras.extend(_row_notes(row))
            if category in _ACTIONS:
                extras.append(f"first seen {shown_location(row.first_seen)}")
            if report.stages or any(stage is not None for stage, _ in row.by_stage):
                extras.append(
                    f"stages:{_GLUE}"
                    + ", ".join(f"{_stage_name(stage)}{_GLUE}{count:,}" for stage, count in row.by_stage)
                )
            lines += row_line(shown_values[id(row)], row.count, biggest, "  ".join(extras))
        if category == "namespaced" and (report.namespaces or report.namespaces_overflow):
            servers = [f"{_shown_value(server)} {count:,}" for server, count in report.namespaces.items()]
            if report.namespaces_overflow:
                servers.append(f"(other servers) {report.namespaces_overflow:,}")
            lines += _wrapped(f"  by server: {', '.join(servers)}", 4)

    if report.stages:
        staged = sum(row.count for row in report.stages)
        lines += ["", f"stages at {report.stage!r}: {plural(staged, 'record')} with a stage"]
        labels = [_stage_label(row) for row in report.stages]
        label_width = max(14, *map(columns, labels))
        for label, stage in zip(labels, report.stages, strict=True):
            notes = _stage_notes(stage)
            if stage.value is not None and max(stage.length, columns(stage.value)) > VALUE_WIDTH:
                notes.insert(0, f"{stage.length:,} characters")
            if stage.category not in (REGISTERED, "invalid"):
                notes.append(f"first seen {shown_location(stage.first_seen)}")
            padded = label + " " * (label_width - columns(label))
            line = f"  {padded}  {stage.count:>{number_width},}  {stage.category:<12}"
            lines += _with_notes(line, "  ".join(notes))

    # Only the kinds whose count the regrouping changes: the others are in the registered rows above.
    registered = {row.canonical: row.count for row in rows if row.category == "registered"}
    changed = {kind: count for kind, count in totals.items() if registered.get(kind) != count}
    if changed:
        parts = ["registered"]
        parts += [
            what
            for category, what in (("aliased", "aliased"), ("legacy", "older labels"))
            if any(row.category == category and row.canonical is not None for row in rows)
        ]
        together = ", ".join(parts[:-1]) + " and " + parts[-1]
        heading = f"regrouped by canonical kind ({together} together), where that changes the count:"
        lines += ["", *_wrapped(heading, 2)]
        top = max(totals.values())
        for kind, count in changed.items():
            lines += row_line(kind, count, top)
    not_seen = report.not_seen
    if rows and not_seen:
        heading = f"not seen: {plural(len(not_seen), 'registered kind')}: {', '.join(not_seen)}"
        lines += ["", *_wrapped(heading, 2)]

    if len(report.files) > 1 or report.failed_files:
        lines += ["", "files:"]
        # Every file that failed, and the first FILES_LISTED that did not: a directory of a hundred
        # thousand files must not turn the summary into a file listing (the JSON report has them all).
        listed = [file for index, file in enumerate(report.files) if file.error or index < FILES_LISTED]
        shown_paths = [plain(file.path) for file in listed]
        path_width = max(map(columns, shown_paths))
        for path, file in zip(shown_paths, listed, strict=True):
            records = f"{plural(file.records, 'record')}, {file.with_kind:,} with a kind"
            if file.kinds_at:
                at = ", ".join(plain(path) for path in file.kinds_at)
                records += f"; none has the field, registered kinds at {at}"
            line = f"  {path}{' ' * (path_width - columns(path))}  {records}"
            if columns(line) > COLUMNS:  # a long name: no column
                line = f"  {path}  {records}"
            # Escaped: the words may come from another machine (a partial read back).
            error = f"error: {escaped(file.error)}" if file.error else ""
            if columns(line) > COLUMNS:  # longer still: the path whole on its line, the rest under it
                lines += [f"  {path}", *_wrapped(f"      {records}" + (f", {error}" if error else ""), 6)]
            else:
                lines += _with_notes(line, error, ", ")
        unlisted = len(report.files) - len(listed)
        if unlisted:
            total = sum(file.records for file in report.files) - sum(file.records for file in listed)
            lines.append(
                f"  ({plural(unlisted, 'more file')}, {plural(total, 'record')}; "
                "--format json lists every file)"
            )
    return "\n".join(lines) + "\n"


def _stage_name(stage: str | None) -> str:
    return (
        "(none)" if stage is None else stage if stage in (INVALID_STAGE, OTHER_STAGE) else _shown_value(stage)
    )


def _stage_label(row: StageRow) -> str:
    if row.value is not None:
        return _shown_value(row.value)
    return INVALID_STAGE if row.category == "invalid" else f"(other {row.category} stages)"


def _stage_notes(row: StageRow) -> list[str]:
    if row.category == LEGACY:
        return [f"-> {row.replacement}" if row.replacement else "no single replacement"]
    if row.category == UNREGISTERED and row.suggestion:
        return [f"did you mean {row.suggestion!r}?"]
    return []


def _row_notes(row: KindRow) -> list[str]:
    """What the table says beside a row of an alias, an older label or a deprecated kind."""
    if row.value is None:
        return []
    if row.category == "aliased":
        instead = f" (instead of {row.replacement})" if row.replacement not in (None, row.canonical) else ""
        return [f"-> {row.canonical}{instead}"]
    if row.category == "legacy":
        if row.replacement is not None:
            return [f"-> {row.replacement}"]
        # The vocabulary's own one-line note, shown whole: it is data of this package, never of the input.
        return [f"no single replacement: {row.note}" if row.note else "no single replacement"]
    if row.category == "registered" and row.replacement is not None:
        return [f"deprecated: use {row.replacement!r}"]
    if row.category == MALFORMED:
        expected = "expected <server>:<kind> in lower case"
        return [f"malformed ({expected})" + (f", did you mean {row.suggestion!r}?" if row.suggestion else "")]
    if row.category in ("unregistered", "undeclared") and row.suggestion:
        return [f"did you mean {row.suggestion!r}?"]
    return []


def _shown_value(value: str) -> str:
    """A value or server name cut to the table's width (plain text is not cut by printable)."""
    shown = plain(value, VALUE_WIDTH)
    if columns(shown) > VALUE_WIDTH:
        shown = shown[: VALUE_WIDTH - 3]
        while columns(shown) > VALUE_WIDTH - 3:
            shown = shown[:-1]
        shown += "..."
    return shown


def render_json(report: Report) -> str:
    """The report as JSON: one field's report, or with several, ``{"fields": [report, ...]}``."""
    if not report.also:
        return indented_json(report.to_json()) + "\n"
    return indented_json({"fields": [one.to_json() for one in (report, *report.also)]}) + "\n"


def indented_json(value: Any, indent: str = "\n") -> str:
    """``json.dumps(value, indent=2)``, the same text, made by one call per list or object: with an
    indent the standard library encodes in Python a token at a time, which a report of many rows feels."""
    kind = value.__class__
    if kind is str:
        return quoted(value)
    if kind is int:
        return int.__repr__(value)
    if value is None:
        return "null"
    inner = indent + "  "
    if kind is dict and value:
        pairs = [f"{inner}{quoted(key)}: {indented_json(item, inner)}" for key, item in value.items()]
        return f"{{{','.join(pairs)}{indent}}}"
    if (kind is list or kind is tuple) and value:
        return f"[{','.join([inner + indented_json(item, inner) for item in value])}{indent}]"
    return json.dumps(value)  # an empty list or object, a float, a bool


class Progress:
    """One line on a terminal, rewritten in place at most every INTERVAL seconds and cleared at the end
    (nothing when the stream is not a terminal): ``reading logs/a.jsonl: 120,000 records`` as one process
    reads, or ``audited 312 MB of 1.21 GB (640 MB/s)`` as the parts of ``total`` bytes come back."""

    INTERVAL: ClassVar[float] = 0.25

    def __init__(self, stream: IO[str] | None, total: int | None = None) -> None:
        try:
            terminal = stream is not None and stream.isatty()
        except (ValueError, OSError):  # closed
            terminal = False
        self.stream: IO[str] | None = stream if terminal else None
        self.shown: bool = False
        self.total: int = total or 0
        self.done: int = 0
        self.started: float = time.monotonic()
        self.last: float = self.started if total is None else 0.0  # a first part is shown at once

    def update(self, display: str, records: int) -> None:
        self._show(f"reading {plain(display, 200)}: {records:,} records")

    def advance(self, size: int) -> None:
        self.done += size
        rate = _size(int(self.done / max(time.monotonic() - self.started, 1e-9)))
        self._show(f"audited {_size(self.done)} of {_size(self.total)} ({rate}/s)", self.done >= self.total)

    def _show(self, text: str, now: bool = False) -> None:
        moment = time.monotonic()
        if self.stream is not None and (now or moment - self.last >= self.INTERVAL):
            self.last = moment
            self.stream.write(f"\r\033[K{text}")
            self.stream.flush()
            self.shown = True

    def clear(self) -> None:
        if self.stream is not None and self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self.shown = False


def _size(count: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if count >= scale:
            return f"{count / scale:,.1f} {unit}" if count < 10 * scale else f"{count / scale:,.0f} {unit}"
    return f"{count} B"
