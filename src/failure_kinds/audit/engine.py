"""The audit's one entry point, ``audit(inputs, ...)``: it checks the arguments and builds the settings
once, then runs the tasks (see ``tasks``) in this process, in worker processes (``jobs``: a process
pool, see ``pool``) or on a Ray cluster (``ray_engine``); every engine
runs the same per-task function and gives the same report. Standard input, FIFOs and other inputs that
are not regular files are read only by this process: with one of them, or one job, everything is.

Then the note on a ``--field`` no record has (``check_field``, ``check_objects``): the counts cannot tell
an absent field from a null one, so the start of the first inputs is looked at again, with bounded work
(see docs/audit.md, "Categories and exit codes").
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from dataclasses import dataclass
from typing import cast

from failure_kinds._display import plain
from failure_kinds._signals import held

from .errors import AuditError
from .partial import BOM
from .pool import pool_runner
from .render import Progress
from .settings import DISTINCT_LIMIT, LINE_BYTES, VALUE_CHARS, settings_for
from .sources import HEAD_BYTES, decompressed, expand_inputs, is_parquet, is_uri, make_decoder
from .tasks import LOCAL, MIN_CHUNK_BYTES, STREAM, audit_tasks, batched, chunk_bytes_for, plan, run_here

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import IO, Final

    from .partial import PartialReport
    from .render import Report
    from .settings import AuditSettings
    from .sources import Source


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
    heads: dict[str, bytearray] = {}
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
        merged = audit_jobs(sources, settings, jobs or default_jobs(), fast, progress, chunk_bytes, heads)
    report = merged.report()
    report.notes = notes
    if not report.with_kind and not report.invalid:
        if report.without_kind:
            # Ray's inputs may be URIs, and its directories are walked again here: only local files are
            # read.
            check_field(report, expand_inputs(inputs, []) if sources is None else sources, settings, heads)
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
    jobs: int,
    fast: bool,
    progress: IO[str] | None,
    chunk_bytes: int | None,
    heads: dict[str, bytearray],
) -> PartialReport:
    """The partial of ``sources`` audited by ``jobs`` worker processes; inputs of fewer than
    PARALLEL_MIN_BYTES in all (unless ``chunk_bytes`` is given), a stream among them, or one job: in this
    process, in one pass."""
    with held():  # msgspec can crash when interrupted as it loads or makes its first decoder
        make_decoder(settings.field.split("."), fast)  # forked workers share it too
    tasks = plan(sources, jobs, chunk_bytes) if jobs > 1 else []
    total = sum(task.size for task in tasks)
    small = chunk_bytes is None and total < PARALLEL_MIN_BYTES
    if len(tasks) <= 1 or small or any(task.kind == STREAM for task in tasks):
        # Batches of several files, so that running out of memory names only the files of one.
        batches = batched(plan(sources, 1, 0), MIN_CHUNK_BYTES)
        return run_here(batches, settings, None, Progress(None, 0), fast, Progress(progress), heads)
    # Small files are read in batches of about a range's size; a given chunk size (tests) cuts finer.
    batch_bytes = chunk_bytes if chunk_bytes is not None else chunk_bytes_for(total, jobs)
    return audit_tasks(tasks, settings, pool_runner(jobs, fast), progress, batch_bytes)


PROBE_RECORDS: Final = 1_000
PROBE_FILES: Final = 64
PATHS_LIMIT: Final = 1_000
PATH_DEPTH: Final = 8
# A path longer than this many characters is not kept: nobody means one, and a note must stay short.
PATH_CHARS: Final = 200
# When no field is close to the one asked for, this many of the records' fields are named instead.
NAMED: Final = 5


@dataclass
class Probe:
    """What the start of the input says of the field: whether some record looked at has it (null
    included; or a Parquet schema does), the records looked at and how many were objects (a Parquet
    file's rows all count), the dotted field paths they have in the order first seen, and the first key
    holding a dot (``"response.failure_kind"``), which --field cannot name."""

    present: bool = False
    records: int = 0
    objects: int = 0
    paths: dict[str, None] = dataclasses.field(default_factory=dict[str, None])
    dotted: str | None = None


def check_field(
    report: Report, sources: Sequence[Source], settings: AuditSettings, heads: Mapping[str, bytearray]
) -> None:
    """For a report of records without a kind, none with one or an invalid value: when none of the
    records looked at has the field at all, mark the report and add a note naming the closest field."""
    segments = settings.field.split(".")
    probe = probe_sources(sources, segments, heads)
    if probe.present or not probe.objects:
        return  # the field is there (null), or no record that could hold it was looked at
    from failure_kinds._display import escaped, plain

    report.field_missing = True
    report.field_suggestion = closest_path(settings.field, list(probe.paths))
    field = plain(settings.field)
    if probe.records >= report.records:
        note = f"no record has the field {field}"
    else:
        note = (
            f"none of the {probe.records:,} records looked at has the field {field}, and no record has a "
            "kind there"
        )
    if report.field_suggestion is not None:
        note += f"; did you mean {escaped(report.field_suggestion, PATH_CHARS)}?"
    elif probe.dotted is not None:
        note += (
            f'; the records have a key "{escaped(probe.dotted, PATH_CHARS)}" containing dots, which '
            "--field cannot name because a dot separates levels"
        )
    elif not probe.paths:
        note += "; the records looked at have no field that --field can name"
    else:
        named = ", ".join(escaped(path, PATH_CHARS) for path in list(probe.paths)[:NAMED])
        note += f"; the records have {named}" + (", ..." if len(probe.paths) > NAMED else "")
    report.notes.append(note)


def check_objects(report: Report, settings: AuditSettings) -> None:
    """For a report without a JSON object (every line unparseable, or no record at all), which no record
    could hold the field in: mark it, so a gate pointed at the wrong file fails, and add a note saying
    why. Nothing is added when every input failed to be read: its error already says why."""
    if not report.records and report.files and all(file.error is not None for file in report.files):
        return
    from failure_kinds._display import plain

    report.field_missing = True
    if report.records:
        why = "no record could be read as a JSON object"
    elif report.files:
        why = "no input holds a record"
    else:
        why = "no input file was found"
    report.notes.append(f"{why}, so --field {plain(settings.field)} was never seen")


def closest_path(field: str, paths: Sequence[str]) -> str | None:
    """The path most like ``field``; else the path whose last name is most like the field's last name
    (``failure_kind`` when the records have ``result.failure_kind``)."""
    from failure_kinds._suggest import closest

    found = closest(field, paths)
    if found is not None:
        return found
    by_name: dict[str, str] = {}
    for path in paths:
        by_name.setdefault(path.rpartition(".")[2], path)
    name = closest(field.rpartition(".")[2], list(by_name))
    return None if name is None else by_name[name]


def probe_sources(sources: Sequence[Source], segments: list[str], heads: Mapping[str, bytearray]) -> Probe:
    probe = Probe()
    each = max(1, PROBE_RECORDS // max(1, min(len(sources), PROBE_FILES)))
    for number, source in enumerate(sources):
        if number >= PROBE_FILES or probe.records >= PROBE_RECORDS or probe.present:
            break
        if source.error is not None:
            continue
        if source.path is not None and is_parquet(source.path):
            _probe_parquet(probe, source.path, segments)
            continue
        head = _head(source, heads)
        if head:
            _probe_lines(probe, head, segments, min(PROBE_RECORDS, probe.records + each))
    return probe


def _head(source: Source, heads: Mapping[str, bytearray]) -> bytes:
    """The first bytes of a JSON Lines source: those a stream's read kept, else read again."""
    if source.stream or source.path is None:
        head = bytes(heads.get(source.display, b""))
        return _whole_lines(head, len(head) >= HEAD_BYTES)
    if source.identity is None:
        return b""  # it could not be looked at: its read says why
    try:
        data = decompressed(LOCAL.open(source.path), source.display)
    except (OSError, ValueError):
        return b""
    try:
        chunks: list[bytes] = []
        size = 0
        while size < HEAD_BYTES and (chunk := data.read(HEAD_BYTES - size)):
            chunks.append(chunk)
            size += len(chunk)
    finally:
        data.close()
    return _whole_lines(b"".join(chunks), size >= HEAD_BYTES)


def _whole_lines(data: bytes, cut: bool) -> bytes:
    """``data`` without the line a cut left incomplete."""
    return data[: data.rfind(b"\n") + 1] if cut else data


def _probe_lines(probe: Probe, data: bytes, segments: list[str], until: int) -> None:
    """Look at the records of ``data`` until ``until`` records have been looked at in all."""
    data = data.removeprefix(BOM)
    for line in data.split(b"\n"):
        if probe.records >= until or probe.present:
            return
        if not line or line.isspace():
            continue
        probe.records += 1
        try:
            record: object = json.loads(line.decode("utf-8"))
        except (ValueError, RecursionError):  # not UTF-8, not JSON, nested past the interpreter's limit
            continue
        if not isinstance(record, dict):
            continue
        probe.objects += 1
        fields = cast("dict[object, object]", record)
        if _has(fields, segments):
            probe.present = True
            return
        _collect(probe, fields, "", 1)


def _has(record: object, segments: list[str]) -> bool:
    """Whether the path is in ``record``: to its end, or to a null on the way (which stands where the
    field would be, as a null struct does in a Parquet row whose schema has the field)."""
    for segment in segments:
        if record is None:
            return True
        if not isinstance(record, dict) or segment not in record:
            return False
        record = record[segment]  # pyright: ignore[reportUnknownVariableType]
    return True


def _collect(probe: Probe, record: dict[object, object], prefix: str, depth: int) -> None:
    paths = probe.paths
    for key, value in record.items():
        if len(paths) >= PATHS_LIMIT:
            return
        if not isinstance(key, str) or "." in key or not key or len(prefix) + len(key) > PATH_CHARS:
            if probe.dotted is None and isinstance(key, str) and "." in key:
                probe.dotted = key
            continue  # a name --field cannot spell, or one too long to be the one meant
        path = prefix + key
        paths.setdefault(path, None)
        if isinstance(value, dict) and depth < PATH_DEPTH:
            _collect(probe, value, path + ".", depth + 1)  # pyright: ignore[reportUnknownArgumentType]


def _probe_parquet(probe: Probe, path: str, segments: list[str]) -> None:
    from .parquet import schema_fields

    found = schema_fields(path, segments, PATHS_LIMIT, PATH_CHARS)
    if found is None:
        return
    present, paths, rows, dotted = found
    probe.dotted = probe.dotted if probe.dotted is not None else dotted
    probe.present = probe.present or present
    probe.records += rows
    probe.objects += rows
    for name in paths:
        if len(probe.paths) >= PATHS_LIMIT:
            break
        probe.paths.setdefault(name, None)
