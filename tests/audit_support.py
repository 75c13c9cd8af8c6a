"""What the audit's test modules share: an engine that runs the tasks in this process, and a reader of
what the command shows on a terminal."""

from __future__ import annotations

import os
import select
import subprocess
import time
from collections.abc import Sequence

from failure_kinds.audit import AuditSettings, PartialReport, Pins
from failure_kinds.audit.progress import ByteProgress
from failure_kinds.audit.tasks import OrderedMerge, batch_size, packed, run_batch, unpacked

TYPE_CHECKING = False
if TYPE_CHECKING:
    from failure_kinds.audit.tasks import Batch


def run_here(
    batches: Sequence[Batch], settings: AuditSettings, pins: Pins | None, meter: ByteProgress
) -> PartialReport:
    """An engine's work done in this process, last batch first: each partial crosses packed and they
    arrive out of order, as from worker processes or Ray tasks (a runner for ``audit_tasks``)."""
    merge = OrderedMerge()
    for index in reversed(range(len(batches))):
        partial = run_batch(batches[index], settings, pins, fast=True)
        merge.add(index, unpacked(packed(partial)))
        meter.advance(batch_size(batches[index]))
    return merge.result(settings)


def read_terminal(leader: int, process: subprocess.Popen[bytes]) -> bytes:
    """Everything ``process`` writes to the terminal whose leader side is ``leader``, until it exits."""
    shown = b""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the other side closed
                break
            if not chunk:
                break
            shown += chunk
        elif process.poll() is not None:
            break
    process.wait(timeout=60)
    return shown
