"""The work of an audit cut into tasks, for engines that run them apart (``--jobs`` workers, Ray tasks).

A plain file larger than a chunk becomes byte ranges that start and stop at line starts, a gzip file one
task (a compressed stream cannot be entered in the middle), a Parquet file runs of row groups. Tasks run
in batches: consecutive tasks of about a chunk's bytes in all, read into one partial, so thousands of
small files cost a few partials to send and merge, not one each. Each batch's partial travels back
pickled (``packed``) and they are folded into one accumulator in input order (``OrderedMerge``), so the
report is the one-pass report, physical line numbers included, at a cost linear in the parts.

Each range is read through one descriptor whose file (device and inode), size and modification time
must be those the plan saw; afterwards the path must still name that file, unchanged. A file replaced,
truncated, grown or rewritten while the audit reads it is reported as changed (``changed_error``), and
no range is counted from a file other than the one planned.

Reading in this process: lines, byte ranges of files, and whole inputs into a partial report. Every
engine counts JSON Lines through ``count_input`` (one process, each ``--jobs`` worker, each Ray task).

A regular file read here must be the same file, unchanged, before and after its read (see ``identity``):
one truncated, grown, rewritten or replaced meanwhile is named as changed, as the other engines name it,
rather than counted as if it were whole.
"""

from __future__ import annotations

import json
import os
import pickle
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeAlias

from .errors import describe_read_error
from .partial import PartialReport
from .render import ByteProgress, Progress
from .settings import AuditSettings, Pins
from .sources import (
    BATCH_BYTES,
    GZIP_MAGIC,
    Identity,
    Input,
    Source,
    changed_error,
    decompressed,
    is_gzip,
    is_parquet,
    open_source,
    path_change,
    read_batches,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import IO, Final

    from .settings import AuditSettings, Pins


# Defined at run time, not for type checkers alone: stubtest (and any reader of the module) finds them.
Batch: TypeAlias = Sequence["Task"]
"""Consecutive tasks read into one partial (see ``batched``)."""
Runner: TypeAlias = Callable[[Sequence[Batch], AuditSettings, "Pins | None", ByteProgress], PartialReport]
"""Runs batches (in workers, on Ray, or here in tests) and merges their partials in input order."""

# A plain file is cut into ranges of about this many bytes at most, and at least MIN_CHUNK_BYTES: many
# ranges per worker keep the workers busy to the end (a worker left alone works on one small range at
# most), while each range costs a task and a partial to merge.
MAX_CHUNK_BYTES: Final = 64 << 20
MIN_CHUNK_BYTES: Final = 8 << 20
CHUNKS_PER_JOB: Final = 4
# Each part also costs the driver its distinct values (sent, read, merged): a directory of shards with
# 10,000 distinct values costs 10,000 entries per part, whatever the part's size. Four parts per worker
# keep that small beside the reading while a worker left alone at the end works on a quarter of its share.
# An engine's part keeps up to this many times the distinct cap of each category (the merge keeps the
# cap): only a part with more distinct values than that makes the merge inexact, which costs a second,
# pinned pass over everything.
PART_DISTINCT_FACTOR: Final = 4
# A batch holds at most this many tasks however small their files, so a directory of empty files still
# comes back in parts that show progress and spread over the workers.
_BATCH_TASKS: Final = 4096
# How far the cut search reads at a time when looking for the next line start.
_SEARCH_BYTES: Final = 64 << 10

LINES: Final = "lines"
GZIP: Final = "gzip"
PARQUET: Final = "parquet"
STREAM: Final = "stream"
UNREADABLE: Final = "unreadable"


@dataclass(frozen=True)
class Task:
    """One unit of work: the bytes ``start`` to ``stop`` of a plain file (``stop`` None: to its end), a
    whole gzip file, row groups ``start`` to ``stop`` of a Parquet file, a stream read by the driver, or
    an input known to be unreadable (``error`` says why). ``size`` is the bytes it covers (for progress);
    ``identity`` what the plan saw of a local file, checked when it is read."""

    index: int
    kind: str
    path: str
    display: str
    start: int = 0
    stop: int | None = None
    size: int = 0
    error: str | None = None
    identity: Identity | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "index": self.index,
            "kind": self.kind,
            "path": self.path,
            "display": self.display,
            "start": self.start,
            "stop": self.stop,
            "size": self.size,
            "error": self.error,
            "identity": None if self.identity is None else self.identity.to_json(),
        }

    @classmethod
    def from_json(cls, data: dict[str, object]) -> Task:
        stop, error = data["stop"], data["error"]
        return cls(
            index=int(str(data["index"])),
            kind=str(data["kind"]),
            path=str(data["path"]),
            display=str(data["display"]),
            start=int(str(data["start"])),
            stop=None if stop is None else int(str(stop)),
            size=int(str(data["size"])),
            error=None if error is None else str(error),
            identity=Identity.from_json(data.get("identity")),
        )


