"""What the audit's test modules share: an engine that runs the tasks in this process, and a reader of
what the command shows on a terminal."""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
from collections.abc import Sequence

from failure_kinds.audit import AuditSettings, PartialReport, Pins
from failure_kinds.audit.progress import ByteProgress
from failure_kinds.audit.tasks import OrderedMerge, Task, run_task


def run_here(
    tasks: Sequence[Task], settings: AuditSettings, pins: Pins | None, meter: ByteProgress
) -> PartialReport:
    """An engine's work done in this process, last task first: each partial crosses as JSON and they
    arrive out of order, as from worker processes or Ray tasks (a runner for ``audit_tasks``)."""
    merge = OrderedMerge()
    for task in reversed(tasks):
        partial = run_task(task, settings, pins, fast=True)
        merge.add(task.index, PartialReport.from_json(json.loads(json.dumps(partial.to_json()))))
        meter.advance(task.size)
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
