"""The audit's one entry point, ``audit(inputs, ...)``: it checks the arguments and builds the settings
once, then runs the tasks (see ``tasks``) in this process, in worker processes (``jobs``: the process
pool below) or on a Ray cluster (``ray_engine``); every engine runs the same per-task function and gives
the same report. Standard input, FIFOs and other inputs that are not regular files are read only by this
process: with one of them, or one job, everything is. Then the notes on a ``--field`` no record has
(``check_field``, ``check_objects``), from the counts of the one pass.

The ``--jobs`` engine, ``pool_runner``: a process pool (``concurrent.futures``) that runs batches of
tasks in workers and merges their partials in input order, made safe where a pool is not by itself: a
worker hands its partial back through a file and sends only its name, so a worker killed at any moment
never leaves a message half-written in the pipe the pool's manager thread reads; a worker that dies
breaks the pool, and its batches run again alone; a thread of the pool that dies, or a pool that cannot
start (processes, threads, descriptors, memory), leaves the audit to this process; on a signal the
workers are killed before the exception goes on (see docs/audit.md, "Signals, dying workers and memory
limits"). The modules only the pool needs (pickle, tempfile, shutil) are imported where it uses them.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import signal
import sys
import threading
from typing import cast

from failure_kinds._display import plain
from failure_kinds._signals import STOPPING, held
from failure_kinds._streams import OUT_OF_MEMORY, describe_read_error

from .render import Progress
from .settings import DISTINCT_LIMIT, LINE_BYTES, VALUE_CHARS, AuditError, settings_for
from .sources import is_uri, make_decoder
from .tasks import (
    STREAM,
    OrderedMerge,
    audit_tasks,
    batch_size,
    batched,
    chunk_bytes_for,
    expand_inputs,
    failed_batch,
    plan,
    run_here,
    work,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from multiprocessing.context import BaseContext
    from typing import IO, Final

    from .partial import PartialReport
    from .report import Report
    from .settings import AuditSettings
    from .tasks import Batch, Runner, Source


# Below this many bytes in all, worker processes cost more than they save: one pass in this process.
PARALLEL_MIN_BYTES: Final = 32 << 20
# That pass reads batches of files of about this many bytes: running out of memory names the files of
# one batch, and each batch's partial counts every distinct value it holds once more.
HERE_BATCH_BYTES: Final = 64 << 20
_HOST_PORT: Final = re.compile(r"[\w.\-\[\]:]+:\d+")


def looks_like_address(value: str) -> bool:
    """Whether ``--ray VALUE`` names a cluster (``auto``, ``local``, ``ray://...``, ``host:port``) rather
    than the first path to audit (``--ray logs/``)."""
    if value in ("auto", "local") or value.startswith("ray://"):
        return True
    return _HOST_PORT.fullmatch(value) is not None and not os.path.exists(value)


def audit(
    inputs: Sequence[str],
    field_path: str | Sequence[str] = "failure_kind",
    aliases: Mapping[str, str] | None = None,
    fast: bool = True,
    progress: IO[str] | None = None,
    namespaces: Mapping[str, Sequence[str]] | None = None,
    *,
    jobs: int | None = None,
    ray: str | None = None,
    chunk_bytes: int | None = None,
    stage_path: str | None = None,
    distinct_limit: int = DISTINCT_LIMIT,
    value_chars: int = VALUE_CHARS,
    line_bytes: int = LINE_BYTES,
) -> Report:
    """Audit ``inputs`` (files, directories, "-" for stdin; with ``ray`` also URIs) and return the report.

    ``field_path``: the dotted path of the kind in each record, or several (each reported apart, in one
    pass: the first field's report holds the others in ``also``). ``stage_path``: where every field's
    stage is read (None: the key ``stage`` beside each field). ``aliases``: label -> the registered
    kind it stands for (over the replacement the vocabulary gives an older label). ``fast``: decode with
    msgspec when it is installed. ``progress``: a stream for a progress line (shown only on a terminal).
    ``namespaces``: declared servers -> their kinds, which makes other kinds of those servers undeclared.

    ``jobs``: worker processes (None: one per available core); inputs under PARALLEL_MIN_BYTES in all
    are read in this process unless ``chunk_bytes`` (the size of a byte range) is given. ``ray``: run on
    the Ray cluster at that address instead ("": the one ``ray.init()`` finds or starts).
    ``distinct_limit``, ``value_chars`` and ``line_bytes`` are the caps (see ``AuditSettings``).

    AuditError for arguments that cannot be audited (a usage error), before anything is read.
    """
    if not inputs:
        raise AuditError("give at least one PATH: a file, a directory, a URI (with --ray) or - for stdin")
    if jobs is not None and jobs < 1:
        raise AuditError(f"--jobs {jobs}: give at least 1")
    if jobs is not None and ray is not None:
        raise AuditError(
            "--jobs and --ray cannot be combined: on Ray, the cluster's CPUs set how many tasks run"
        )
    if ray is None:
        uri = next((item for item in inputs if is_uri(item) and not os.path.exists(item)), None)
        if uri is not None:
            raise AuditError(
                f"{plain(uri)}: URIs are read with --ray (the ray extra); without it, give local "
                "files, directories or - for stdin"
            )
    settings = settings_for(
        field_path,
        aliases,
        namespaces,
        stage_path=stage_path,
        distinct_limit=distinct_limit,
        value_chars=value_chars,
        line_bytes=line_bytes,
    )
    notes: list[str] = []
    if ray is not None:
        from .ray_engine import audit_ray

        merged = audit_ray(
            inputs,
            notes,
            settings,
            address=ray or None,
            fast=fast,
            progress=progress,
            chunk_bytes=chunk_bytes,
        )
    else:
        sources = expand_inputs(inputs, notes)
        merged = audit_jobs(sources, settings, jobs or default_jobs(), fast, progress, chunk_bytes)
    report = merged.report()
    for one in (report, *report.also):
        one.notes = [*notes]
        if one.with_kind or one.without_kind or one.invalid:
            check_field(one)
        else:
            check_objects(one)
    return report


def default_jobs() -> int:
    """The cores this process may run on (its CPU affinity), which can be fewer than the machine has."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


def audit_jobs(
    sources: Sequence[Source],
    settings: AuditSettings,
    jobs: int,
    fast: bool,
    progress: IO[str] | None,
    chunk_bytes: int | None,
) -> PartialReport:
    """The partial of ``sources`` audited by ``jobs`` worker processes; inputs of fewer than
    PARALLEL_MIN_BYTES in all (unless ``chunk_bytes`` is given), a stream among them, or one job: in this
    process, in one pass."""
    with held():  # msgspec can crash when interrupted as it loads or makes its first decoder
        make_decoder(settings.paths, fast)  # forked workers share it too
    tasks = plan(sources, jobs, chunk_bytes) if jobs > 1 else []
    total = sum(task.size for task in tasks)
    small = chunk_bytes is None and total < PARALLEL_MIN_BYTES
    if len(tasks) <= 1 or small or any(task.kind == STREAM for task in tasks):
        batches = batched(plan(sources, 1, 0), HERE_BATCH_BYTES)
        return run_here(batches, settings, Progress(None, 0), fast, Progress(progress))
    # Small files are read in batches of about a range's size; a given chunk size (tests) cuts finer.
    batch_bytes = chunk_bytes if chunk_bytes is not None else chunk_bytes_for(total, jobs)
    return audit_tasks(tasks, settings, pool_runner(jobs, fast), progress, batch_bytes)


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
        import shutil
        import tempfile

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
    import pickle
    import tempfile

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
    import pickle

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


# The files a note names when no record of theirs has the field; the JSON report names them all.
NOTED_FILES: Final = 20


def check_field(report: Report) -> None:
    """Name every file in which no record has the field (with the paths where its records hold
    registered kinds); when no record at all has it, mark the report, so that ``--strict`` fails."""
    from failure_kinds._display import escaped, plain
    from failure_kinds._suggest import closest

    field = plain(report.field)
    missing = [file for file in report.files if file.kinds_at is not None]
    if not report.with_kind and not report.null and not report.invalid and report.absent:
        report.field_missing = True
        paths = list(dict.fromkeys(path for file in missing for path in file.kinds_at or ()))
        # The path closest to the one given (failur_kind: failure_kind, not cleanup_failure_kind), else
        # the first where the records hold registered kinds.
        found = closest(report.field, paths) or next(iter(paths), None)
        report.field_suggestion = found
        note = report.never_seen
        if found is not None:
            note += f"; did you mean {escaped(found, 200)}? (the records hold registered kinds there)"
        report.notes.append(note)
        if len(report.files) <= 1:
            return
    for file in missing[:NOTED_FILES]:
        at = ", ".join(escaped(path, 200) for path in file.kinds_at or ())
        where = f"; its records hold registered kinds at {at}" if at else ""
        report.notes.append(f"{plain(file.path)}: no record has the field {field}{where}")
    if len(missing) > NOTED_FILES:
        report.notes.append(
            f"{len(missing) - NOTED_FILES:,} more files have no record with the field {field}"
        )


def check_objects(report: Report) -> None:
    """For a report without a JSON object (every line unparseable, or no record at all), which no record
    could hold the field in: mark it, so a gate pointed at the wrong file fails, and add a note saying
    why. Nothing is added when every input failed to be read: its error already says why."""
    if not report.records and report.files and all(file.error is not None for file in report.files):
        return
    from failure_kinds._display import plain

    report.field_missing = True
    report.notes.append(f"{report.never_seen}, so --field {plain(report.field)} was never seen")
