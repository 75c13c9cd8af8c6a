"""A ``--field`` that no record has: found after an audit that counted no kind, and named with the field the
records most likely meant (``--field result.failure_knd`` when they have ``result.failure_kind``). An
input in which no record is a JSON object (a README, random bytes, an empty directory) has no record that
could hold the field either, and is named the same way.

The counts cannot tell a field that is absent from one that holds null, so the check looks again, with
bounded work, at the start of each of the first PROBE_FILES inputs: PROBE_RECORDS records in all, shared
out among them (so a directory of shards is looked at shard by shard), at most ``sources.HEAD_BYTES``
bytes of each (a stream's first bytes were kept as it was read, since it cannot be read again), keeping
at most PATHS_LIMIT distinct field paths, PATH_DEPTH deep. A Parquet file's schema says which fields all
its rows have, read from its footer. A field that holds null in a record looked at is there, and nothing
is said; a field that only records past those looked at have is not seen.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from typing import cast

from .sources import HEAD_BYTES, Source, is_parquet, open_source

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Final

    from .report import Report
    from .settings import AuditSettings

PROBE_RECORDS: Final = 1_000
PROBE_FILES: Final = 64
PATHS_LIMIT: Final = 1_000
PATH_DEPTH: Final = 8
# A path longer than this many characters is not kept: nobody means one, and a note must stay short.
PATH_CHARS: Final = 200
# When no field is close to the one asked for, this many of the records' fields are named instead.
NAMED: Final = 5
_BOM: Final = b"\xef\xbb\xbf"


@dataclass
class Probe:
    """What the start of the input says of the field."""

    present: bool = False
    """Some record looked at has the field (null included), or a Parquet schema does."""
    records: int = 0
    """Records looked at (a Parquet file's rows all count: its schema is theirs)."""
    objects: int = 0
    """Of those, the JSON objects (and Parquet rows): the records that could have held the field."""
    paths: dict[str, None] | None = None
    """The dotted field paths the records have, in the order first seen."""
    dotted: str | None = None
    """The first key looked at that holds a dot (a flattened ``"response.failure_kind"``): --field
    cannot name it, since a dot separates levels, so the note names it instead."""


def check_field(report: Report, sources: Sequence[Source], settings: AuditSettings) -> None:
    """When no record of a non-empty input has a kind or an invalid value at the field and none of the
    records looked at has the field at all: mark the report and add a note naming the closest field."""
    if not report.without_kind or report.with_kind or report.invalid:
        return
    segments = settings.field.split(".")
    probe = probe_sources(sources, segments)
    if probe.present or not probe.objects:
        return  # the field is there (null), or no record that could hold it was looked at
    from failure_kinds._display import shown_text

    from .render import printable

    report.field_missing = True
    report.field_suggestion = closest_path(settings.field, list(probe.paths or ()))
    field = printable(settings.field)
    if probe.records >= report.records:
        note = f"no record has the field {field}"
    else:
        note = (
            f"none of the {probe.records:,} records looked at has the field {field}, and no record has a "
            "kind there"
        )
    if report.field_suggestion is not None:
        note += f"; did you mean {shown_text(report.field_suggestion, PATH_CHARS)}?"
    elif probe.dotted is not None:
        note += (
            f'; the records have a key "{shown_text(probe.dotted, PATH_CHARS)}" containing dots, which '
            "--field cannot name because a dot separates levels"
        )
    elif not probe.paths:
        note += "; the records looked at have no field that --field can name"
    else:
        named = ", ".join(shown_text(path, PATH_CHARS) for path in list(probe.paths)[:NAMED])
        note += f"; the records have {named}" + (", ..." if len(probe.paths) > NAMED else "")
    report.notes.append(note)


def check_objects(report: Report, settings: AuditSettings) -> None:
    """When no record is a JSON object (every line unparseable, or no record at all), no record could hold
    the field: mark the report, so a gate pointed at the wrong file fails, and add a note saying why.
    Nothing is added when every input failed to be read: its error already says why."""
    if report.with_kind or report.without_kind or report.invalid:
        return
    if not report.records and report.files and all(file.error is not None for file in report.files):
        return
    from .render import printable

    report.field_missing = True
    if report.records:
        why = "no record could be read as a JSON object"
    elif report.files:
        why = "no input holds a record"
    else:
        why = "no input file was found"
    report.notes.append(f"{why}, so --field {printable(settings.field)} was never seen")


def closest_path(field: str, paths: Sequence[str]) -> str | None:
    """The path most like ``field``; else the path whose last name is most like the field's last name
    (``failure_kind`` when the records have ``result.failure_kind``)."""
    from failure_kinds._suggest import closest

    found = closest(field, paths)
    if found is not None:
        return found
    by_name: dict[str, str] = {}
    for path in paths:
        by_name.setdefault(path.rpartition(".")[2], path)
    name = closest(field.rpartition(".")[2], list(by_name))
    return None if name is None else by_name[name]


def probe_sources(sources: Sequence[Source], segments: list[str]) -> Probe:
    probe = Probe(paths={})
    each = max(1, PROBE_RECORDS // max(1, min(len(sources), PROBE_FILES)))
    for number, source in enumerate(sources):
        if number >= PROBE_FILES or probe.records >= PROBE_RECORDS or probe.present:
            break
        if source.error is not None:
            continue
        if source.path is not None and is_parquet(source.path):
            _probe_parquet(probe, source.path, segments)
            continue
        head = _head(source)
        if head:
            _probe_lines(probe, head, segments, min(PROBE_RECORDS, probe.records + each))
    return probe


def _head(source: Source) -> bytes:
    """The first bytes of a JSON Lines source: read again from a regular file, else the kept ones."""
    if source.path is not None:
        try:
            regular = stat.S_ISREG(os.stat(source.path).st_mode)
        except (OSError, ValueError):
            return b""
        if regular:
            try:
                data = open_source(Source(source.display, source.path))
            except OSError:
                return b""
            try:
                chunks: list[bytes] = []
                size = 0
                while size < HEAD_BYTES:
                    chunk = data.read(HEAD_BYTES - size)
                    if not chunk:
                        break
                    chunks.append(chunk)
                    size += len(chunk)
            finally:
                data.close()
            return _whole_lines(b"".join(chunks), size >= HEAD_BYTES)
    return _whole_lines(bytes(source.head), len(source.head) >= HEAD_BYTES)


def _whole_lines(data: bytes, cut: bool) -> bytes:
    """``data`` without the line a cut left incomplete."""
    return data[: data.rfind(b"\n") + 1] if cut else data


def _probe_lines(probe: Probe, data: bytes, segments: list[str], until: int) -> None:
    """Look at the records of ``data`` until ``until`` records have been looked at in all."""
    data = data.removeprefix(_BOM)
    for line in data.split(b"\n"):
        if probe.records >= until or probe.present:
            return
        if not line or line.isspace():
            continue
        probe.records += 1
        try:
            record: object = json.loads(line.decode("utf-8"))
        except (ValueError, RecursionError):  # not UTF-8, not JSON, nested past the interpreter's limit
            continue
        if not isinstance(record, dict):
            continue
        probe.objects += 1
        fields = cast("dict[object, object]", record)
        if _has(fields, segments):
            probe.present = True
            return
        _collect(probe, fields, "", 1)


def _has(record: object, segments: list[str]) -> bool:
    """Whether the path is in ``record``: to its end, or to a null on the way (which stands where the
    field would be, as a null struct does in a Parquet row whose schema has the field)."""
    for segment in segments:
        if record is None:
            return True
        if not isinstance(record, dict) or segment not in record:
            return False
        record = record[segment]  # pyright: ignore[reportUnknownVariableType]
    return True


def _collect(probe: Probe, record: dict[object, object], prefix: str, depth: int) -> None:
    paths = probe.paths
    assert paths is not None
    for key, value in record.items():
        if len(paths) >= PATHS_LIMIT:
            return
        if not isinstance(key, str) or "." in key or not key or len(prefix) + len(key) > PATH_CHARS:
            if probe.dotted is None and isinstance(key, str) and "." in key:
                probe.dotted = key
            continue  # a name --field cannot spell, or one too long to be the one meant
        path = prefix + key
        paths.setdefault(path, None)
        if isinstance(value, dict) and depth < PATH_DEPTH:
            _collect(probe, value, path + ".", depth + 1)  # pyright: ignore[reportUnknownArgumentType]


def _probe_parquet(probe: Probe, path: str, segments: list[str]) -> None:
    from .parquet import schema_fields

    found = schema_fields(path, segments, PATHS_LIMIT, PATH_CHARS)
    if found is None:
        return
    present, paths, rows, dotted = found
    probe.dotted = probe.dotted if probe.dotted is not None else dotted
    probe.present = probe.present or present
    probe.records += rows
    probe.objects += rows
    assert probe.paths is not None
    for name in paths:
        if len(probe.paths) >= PATHS_LIMIT:
            break
        probe.paths.setdefault(name, None)
