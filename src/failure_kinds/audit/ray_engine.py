"""A Ray cluster: ``failure-kinds audit --ray [ADDRESS] PATH...`` (the ``ray`` extra).

The same tasks as ``--jobs`` (byte ranges of plain files cut at line starts, whole gzip files, runs of
Parquet row groups, small files in batches) run as Ray tasks through Ray Data: a dataset of batch
descriptions, mapped one per Ray batch to the batch's partial report (packed), streamed back to this
process and merged in input order. The report, and every error in it, is identical to the local one.

Paths are read where the tasks run. A local path must therefore be readable on every node (shared storage,
or a one-node cluster); a URI (``s3://bucket/logs/``, ``gs://...``, ``file:///...``) is read through the
filesystem pyarrow opens for it, with that filesystem's usual credentials on each node.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import logging

from failure_kinds._display import plain

from .errors import AuditError, describe_read_error
from .partial import PartialReport
from .settings import AuditSettings, Pins
from .sources import (
    GZIP_MAGIC,
    STDIN,
    WALKED,
    Identity,
    Skipped,
    changed_error,
    decompressed,
    expand_inputs,
    is_gzip,
    is_uri,
    is_walked,
    note_repeated,
)
from .tasks import (
    GZIP,
    LINES,
    MIN_CHUNK_BYTES,
    PARQUET,
    STREAM,
    OrderedMerge,
    Task,
    audit_tasks,
    batch_json,
    batch_size,
    count_input,
    line_starts,
    packed,
    plan,
    ranges,
    run_batch,
    unpacked,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import IO, Any, Final

    from .render import ByteProgress
    from .tasks import Batch

INSTALL_HINT: Final = (
    "--ray needs Ray, the ray extra (see the README's Install): "
    "pip install '.[ray]' in a clone of failure-kinds"
)
# Each Ray task reads about this many bytes of a plain file: large enough that scheduling is noise.
RAY_CHUNK_BYTES: Final = 256 << 20
RAY_BATCHES: Final = 64


def _ray() -> Any:
    try:
        return importlib.import_module("ray")
    except ImportError:
        raise AuditError(INSTALL_HINT) from None


def audit_ray(
    inputs: Sequence[str],
    notes: list[str],
    settings: AuditSettings,
    *,
    address: str | None = None,
    fast: bool = True,
    progress: IO[str] | None = None,
    chunk_bytes: int | None = None,
) -> PartialReport:
    """The partial of ``inputs`` (paths, directories, URIs) audited on the Ray cluster at ``address``
    (None: the one ``ray.init()`` finds, e.g. through RAY_ADDRESS, else a new local one), with remarks
    such as an empty directory added to ``notes``. When this call starts Ray, it also shuts it down."""
    ray = _ray()
    if STDIN in inputs:
        raise AuditError("--ray reads files, directories and URIs, not - (stdin)")
    tasks = _plan_all(inputs, notes, chunk_bytes or RAY_CHUNK_BYTES)
    if any(task.kind == STREAM for task in tasks):
        streams = ", ".join(plain(task.display) for task in tasks if task.kind == STREAM)
        raise AuditError(f"--ray reads regular files only, not streams such as FIFOs: {streams}")
    started = False
    if not ray.is_initialized():
        _quiet()
        if address:
            _probe(address)
        try:
            ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False)
        except Exception as error:  # ConnectionError, ValueError, RuntimeError, or Ray's own
            raise AuditError(
                f"{_option(address)}: cannot connect to a Ray cluster ({_first_sentence(error)})"
            ) from None
        started = True
    # Small files go in batches of at most a range's size, and in at least RAY_BATCHES batches when
    # there is that much to read, so every CPU of a cluster gets some of 20,000 shards.
    total = sum(task.size for task in tasks)
    batch_bytes = min(chunk_bytes or RAY_CHUNK_BYTES, max(MIN_CHUNK_BYTES, total // RAY_BATCHES))
    try:
        return audit_tasks(tasks, settings, _ray_runner(fast), progress, batch_bytes)
    finally:
        if started:
            ray.shutdown()


def _option(address: str | None) -> str:
    return f"--ray {address}" if address else "--ray"


def _first_sentence(error: BaseException) -> str:
    """The error's first sentence, cut, with any control character escaped (it may echo the input)."""
    from failure_kinds._display import escaped

    return escaped((str(error).strip().split(". ")[0].splitlines() or [type(error).__name__])[0][:200])


# Ray retries an unreachable head for a minute or more, printing as it goes: a plain connection attempt
# first turns a wrong address into one line at once.
_PROBE_SECONDS: Final = 5.0


