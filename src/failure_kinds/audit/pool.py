"""The ``--jobs`` engine: a process pool (``concurrent.futures``) that runs batches of tasks in worker
processes and merges their partials in input order, and what makes it safe where a pool is not by itself:
a worker hands its partial back through a file and sends only the file's name, so a worker killed at any
moment never leaves a message half-written in the pipe the pool's manager thread reads; a worker that
dies breaks the pool, and its batches run again alone; a thread of the pool that dies, or a pool that
cannot start (processes, threads, descriptors, memory), leaves the audit to this process; and on a
signal the workers are killed before the exception goes on (see docs/audit.md, "Signals, dying workers
and memory limits")."""

from __future__ import annotations

import contextlib
import errno
import os
import pickle
import shutil
import signal
import sys
import tempfile
import threading
from typing import cast

from failure_kinds._signals import STOPPING
from failure_kinds._streams import OUT_OF_MEMORY, describe_read_error

from .settings import AuditError
from .tasks import OrderedMerge, batch_size, failed_batch, run_here, work

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from multiprocessing.context import BaseContext
    from typing import Final

    from .partial import PartialReport
    from .render import Progress
    from .settings import AuditSettings
    from .tasks import Batch, Runner


def pool_runner(jobs: int, fast: bool) -> Runner:
    """A process pool of ``jobs`` workers: forked on Linux from a process with no other thread, else
    started by forkserver (pyarrow, once imported, runs a thread pool that could hold a lock as a fork
    copies it); spawned off Linux. A worker hands each partial back through a file of its own (see
    ``_work_in_file``), in a folder removed however the run ends."""
    import multiprocessing

    if sys.platform != "linux":
        method = "spawn"
    elif threading.active_count() == 1 and "pyarrow" not in sys.modules:
        method = "fork"
    else:
        method = "forkserver"
    context = multiprocessing.get_context(method)

    def run(batches: Sequence[Batch], settings: AuditSettings, meter: Progress) -> PartialReport:
        workers = worker_limit(jobs, len(batches))
        if context.get_start_method() == "fork":
            settings.category("")  # the older labels classifying a value may need: loaded once, shared
        if workers == 0 or not _room_for_pool(workers):
            return run_here(batches, settings, meter, fast)
        merge = OrderedMerge()
        folder = ""
        try:
            folder = tempfile.mkdtemp(prefix="failure-kinds-")
            lost = _run_pool(
                batches, range(len(batches)), workers, context, (settings, fast, folder), merge, meter
            )
            # A worker that died broke the pool and every batch it still held: each of those runs again
            # alone, so only the batch that kills its worker fails.
            for index in lost:
                if _run_pool(batches, [index], 1, context, (settings, fast, folder), merge, meter):
                    merge.add(index, failed_batch(batches[index], settings, "a worker process died"))
            return merge.result(settings)
        except OSError as error:  # no descriptor or process left to start a worker
            if error.errno != errno.ENOMEM:
                raise AuditError(cannot_start(jobs, error)) from None
        except (RuntimeError, MemoryError):  # a thread of the pool could not start, or it died
            pass
        finally:
            if folder:
                shutil.rmtree(folder, ignore_errors=True)
        return run_here(batches, settings, meter, fast)  # out of the handler, which held memory

    return run


def _room_for_pool(workers: int) -> bool:
    """Whether what a pool adds at once can exist: its worker processes and two threads (its manager, and
    the feeder of its call queue, which the manager starts: a manager that cannot start it dies and leaves
    the pool waiting forever). RLIMIT_NPROC counts threads and processes alike, so as many threads, all
    alive at once, stand in for them. Under an address space limit (ulimit -v), the pool also needs
    POOL_MEMORY left: a thread that runs out of memory as it starts leaves its starter waiting forever."""
    try:
        import resource

        limit = resource.getrlimit(resource.RLIMIT_AS)[0]
        with open("/proc/self/statm", "rb") as status:  # its first number: the pages mapped now
            used = int(status.read().split()[0]) * resource.getpagesize()
    except (ImportError, OSError, ValueError):  # not Linux
        pass
    else:
        if limit != resource.RLIM_INFINITY and limit - used < POOL_MEMORY:
            return False
    release = threading.Event()
    started: list[threading.Thread] = []
    try:
        for _ in range(workers + 2):
            thread = threading.Thread(target=release.wait)
            thread.start()
            started.append(thread)
    except RuntimeError:  # can't start new thread
        return False
    finally:
        release.set()
        for thread in started:
            thread.join()
    return True


# The stack of each thread of a pool: they call no deep code, and under an address space limit (ulimit -v)
# the default (RLIMIT_STACK, often 8 MiB) is what a thread's start fails for, which can hang the pool.
_THREAD_STACK: Final = 1 << 20
POOL_MEMORY: Final = 64 << 20


