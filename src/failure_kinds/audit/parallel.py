"""Every core on one machine: ``failure-kinds audit --jobs N``.

The inputs are cut into tasks: a plain file larger than a chunk into byte ranges that start and stop at
line starts, a gzip file whole (a compressed stream cannot be entered in the middle), a Parquet file into
runs of row groups. Worker processes audit the tasks into partial reports, which travel back as JSON and
are merged in input order, so the report is the one-pass report, physical line numbers included. Each
worker holds one batch of lines and one partial at a time: its memory does not grow with the input.

Standard input, FIFOs and other inputs that are not regular files can be read only once and only by this
process: with one of them among the inputs, or with one job, everything is audited here in one pass.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from dataclasses import dataclass

from .decoding import make_decoder
from .engine import Auditor, audit_file
from .errors import describe_read_error
from .progress import ByteProgress
from .sources import GZIP_MAGIC, Source, expand_inputs, is_parquet
from .state import PartialReport, Pins

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections import deque
    from collections.abc import Callable, Iterable, Sequence
    from typing import IO, Final

    from .report import Report
    from .state import AuditSettings

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


def default_jobs() -> int:
    """The cores this process may run on (its CPU affinity), which can be fewer than the machine has."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


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
            starts = line_starts(path, size, chunk_bytes)
            for start, stop in zip(starts, [*starts[1:], None], strict=True):
                end = size if stop is None else stop
                tasks.append(Task(len(tasks), LINES, path, source.display, start, stop, end - start))
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
    if source.display.endswith(".gz"):
        return source, GZIP, status.st_size
    try:
        with open(source.path, "rb") as file:
            head = file.read(len(GZIP_MAGIC))
    except OSError:
        return source, LINES, 0
    return source, GZIP if head == GZIP_MAGIC else LINES, status.st_size


def line_starts(path: str, size: int, chunk_bytes: int) -> list[int]:
    """Offsets that cut ``path`` into ranges of about ``chunk_bytes``, each the start of a line: 0, then
    the first line start at or after each multiple of ``chunk_bytes``. A line longer than a chunk simply
    makes its range longer; ranges are never empty."""
    starts = [0]
    try:
        with open(path, "rb") as file:
            target = chunk_bytes
            while target < size:
                start = next_line_start(file, target, size)
                if start >= size:
                    break
                if start > starts[-1]:
                    starts.append(start)
                target = max(start, target) + chunk_bytes
    except OSError:
        return [0]  # the task for the whole file reports the error
    return starts


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
    from .state import AuditSettings

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
    run: Callable[[Sequence[Task], AuditSettings, Pins | None, ByteProgress], PartialReport],
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


def audit_parallel(
    inputs: Sequence[str],
    settings: AuditSettings,
    *,
    jobs: int | None = None,
    fast: bool = True,
    progress: IO[str] | None = None,
    chunk_bytes: int | None = None,
    min_bytes: int = 0,
) -> Report:
    """Audit ``inputs`` (paths, directories, ``-``) with ``jobs`` worker processes (None: one per
    available core); inputs of fewer than ``min_bytes`` in all are audited in this process. The report
    is identical to the one-pass report of the same inputs."""
    jobs = default_jobs() if jobs is None else jobs
    notes: list[str] = []
    sources = expand_inputs(inputs, notes, parquet=True)
    tasks = plan(sources, jobs, chunk_bytes)
    serial = jobs <= 1 or len(tasks) <= 1 or sum(task.size for task in tasks) < min_bytes
    if serial or any(task.kind == STREAM for task in tasks):
        merged = audit_serial(sources, settings, fast=fast, progress=progress)
    else:
        runner = _runner_for(jobs, fast)
        merged = audit_tasks(tasks, settings, runner, progress)
    report = merged.report()
    report.notes = notes
    return report


def _runner_for(
    jobs: int, fast: bool
) -> Callable[[Sequence[Task], AuditSettings, Pins | None, ByteProgress], PartialReport]:
    """Forked workers when that is safe: on Linux, in a process with no other thread (pyarrow, once a
    Parquet file was planned, runs a thread pool that could hold a lock as the fork copies it)."""
    if sys.platform != "linux":
        return _pool_runner(jobs, fast, "spawn")
    try:
        threads = len(os.listdir("/proc/self/task"))
    except OSError:
        threads = 2
    return _fork_runner(jobs, fast) if threads == 1 else _pool_runner(jobs, fast, "forkserver")


