"""The audit's one entry point: ``audit(inputs, ...)``, for the command and the library alike.

It checks the arguments and builds the settings once, then hands them to the engine that reads: this
process alone, worker processes (``jobs``, see ``parallel``) or a Ray cluster (``ray``, see
``ray_engine``). Every engine reads JSON Lines (plain or gzip) and Parquet, and gives the same report
for the same inputs.
"""

from __future__ import annotations

import os
import re

from .errors import AuditError
from .render import printable
from .settings import DISTINCT_LIMIT, LINE_BYTES, VALUE_CHARS, settings_for
from .sources import expand_inputs, is_uri

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import IO, Final

    from .report import Report
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
    keep freed memory in this process (``parallel.keep_freed_memory``), as the command does; a
    process-wide setting, so off by default for callers. ``distinct_limit``, ``value_chars`` and
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
                f"{printable(uri)}: URIs are read with --ray (the ray extra); without it, give local "
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
        from .parallel import audit_jobs, default_jobs, keep_freed_memory

        if tune_memory:
            keep_freed_memory()
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
