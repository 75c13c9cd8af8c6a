"""The work of an audit cut into tasks, and the one function every engine runs on them (``run_batch``).

A plain file larger than a chunk becomes byte ranges that start and stop at line starts, a gzip file one
task (a compressed stream cannot be entered in the middle), a Parquet file runs of row groups, a stream
one task this process reads. Consecutive tasks run in batches, each read into one partial, and the
partials are folded into one accumulator in input order (``OrderedMerge``).

A file is looked at once before its read (when the inputs are expanded, or a remote one planned) and
once after: the descriptor read must be the planned file, and afterwards the path must still name it,
unchanged. A file replaced, truncated, grown or rewritten meanwhile is named (``changed_error``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeAlias

from failure_kinds._streams import OUT_OF_MEMORY, READ_ONCE, Skipped, describe_read_error, repeated_note, walk

from .partial import PartialReport
from .render import Progress
from .settings import AuditError, AuditSettings
from .sources import (
    BATCH_BYTES,
    GZIP_MAGIC,
    STDIN,
    STDIN_NAME,
    WALKED,
    decompressed,
    is_gzip,
    is_parquet,
    is_walked,
    open_stream,
    read_batches,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import IO, Any, BinaryIO, Final

    from .sources import Input

Batch: TypeAlias = Sequence["Task"]
"""Consecutive tasks read into one partial (see ``batched``)."""
Runner: TypeAlias = Callable[[Sequence[Batch], AuditSettings, Progress], PartialReport]
"""Runs batches (here, in workers or on Ray) and merges their partials in input order."""
Opener: TypeAlias = Callable[[str], "tuple[LocalFiles, str]"]
"""The files a task's path is read through, and its path there (Ray: pyarrow's filesystem of a URI)."""

# A plain file is cut into ranges of MIN_CHUNK_BYTES to MAX_CHUNK_BYTES, about CHUNKS_PER_JOB per worker:
# workers stay busy to the end, while each range costs a partial to merge.
MAX_CHUNK_BYTES: Final = 64 << 20
MIN_CHUNK_BYTES: Final = 8 << 20
CHUNKS_PER_JOB: Final = 4
# A batch holds at most this many tasks, so a directory of empty files still spreads over the workers.
_BATCH_TASKS: Final = 4096
_SEARCH_BYTES: Final = 64 << 10

LINES: Final = "lines"
GZIP: Final = "gzip"
PARQUET: Final = "parquet"
STREAM: Final = "stream"
UNREADABLE: Final = "unreadable"


@dataclass(frozen=True)
class Identity:
    """What a file was when planned: device and inode (None: not compared, as on a Ray node or a remote
    filesystem), size and st_mtime_ns."""

    device: int | None
    inode: int | None
    size: int
    modified: int

    @classmethod
    def of(cls, status: os.stat_result) -> Identity:
        return cls(status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns)

    def change(self, now: Identity) -> str | None:
        """How the file ``now`` differs from this one; None: it does not."""
        for mine, theirs in ((self.inode, now.inode), (self.device, now.device)):
            if mine is not None and theirs is not None and mine != theirs:
                return "replaced"
        if now.size != self.size:
            return "truncated" if now.size < self.size else "grown"
        return "rewritten" if now.modified != self.modified else None


@dataclass(frozen=True)
class Source:
    """One input as reports name it (``display``; ``path`` None: stdin). ``error``: a directory that could
    not be listed; ``identity``: the regular file as expanded, its one look before the read; ``stream``:
    stdin, a FIFO or a device, read once, in this process."""

    display: str
    path: str | None
    error: OSError | None = None
    identity: Identity | None = None
    stream: bool = False


def expand_inputs(inputs: Sequence[str], notes: list[str]) -> list[Source]:
    """Files as given, directories as their regular files named with SUFFIXES (recursively, sorted; links
    to directories are not followed, a FIFO there is never opened), "-" as stdin; the other entries of a
    directory in one note, a directory that cannot be listed as a source that fails with the reason."""
    if list(inputs).count(STDIN) > 1:
        raise AuditError("- (stdin) can be given only once")
    from failure_kinds._display import plain

    sources: list[Source] = []
    skipped = Skipped()
    for item in inputs:
        if item == STDIN:
            sources.append(Source(STDIN_NAME, None, stream=True))
        elif os.path.isdir(item):
            found = _walk(item, skipped)
            if not found:
                notes.append(f"{plain(item)}: no {WALKED} files in this directory")
            sources.extend(found)
        else:
            sources.append(Source(item, item))
    skipped.note(notes, WALKED)
    return read_once(sources, notes)


def read_once(sources: Iterable[Source], notes: list[str]) -> list[Source]:
    """``sources`` without those that name a file (device and inode) an earlier one names, with a note
    saying how many were left out; each kept file gets its identity from this, its one look before the
    read. Stdin, and a path that cannot be looked at (its read says why), are always kept."""
    seen: set[tuple[int, int]] = set()
    kept: list[Source] = []
    repeated = 0
    for source in sources:
        if source.path is not None and source.error is None:
            try:
                status = os.stat(source.path)
            except (OSError, ValueError):
                pass
            else:
                key = (status.st_dev, status.st_ino)
                if key in seen:
                    repeated += 1
                    continue
                seen.add(key)
                regular = stat.S_ISREG(status.st_mode)
                identity = Identity.of(status) if regular else None
                source = Source(source.display, source.path, None, identity, not regular)
        kept.append(source)
    note_repeated(notes, repeated)
    return kept


def note_repeated(notes: list[str], repeated: int) -> None:
    """Say that ``repeated`` more inputs name a file already read, in the one note that counts them all."""
    if not repeated:
        return
    for index, note in enumerate(notes):
        if note.endswith(READ_ONCE):
            repeated += int(note.partition(" ")[0].replace(",", ""))
            del notes[index]
            break
    notes.append(repeated_note(repeated))


def _walk(top: str, skipped: Skipped) -> list[Source]:
    return [Source(path, path, error) for path, error in walk(top, is_walked, skipped)]


@dataclass(frozen=True)
class Task:
    """Bytes ``start`` to ``stop`` (None: the end) of a plain file, a whole gzip file, row groups
    ``start`` to ``stop`` of a Parquet file, a stream (``path`` "-": stdin), or an input that cannot be
    read (``error``). ``size``: the bytes it covers; ``identity``: the file as planned."""

    index: int
    kind: str
    path: str
    display: str
    start: int = 0
    stop: int | None = None
    size: int = 0
    error: str | None = None
    identity: Identity | None = None


def changed_error(change: str) -> str:
    return f"changed while it was read ({change}): audit it again once nothing writes to it"


class LocalFiles:
    """How engines open and look at files: the local filesystem (Ray reads URIs through pyarrow's)."""

    filesystem: object = None  # what pyarrow opens a Parquet file through: None is the local one

    def open(self, path: str) -> BinaryIO:
        return open(path, "rb")  # closed through the Input it becomes

    def identity(self, path: str) -> Identity:
        return Identity.of(os.stat(path))

    def opened(self, raw: BinaryIO, path: str) -> Identity:
        """The identity of the file ``raw`` reads, which must be the one planned."""
        return Identity.of(os.fstat(raw.fileno()))


LOCAL: Final = LocalFiles()


def chunk_bytes_for(total: int, jobs: int) -> int:
    return max(MIN_CHUNK_BYTES, min(MAX_CHUNK_BYTES, total // max(1, jobs * CHUNKS_PER_JOB)))


def plan(sources: Sequence[Source], jobs: int, chunk_bytes: int | None = None) -> list[Task]:
    """The tasks for ``sources``, in input order; ``chunk_bytes`` None: sized for ``jobs`` workers,
    0: no file is cut."""
    if chunk_bytes is None:
        sizes = (source.identity.size for source in sources if source.identity is not None)
        chunk_bytes = chunk_bytes_for(sum(sizes), jobs)
    tasks: list[Task] = []
    for source in sources:
        if source.error is not None:  # a directory that could not be listed
            error = describe_read_error(source.error)
            tasks.append(Task(0, UNREADABLE, source.path or source.display, source.display, error=error))
        elif source.path is None or source.stream:
            tasks.append(Task(0, STREAM, source.path or STDIN, source.display))
        else:
            tasks.extend(plan_file(LOCAL, source.path, source.display, source.identity, chunk_bytes))
    return [dataclasses.replace(task, index=index) for index, task in enumerate(tasks)]


def plan_file(
    files: LocalFiles, path: str, display: str, identity: Identity | None, chunk_bytes: int
) -> list[Task]:
    """The tasks of one file (its ``identity`` None: it could not be looked at, and its read says why)."""
    if is_parquet(path):
        from .parquet import row_group_runs

        runs = row_group_runs(path, filesystem=files.filesystem)
        return [Task(0, PARQUET, path, display, *run, None, identity) for run in runs]
    size = 0 if identity is None else identity.size
    kind = GZIP if is_gzip(display, b"") else LINES
    starts = [0]
    if kind == LINES and chunk_bytes and size > chunk_bytes:
        try:
            with files.open(path) as file:
                if is_gzip(display, bytes(file.read(len(GZIP_MAGIC)))):
                    kind = GZIP  # gzip by its content: read whole
                else:
                    starts = line_starts(file, size, chunk_bytes)
        except OSError:
            pass  # the task for the whole file reports the error
    return [
        Task(0, kind, path, display, start, stop, (size if stop is None else stop) - start, None, identity)
        for start, stop in zip(starts, [*starts[1:], None], strict=True)
    ]


def line_starts(file: Any, size: int, chunk_bytes: int) -> list[int]:
    """0, then the first line start at or after each ``chunk_bytes`` past the previous start: the cuts
    of a file into ranges that never split a line and are never empty."""
    starts = [0]
    position = chunk_bytes - 1  # the cut falls on a line start when the byte before it ends a line
    file.seek(position)
    while position < size and (block := bytes(file.read(_SEARCH_BYTES))):
        found = block.find(b"\n")
        if found < 0:
            position += len(block)
            continue
        position += found + 1
        if position < size:
            starts.append(position)
            position += chunk_bytes - 1
            file.seek(position)
    return starts


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


def batch_size(batch: Batch) -> int:
    return sum(task.size for task in batch)


def local(path: str) -> tuple[LocalFiles, str]:
    return LOCAL, path


def run_batch(
    batch: Batch,
    settings: AuditSettings,
    fast: bool,
    opener: Opener = local,
    progress: Progress | None = None,
) -> PartialReport:
    """The partial report of one batch, in whichever process runs it: what every engine runs."""
    partial = PartialReport(settings, fast)
    partial.known_categories = _known_categories(settings)
    previous: Task | None = None
    for task in batch:
        add_task(partial, task, previous, opener, progress)
        previous = task
    return partial


def work(
    batch: Batch,
    settings: AuditSettings,
    fast: bool,
    opener: Opener = local,
    progress: Progress | None = None,
) -> PartialReport:
    """What a worker (of the pool or on Ray, or this process) does with a batch: its partial; a batch
    that runs out of memory gives a partial that says so rather than a lost worker or a traceback."""
    partial = None
    with contextlib.suppress(MemoryError):  # failed_batch runs once what the read held is freed
        partial = run_batch(batch, settings, fast, opener, progress)
    return failed_batch(batch, settings, OUT_OF_MEMORY) if partial is None else partial


def add_task(
    partial: PartialReport,
    task: Task,
    previous: Task | None = None,
    opener: Opener = local,
    progress: Progress | None = None,
) -> None:
    """Count ``task`` into ``partial``: a file of its own, or the rest of ``previous``'s file."""
    if previous is None or previous.path != task.path or previous.stop != task.start:
        unit = "row" if task.kind == PARQUET else "line"
        partial.start_file(task.display, continuation=task.start > 0, unit=unit)
    if task.kind == UNREADABLE:
        partial.add_error(task.error or "cannot be read")
        return
    files, path = opener(task.path)
    if task.kind != PARQUET:
        _read(partial, task, files, path, progress)
    elif not _changed(partial, task, files, path):
        # Parquet is read by path (pyarrow opens the file): the path must name the planned file before
        # and after, so a replaced file is caught even when the swap falls between a check and the open.
        from .parquet import add_parquet

        add_parquet(partial, path, task.start, task.stop, files.filesystem)
        _changed(partial, task, files, path)


_categories_of: tuple[AuditSettings | None, dict[str, str]] = (None, {})


def _known_categories(settings: AuditSettings) -> dict[str, str]:
    """The categories this process found under ``settings``, shared by the batches it runs."""
    global _categories_of
    if _categories_of[0] != settings:
        _categories_of = (settings, {})
    return _categories_of[1]


def _read(
    partial: PartialReport,
    task: Task,
    files: LocalFiles,
    path: str,
    progress: Progress | None,
) -> None:
    try:
        raw = open_stream(None if path == STDIN else path) if task.kind == STREAM else files.open(path)
    except OSError as error:
        partial.add_error(describe_read_error(error))
        return
    try:
        change = None if task.identity is None else task.identity.change(files.opened(raw, path))
        if change is not None:
            raw.close()
            partial.add_error(changed_error(change))
            return
        data = decompressed(raw, task.display, task.start)
    except Exception as error:  # the status, the seek or the first read
        raw.close()
        partial.add_error(describe_read_error(error))
        return
    # The last range of a file cut into ranges ends where the plan saw the file end: what is appended
    # meanwhile, maybe before the range was opened, is never counted.
    identity = task.identity
    stop = identity.size if task.stop is None and task.start > 0 and identity is not None else task.stop
    count_input(partial, data, None if stop is None else stop - task.start, progress)
    _changed(partial, task, files, path)


def _changed(partial: PartialReport, task: Task, files: LocalFiles, path: str) -> bool:
    """Name the file as changed when the path no longer names the planned file, unchanged: over a read
    error, which the change is the likelier cause of (a Parquet file cut short as it was read)."""
    if task.identity is None:
        return False
    try:
        change = task.identity.change(files.identity(path))
    except (OSError, ValueError):
        change = "removed"  # the path names no file
    if change is not None:
        partial.files[-1].error = changed_error(change)
    return change is not None


def count_input(partial: PartialReport, data: Input, limit: int | None, progress: Progress | None) -> None:
    """Count the lines of ``data`` (at most ``limit`` bytes) into the current file of ``partial``, then
    close it; a read error ends the data and is noted on the file."""
    part = partial.files[-1]
    try:
        for lines in read_batches(data, partial.settings.line_bytes, limit):
            if isinstance(lines, int):
                partial.add_blank(lines)
            elif lines is None:
                partial.add_overlong()
            else:
                partial.add_lines(*lines)
            if progress is not None:
                progress.update(part.path, part.records)
    finally:
        data.close()
        if progress is not None:
            progress.clear()
    if data.error is not None:
        partial.add_error(describe_read_error(data.error))


def failed_batch(batch: Batch, settings: AuditSettings, error: str) -> PartialReport:
    """The partial of a batch that could not run: no records, and the error on each of its files."""
    unreadable = [dataclasses.replace(task, kind=UNREADABLE, error=error) for task in batch]
    return run_batch(unreadable, settings, fast=True)


class OrderedMerge:
    """Folds partials that arrive in any order into one accumulator, in input order, holding only those
    that arrived ahead of a gap: time linear in the parts. The accumulator has the settings' caps."""

    def __init__(self) -> None:
        self.merged: PartialReport | None = None
        self.next_index: int = 0
        self.waiting: dict[int, PartialReport] = {}

    def add(self, index: int, partial: PartialReport) -> None:
        self.waiting[index] = partial
        while self.next_index in self.waiting:
            ready = self.waiting.pop(self.next_index)
            if self.merged is None:
                self.merged = ready  # the first part: the accumulator, which each later one joins
            else:
                self.merged.absorb(ready)
            self.next_index += 1

    def result(self, settings: AuditSettings) -> PartialReport:
        if self.waiting:
            raise RuntimeError(f"partial {self.next_index} never arrived")
        return self.merged if self.merged is not None else PartialReport(settings)


def run_here(
    batches: Sequence[Batch],
    settings: AuditSettings,
    meter: Progress,
    fast: bool = True,
    progress: Progress | None = None,
) -> PartialReport:
    """The batches read one after the other in this process."""
    merge = OrderedMerge()
    for index, batch in enumerate(batches):
        merge.add(index, work(batch, settings, fast, local, progress))
        meter.advance(batch_size(batch))
    return merge.result(settings)


def audit_tasks(
    tasks: Sequence[Task],
    settings: AuditSettings,
    run: Runner,
    progress: IO[str] | None,
    batch_bytes: int = 0,
) -> PartialReport:
    """Run ``tasks`` with ``run`` in batches of about ``batch_bytes`` (0: each task alone) and merge."""
    meter = Progress(progress, sum(task.size for task in tasks))
    try:
        return run(batched(tasks, batch_bytes), settings, meter)
    finally:
        meter.clear()


def audit_lines(
    lines: Iterable[bytes],
    path: str,
    settings: AuditSettings,
    *,
    continuation: bool = False,
    fast: bool = True,
) -> PartialReport:
    """The partial report of ``lines`` (bytes, one line each, line ends optional), read as the file (or,
    with ``continuation``, the part of the file after an earlier partial's part) named ``path``."""
    partial = PartialReport(settings, fast)
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
    fast: bool = True,
) -> PartialReport:
    """The partial report of bytes ``start`` to ``stop`` (None: the end) of the plain file ``path``.
    ``start`` must be 0 or the offset just after a newline; ``stop`` the same or the end. A range that
    starts after 0 is a continuation. Gzip files can only be read whole (``start=0, stop=None``)."""
    try:
        identity: Identity | None = LOCAL.identity(path)
    except (OSError, ValueError):
        identity = None  # the read says why
    partial = PartialReport(settings, fast)
    add_task(partial, Task(0, LINES, path, path, start, stop, 0, None, identity))
    return partial