def _probe(address: str) -> None:
    """A usage error unless ``HOST:PORT`` (or ``ray://HOST:PORT``) accepts a connection."""
    import socket

    target = address.removeprefix("ray://")
    host, separator, port = target.rpartition(":")
    if not separator or not port.isdigit():
        return  # auto, local: Ray decides
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=_PROBE_SECONDS).close()
    except OSError as error:
        reason = error.strerror or str(error) or type(error).__name__
        raise AuditError(f"{_option(address)}: cannot reach {target} ({reason})") from None


def _quiet() -> None:
    """Ray Data's progress bars and INFO lines would mix with the report's stderr: the audit shows its
    own progress line instead."""
    import os

    os.environ.setdefault("RAY_DATA_DISABLE_PROGRESS_BARS", "1")
    for name in ("ray", "ray.data"):
        logging.getLogger(name).setLevel(logging.ERROR)


def _plan_all(inputs: Sequence[str], notes: list[str], chunk_bytes: int) -> list[Task]:
    """Tasks for local paths and URIs, in the order the inputs were given. The local ones are expanded
    as the other engines expand them, so a file that several inputs name is read once; so is an object
    that several URIs name (a directory's URI and one of its files'), known by its URI."""
    uris = {item for item in inputs if is_uri(item)}
    planned_uris: set[str] = set()
    repeated = 0
    tasks: list[Task] = []
    for source in expand_inputs(inputs, notes):  # a URI is a source of its own, as given
        if source.path in uris and source.path == source.display:
            planned = _plan_uri(source.display, notes, chunk_bytes)
            named = {task.path for task in planned}
            repeated += len(named & planned_uris)
            planned = [task for task in planned if task.path not in planned_uris]
            planned_uris |= named
        else:
            planned = plan([source], 1, chunk_bytes)
        for task in planned:
            # Renumbered in the order of all inputs; everything else (an error, the identity) is kept.
            # A node may mount shared storage under a device number of its own: the inode, size and
            # modification time still tell a changed file.
            identity = None if task.identity is None else dataclasses.replace(task.identity, device=None)
            tasks.append(dataclasses.replace(task, index=len(tasks), identity=identity))
    note_repeated(notes, repeated)
    return tasks


def _filesystem(uri: str) -> tuple[Any, str]:
    fs: Any = importlib.import_module("pyarrow.fs")
    try:
        filesystem, path = fs.FileSystem.from_uri(uri)
    except Exception as error:
        raise AuditError(f"{plain(uri)}: not a URI pyarrow can open ({_first_sentence(error)})") from None
    return filesystem, str(path)


def _plan_uri(uri: str, notes: list[str], chunk_bytes: int) -> list[Task]:
    """Tasks for one URI: a file, or a directory's files with ``sources.SUFFIXES`` (recursively, sorted)."""
    fs: Any = importlib.import_module("pyarrow.fs")
    filesystem, path = _filesystem(uri)
    scheme = uri[: uri.index("://") + 3]
    try:
        info: Any = filesystem.get_file_info(path)
        if info.type == fs.FileType.Directory:
            selector = fs.FileSelector(path, recursive=True)
            found: list[str] = []
            skipped = Skipped()  # what a local directory's walk would skip, as it does
            for entry in filesystem.get_file_info(selector):
                if entry.type == fs.FileType.File and is_walked(str(entry.path)):
                    found.append(str(entry.path))
                elif entry.type != fs.FileType.Directory:
                    skipped.add(scheme + str(entry.path))
            found.sort()
            skipped.note(notes)
            if not found:
                notes.append(f"{plain(uri)}: no {WALKED} files under this URI")
            files = [(scheme + name, name) for name in found]
        else:
            files = [(uri, path)]
    except Exception:
        files = [(uri, path)]  # the task reports why it cannot be read
    tasks: list[Task] = []
    for shown, name in files:
        tasks.extend(_plan_remote_file(filesystem, shown, name, chunk_bytes))
    return tasks


def _plan_remote_file(filesystem: Any, shown: str, name: str, chunk_bytes: int) -> list[Task]:
    if name.lower().endswith(".parquet"):
        from .parquet import row_group_runs

        return [
            Task(0, PARQUET, shown, shown, first, stop, size)
            for first, stop, size in row_group_runs(name, filesystem=filesystem)
        ]
    try:
        identity = _remote_identity(filesystem, name)
        size = identity.size
        with filesystem.open_input_file(name) as file:
            if is_gzip(name, bytes(file.read(len(GZIP_MAGIC)))):
                return [Task(0, GZIP, shown, shown, 0, None, size, None, identity)]
            starts = line_starts(file, size, chunk_bytes)
    except Exception:
        return [Task(0, LINES, shown, shown, 0, None, 0)]
    return [
        Task(0, LINES, shown, shown, start, stop, length, None, identity)
        for start, stop, length in ranges(starts, size)
    ]


