"""The work of an audit cut into tasks, for engines that run them apart (``--jobs`` workers, Ray tasks).

A plain file larger than a chunk becomes byte ranges that start and stop at line starts, a gzip file one
task (a compressed stream cannot be entered in the middle), a Parquet file runs of row groups. Each task's
partial report travels back as JSON and the partials are merged in input order, so the report is the
one-pass report, physical line numbers included.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from .errors import describe_read_error
from .partial import PartialReport
from .progress import ByteProgress
from .reader import audit_file
from .settings import AuditSettings, Pins
from .sources import GZIP_MAGIC, Source, is_gzip, is_parquet

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import IO, Final, TypeAlias

    Runner: TypeAlias = Callable[[Sequence["Task"], AuditSettings, Pins | None, ByteProgress], PartialReport]
    """Runs tasks (in workers, on Ray, or here in tests) and merges their partials in input order."""

# A plain file is cut into ranges of about this many bytes at most, and at least MIN_CHUNK_BYTES: many
# ranges per worker keep the workers busy to the end (a worker left alone works on one small range at
# most), while each range costs a task and a partial to merge, a few milliseconds.
MAX_CHUNK_BYTES: Final = 64 << 20
MIN_CHUNK_BYTES: Final = 4 << 20
CHUNKS_PER_JOB: Final = 16
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
    an input known to be unreadable (``error`` says why). ``size`` is the bytes it covers (for progress)."""

    index: int
    kind: str
    path: str
    display: str
    start: int = 0
    stop: int | None = None
    size: int = 0
    error: str | None = None

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
        )


def chunk_bytes_for(total: int, jobs: int) -> int:
    return max(MIN_CHUNK_BYTES, min(MAX_CHUNK_BYTES, total // max(1, jobs * CHUNKS_PER_JOB)))


def plan(sources: Sequence[Source], jobs: int, chunk_bytes: int | None = None) -> list[Task]:
    """The tasks for ``sources``, in input order. ``chunk_bytes`` None: sized for ``jobs`` workers."""
    shapes: list[tuple[Source, str, int]] = [_shape(source) for source in sources]
    if chunk_bytes is None:
        chunk_bytes = chunk_bytes_for(sum(size for _, kind, size in shapes if kind == LINES), jobs)
    tasks: list[Task] = []
    for source, kind, size in shapes:
        path = source.path if source.path is not None else source.display
        if kind == LINES and size > chunk_bytes:
            try:
                with open(path, "rb") as file:
                    starts = line_starts(file, size, chunk_bytes)
            except OSError:
                starts = [0]  # the task for the whole file reports the error
            for start, stop, length in ranges(starts, size):
                tasks.append(Task(len(tasks), LINES, path, source.display, start, stop, length))
        elif kind == PARQUET:
            from .parquet import row_group_runs

            for first, stop, size_of_run in row_group_runs(path):
                tasks.append(Task(len(tasks), PARQUET, path, source.display, first, stop, size_of_run))
        elif kind == UNREADABLE and source.error is not None:
            error = describe_read_error(source.error)
            tasks.append(Task(len(tasks), kind, path, source.display, 0, None, 0, error))
        else:
            tasks.append(Task(len(tasks), kind, path, source.display, 0, None, size))
    return tasks


def _shape(source: Source) -> tuple[Source, str, int]:
    """What a source is (plain lines, gzip, Parquet or a stream) and its size in bytes."""
    if source.path is None:
        return source, STREAM, 0
    if source.error is not None:  # a directory that could not be listed
        return source, UNREADABLE, 0
    try:
        status = os.stat(source.path)
    except (OSError, ValueError):
        return source, LINES, 0  # the task reports why it cannot be read
    import stat

    if not stat.S_ISREG(status.st_mode):
        return source, STREAM, 0
    if is_parquet(source.path):
        return source, PARQUET, status.st_size
    if is_gzip(source.display, b""):  # gzip by its name: no need to read it
        return source, GZIP, status.st_size
    try:
        with open(source.path, "rb") as file:
            head = file.read(len(GZIP_MAGIC))
    except OSError:
        return source, LINES, 0
    return source, GZIP if is_gzip(source.display, head) else LINES, status.st_size


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


def run_task(task: Task, settings: AuditSettings, pins: Pins | None, fast: bool) -> PartialReport:
    """The partial report of one task (in whichever process runs it)."""
    if task.kind == UNREADABLE:
        return failed_partial(task, settings, task.error or "cannot be read")
    if task.kind == PARQUET:
        from .parquet import audit_parquet

        return audit_parquet(
            task.path, settings, task.start, task.stop, pins=pins, fast=fast, display=task.display
        )
    partial = audit_file(task.path, settings, start=task.start, stop=task.stop, pins=pins, fast=fast)
    for part in partial.files:
        part.path = task.display
    return partial


def run_task_json(task_json: str, settings_json: str, pins_json: str | None, fast: bool) -> str:
    """run_task with every argument and the result as JSON text: what crosses a process boundary."""
    settings = AuditSettings.from_json(json.loads(settings_json))
    pins = None if pins_json is None else Pins.from_json(json.loads(pins_json))
    task = Task.from_json(json.loads(task_json))
    try:
        partial = run_task(task, settings, pins, fast)
    except MemoryError:
        partial = failed_partial(task, settings, "out of memory while reading")
    return json.dumps(partial.to_json())


def failed_partial(task: Task, settings: AuditSettings, error: str) -> PartialReport:
    """The partial of a task that could not run: no records, and the error on its file."""
    partial = PartialReport(settings)
    unit = "row" if task.kind == PARQUET else "line"
    partial.start_file(task.display, continuation=task.start > 0, unit=unit)
    partial.add_error(error)
    return partial


class OrderedMerge:
    """Merges partials that arrive in any order into the partial of the whole, in input order, holding
    only those that arrived ahead of a gap."""

    def __init__(self) -> None:
        self.merged: PartialReport | None = None
        self.next_index: int = 0
        self.waiting: dict[int, PartialReport] = {}

    def add(self, index: int, partial: PartialReport) -> None:
        self.waiting[index] = partial
        while self.next_index in self.waiting:
            ready = self.waiting.pop(self.next_index)
            self.merged = ready if self.merged is None else self.merged.merge(ready)
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
) -> PartialReport:
    """Run ``tasks`` with ``run`` and merge; when the merge is inexact (a part overflowed a distinct-value
    cap), run them again pinned to the values the whole keeps, which makes the second merge exact."""
    total = sum(task.size for task in tasks)
    meter = ByteProgress(progress, total)
    try:
        merged = run(tasks, settings, None, meter)
        if not merged.exact:
            meter.total += total
            merged = run(tasks, settings, merged.pins(), meter)
    finally:
        meter.clear()
    return merged
