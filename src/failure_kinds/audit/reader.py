"""Reading in this process: lines, byte ranges of files, and whole inputs into a partial report. Every
engine counts JSON Lines through ``count_input`` (one process, each ``--jobs`` worker, each Ray task).

A regular file read here must be the same file, unchanged, before and after its read (see ``identity``):
one truncated, grown, rewritten or replaced meanwhile is named as changed, as the other engines name it,
rather than counted as if it were whole."""

from __future__ import annotations

import os
import stat

from .errors import describe_read_error
from .identity import Identity, changed_error, path_change
from .partial import PartialReport
from .progress import Progress
from .sources import BATCH_BYTES, Input, Source, is_parquet, open_source, read_batches

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import IO

    from .settings import AuditSettings, Pins


def audit_lines(
    lines: Iterable[bytes],
    path: str,
    settings: AuditSettings,
    *,
    continuation: bool = False,
    pins: Pins | None = None,
    fast: bool = True,
) -> PartialReport:
    """The partial report of ``lines`` (bytes, one line each, line ends optional), read as the file (or,
    with ``continuation``, the part of the file after an earlier partial's part) named ``path``."""
    partial = PartialReport(settings, pins, fast)
    partial.start_file(path, continuation=continuation)
    batch: list[bytes] = []
    size = 0
    for line in lines:
        batch.append(line)
        size += len(line)
        if size >= BATCH_BYTES:
            partial.add_lines(batch)
            batch, size = [], 0
    if batch:
        partial.add_lines(batch)
    return partial


def audit_file(
    path: str,
    settings: AuditSettings,
    *,
    start: int = 0,
    stop: int | None = None,
    pins: Pins | None = None,
    fast: bool = True,
) -> PartialReport:
    """The partial report of bytes ``start`` to ``stop`` (None: the end) of the plain file ``path``.
    ``start`` must be 0 or the offset just after a newline; ``stop`` the same or the end. A range that
    starts after 0 is a continuation. Gzip files can only be read whole (``start=0, stop=None``)."""
    partial = PartialReport(settings, pins, fast)
    partial.start_file(path, continuation=start > 0)
    before = _identity(path)
    _read(partial, Source(path, path), start, stop, None)
    _check_after(partial, path, before)
    return partial


def read_sources(
    sources: Iterable[Source], settings: AuditSettings, *, fast: bool = True, progress: IO[str] | None = None
) -> PartialReport:
    """Every source in this process, in one pass and one partial (Parquet files included)."""
    partial = PartialReport(settings, fast=fast)
    meter = Progress(progress)
    for source in sources:
        before = None if source.error is not None else _identity(source.path)
        if source.path is not None and is_parquet(source.path):
            from .parquet import add_parquet

            add_parquet(partial, source.path, display=source.display)
        else:
            partial.start_file(source.display)
            _read(partial, source, 0, None, meter)
        _check_after(partial, source.path, before)
    return partial


def _identity(path: str | None) -> Identity | None:
    """What the regular file ``path`` is before it is read; None for stdin, a FIFO, a device or a path
    that cannot be looked at (its read says why). A stream is read once as it comes: nothing to check."""
    if path is None:
        return None
    try:
        status = os.stat(path)
    except (OSError, ValueError):
        return None
    return Identity.of(status) if stat.S_ISREG(status.st_mode) else None


def _check_after(partial: PartialReport, path: str | None, before: Identity | None) -> None:
    """Name the current file as changed when ``path`` no longer names the file ``before`` saw, unchanged
    (the first error of a file is kept: a read that failed says why)."""
    if path is None or before is None:
        return
    change = path_change(path, before)
    if change is not None:
        partial.add_error(changed_error(change))


def _read(
    partial: PartialReport, source: Source, start: int, stop: int | None, progress: Progress | None
) -> None:
    try:
        data = open_source(source, start)
    except OSError as error:
        partial.add_error(describe_read_error(error))
        return
    count_input(partial, data, None if stop is None else stop - start, progress, source.display)


def count_input(
    partial: PartialReport,
    data: Input,
    limit: int | None = None,
    progress: Progress | None = None,
    display: str = "",
) -> None:
    """Count the lines of ``data`` (at most ``limit`` bytes) into the current file of ``partial``, then
    close it; a read error ends the data and is noted on the file."""
    part = partial.files[-1]
    try:
        for lines in read_batches(data, partial.settings.line_bytes, limit):
            if isinstance(lines, int):
                partial.add_blank(lines)
            elif lines is None or getattr(lines, "overlong", False):
                partial.add_overlong()
            else:
                partial.add_read_lines(lines)
            if progress is not None:
                progress.update(display, part.records)
    finally:
        data.close()
        if progress is not None:
            progress.clear()
    if data.error is not None:
        partial.add_error(describe_read_error(data.error))