def _pool_runner(
    jobs: int, fast: bool, method: str = "spawn"
) -> Callable[[Sequence[Task], AuditSettings, Pins | None, ByteProgress], PartialReport]:
    """A process pool whose workers start by ``method``: spawn off Linux, forkserver in a process whose
    other threads could hold a lock at the moment of a fork."""

    def run(
        tasks: Sequence[Task], settings: AuditSettings, pins: Pins | None, meter: ByteProgress
    ) -> PartialReport:
        import concurrent.futures
        import multiprocessing

        settings_json = json.dumps(settings.to_json())
        pins_json = None if pins is None else json.dumps(pins.to_json())
        merge = OrderedMerge()
        with concurrent.futures.ProcessPoolExecutor(
            max_workers=min(jobs, len(tasks)),
            mp_context=multiprocessing.get_context(method),
            initializer=keep_freed_memory,
        ) as pool:
            futures = {
                pool.submit(run_task_json, json.dumps(task.to_json()), settings_json, pins_json, fast): task
                for task in tasks
            }
            for future in concurrent.futures.as_completed(futures):
                task = futures[future]
                try:
                    partial = PartialReport.from_json(json.loads(future.result()))
                except concurrent.futures.process.BrokenProcessPool:
                    partial = failed_partial(task, settings, "a worker process died while reading")
                merge.add(task.index, partial)
                meter.advance(task.size)
        return merge.result(settings)

    return run


def _fork_runner(
    jobs: int, fast: bool
) -> Callable[[Sequence[Task], AuditSettings, Pins | None, ByteProgress], PartialReport]:
    """Worker processes forked directly, each fed one task at a time through a pipe: what the process
    pool does, without its 20 ms of imports and set-up (3% of the benchmark file's run). Linux only."""

    def run(
        tasks: Sequence[Task], settings: AuditSettings, pins: Pins | None, meter: ByteProgress
    ) -> PartialReport:
        import select
        from collections import deque

        settings_json = json.dumps(settings.to_json())
        pins_json = None if pins is None else json.dumps(pins.to_json())
        if fast:
            # Imported here, once, so every forked worker starts with msgspec loaded: ~10 ms less per
            # worker before its first range (1.5% of the benchmark file's run with --jobs 2).
            make_decoder(settings.field.split("."), fast)
        merge = OrderedMerge()
        pending = deque(range(len(tasks)))
        workers: dict[int, _Worker] = {}  # by the descriptor their results arrive on
        try:
            for _ in range(min(jobs, len(tasks))):
                worker = _Worker.start(tasks, settings_json, pins_json, fast, list(workers.values()))
                workers[worker.results] = worker
                worker.take(pending)
            while True:
                busy = [fd for fd, worker in workers.items() if worker.task is not None]
                if not busy:
                    break
                ready, _, _ = select.select(busy, [], [])
                for fd in ready:
                    worker = workers[fd]
                    index = worker.task
                    if index is None:
                        continue
                    text = worker.receive()
                    if text is None:  # the worker died: its task fails, the others take the rest
                        merge.add(index, failed_partial(tasks[index], settings, "a worker process died"))
                        continue
                    merge.add(index, PartialReport.from_json(json.loads(text)))
                    meter.advance(tasks[index].size)
                    worker.take(pending)
            for index in pending:  # left over only when every worker died
                merge.add(index, failed_partial(tasks[index], settings, "a worker process died"))
        finally:
            # Every worker is told to leave before any is waited for, so they exit together rather
            # than one after the other (the 1.2 GB file: from the last result to the last exit,
            # 3.1 ms -> 1.5 ms).
            for worker in workers.values():
                worker.close()
            for worker in workers.values():
                worker.wait()
        return merge.result(settings)

    return run


