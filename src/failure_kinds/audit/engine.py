"""The serial engine: audits files, directories and stdin in this process, one partial report for all."""

from __future__ import annotations

from .aliases import check_aliases
from .errors import AuditError, describe_read_error
from .progress import Progress
from .sources import BATCH_BYTES, Input, Source, expand_inputs, open_source, read_batches
from .state import AuditSettings, PartialReport

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import IO

    from .report import Report
    from .state import Pins


def settings_for(
    field_path: str = "failure_kind",
    aliases: dict[str, str] | None = None,
    namespaces: dict[str, tuple[str, ...]] | None = None,
    **caps: int,
) -> AuditSettings:
    """Checked settings: AuditError for an empty --field segment or an alias that maps nowhere."""
    segments = field_path.split(".")
    if not all(segments):
        raise AuditError(f"--field {field_path!r} has an empty segment")
    check_aliases(aliases or {})
    return AuditSettings(field_path, dict(aliases or {}), dict(namespaces or {}), **caps)


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
    source = Source(path, path)
    partial.start_file(path, continuation=start > 0)
    _read(partial, source, start, stop, None)
    return partial


class Auditor:
    """Accumulates one partial report over any number of inputs; ``report()`` turns it into a Report."""

    def __init__(
        self,
        field_path: str = "failure_kind",
        aliases: dict[str, str] | None = None,
        fast: bool = True,
        progress: IO[str] | None = None,
        namespaces: dict[str, tuple[str, ...]] | None = None,
        **caps: int,
    ) -> None:
        self.settings: AuditSettings = settings_for(field_path, aliases, namespaces, **caps)
        self.partial: PartialReport = PartialReport(self.settings, fast=fast)
        self.progress: Progress = Progress(progress)

    def add_source(self, source: Source) -> None:
        self.partial.start_file(source.display)
        _read(self.partial, source, 0, None, self.progress)

    def report(self) -> Report:
        return self.partial.report()


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
    close it; a read error ends the data and is noted on the file. Every engine that reads JSON Lines
    reads them through this (the serial and ``--jobs`` engines here, Ray's tasks on their nodes)."""
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


def audit(
    inputs: Sequence[str],
    field_path: str = "failure_kind",
    aliases: dict[str, str] | None = None,
    fast: bool = True,
    progress: IO[str] | None = None,
    namespaces: dict[str, tuple[str, ...]] | None = None,
    **caps: int,
) -> Report:
    """Audit ``inputs`` (paths, directories, or "-" for stdin) and return the report. ``caps``:
    ``distinct_limit``, ``value_chars``, ``line_bytes`` (see AuditSettings)."""
    auditor = Auditor(field_path, aliases, fast=fast, progress=progress, namespaces=namespaces, **caps)
    notes: list[str] = []
    for source in expand_inputs(inputs, notes):
        auditor.add_source(source)
    report = auditor.report()
    report.notes = notes
    return report
