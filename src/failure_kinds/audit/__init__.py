"""Count the failure kinds in rollout logs (JSON Lines, plain or gzip, and Parquet): which occurred, which
are not in the vocabulary, what they probably meant, which are older labels, and how the counts regroup
under the current kinds (see the audit page of the docs for what is counted and promised).

``audit(inputs, ...) -> Report`` is the one entry point, for the command and any program; it reads in
this process, with worker processes (``jobs``) or on a Ray cluster (``ray``), and every engine gives the
same report. ``render_text(report)`` and ``render_json(report)`` write it. The pipeline, module by module:
``sources`` (inputs -> lines -> the value at the field), ``settings`` (the settings, categories and caps,
and the capped tally), ``partial`` (the mergeable partial report, its JSON form, and the report),
``render`` (its rows, text, JSON, progress); ``tasks`` (the work cut into tasks, and the one per-task
function every engine runs), ``engine`` (``audit()``, in one process or ``--jobs`` workers),
``parquet``, ``ray_engine`` (``--ray``) and ``errors``.

The mergeable partial report, for other engines: ``settings_for(field_path, aliases, namespaces)`` gives
checked ``AuditSettings``; then

- ``audit_lines(lines, path, settings, *, continuation=False, pins=None, fast=True) -> PartialReport``:
  the partial of an iterable of lines (bytes, line ends optional) of the file ``path``;
- ``audit_file(path, settings, *, start=0, stop=None, pins=None, fast=True) -> PartialReport``: the
  partial of bytes ``start`` to ``stop`` of a plain file (cut at line starts; gzip only whole);
- ``PartialReport(settings, pins=None, fast=True)`` with ``start_file(path, continuation=, unit=)``,
  ``add_lines(lines)``, ``add_blank(count)``, ``add_values(values)`` (already decoded: str, None,
  INVALID, UNPARSEABLE, BLANK; ``unit="row"`` for tables, shown as ``path:row N``), ``add_overlong()``
  and ``add_error(message)``: for engines that read on their own;
- ``merge(partials)`` (in input order) or ``first.merge(later)``: associative, and neither input changes.
  A part with ``continuation=True`` continues the previous partial's last file: its line numbers are
  shifted by that file's line count so far, so every ``path:line`` stays physical;
- ``partial.to_json()`` and ``PartialReport.from_json(data)``: the partial as JSON, checked field by
  field when read;
- ``partial.exact``: False when some part overflowed a distinct-value cap (``DISTINCT_LIMIT`` values of
  a category), so the merge cannot know how often it saw a value an earlier part kept; then audit every
  part again with ``pins=merged.pins()`` (a ``Pins``, also ``to_json``/``from_json``) and merge again;
- ``partial.report() -> Report``: identical to the one-pass report of the same input.

Running it from another engine (any map over chunks, then a reduce on the driver)::

    >>> import json
    >>> from failure_kinds.audit import PartialReport, audit_lines, merge, settings_for
    >>> settings = settings_for("failure_kind")
    >>> chunks = [[b'{"failure_kind": "cancelled"}', b"oops"], [b"", b'{"failure_kind": "judge_faild"}']]
    >>> def task(index: int) -> str:  # runs on a worker; the partial travels as JSON
    ...     partial = audit_lines(chunks[index], "day1.jsonl", settings, continuation=index > 0)
    ...     return json.dumps(partial.to_json())
    >>> merged = merge(PartialReport.from_json(json.loads(task(index))) for index in range(2))
    >>> assert merged.exact  # else: run the tasks again with pins=merged.pins() and merge again
    >>> report = merged.report()
    >>> [(row.value, row.count, row.first_seen) for row in report.kinds]
    [('cancelled', 1, 'day1.jsonl:1'), ('judge_faild', 1, 'day1.jsonl:4')]
    >>> report.first_unparseable
    'day1.jsonl:2'
"""

from __future__ import annotations

from .engine import audit
from .errors import AuditError, describe_read_error
from .partial import PartialReport, merge
from .render import FileReport, KindRow, Report, render_json, render_text
from .settings import (
    DISTINCT_LIMIT,
    LINE_BYTES,
    VALUE_CHARS,
    AuditSettings,
    Pins,
    category_of,
    merged_aliases,
    settings_for,
)
from .sources import BLANK, INVALID, UNPARSEABLE, Source, expand_inputs, fast_available
from .tasks import audit_file, audit_lines

__all__ = [
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
    "Pins",
    "Report",
    "Source",
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