def _remote_identity(filesystem: Any, name: str) -> Identity:
    """What a remote filesystem says of a file: its size and modification time (no device or inode)."""
    info: Any = filesystem.get_file_info(name)
    return Identity(None, 0, int(info.size or 0), int(info.mtime_ns or 0))


def _remote_change(task: Task, filesystem: Any, path: str) -> str | None:
    """How the remote file differs from the one planned on (see tasks.Identity), or None."""
    if task.identity is None:
        return None
    try:
        found = _remote_identity(filesystem, path)
    except Exception:
        return "removed"
    return task.identity.compare(None, None, found.size, found.modified)


def run_remote_task(task: Task, settings: AuditSettings, pins: Pins | None, fast: bool) -> PartialReport:
    """The partial of a task whose path is a URI, read through pyarrow's filesystem for it."""
    filesystem, path = _filesystem(task.path)
    if task.kind == PARQUET:
        from .parquet import audit_parquet

        return audit_parquet(
            path,
            settings,
            task.start,
            task.stop,
            pins=pins,
            fast=fast,
            display=task.display,
            filesystem=filesystem,
        )
    partial = PartialReport(settings, pins, fast)
    partial.start_file(task.display, continuation=task.start > 0)
    change = _remote_change(task, filesystem, path)
    if change is not None:
        partial.add_error(changed_error(change))
        return partial
    try:
        raw: Any = filesystem.open_input_file(path)
    except OSError as error:
        partial.add_error(describe_read_error(error))
        return partial
    try:
        # A range after the start is plain; a whole file is gzip by the one test every reader uses.
        data = decompressed(raw, task.display, task.start)
    except Exception as error:  # the seek or the first read: pyarrow raises OSError and others alike
        raw.close()
        partial.add_error(describe_read_error(error))
        return partial
    count_input(partial, data, None if task.stop is None else task.stop - task.start)
    change = _remote_change(task, filesystem, path)
    if change is not None:
        partial.add_error(changed_error(change))
    return partial


def _map_batches(
    rows: dict[str, Any], settings_json: str, pins_json: str | None, fast: bool
) -> dict[str, list[object]]:
    """The map over batch descriptions: each Ray batch holds one of ours; its row becomes the partial's
    JSON."""
    indexes: list[object] = []
    partials: list[object] = []
    settings = AuditSettings.from_json(json.loads(settings_json))
    pins = None if pins_json is None else Pins.from_json(json.loads(pins_json))

    def remote(task: Task) -> PartialReport | None:
        return run_remote_task(task, settings, pins, fast) if is_uri(task.path) else None

    for index, batch_text in zip(rows["index"], rows["batch"], strict=True):
        batch = [Task.from_json(task) for task in json.loads(str(batch_text))]
        try:
            partial = run_batch(batch, settings, pins, fast, remote)
        except MemoryError:
            from .tasks import failed_batch

            partial = failed_batch(batch, settings, "out of memory while reading")
        indexes.append(int(index))
        partials.append(packed(partial))
    return {"index": indexes, "partial": partials}


def _ray_runner(fast: bool) -> Any:
    def run(
        batches: Sequence[Batch], settings: AuditSettings, pins: Pins | None, meter: ByteProgress
    ) -> PartialReport:
        data: Any = importlib.import_module("ray.data")
        logging.getLogger("ray.data").setLevel(logging.ERROR)  # Ray Data sets its own level on import
        context: Any = data.DataContext.get_current()
        context.enable_progress_bars = False
        settings_json = json.dumps(settings.to_json())
        pins_json = None if pins is None else json.dumps(pins.to_json())
        merge = OrderedMerge()
        if not batches:
            return merge.result(settings)
        items = [{"index": index, "batch": batch_json(batch)} for index, batch in enumerate(batches)]
        dataset: Any = data.from_items(items, override_num_blocks=len(items))
        mapped: Any = dataset.map_batches(
            _map_batches,
            batch_size=1,
            num_cpus=1,
            fn_kwargs={"settings_json": settings_json, "pins_json": pins_json, "fast": fast},
        )
        for row in mapped.iter_rows():
            index = int(row["index"])
            merge.add(index, unpacked(bytes(row["partial"])))
            meter.advance(batch_size(batches[index]))
        return merge.result(settings)

    return run
