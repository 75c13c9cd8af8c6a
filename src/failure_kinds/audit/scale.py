"""Which engine audits: this process alone, worker processes (``--jobs``) or a Ray cluster (``--ray``).

``audit_at_scale`` takes the serial ``audit``'s arguments plus ``jobs`` and ``ray``; every engine gives
the same report for the same inputs.
"""

from __future__ import annotations

import os
import re

from .engine import settings_for
from .errors import AuditError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import IO, Final

    from .report import Report

# Below this many bytes in all, worker processes cost more than they save: one pass in this process.
PARALLEL_MIN_BYTES: Final = 32 << 20
_HOST_PORT: Final = re.compile(r"[\w.\-\[\]:]+:\d+")


def looks_like_address(value: str) -> bool:
    """Whether ``--ray VALUE`` names a cluster (``auto``, ``local``, ``ray://...``, ``host:port``) rather
    than the first path to audit (``--ray logs/``)."""
    if value in ("auto", "local") or value.startswith("ray://"):
        return True
    return _HOST_PORT.fullmatch(value) is not None and not os.path.exists(value)


def audit_at_scale(
    inputs: Sequence[str],
    *,
    jobs: int | None = None,
    ray: str | None = None,
    field_path: str = "failure_kind",
    aliases: dict[str, str] | None = None,
    fast: bool = True,
    progress: IO[str] | None = None,
    namespaces: dict[str, tuple[str, ...]] | None = None,
    chunk_bytes: int | None = None,
    tune_memory: bool = False,
    **caps: int,
) -> Report:
    """Audit ``inputs`` with ``jobs`` processes (None: one per available core) or, when ``ray`` is not
    None, on the Ray cluster at that address ("" : the one ``ray.init()`` finds or starts).
    ``tune_memory``: keep freed memory in this process (``parallel.keep_freed_memory``), as the command
    does; a process-wide setting, so off by default for callers."""
    if not inputs:
        raise AuditError("give at least one PATH: a file, a directory, a URI (with --ray) or - for stdin")
    if jobs is not None and jobs < 1:
        raise AuditError(f"--jobs {jobs}: give at least 1")
    if jobs is not None and ray is not None:
        raise AuditError(
            "--jobs and --ray cannot be combined: on Ray, the cluster's CPUs set how many tasks run"
        )
    settings = settings_for(field_path, aliases, namespaces, **caps)
    if ray is not None:
        from .ray_engine import audit_ray

        return audit_ray(
            inputs, settings, address=ray or None, fast=fast, progress=progress, chunk_bytes=chunk_bytes
        )
    from .parallel import audit_parallel, keep_freed_memory

    if tune_memory:
        keep_freed_memory()
    return audit_parallel(
        inputs,
        settings,
        jobs=jobs,
        fast=fast,
        progress=progress,
        chunk_bytes=chunk_bytes,
        min_bytes=PARALLEL_MIN_BYTES if chunk_bytes is None else 0,
    )
