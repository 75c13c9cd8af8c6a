"""The audit report as text for people and as JSON for tools."""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .report import KindRow, Report


def printable(value: str) -> str:
    """``value`` as is when it is plain text, else its repr, so control characters never reach a
    terminal raw and unencodable characters never break the output."""
    if value and value.isprintable() and value.strip() == value:
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            pass
    return repr(value)


def _bar(count: int, largest: int, character: str) -> str:
    """At most 24 characters, never none for a count above zero."""
    return character * max(1, round(24 * count / largest)) if largest else ""


def _percent(count: int, total: int) -> str:
    return f"{100 * count / total:5.1f}%" if total else "    -"


def render_text(report: Report, bar_character: str = "#") -> str:
    lines: list[str] = []
    file_word = "file" if len(report.files) == 1 else "files"
    lines.append(f"failure kinds at {report.field!r} in {len(report.files)} {file_word}")
    lines.append("")
    number_width = max(len(f"{report.records:,}"), 5)
    for label, count, note in (
        ("records", report.records, ""),
        ("with a kind", report.with_kind, ""),
        ("without a kind", report.without_kind, "field absent or null"),
        ("invalid", report.invalid, "field holds a number, bool, object or list"),
        ("unparseable", report.unparseable, "not UTF-8, not JSON, or not a JSON object"),
    ):
        percent = _percent(count, report.records) if label != "records" else "      "
        lines.append(f"  {label:<15}{count:>{number_width},}  {percent}  {note}".rstrip())
    if report.kinds:
        lines.append("")
        lines.append(f"shares below are of the {report.with_kind:,} records with a kind")

    rows = report.kinds
    with_kind = report.with_kind
    biggest = max((row.count for row in rows), default=0)
    shown_values = {id(row): _row_label(row) for row in rows}
    width = max((len(label) for label in shown_values.values()), default=0)

    def row_line(row: KindRow, extra: str = "") -> str:
        bar = _bar(row.count, biggest, bar_character)
        line = f"  {shown_values[id(row)]:<{width}}  {row.count:>{number_width},}  "
        return (line + f"{_percent(row.count, with_kind)}  {bar:<24}  {extra}").rstrip()

    for category, title in (
        ("registered", "registered"),
        ("namespaced", "namespaced"),
        ("aliased", "aliased"),
        ("unregistered", "unregistered"),
    ):
        section = [row for row in rows if row.category == category]
        if not section:
            continue
        total = sum(row.count for row in section)
        distinct = sum(1 for row in section if row.value is not None)
        lines.append("")
        lines.append(f"{title}: {distinct:,} distinct, {total:,} records")
        for row in section:
            if category == "aliased":
                extra = f"-> {row.canonical}"
            elif category == "unregistered":
                hint = f"did you mean {row.suggestion!r}?  " if row.suggestion else ""
                extra = f"{hint}first seen {row.first_seen}"
            else:
                extra = ""
            lines.append(row_line(row, extra))
        if category == "namespaced" and report.namespaces:
            servers = ", ".join(
                f"{printable(server)} {count:,}" for server, count in report.namespaces.items()
            )
            lines.append(f"  by server: {servers}")

    if any(row.category == "aliased" for row in rows):
        lines.append("")
        lines.append("regrouped by canonical kind (registered and aliased together):")
        totals = report.canonical_totals()
        top = max(totals.values())
        for kind, count in totals.items():
            bar = _bar(count, top, bar_character)
            lines.append(f"  {kind:<{width}}  {count:>{number_width},}  {_percent(count, with_kind)}  {bar}")

    if len(report.files) > 1 or report.failed_files:
        lines.append("")
        lines.append("files:")
        path_width = max(len(printable(file.path)) for file in report.files)
        for file in report.files:
            status = f"{file.records:,} records" + (f", error: {file.error}" if file.error else "")
            lines.append(f"  {printable(file.path):<{path_width}}  {status}")
    return "\n".join(lines) + "\n"


def _row_label(row: KindRow) -> str:
    if row.value is None:
        return f"(other {row.category} values)"
    return printable(row.value)


def render_json(report: Report) -> str:
    return json.dumps(report.to_json(), indent=2) + "\n"
