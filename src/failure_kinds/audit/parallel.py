"""Every core on one machine: ``failure-kinds audit --jobs N``.

The tasks (see ``tasks``) run in batches in worker processes, which send their partial reports back
pickled to be merged in input order. Each worker holds one batch of lines and one partial at a time: its
memory does not grow with the input. Workers are no more than the batches and than the descriptors this
process may still open (``worker_limit``); when a worker cannot start (no descriptor or process left),
those already started do the work, or this process alone when none could.

Standard input, FIFOs and other inputs that are not regular files can be read only once and only by this
process: with one of them among the inputs, or with one job, everything is audited here in one pass.
"""

from __future__ import annotations

import contextlib
import os
import sys

from .decoding import make_decoder
from .errors import AuditError
from .partial import PartialReport
from .reader import read_sources
from .settings import AuditSettings, Pins
from .tasks import (
    STREAM,
    OrderedMerge,
    audit_tasks,
    batch_size,
    chunk_bytes_for,
    failed_batch,
    packed,
    plan,
    run_batch,
    run_batch_packed,
    unpacked,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections import deque
    from collections.abc import Sequence
    from typing import IO, Final

    from .progress import ByteProgress
    from .sources import Source
    from .tasks import Batch, Runner


def default_jobs() -> int:
    """The cores this process may run on (its CPU affinity), which can be fewer than the machine has."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


def audit_jobs(
    sources: Sequence[Source],
    settings: AuditSettings,
    *,
    jobs: int,
    fast: bool = True,
    progress: IO[str] | None = None,
    chunk_bytes: int | None = None,
    min_bytes: int = 0,
) -> PartialReport:
    """The partial of ``sources`` audited by ``jobs`` worker processes; inputs of fewer than
    ``min_bytes`` in all, a stream among them, or one job: in this process, in one pass."""
    tasks = plan(sources, jobs, chunk_bytes) if jobs > 1 else []
    total = sum(task.size for task in tasks)
    serial = len(tasks) <= 1 or total < min_bytes
    if serial or any(task.kind == STREAM for task in tasks):
        return read_sources(sources, settings, fast=fast, progress=progress)
    # Small files are read in batches of about a range's size; a given chunk size (tests) cuts finer.
    batch_bytes = chunk_bytes if chunk_bytes is not None else chunk_bytes_for(total, jobs)
    return audit_tasks(tasks, settings, runner_for(jobs, fast), progress, batch_bytes)


def runner_for(jobs: int, fast: bool) -> Runner:
    """Forked workers when that is safe: on Linux, in a process with no other thread (pyarrow, once a
    Parquet file was planned, runs a thread pool that could hold a lock as the fork copies it)."""
    if sys.platform != "linux":
        return _pool_runner(jobs, fast, "spawn")
    try:
        threads = len(os.listdir("/proc/self/task"))
    except OSError:
        threads = 2
    return _fork_runner(jobs, fast) if threads == 1 else _pool_runner(jobs, fast, "forkserver")


def _pool_runner(jobs: int, fast: bool, method: str = "spawn") -> Runner:
    """A process pool whose workers start by ``method``: spawn off Linux, forkserver in a process whose
    other threads could hold a lock at the moment of a fork."""

    def run(
        batches: Sequence[Batch], settings: AuditSettings, pins: Pins | None, meter: ByteProgress
    ) -> PartialReport:
        import concurrent.futures
        import multiprocessing

        workers = worker_limit(jobs, len(batches), _POOL_DESCRIPTORS)
        if workers == 0:
            return run_here(batches, settings, pins, meter, fast)
        merge = OrderedMerge()
        try:
            with concurrent.futures.ProcessPoolExecutor(
                max_workers=workers,
                mp_context=multiprocessing.get_context(method),
                initializer=keep_freed_memory,
            ) as pool:
                futures = {
                    pool.submit(run_batch_packed, batch, settings, pins, fast): index
                    for index, batch in enumerate(batches)
                }
                for future in concurrent.futures.as_completed(futures):
                    index = futures[future]
                    try:
                        partial = unpacked(future.result())
                    except concurrent.futures.process.BrokenProcessPool:
                        error = "a worker process died while reading"
                        partial = failed_batch(batches[index], settings, error)
                    merge.add(index, partial)
                    meter.advance(batch_size(batches[index]))
        except OSError as error:  # no descriptor or process left to start a worker
            raise AuditError(_cannot_start(jobs, error)) from None
        return merge.result(settings)

    return run


def _fork_runner(jobs: int, fast: bool) -> Runner:
    """Worker processes forked directly, each fed one task at a time through a pipe: what the process
    pool does, without its 20 ms of imports and set-up (3% of the benchmark file's run). Linux only."""

    def run(
        batches: Sequence[Batch], settings: AuditSettings, pins: Pins | None, meter: ByteProgress
    ) -> PartialReport:
        import select
        from collections import deque

        if fast:
            # Imported here, once, so every forked worker starts with msgspec loaded: ~10 ms less per
            # worker before its first range (1.5% of the benchmark file's run with --jobs 2).
            make_decoder(settings.field.split("."), fast)
        merge = OrderedMerge()
        pending = deque(range(len(batches)))
        workers: dict[int, _Worker] = {}  # by the descriptor their results arrive on
        try:
            for _ in range(worker_limit(jobs, len(batches), _FORK_DESCRIPTORS)):
                try:
                    worker = _Worker.start(batches, settings, pins, fast, list(workers.values()))
                except OSError:  # out of descriptors or processes after all: the workers so far do it
                    break
                workers[worker.results] = worker
                worker.take(pending)
            if not workers:
                return run_here(batches, settings, pins, meter, fast)
            # poll, not select: select cannot watch a descriptor numbered past 1023.
            poller = select.poll()
            for fd in workers:
                poller.register(fd, select.POLLIN)
            while any(worker.task is not None for worker in workers.values()):
                for fd, _ in poller.poll():
                    worker = workers[fd]
                    index = worker.task
                    if index is None:
                        poller.unregister(fd)
                        continue
                    text = worker.receive()
                    if text is None:  # the worker died: its batch fails, the others take the rest
                        poller.unregister(fd)
                        merge.add(index, failed_batch(batches[index], settings, "a worker process died"))
                        continue
                    merge.add(index, unpacked(text))
                    meter.advance(batch_size(batches[index]))
                    worker.take(pending)
            for index in pending:  # left over only when every worker died
                merge.add(index, failed_batch(batches[index], settings, "a worker process died"))
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
    """One forked worker: batch numbers go in through one pipe, partial reports (packed) come back
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
        batches: Sequence[Batch],
        settings: AuditSettings,
        pins: Pins | None,
        fast: bool,
        others: list[_Worker],
    ) -> _Worker:
        """Fork a worker; OSError (nothing left open) when its pipes or its process cannot be made."""
        task_read, task_write = os.pipe()
        try:
            result_read, result_write = os.pipe()
        except OSError:
            os.close(task_read)
            os.close(task_write)
            raise
        try:
            pid = os.fork()
        except OSError:
            for fd in (task_read, task_write, result_read, result_write):
                os.close(fd)
            raise
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
                _serve(task_read, result_write, batches, settings, pins, fast)
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

    def receive(self) -> bytes | None:
        """The result of the task in hand, or None when the worker died instead."""
        header = _read_exactly(self.results, 8)
        body = None if header is None else _read_exactly(self.results, int.from_bytes(header, "little"))
        if body is None:
            self.alive = False
            self.task = None
            return None
        return body

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
    batches: Sequence[Batch],
    settings: AuditSettings,
    pins: Pins | None,
    fast: bool,
) -> None:
    while True:
        header = _read_exactly(task_read, 8)
        if header is None:
            return
        batch = batches[int.from_bytes(header, "little")]
        try:
            partial = run_batch(batch, settings, pins, fast)
        except MemoryError:
            partial = failed_batch(batch, settings, "out of memory while reading")
        result = packed(partial)
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


def run_here(
    batches: Sequence[Batch], settings: AuditSettings, pins: Pins | None, meter: ByteProgress, fast: bool
) -> PartialReport:
    """The batches read one after the other in this process: what is left when no worker can start."""
    merge = OrderedMerge()
    for index, batch in enumerate(batches):
        merge.add(index, run_batch(batch, settings, pins, fast))
        meter.advance(batch_size(batch))
    return merge.result(settings)


# Descriptors each worker keeps open in this process: its two pipe ends (forked), or its pipe, sentinel
# and the pool's share of queues (a process pool); a few more stay free for this process's own use.
_FORK_DESCRIPTORS: Final = 2
_POOL_DESCRIPTORS: Final = 4
_SPARE_DESCRIPTORS: Final = 16


def worker_limit(jobs: int, batches: int, per_worker: int) -> int:
    """How many workers to start: ``jobs``, but no more than there are batches, nor than the
    descriptors this process may still open allow (RLIMIT_NOFILE); 0 when not even one fits."""
    wanted = min(jobs, batches)
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, OSError, ValueError):  # not POSIX
        return wanted
    if soft == resource.RLIM_INFINITY:
        return wanted
    try:
        in_use = len(os.listdir("/proc/self/fd")) - 1  # less the descriptor that lists them
    except OSError:
        in_use = 3
    # A forked worker inherits this process's descriptors and opens one file at a time, so what fits
    # here fits there.
    return max(0, min(wanted, (soft - in_use - _SPARE_DESCRIPTORS) // per_worker))


def _cannot_start(jobs: int, error: OSError) -> str:
    from .errors import describe_read_error

    return (
        f"--jobs {jobs}: cannot start the worker processes ({describe_read_error(error)}); "
        "give fewer jobs, or raise the limit (ulimit -n, ulimit -u)"
    )


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
