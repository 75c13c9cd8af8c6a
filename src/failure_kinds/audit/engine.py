"""The audit's one entry point, ``audit(inputs, ...)``: it checks the arguments and builds the settings
once, then runs the tasks (see ``tasks``) in this process, in worker processes (``jobs``: a process
pool, see ``pool``) or on a Ray cluster (``ray_engine``); every engine
runs the same per-task function and gives the same report. Standard input, FIFOs and other inputs that
are not regular files are read only by this process: with one of them, or one job, everything is.

Then the notes on a ``--field`` no record has (``check_field``, ``check_objects``), from the counts of
the one pass.
"""

from __future__ import annotations

import os
import re

from failure_kinds._display import plain
from failure_kinds._signals import held

from .pool import pool_runner
from .render import Progress
from .settings import DISTINCT_LIMIT, LINE_BYTES, VALUE_CHARS, AuditError, settings_for
from .sources import is_uri, make_decoder
from .tasks import (
    STREAM,
    audit_tasks,
    batched,
    chunk_bytes_for,
    expand_inputs,
    plan,
    run_here,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import IO, Final

    from .partial import PartialReport
    from .report import Report
    from .settings import AuditSettings
    from .tasks import Source


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


# The files a note names when no record of theirs has the field; the JSON report names them all.
NOTED_FILES: Final = 20


def check_field(report: Report) -> None:
    """Name every file in which no record has the field (with the paths where its records hold
    registered kinds); when no record at all has it, mark the report, so that ``--strict`` fails."""
    from failure_kinds._display import escaped, plain

    field = plain(report.field)
    missing = [file for file in report.files if file.kinds_at is not None]
    if not report.with_kind and not report.null and not report.invalid and report.absent:
        report.field_missing = True
        found = next((path for file in missing for path in file.kinds_at or ()), None)
        report.field_suggestion = found
        note = f"no record has the field {field}"
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
    if report.records:
        why = "no record could be read as a JSON object"
    elif report.files:
        why = "no input holds a record"
    else:
        why = "no input file was found"
    report.notes.append(f"{why}, so --field {plain(report.field)} was never seen")