def _run_pool(
    batches: Sequence[Batch],
    indexes: Sequence[int],
    workers: int,
    context: BaseContext,
    task: tuple[AuditSettings, bool, str],
    merge: OrderedMerge,
    meter: Progress,
) -> list[int]:
    """Run the batches at ``indexes`` in a pool of ``workers`` and merge them; return those whose
    worker died (in order). ``task``: the settings, decoder choice and folder of ``_work_in_file``.
    On any error (no process or thread, a signal) the workers are killed first.

    A thread of the pool that dies (of MemoryError, or a thread it cannot start) would leave the futures
    waiting forever: such a death is a RuntimeError here."""
    import multiprocessing
    from concurrent.futures import Future, ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    lost: list[int] = []
    before = set(multiprocessing.active_children())
    died: Future[tuple[str, str]] = Future()  # done when a thread of the pool dies
    excepthook = threading.excepthook

    def thread_died(arguments: threading.ExceptHookArgs) -> None:
        with contextlib.suppress(Exception):  # another thread said so first
            died.set_result(("", ""))

    threading.excepthook = thread_died
    stack = threading.stack_size(_THREAD_STACK)
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_start_worker)
    futures: dict[Future[tuple[str, str]], int] = {}
    try:
        # The stopping signals held back while workers start (a submit may start one), so that each sets
        # its own handlers (_start_worker) before it could get one; one meanwhile comes here once they have.
        masks = hasattr(signal, "pthread_sigmask")  # not on Windows
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, STOPPING) if masks else set[signal.Signals]()
        try:
            for index in indexes:
                futures[pool.submit(_work_in_file, batches[index], *task)] = index
        finally:
            if masks:
                signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        for future in as_completed([*futures, died]):
            if future is died:
                raise RuntimeError("a thread of the process pool died")
            index = futures.pop(future)
            partial: PartialReport | None = None
            error = ""
            try:
                name, error = future.result()
                partial = _read_partial(task[2], name) if name else None
            except BrokenProcessPool:
                lost.append(index)
            except MemoryError:  # here: the batch sent, or its partial read back
                error = OUT_OF_MEMORY
            if partial is not None or error:
                merge.add(index, failed_batch(batches[index], task[0], error) if partial is None else partial)
                meter.advance(batch_size(batches[index]))
            if not futures:
                break
        pool.shutdown(wait=True)
    except BaseException:
        stopping = [child for child in multiprocessing.active_children() if child not in before]
        for child in stopping:
            child.kill()
        for child in stopping:
            child.join(5)
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    finally:
        threading.excepthook = excepthook
        threading.stack_size(stack)
    return sorted(lost)


def _work_in_file(batch: Batch, settings: AuditSettings, fast: bool, folder: str) -> tuple[str, str]:
    """What a pool worker does with a batch: its partial pickled into a new file in ``folder``, and the
    file's name (and ""); or "" and why there is none. Either is a message one write delivers whole: the
    pool's manager thread reads a message once its first byte arrives, and would wait forever for the
    rest of one its worker died writing."""
    try:
        partial = work(batch, settings, fast)
        with tempfile.NamedTemporaryFile(dir=folder, delete=False) as file:
            pickle.dump(partial, file, pickle.HIGHEST_PROTOCOL)
        return os.path.basename(file.name), ""
    except MemoryError:
        return "", OUT_OF_MEMORY
    except OSError as error:  # the folder's filesystem is full
        return "", f"its counts could not be written ({describe_read_error(error)})"


def _read_partial(folder: str, name: str) -> PartialReport:
    path = os.path.join(folder, name)
    try:
        with open(path, "rb") as file:
            return cast("PartialReport", pickle.load(file))
    finally:
        os.remove(path)


def _start_worker() -> None:
    """A worker's first act: ignore SIGINT (the main process stops the workers), give SIGTERM and SIGHUP
    their default action (a forked worker has the handlers of the main process, which raise), then
    unblock them."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for number in STOPPING:
        if number != signal.SIGINT:
            signal.signal(number, signal.SIG_DFL)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPPING)


# Descriptors each worker of a process pool keeps open in this process (its sentinel and its share of
# the pool's queues); a few more stay free for this process's own use.
_POOL_DESCRIPTORS: Final = 4
_SPARE_DESCRIPTORS: Final = 16


def worker_limit(jobs: int, batches: int) -> int:
    """How many workers to start: ``jobs``, but no more than there are batches, nor than the
    descriptors this process may still open allow (RLIMIT_NOFILE); 0 when not even one fits."""
    wanted = min(jobs, batches)
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, OSError, ValueError):  # not POSIX
        return wanted
    if soft == resource.RLIM_INFINITY or soft > wanted * _POOL_DESCRIPTORS + 1024:
        return wanted  # room enough whatever this process holds open
    in_use = sum(_is_open(fd) for fd in range(soft))
    return max(0, min(wanted, (soft - in_use - _SPARE_DESCRIPTORS) // _POOL_DESCRIPTORS))


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def cannot_start(jobs: int, error: OSError) -> str:
    return (
        f"--jobs {jobs}: cannot start the worker processes ({describe_read_error(error)}); "
        "give fewer jobs, or raise the limit (ulimit -n, ulimit -u)"
    )
