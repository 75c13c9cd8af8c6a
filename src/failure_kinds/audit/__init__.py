"""Count the failure kinds in rollout logs (JSON Lines, plain or gzip, and Parquet): which occurred, which
are not in the vocabulary, what they probably meant, which are older labels (``legacy``), and how the
counts regroup under the current kinds.

Every non-blank line (or row) is one record and lands in exactly one of: with a kind (a string at the
field), without a kind (absent or null, or the path runs through a non-object), invalid (something else
at the field), unparseable (not UTF-8, not JSON, not a JSON object, or longer than the line cap). Input is
streamed; memory is bounded by the caps below, not by the size of the input.

``audit(inputs, ...) -> Report`` is the one entry point: the command calls it, and so can any program.
It checks its arguments and builds the settings once, then reads in this process, with worker processes
(``jobs``) or on a Ray cluster (``ray``); every engine gives the same report. ``render_text(report)``
and ``render_json(report)`` write it.

Modules, in the order of the pipeline (inputs -> lines -> decode -> tally -> report -> render):
``sources`` (files, directories, stdin, gzip, what a file was before its read, batches of lines under
the line cap), ``decoding`` (a line -> what it holds at the field), ``settings`` (the settings, the
aliases, the categories, the caps), ``tally`` (counts under the distinct cap, and their merge),
``partial`` (the mergeable partial report, and the report built from it), ``wire`` (the partial's JSON
form, described once and checked), ``render`` (the report's rows and totals, as text and JSON, and
progress lines), ``errors``; the engines: ``tasks`` (cutting the work into ranges and batches, the one
per-batch function every engine runs, merging in order), ``engine`` (``audit()``: one process or
``--jobs`` on a process pool, and the note on a --field no record has), ``parquet``, ``ray_engine``
(``--ray``).

The mergeable partial report (for engines: ``--jobs``, Ray, Parquet)
---------------------------------------------------------------------
``AuditSettings(field, aliases, namespaces, distinct_limit, value_chars, line_bytes)`` decide the
counts; build them checked with ``settings_for(field_path, aliases, namespaces)``. Then:

- ``audit_lines(lines, path, settings, *, continuation=False, pins=None, fast=True) -> PartialReport``:
  the partial of an iterable of lines (bytes, line ends optional) of the file ``path``.
- ``audit_file(path, settings, *, start=0, stop=None, pins=None, fast=True) -> PartialReport``: the
  partial of bytes ``start`` to ``stop`` of a plain file (cut at line starts; gzip only whole).
- ``PartialReport(settings, pins=None, fast=True)`` with ``start_file(path, continuation=, unit=)``,
  ``add_lines(lines)`` (any lines, or what ``sources.read_batches`` yields: lists of lines, an int for
  a run of blank lines to pass to ``add_blank(count)``), ``add_values(values)`` (already decoded:
  str, None, INVALID, UNPARSEABLE, BLANK; ``unit="row"`` for tables, shown as ``path:row N``),
  ``add_overlong()`` and ``add_error(message)``: for engines that read on their own.
- ``merge(partials) -> PartialReport`` (in input order) or ``first.merge(later)``: associative; neither
  input changes. A part with ``continuation=True`` continues the previous partial's last file: its line
  numbers (relative to its own start) are shifted by that file's line count so far, so every
  ``path:line`` stays physical.
- ``partial.to_json() -> dict`` and ``PartialReport.from_json(dict)``: the partial as JSON, for sending
  between processes or machines.
- ``partial.exact``: False when some part overflowed a distinct-value cap, so the merge cannot know how
  often that part saw a value an earlier part kept. Then audit every part again with
  ``pins=merged.pins()`` (a ``Pins``, also ``to_json``/``from_json``) and merge again: exact. This
  happens only past ``DISTINCT_LIMIT`` distinct values of a category in a part.
- ``partial.report() -> Report``: identical to the one-pass report of the same input (first_seen and
  overflow rows included); ``render_text(report)``, ``render_json(report)``.

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

Caps: ``DISTINCT_LIMIT`` distinct values per capped category (unregistered, namespaced, undeclared)
and servers in the per-server totals, the rest in one overflow bucket each; values kept cut to
``VALUE_CHARS`` characters (with their full length and a digest, so distinct values stay distinct);
lines longer than ``LINE_BYTES`` are unparseable and skipped as they stream past.
"""

from __future__ import annotations

from .decoding import (
    BLANK,
    INVALID,
    UNPARSEABLE,
    Decoder,
    FastDecoder,
    fast_available,
    hashable,
    make_decoder,
)
from .engine import audit
from .errors import AuditError, describe_read_error
from .partial import FilePart, PartialReport, merge
from .render import FileReport, KindRow, Progress, Report, printable, render_json, render_text
from .settings import (
    DISTINCT_LIMIT,
    LINE_BYTES,
    VALUE_CHARS,
    AuditSettings,
    Pins,
    category_of,
    check_aliases,
    load_alias_file,
    merged_aliases,
    parse_alias_option,
    settings_for,
)
from .sources import BATCH_BYTES, STDIN, STDIN_NAME, Source, expand_inputs
from .tasks import audit_file, audit_lines

__all__ = [
    "BATCH_BYTES",
    "BLANK",
    "DISTINCT_LIMIT",
    "INVALID",
    "LINE_BYTES",
    "STDIN",
    "STDIN_NAME",
    "UNPARSEABLE",
    "VALUE_CHARS",
    "AuditError",
    "AuditSettings",
    "Decoder",
    "FastDecoder",
    "FilePart",
    "FileReport",
    "KindRow",
    "PartialReport",
    "Pins",
    "Progress",
    "Report",
    "Source",
    "audit",
    "audit_file",
    "audit_lines",
    "category_of",
    "check_aliases",
    "describe_read_error",
    "expand_inputs",
    "fast_available",
    "hashable",
    "load_alias_file",
    "make_decoder",
    "merge",
    "merged_aliases",
    "parse_alias_option",
    "printable",
    "render_json",
    "render_text",
    "settings_for",
]
