"""The audit's one entry point: ``audit(inputs, ...)``, for the command and the library alike.

It checks the arguments and builds the settings once, then hands them to the engine that reads: this
process alone, worker processes (``jobs``, below) or a Ray cluster (``ray``, see ``ray_engine``).
Every engine runs the same per-batch function (``tasks.run_batch``) and gives the same report.

Every core on one machine, ``failure-kinds audit --jobs N``: the tasks (see ``tasks``) run in batches in
worker processes, which send their partial reports back pickled to be merged in input order. Each worker
holds one batch of lines and one partial at a time: its memory does not grow with the input. Workers are
no more than the batches and than the descriptors this process may still open (``worker_limit``); when
not even one fits, this process does the work, and when the pool cannot start (no descriptor or process
left) the audit stops with one line (exit 2).

Standard input, FIFOs and other inputs that are not regular files can be read only once and only by this
process: with one of them among the inputs, or with one job, everything is audited here in one pass.
"""

from __future__ import annotations

import os
import re
import sys

from failure_kinds._display import plain

from .errors import AuditError
from .partial import PartialReport
from .settings import DISTINCT_LIMIT, LINE_BYTES, VALUE_CHARS, AuditSettings, Pins, settings_for
from .sources import expand_inputs, is_uri
from .tasks import (
    STREAM,
    OrderedMerge,
    audit_tasks,
    batch_size,
    chunk_bytes_for,
    failed_batch,
    plan,
    read_sources,
    run_batch,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from multiprocessing.context import BaseContext
    from typing import IO, Final

    from .render import ByteProgress
    from .report import Report
    from .sources import Source
    from .tasks import Batch, Runner


# Below this many bytes in all, worker processes cost more than they save: one pass in this process.
PARALLEL_MIN_BYTES: Final = 32 << 20
_HOST_PORT: Final = re.compile(r"[\w.\-\[\]:]+:\d+")


def looks_like_address(value: str) -> bool:
    """Whether ``--ray VALUE`` names a cluster (``auto``, ``local``, ``ray://...``, ``host:port``) rather
    than the first path to audit (``--ray logs/``)."""
    if value in ("auto", "local") or value.startswith("ray://"):
        return True
    return _HOST_PORT.fullmatch(value) is not None and not os.path.exists(value)


def audit(
    inputs: Sequence[str],
    field_path: str = "failure_kind",
    aliases: Mapping[str, str] | None = None,
    fast: bool = True,
    progress: IO[str] | None = None,
    namespaces: Mapping[str, Sequence[str]] | None = None,
    *,
    jobs: int | None = None,
    ray: str | None = None,
    chunk_bytes: int | None = None,
    tune_memory: bool = False,
    distinct_limit: int = DISTINCT_LIMIT,
    value_chars: int = VALUE_CHARS,
    line_bytes: int = LINE_BYTES,
) -> Report:
    """Audit ``inputs`` (files, directories, "-" for stdin; with ``ray`` also URIs) and return the report.

    ``field_path``: the dotted path of the kind in each record. ``aliases``: label -> the registered
    kind it stands for (over the replacement the vocabulary gives an older label). ``fast``: decode with
    msgspec when it is installed. ``progress``: a stream for a progress line (shown only on a terminal).
    ``namespaces``: declared servers -> their kinds, which makes other kinds of those servers undeclared.

    ``jobs``: worker processes (None: one per available core); inputs under PARALLEL_MIN_BYTES in all
    are read in this process unless ``chunk_bytes`` (the size of a byte range) is given. ``ray``: run on
    the Ray cluster at that address instead ("": the one ``ray.init()`` finds or starts). ``tune_memory``:
    accepted and ignored (it once tuned the C allocator). ``distinct_limit``, ``value_chars`` and
    ``line_bytes`` are the caps (see ``AuditSettings``).

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
        distinct_limit=distinct_limit,
        value_chars=value_chars,
        line_bytes=line_bytes,
    )
    notes: list[str] = []
    sources: list[Source] | None = None
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
        merged = audit_jobs(
            sources,
            settings,
            jobs=default_jobs() if jobs is None else jobs,
            fast=fast,
            progress=progress,
            chunk_bytes=chunk_bytes,
            min_bytes=PARALLEL_MIN_BYTES if chunk_bytes is None else 0,
        )
    report = merged.report()
    report.notes = notes
    if not report.with_kind and not report.invalid:
        from .fields import check_field, check_objects

        if report.without_kind:
            # Ray's inputs may be URIs, and its directories are walked again here: only local files are
            # read.
            check_field(report, expand_inputs(inputs, []) if sources is None else sources, settings)
        else:
            check_objects(report, settings)
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
    """A process pool of ``jobs`` workers, started by ``start_method()``."""
    import multiprocessing

    return _pool_runner(jobs, fast, multiprocessing.get_context(start_method()))


def start_method() -> str:
    """fork on Linux from a process with no other thread, else forkserver (pyarrow, once imported, runs
    a thread pool that could hold a lock as a fork copies it); spawn off Linux."""
    import threading

    if sys.platform != "linux":
        return "spawn"
    if threading.active_count() == 1 and "pyarrow" not in sys.modules:
        return "fork"
    return "forkserver"


def _pool_runner(jobs: int, fast: bool, context: BaseContext) -> Runner:
    def run(
        batches: Sequence[Batch], settings: AuditSettings, pins: Pins | None, meter: ByteProgress
    ) -> PartialReport:
        workers = worker_limit(jobs, len(batches), _POOL_DESCRIPTORS)
        if workers == 0:
            return run_here(batches, settings, pins, meter, fast)
        import multiprocessing

        merge = OrderedMerge()
        before = set(multiprocessing.active_children())
        try:
            everything = range(len(batches))
            lost = _run_pool(batches, everything, workers, context, settings, pins, fast, merge, meter)
            # A worker that died broke the pool and every batch it still held: each of those runs again
            # alone, so only the batch that kills its worker fails.
            for index in lost:
                if _run_pool(batches, [index], 1, context, settings, pins, fast, merge, meter):
                    merge.add(index, failed_batch(batches[index], settings, "a worker process died"))
        except OSError as error:  # no descriptor or process left to start a worker
            for child in multiprocessing.active_children():
                if child not in before:  # those of this pool that did start
                    child.terminate()
            raise AuditError(_cannot_start(jobs, error)) from None
        return merge.result(settings)

    return run


def _run_pool(
    batches: Sequence[Batch],
    indexes: Sequence[int],
    workers: int,
    context: BaseContext,
    settings: AuditSettings,
    pins: Pins | None,
    fast: bool,
    merge: OrderedMerge,
    meter: ByteProgress,
) -> list[int]:
    """Run the batches at ``indexes`` in a pool of ``workers`` and merge them; return those whose
    worker died (in order)."""
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    lost: list[int] = []
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        futures = {pool.submit(_work, batches[index], settings, pins, fast): index for index in indexes}
        for future in as_completed(futures):
            index = futures[future]
            try:
                partial = future.result()
            except BrokenProcessPool:
                lost.append(index)
                continue
            merge.add(index, partial)
            meter.advance(batch_size(batches[index]))
    return sorted(lost)


def _work(batch: Batch, settings: AuditSettings, pins: Pins | None, fast: bool) -> PartialReport:
    """What a worker does with a batch: its partial, which the pool sends back pickled."""
    try:
        return run_batch(batch, settings, pins, fast)
    except MemoryError:
        return failed_batch(batch, settings, "out of memory while reading")


def run_here(
    batches: Sequence[Batch], settings: AuditSettings, pins: Pins | None, meter: ByteProgress, fast: bool
) -> PartialReport:
    """The batches read one after the other in this process: what is left when no worker can start."""
    merge = OrderedMerge()
    for index, batch in enumerate(batches):
        merge.add(index, run_batch(batch, settings, pins, fast))
        meter.advance(batch_size(batch))
    return merge.result(settings)


# Descriptors each worker of a process pool keeps open in this process (its sentinel and its share of
# the pool's queues); a few more stay free for this process's own use.
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
    if soft == resource.RLIM_INFINITY or soft > wanted * per_worker + 1024:
        return wanted  # room enough whatever this process holds open
    in_use = sum(_is_open(fd) for fd in range(soft))
    return max(0, min(wanted, (soft - in_use - _SPARE_DESCRIPTORS) // per_worker))


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def _cannot_start(jobs: int, error: OSError) -> str:
    from .errors import describe_read_error

    return (
        f"--jobs {jobs}: cannot start the worker processes ({describe_read_error(error)}); "
        "give fewer jobs, or raise the limit (ulimit -n, ulimit -u)"
    )
