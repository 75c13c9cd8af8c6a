"""What the audit's test modules share: an engine that runs the tasks in this process, a reader of what
the command shows on a terminal, and logs written as JSON Lines."""

from __future__ import annotations

import json
import os
import random
import select
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

import failure_kinds
from failure_kinds.audit import AuditSettings, PartialReport, Pins
from failure_kinds.audit.render import ByteProgress
from failure_kinds.audit.tasks import OrderedMerge, batch_size, packed, run_batch, unpacked
from failure_kinds.history import OLDER_LABELS

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


def jsonl(values: Sequence[object]) -> bytes:
    return b"".join(json.dumps({"failure_kind": value}).encode() + b"\n" for value in values)


def many_shards(folder: Path, seed: int) -> list[str]:
    """80 files: older labels among some 3,000 distinct typos and the registered kinds."""
    chooser = random.Random(seed)
    for number in range(80):
        values: list[object] = []
        for line in range(120):
            roll = chooser.random()
            if roll < 0.2:
                values.append(chooser.choice(sorted(OLDER_LABELS)))
            elif roll < 0.5:
                values.append(chooser.choice(sorted(failure_kinds.FAILURE_KINDS)))
            elif roll < 0.95:
                values.append(f"made_up_{chooser.randrange(3000)}")
            else:
                values.append(None if line % 2 else 7)
        (folder / f"shard{number:03}.jsonl").write_bytes(jsonl(values))
    return [str(folder)]
