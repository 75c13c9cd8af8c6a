"""Count the failure kinds in rollout logs (JSON Lines, plain or gzip, and Parquet): which occurred, which
are not in the vocabulary, what they probably meant, which are older labels, and how the counts regroup
under the current kinds (see the audit page of the docs for what is counted and promised).

``audit(inputs, ...) -> Report`` is the one entry point, for the command and any program; every engine
(this process, ``jobs`` workers, a Ray cluster) gives the same report, which ``render_text`` and
``render_json`` write. The pipeline, module by module: ``tasks`` (inputs -> a plan of tasks -> the one
per-task function every engine runs), ``sources`` (a task -> lines -> every field and stage of a record
in one decode), ``settings`` (the settings, categories, caps and the capped tally), ``partial`` (the
tally of a record's fields, the merge), ``report`` (the report's rows), ``render`` (text, JSON,
progress); ``engine`` (``audit()`` and the process pool), ``parquet`` and ``ray_engine``.

The mergeable partial report, for other engines: ``settings_for(field_path, aliases, namespaces,
stage_path=None)`` gives checked ``AuditSettings``; then

- ``audit_lines(lines, path, settings, *, continuation=False, fast=True) -> PartialReport``: the partial
  of an iterable of lines (bytes, line ends optional) of the file ``path``;
- ``audit_file(path, settings, *, start=0, stop=None, fast=True) -> PartialReport``: the partial of
  bytes ``start`` to ``stop`` of a plain file (cut at line starts; gzip only whole);
- ``PartialReport(settings, fast=True)`` with ``start_file(path, continuation=, unit=)``,
  ``add_lines(lines)``, ``add_blank(count)``, ``add_columns(columns)`` (already decoded, one list per
  path of ``settings.paths``: str, None, ABSENT, any other value, or a line's UNPARSEABLE or BLANK;
  ``unit="row"`` for tables, shown as ``path:row N``), ``add_overlong()`` and ``add_error(message)``;
- ``merge(partials)`` (in input order) or ``first.merge(later)``: associative, and neither input changes.
  A part with ``continuation=True`` continues the previous partial's last file: its line numbers are
  shifted by that file's line count so far, so every ``path:line`` stays physical;
- ``partial.report() -> Report``: identical to the one-pass report of the same input, however it was cut.

A partial crosses processes pickled, between this audit's own processes: never unpickle one from a
source you do not trust.

    >>> from failure_kinds.audit import audit_lines, merge, settings_for
    >>> settings = settings_for("failure_kind")
    >>> chunks = [[b'{"failure_kind": "cancelled"}', b"oops"], [b"", b'{"failure_kind": "judge_faild"}']]
    >>> parts = [audit_lines(chunk, "day1.jsonl", settings, continuation=n > 0)
    ...          for n, chunk in enumerate(chunks)]
    >>> report = merge(parts).report()
    >>> [(row.value, row.count, row.first_seen) for row in report.kinds]
    [('cancelled', 1, 'day1.jsonl:1'), ('judge_faild', 1, 'day1.jsonl:4')]
    >>> report.first_unparseable
    'day1.jsonl:2'
"""

from __future__ import annotations

from failure_kinds._streams import describe_read_error

from .engine import audit
from .partial import PartialReport, merge
from .render import render_json, render_text
from .report import FileReport, KindRow, Report, StageRow
from .settings import (
    DISTINCT_LIMIT,
    LINE_BYTES,
    VALUE_CHARS,
    AuditError,
    AuditSettings,
    category_of,
    merged_aliases,
    settings_for,
)
from .sources import ABSENT, BLANK, INVALID, UNPARSEABLE, fast_available
from .tasks import Source, audit_file, audit_lines, expand_inputs

__all__ = [
    "ABSENT",
    "BLANK",
    "DISTINCT_LIMIT",
    "INVALID",
    "LINE_BYTES",
    "UNPARSEABLE",
    "VALUE_CHARS",
    "AuditError",
    "AuditSettings",
    "FileReport",
    "KindRow",
    "PartialReport",
    "Report",
    "Source",
    "StageRow",
    "audit",
    "audit_file",
    "audit_lines",
    "category_of",
    "describe_read_error",
    "expand_inputs",
    "fast_available",
    "merge",
    "merged_aliases",
    "render_json",
    "render_text",
    "settings_for",
]
