"""Every core on one machine: ``failure-kinds audit --jobs N``.

The tasks (see ``tasks``) run in worker processes, which send their partial reports back as JSON to be
merged in input order. Each worker holds one batch of lines and one partial at a time: its memory does not
grow with the input.

Standard input, FIFOs and other inputs that are not regular files can be read only once and only by this
process: with one of them among the inputs, or with one job, everything is audited here in one pass.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys

from .decoding import make_decoder
from .partial import PartialReport
from .reader import read_sources
from .tasks import STREAM, OrderedMerge, Task, audit_tasks, failed_partial, plan, run_task_json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections import deque
    from collections.abc import Sequence
    from typing import IO, Final

    from .progress import ByteProgress
    from .settings import AuditSettings, Pins
    from .sources import Source
    from .tasks import Runner


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
    serial = len(tasks) <= 1 or sum(task.size for task in tasks) < min_bytes
    if serial or any(task.kind == STREAM for task in tasks):
        return read_sources(sources, settings, fast=fast, progress=progress)
    return audit_tasks(tasks, settings, runner_for(jobs, fast), progress)


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


def _fork_runner(jobs: int, fast: bool) -> Runner:
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