class _Worker:
    """One forked worker: task numbers go in through one pipe, partial reports (as JSON) come back
    through the other, each behind its length."""

    def __init__(self, pid: int, tasks: int, results: int) -> None:
        self.pid: int = pid
        self.tasks: int = tasks
        self.results: int = results
        self.task: int | None = None
        self.alive: bool = True

    @classmethod
    def start(
        cls,
        tasks: Sequence[Task],
        settings_json: str,
        pins_json: str | None,
        fast: bool,
        others: list[_Worker],
    ) -> _Worker:
        task_read, task_write = os.pipe()
        result_read, result_write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the worker: serve tasks until the pipe closes, then leave without cleanup
            code = 0
            try:
                os.close(task_write)
                os.close(result_read)
                for other in others:
                    if other.tasks >= 0:  # not already told to leave
                        os.close(other.tasks)
                    os.close(other.results)
                keep_freed_memory()
                _serve(task_read, result_write, tasks, settings_json, pins_json, fast)
            except BaseException:
                code = 1
            finally:
                os._exit(code)
        os.close(task_read)
        os.close(result_write)
        return cls(pid, task_write, result_read)

    def take(self, pending: deque[int]) -> None:
        """Hand this worker the next pending task, if any (and while it lives). With none left it is
        told to leave at once: it exits while the others finish their last tasks. (Pending tasks never
        come back once none are left: a task goes back only when handing it over fails.)"""
        self.task = None
        while self.alive and pending:
            index = pending.popleft()
            try:
                os.write(self.tasks, index.to_bytes(8, "little"))
            except OSError:  # it died: the task goes back for another worker
                self.alive = False
                pending.appendleft(index)
                return
            self.task = index
            return
        if not pending:
            self.close()

    def receive(self) -> str | None:
        """The result of the task in hand, or None when the worker died instead."""
        header = _read_exactly(self.results, 8)
        body = None if header is None else _read_exactly(self.results, int.from_bytes(header, "little"))
        if body is None:
            self.alive = False
            self.task = None
            return None
        return body.decode()

    def close(self) -> None:
        """Close its task pipe, so it leaves when it has read every task sent (again: nothing)."""
        if self.tasks >= 0:
            with contextlib.suppress(OSError):
                os.close(self.tasks)
            self.tasks = -1

    def wait(self) -> None:
        """Close its result pipe and wait for it to exit."""
        self.close()
        with contextlib.suppress(OSError):
            os.close(self.results)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)


def _serve(
    task_read: int,
    result_write: int,
    tasks: Sequence[Task],
    settings_json: str,
    pins_json: str | None,
    fast: bool,
) -> None:
    while True:
        header = _read_exactly(task_read, 8)
        if header is None:
            return
        task = tasks[int.from_bytes(header, "little")]
        result = run_task_json(json.dumps(task.to_json()), settings_json, pins_json, fast).encode()
        message = len(result).to_bytes(8, "little") + result
        view = memoryview(message)
        while view:
            written = os.write(result_write, view)
            view = view[written:]


def _read_exactly(fd: int, size: int) -> bytes | None:
    """``size`` bytes from ``fd``, or None when it ends first."""
    parts: list[bytes] = []
    while size:
        part = os.read(fd, min(size, 1 << 20))
        if not part:
            return None
        parts.append(part)
        size -= len(part)
    return b"".join(parts)


# mallopt's parameter numbers (glibc's malloc.h).
_M_TRIM_THRESHOLD: Final = -1
_M_MMAP_THRESHOLD: Final = -3


def keep_freed_memory() -> None:
    """Keep freed memory in the process instead of handing it back to the kernel (glibc only).

    Reading allocates a buffer of about a megabyte per batch. By default glibc maps such buffers afresh
    and unmaps them when freed, so every batch pays a page fault per 4 KB: a sixth of a worker's time
    on the benchmark file. With these thresholds the same heap memory serves batch after batch; the
    process's peak memory is what it was, it is only not given back until the process ends. Called in
    worker processes, which exist only for the audit, and by the command for its own process.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt  # the C library this process already uses
    except (OSError, AttributeError):  # not glibc (musl has no mallopt): nothing to tune
        return
    mallopt(_M_MMAP_THRESHOLD, 64 << 20)
    mallopt(_M_TRIM_THRESHOLD, 256 << 20)


def audit_serial(
    sources: Iterable[Source], settings: AuditSettings, *, fast: bool = True, progress: IO[str] | None = None
) -> PartialReport:
    """Every source in this process, in one pass and one partial (Parquet files included)."""
    auditor = Auditor(
        settings.field,
        settings.aliases,
        fast=fast,
        progress=progress,
        namespaces=settings.namespaces,
        distinct_limit=settings.distinct_limit,
        value_chars=settings.value_chars,
        line_bytes=settings.line_bytes,
    )
    for source in sources:
        if source.path is not None and is_parquet(source.path):
            from .parquet import add_parquet

            add_parquet(auditor.partial, source.path, display=source.display)
        else:
            auditor.add_source(source)
    return auditor.partial