def chunk_bytes_for(total: int, jobs: int) -> int:
    return max(MIN_CHUNK_BYTES, min(MAX_CHUNK_BYTES, total // max(1, jobs * CHUNKS_PER_JOB)))


def plan(sources: Sequence[Source], jobs: int, chunk_bytes: int | None = None) -> list[Task]:
    """The tasks for ``sources``, in input order. ``chunk_bytes`` None: sized for ``jobs`` workers."""
    shapes = [_shape(source) for source in sources]
    if chunk_bytes is None:
        chunk_bytes = chunk_bytes_for(sum(size for _, kind, size, _ in shapes if kind == LINES), jobs)
    tasks: list[Task] = []
    for source, kind, size, identity in shapes:
        path = source.path if source.path is not None else source.display
        if kind == LINES and size > chunk_bytes:
            try:
                with open(path, "rb") as file:
                    identity = Identity.of(os.fstat(file.fileno()))  # the file the cuts are found in
                    size = identity.size
                    if is_gzip(source.display, file.read(len(GZIP_MAGIC))):
                        kind, starts = GZIP, [0]  # gzip by its content: read whole
                    else:
                        starts = line_starts(file, size, chunk_bytes)
            except OSError:
                starts = [0]  # the task for the whole file reports the error
            for start, stop, length in ranges(starts, size):
                task = Task(len(tasks), kind, path, source.display, start, stop, length, None, identity)
                tasks.append(task)
        elif kind == PARQUET:
            from .parquet import row_group_runs

            for first, stop, size_of_run in row_group_runs(path):
                tasks.append(
                    Task(len(tasks), PARQUET, path, source.display, first, stop, size_of_run, None, identity)
                )
        elif kind == UNREADABLE and source.error is not None:
            error = describe_read_error(source.error)
            tasks.append(Task(len(tasks), kind, path, source.display, 0, None, 0, error))
        else:
            tasks.append(Task(len(tasks), kind, path, source.display, 0, None, size, None, identity))
    return tasks


def _shape(source: Source) -> tuple[Source, str, int, Identity | None]:
    """What a source is (plain lines or gzip, Parquet or a stream), its size in bytes and its identity.
    A file is not opened here: one read whole finds gzip by its content as it reads (see
    ``sources.decompressed``), and one large enough to be cut is looked at when it is cut."""
    if source.path is None:
        return source, STREAM, 0, None
    if source.error is not None:  # a directory that could not be listed
        return source, UNREADABLE, 0, None
    try:
        status = os.stat(source.path)
    except (OSError, ValueError):
        return source, LINES, 0, None  # the task reports why it cannot be read
    if not stat.S_ISREG(status.st_mode):
        return source, STREAM, 0, None
    identity = Identity.of(status)
    if is_parquet(source.path):
        return source, PARQUET, status.st_size, identity
    if is_gzip(source.display, b""):  # gzip by its name
        return source, GZIP, status.st_size, identity
    return source, LINES, status.st_size, identity


def batched(tasks: Sequence[Task], batch_bytes: int) -> list[Batch]:
    """``tasks`` in runs of consecutive tasks of at most ``batch_bytes`` in all (a larger task alone;
    0: every task alone), each run read into one partial."""
    batches: list[Batch] = []
    current: list[Task] = []
    size = 0
    for task in tasks:
        if current and (size + task.size > batch_bytes or len(current) >= _BATCH_TASKS):
            batches.append(current)
            current, size = [], 0
        current.append(task)
        size += task.size
    if current:
        batches.append(current)
    return batches


def line_starts(file: IO[bytes], size: int, chunk_bytes: int) -> list[int]:
    """Offsets that cut the open ``file`` of ``size`` bytes into ranges of about ``chunk_bytes``, each
    the start of a line: 0, then the first line start at or after each multiple of ``chunk_bytes``. A
    line longer than a chunk simply makes its range longer; ranges are never empty. Local files and the
    files of a remote filesystem (Ray) are cut by this alike."""
    starts = [0]
    target = chunk_bytes
    while target < size:
        start = next_line_start(file, target, size)
        if start >= size:
            break
        starts.append(start)  # after target, itself after the previous start: never a repeat
        target = start + chunk_bytes
    return starts


def ranges(starts: list[int], size: int) -> list[tuple[int, int | None, int]]:
    """``(start, stop, bytes)`` of each range the line starts cut; stop None: to the end."""
    stops: list[int | None] = [*starts[1:], None]
    return [
        (start, stop, (size if stop is None else stop) - start)
        for start, stop in zip(starts, stops, strict=True)
    ]


def next_line_start(file: IO[bytes], offset: int, size: int) -> int:
    """The first offset >= ``offset`` at which a line starts (``size`` when none does)."""
    file.seek(offset - 1)
    position = offset - 1
    while position < size:
        block = file.read(_SEARCH_BYTES)
        if not block:
            break
        found = block.find(b"\n")
        if found >= 0:
            return position + found + 1
        position += len(block)
    return size


def run_batch(
    batch: Batch,
    settings: AuditSettings,
    pins: Pins | None,
    fast: bool,
    elsewhere: Callable[[Task], PartialReport | None] | None = None,
) -> PartialReport:
    """The partial report of one batch (in whichever process runs it). ``elsewhere`` may return the
    partial of a task it reads itself (Ray's URIs), or None for a task read here."""
    partial = PartialReport(settings, pins, fast)
    for tally in (partial.values, partial.servers):
        tally.limit = settings.distinct_limit * PART_DISTINCT_FACTOR  # see PART_DISTINCT_FACTOR
    partial.known_categories = _known_categories(settings)
    previous: Task | None = None
    for task in batch:
        apart = None if elsewhere is None else elsewhere(task)
        if apart is not None:
            partial.absorb(apart)
        elif task.kind == PARQUET:
            partial.absorb(_parquet_partial(task, settings, pins, fast))
        else:
            continues = previous is not None and previous.path == task.path and previous.stop == task.start
            if not continues:  # a range that follows the previous one in this batch adds to its file
                partial.start_file(task.display, continuation=task.start > 0)
            if task.kind == UNREADABLE:
                partial.add_error(task.error or "cannot be read")
            else:
                _read_task(partial, task)
        previous = task
    return partial


_categories_of: tuple[AuditSettings | None, dict[str, str]] = (None, {})


def _known_categories(settings: AuditSettings) -> dict[str, str]:
    """The categories this process found under ``settings``, shared by the batches it runs: a directory
    of shards holds the same values batch after batch."""
    global _categories_of
    if _categories_of[0] != settings:
        _categories_of = (settings, {})
    return _categories_of[1]


def _read_task(partial: PartialReport, task: Task) -> None:
    """Count the bytes of ``task`` into the current file of ``partial``, through one descriptor that
    must be the file the plan saw, unchanged before and after."""
    try:
        raw = open(task.path, "rb")  # noqa: SIM115  # closed through the Input, or below
    except OSError as error:
        partial.add_error(describe_read_error(error))
        return
    try:
        change = _change(task, os.fstat(raw.fileno()))
        if change is not None:
            raw.close()
            partial.add_error(changed_error(change))
            return
        data = decompressed(raw, task.display, task.start)
    except Exception as error:  # the status, the seek or the first read
        raw.close()
        partial.add_error(describe_read_error(error))
        return
    count_input(partial, data, None if task.stop is None else task.stop - task.start)
    _check_after(partial, task)


def _parquet_partial(task: Task, settings: AuditSettings, pins: Pins | None, fast: bool) -> PartialReport:
    """Parquet is read by path (pyarrow opens the file): the path must name the planned file before
    and after, so a replaced file is caught even when the swap falls between a check and the open."""
    from .parquet import audit_parquet

    change = _path_change(task)
    if change is not None:
        return failed_partial(task, settings, changed_error(change))
    partial = audit_parquet(
        task.path, settings, task.start, task.stop, pins=pins, fast=fast, display=task.display
    )
    _check_after(partial, task)
    return partial


def _change(task: Task, status: os.stat_result) -> str | None:
    return None if task.identity is None else task.identity.change(status)


def _path_change(task: Task) -> str | None:
    return None if task.identity is None else path_change(task.path, task.identity)


def _check_after(partial: PartialReport, task: Task) -> None:
    """Whether the path still names the planned file, unchanged, once it was read: a file truncated,
    grown or rewritten during the read, or replaced, is reported (the first error of a file is kept)."""
    change = _path_change(task)
    if change is not None and partial.files[-1].error is None:
        partial.files[-1].error = changed_error(change)


def run_batch_packed(batch: Batch, settings: AuditSettings, pins: Pins | None, fast: bool) -> bytes:
    """run_batch with its result packed to cross a process boundary (a process pool's worker)."""
    try:
        partial = run_batch(batch, settings, pins, fast)
    except MemoryError:
        partial = failed_batch(batch, settings, "out of memory while reading")
    return packed(partial)


def packed(partial: PartialReport) -> bytes:
    """A worker's partial as bytes for its driver. Pickled, not JSON: the two are the same program
    (JSON, with every field checked, is for partials from elsewhere: ``PartialReport.from_json``)."""
    return pickle.dumps(partial, protocol=pickle.HIGHEST_PROTOCOL)


def unpacked(data: bytes) -> PartialReport:
    """The partial ``packed`` made (in a worker this audit started)."""
    partial = pickle.loads(data)  # bytes from this audit's own workers
    if not isinstance(partial, PartialReport):
        raise TypeError(f"a worker sent {type(partial).__name__}, not a partial report")
    return partial


def batch_json(batch: Batch) -> str:
    return json.dumps([task.to_json() for task in batch])


def failed_partial(task: Task, settings: AuditSettings, error: str) -> PartialReport:
    """The partial of a task that could not run: no records, and the error on its file."""
    return failed_batch([task], settings, error)


def failed_batch(batch: Batch, settings: AuditSettings, error: str) -> PartialReport:
    """The partial of a batch that could not run: no records, and the error on each of its files."""
    partial = PartialReport(settings)
    previous: Task | None = None
    for task in batch:
        if previous is None or previous.path != task.path or previous.stop != task.start:
            unit = "row" if task.kind == PARQUET else "line"
            partial.start_file(task.display, continuation=task.start > 0, unit=unit)
            partial.add_error(error)
        previous = task
    return partial


class OrderedMerge:
    """Merges partials that arrive in any order into the partial of the whole, in input order, holding
    only those that arrived ahead of a gap. Each is folded into one accumulator as soon as it is next in
    order, so the merge costs time linear in the parts. The accumulator is a partial of its own with the
    settings' caps, so parts may keep more distinct values than the cap (see PART_DISTINCT_FACTOR)."""

    def __init__(self) -> None:
        self.merged: PartialReport | None = None
        self.next_index: int = 0
        self.waiting: dict[int, PartialReport] = {}

    def add(self, index: int, partial: PartialReport) -> None:
        self.waiting[index] = partial
        while self.next_index in self.waiting:
            ready = self.waiting.pop(self.next_index)
            if self.merged is None:
                self.merged = PartialReport(ready.settings, fast=ready.fast)
            self.merged.absorb(ready)
            self.next_index += 1

    def result(self, settings: AuditSettings) -> PartialReport:
        if self.waiting:
            raise RuntimeError(f"partial {self.next_index} never arrived")
        return self.merged if self.merged is not None else PartialReport(settings)


def audit_tasks(
    tasks: Sequence[Task],
    settings: AuditSettings,
    run: Runner,
    progress: IO[str] | None,
    batch_bytes: int = 0,
) -> PartialReport:
    """Run ``tasks`` with ``run`` in batches of about ``batch_bytes`` (0: each task alone) and merge;
    when the merge is inexact (a part overflowed a distinct-value cap), run them again pinned to the
    values the whole keeps, which makes the second merge exact."""
    batches = batched(tasks, batch_bytes)
    total = sum(task.size for task in tasks)
    meter = ByteProgress(progress, total)
    try:
        merged = run(batches, settings, None, meter)
        if not merged.exact:
            meter.total += total
            merged = run(batches, settings, merged.pins(), meter)
    finally:
        meter.clear()
    return merged


def batch_size(batch: Batch) -> int:
    return sum(task.size for task in batch)


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
    _check_changed(partial, path, before)
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
        _check_changed(partial, source.path, before)
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


def _check_changed(partial: PartialReport, path: str | None, before: Identity | None) -> None:
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
