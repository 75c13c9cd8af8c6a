"""A Ray cluster: ``failure-kinds audit --ray [ADDRESS] PATH...`` (the ``ray`` extra).

The same tasks as ``--jobs``, planned by the same functions, run through the same ``tasks.work`` as
plain Ray tasks, one per batch; their partial reports come back to this process and are merged in input
order. The report is identical to the local one.

Paths are read where the tasks run. A local path must therefore be readable on every node (shared storage,
or a one-node cluster); a URI (``s3://bucket/logs/``, ``gs://...``, ``file:///...``) is read through the
filesystem pyarrow opens for it, with that filesystem's usual credentials on each node.
"""

from __future__ import annotations

import dataclasses
import importlib
import logging

from failure_kinds._display import escaped, plain
from failure_kinds._streams import Skipped

from .partial import PartialReport
from .settings import AuditError, AuditSettings
from .sources import STDIN, WALKED, is_uri, is_walked
from .tasks import (
    MIN_CHUNK_BYTES,
    STREAM,
    Identity,
    LocalFiles,
    OrderedMerge,
    Task,
    audit_tasks,
    batch_size,
    expand_inputs,
    local,
    note_repeated,
    plan,
    plan_file,
    work,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import IO, Any, BinaryIO, Final

    from .render import Progress
    from .tasks import Batch, Runner

INSTALL_HINT: Final = (
    "--ray needs Ray, the ray extra (see the README's Install): "
    "pip install '.[ray]' in a clone of failure-kinds"
)
# Each Ray task reads about this many bytes of a plain file: large enough that scheduling is noise.
RAY_CHUNK_BYTES: Final = 256 << 20
RAY_BATCHES: Final = 64


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
    try:
        ray: Any = importlib.import_module("ray")
    except ImportError:
        raise AuditError(INSTALL_HINT) from None
    if STDIN in inputs:
        raise AuditError("--ray reads files, directories and URIs, not - (stdin)")
    tasks = _plan_all(inputs, notes, chunk_bytes or RAY_CHUNK_BYTES)
    if streams := [plain(task.display) for task in tasks if task.kind == STREAM]:
        raise AuditError(f"--ray reads regular files only, not streams such as FIFOs: {', '.join(streams)}")
    started = not ray.is_initialized()
    if started:
        _quiet()
        if address:
            _probe(address)
        try:
            ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False)
        except Exception as error:  # ConnectionError, ValueError, RuntimeError, or Ray's own
            raise AuditError(
                f"{_option(address)}: cannot connect to a Ray cluster ({_first_sentence(error)})"
            ) from None
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
    """Ray's INFO lines would mix with the report's stderr: the audit shows its own progress line."""
    logging.getLogger("ray").setLevel(logging.ERROR)


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


def _remote(uri: str) -> tuple[RemoteFiles, str]:
    fs: Any = importlib.import_module("pyarrow.fs")
    try:
        filesystem, path = fs.FileSystem.from_uri(uri)
    except Exception as error:
        raise AuditError(f"{plain(uri)}: not a URI pyarrow can open ({_first_sentence(error)})") from None
    return RemoteFiles(filesystem), str(path)


def _plan_uri(uri: str, notes: list[str], chunk_bytes: int) -> list[Task]:
    """Tasks for one URI: a file, or a directory's files with ``sources.SUFFIXES`` (recursively, sorted)."""
    fs: Any = importlib.import_module("pyarrow.fs")
    remote, path = _remote(uri)
    filesystem = remote.filesystem
    scheme = uri[: uri.index("://") + 3]
    try:
        if filesystem.get_file_info(path).type == fs.FileType.Directory:
            found: list[str] = []
            skipped = Skipped()  # what a local directory's walk would skip, as it does
            for entry in filesystem.get_file_info(fs.FileSelector(path, recursive=True)):
                if entry.type == fs.FileType.File and is_walked(str(entry.path)):
                    found.append(str(entry.path))
                elif entry.type != fs.FileType.Directory:
                    skipped.add(scheme + str(entry.path))
            skipped.note(notes, WALKED)
            if not found:
                notes.append(f"{plain(uri)}: no {WALKED} files under this URI")
            files = [(scheme + name, name) for name in sorted(found)]
        else:
            files = [(uri, path)]
    except Exception:
        files = [(uri, path)]  # the task reports why it cannot be read
    tasks: list[Task] = []
    for shown, name in files:
        try:
            identity: Identity | None = remote.identity(name)
        except Exception:
            identity = None  # the task reports why it cannot be read
        planned = plan_file(remote, name, shown, identity, chunk_bytes)
        tasks.extend(dataclasses.replace(task, path=shown) for task in planned)
    return tasks


class RemoteFiles(LocalFiles):
    """A filesystem pyarrow opens for a URI: files have a size and a modification time, no inode."""

    def __init__(self, filesystem: Any) -> None:
        self.filesystem: Any = filesystem

    def open(self, path: str) -> BinaryIO:
        raw: BinaryIO = self.filesystem.open_input_file(path)
        return raw

    def identity(self, path: str) -> Identity:
        info: Any = self.filesystem.get_file_info(path)
        if info.type == importlib.import_module("pyarrow.fs").FileType.NotFound:
            raise FileNotFoundError(path)
        return Identity(None, None, int(info.size or 0), int(info.mtime_ns or 0))

    def opened(self, raw: BinaryIO, path: str) -> Identity:
        return self.identity(path)


def remote_or_local(path: str) -> tuple[LocalFiles, str]:
    """How a Ray task reads ``path``: a URI through pyarrow's filesystem for it, else locally."""
    return _remote(path) if is_uri(path) else local(path)


def _ray_runner(fast: bool) -> Runner:
    def run(batches: Sequence[Batch], settings: AuditSettings, meter: Progress) -> PartialReport:
        """Each batch a plain Ray task running ``tasks.work``; the partials merged as they come back."""
        ray: Any = importlib.import_module("ray")
        merge = OrderedMerge()
        task: Any = ray.remote(num_cpus=1)(work)
        shared: Any = ray.put(settings)
        pending: dict[Any, int] = {
            task.remote(batch, shared, fast, remote_or_local): index for index, batch in enumerate(batches)
        }
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for reference in done:
                index = pending.pop(reference)
                merge.add(index, ray.get(reference))  # a partial of this audit's own task
                meter.advance(batch_size(batches[index]))
        return merge.result(settings)

    return run
