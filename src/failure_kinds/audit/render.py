"""The audit report as text for people and as JSON for tools."""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

    from .report import KindRow, Report


# A value is shown in the text table cut to this many characters (the JSON report keeps more).
VALUE_WIDTH: Final = 60
# The text report lists every file that failed and at most this many of the others.
FILES_LISTED: Final = 20
# A name that has to be quoted and escaped is cut to this many characters.
_NAME_LIMIT: Final = 1000


def printable(value: str, limit: int = _NAME_LIMIT) -> str:
    """``value`` as is when it is plain text, else quoted, escaped and cut to ``limit`` characters, so no
    control character, line break or escape sequence reaches a terminal raw, a crafted name cannot
    forge a line of output, and characters that cannot be encoded (a file name that is not UTF-8)
    never break it."""
    if value and value.isprintable() and value.strip() == value:
        return value
    from failure_kinds._display import shown

    return shown(value, limit)


def shown_location(location: str) -> str:
    """A ``path:line`` as printed: the path part escaped like any name."""
    path, separator, line = location.rpartition(":")
    return printable(path) + separator + line if separator else printable(location)


def plural(count: int, word: str) -> str:
    """``1 record``, ``2 records``, with thousands separators."""
    return f"{count:,} {word}" if count == 1 else f"{count:,} {word}s"


def _bar(count: int, largest: int, character: str) -> str:
    """At most 24 characters, never none for a count above zero."""
    return character * max(1, round(24 * count / largest)) if largest else ""


def _percent(count: int, total: int) -> str:
    return f"{100 * count / total:5.1f}%" if total else "    -"


_SECTIONS: Final = ("registered", "namespaced", "undeclared", "aliased", "legacy", "unregistered")


def render_text(report: Report, bar_character: str = "#") -> str:
    lines: list[str] = []
    lines.append(f"failure kinds at {report.field!r} in {plural(len(report.files), 'file')}")
    lines.append("")
    number_width = max(len(f"{report.records:,}"), 5)
    for label, count, note, first in (
        ("records", report.records, "", None),
        ("with a kind", report.with_kind, "", None),
        ("without a kind", report.without_kind, "field absent or null", None),
        ("invalid", report.invalid, "field holds a number, bool, object or list", report.first_invalid),
        (
            "unparseable",
            report.unparseable,
            "not UTF-8, not JSON, or not a JSON object",
            report.first_unparseable,
        ),
    ):
        percent = _percent(count, report.records) if label != "records" else "      "
        if first is not None:
            note += f"; first at {shown_location(first)}"
        lines.append(f"  {label:<15}{count:>{number_width},}  {percent}  {note}".rstrip())
        if label == "unparseable" and report.first_overlong is not None:
            longer = "1 line" if report.overlong == 1 else f"{report.overlong:,} lines"
            where = shown_location(report.first_overlong)
            lines.append(
                f"  {'':<15}{'':>{number_width}}           {longer} over the line cap; first at {where}"
            )
    if report.kinds:
        lines.append("")
        lines.append(f"shares below are of the {plural(report.with_kind, 'record')} with a kind")

    rows = report.kinds
    with_kind = report.with_kind
    biggest = max((row.count for row in rows), default=0)
    shown_values = {id(row): _row_label(row) for row in rows}
    totals = report.canonical_totals()
    # One width for the rows and the regrouped kinds: an alias's kind or a replacement may be longer than
    # every value seen.
    width = max((len(label) for label in (*shown_values.values(), *totals)), default=0)

    def row_line(row: KindRow, extra: str = "") -> str:
        bar = _bar(row.count, biggest, bar_character)
        line = f"  {shown_values[id(row)]:<{width}}  {row.count:>{number_width},}  "
        return (line + f"{_percent(row.count, with_kind)}  {bar:<24}  {extra}").rstrip()

    for category in _SECTIONS:
        section = [row for row in rows if row.category == category]
        if not section:
            continue
        total = sum(row.count for row in section)
        distinct = sum(1 for row in section if row.value is not None)
        lines.append("")
        lines.append(f"{category}: {distinct:,} distinct, {plural(total, 'record')}")
        for row in section:
            extras: list[str] = []
            if row.value is not None and row.length > VALUE_WIDTH:
                extras.append(f"{row.length:,} characters")
            extras.extend(_row_notes(row))
            if category in ("unregistered", "undeclared", "legacy"):
                extras.append(f"first seen {shown_location(row.first_seen)}")
            lines.append(row_line(row, "  ".join(extras)))
        if category == "namespaced" and (report.namespaces or report.namespaces_overflow):
            servers = [f"{_shown_value(server)} {count:,}" for server, count in report.namespaces.items()]
            if report.namespaces_overflow:
                servers.append(f"(other servers) {report.namespaces_overflow:,}")
            lines.append(f"  by server: {', '.join(servers)}")

    regrouped = [
        what
        for category, what in (("aliased", "aliased"), ("legacy", "older labels"))
        if any(row.category == category and row.canonical is not None for row in rows)
    ]
    if regrouped:
        parts = ["registered", *regrouped]
        together = ", ".join(parts[:-1]) + " and " + parts[-1]
        lines.append("")
        lines.append(f"regrouped by canonical kind ({together} together):")
        top = max(totals.values())
        for kind, count in totals.items():
            bar = _bar(count, top, bar_character)
            lines.append(f"  {kind:<{width}}  {count:>{number_width},}  {_percent(count, with_kind)}  {bar}")

    if len(report.files) > 1 or report.failed_files:
        lines.append("")
        lines.append("files:")
        # Every file that failed, and the first FILES_LISTED that did not: a directory of a hundred
        # thousand files must not turn the summary into a file listing (the JSON report has them all).
        listed = [file for index, file in enumerate(report.files) if file.error or index < FILES_LISTED]
        shown_paths = [printable(file.path) for file in listed]
        path_width = max(len(path) for path in shown_paths)
        for path, file in zip(shown_paths, listed, strict=True):
            status = plural(file.records, "record") + (f", error: {_error(file.error)}" if file.error else "")
            lines.append(f"  {path:<{path_width}}  {status}")
        unlisted = len(report.files) - len(listed)
        if unlisted:
            records = sum(file.records for file in report.files) - sum(file.records for file in listed)
            lines.append(
                f"  ({plural(unlisted, 'more file')}, {plural(records, 'record')}; "
                "--format json lists every file)"
            )
    return "\n".join(lines) + "\n"


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
    if row.category in ("unregistered", "undeclared") and row.suggestion:
        return [f"did you mean {row.suggestion!r}?"]
    return []


def _error(message: str) -> str:
    """Why a file failed, escaped: the words may come from another machine (a partial read back)."""
    from failure_kinds._display import escape

    return escape(message)


def _row_label(row: KindRow) -> str:
    if row.value is None:
        return f"(other {row.category} values)"
    return _shown_value(row.value)


def _shown_value(value: str) -> str:
    """A value or server name cut to the table's width (plain text is not cut by printable)."""
    shown = printable(value, VALUE_WIDTH)
    if len(shown) > VALUE_WIDTH:
        shown = shown[: VALUE_WIDTH - 3] + "..."
    return shown


def render_json(report: Report) -> str:
    return json.dumps(report.to_json(), indent=2) + "\n"
