"""`failure-kinds lint` on generated trees of 3,000 modules against bare ast.parse of the same files,
each in fresh processes, interleaved, in CPU seconds; the ratio is the median of the per-round ratios.

Two trees: one where about one module in eight produces failure records, as in a rollout service, and
one where every module does (and imports failure_kinds), the lint's worst case: no file can be skipped
unwalked."""

from __future__ import annotations

import random
import sys
import tempfile
from pathlib import Path

from common import Goal, Row, cpu_process, interleaved, median, package_command, paired_ratio, spread

PARSE_ONLY = """
import ast, os, sys
for folder, _, names in os.walk(sys.argv[1]):
    for name in names:
        if name.endswith(".py"):
            with open(os.path.join(folder, name), "rb") as file:
                ast.parse(file.read())
"""

MODULE_HEAD = '''"""Rollout worker module {index}."""

from __future__ import annotations

import logging
from dataclasses import dataclass

logger = logging.getLogger(__name__)
'''

FUNCTION = '''

def handle_{index}(request: dict[str, object], retries: int = 3) -> dict[str, object]:
    """Run one step and describe what happened."""
    result: dict[str, object] = {{"step": {index}, "status": "ok", "attempts": 0}}
    for attempt in range(retries):
        result["attempts"] = attempt + 1
        if request.get("payload") is None:
            logger.debug("empty payload on attempt %d", attempt)
            continue
        values = [value * 2 for value in range({index} % 7 + 3)]
        result["total"] = sum(values)
        break
    return result
'''

PRODUCER = """

@dataclass
class Outcome{index}:
    failure_kind: str | None = None
    failure_reason: str | None = None


def report_{index}(row: dict[str, object], timed_out: bool) -> dict[str, object]:
    if timed_out:
        row["failure_kind"] = "transport_timeout"
    elif row.get("exit_code") == 137:
        row["failure_kind"] = fk.KILL_SHAPED
    if row["failure_kind"] in ("cancelled", "shutdown"):
        return {{"failure_kind": row["failure_kind"], "skipped": True}}
    return row
"""


def write_tree(folder: Path, files: int, seed: int = 11, producers: float = 0.125) -> Path:
    random_source = random.Random(seed)
    for index in range(files):
        package = folder / f"package_{index % 30:02d}"
        package.mkdir(exist_ok=True)
        parts = [MODULE_HEAD.format(index=index)]
        parts += [FUNCTION.format(index=index * 100 + part) for part in range(random_source.randint(2, 12))]
        # A share of the modules produce failure records: one in eight in a rollout service.
        if random_source.random() < producers:
            parts.insert(1, "import failure_kinds as fk\n")
            parts.append(PRODUCER.format(index=index))
        (package / f"module_{index:04d}.py").write_text("".join(parts), encoding="utf-8")
    return folder


def measure(quick: bool) -> list[Row]:
    return [_measure(quick, 0.125, ""), _measure(quick, 1.0, ", each mentioning kinds")]


def _measure(quick: bool, producers: float, label: str) -> Row:
    files = 300 if quick else 3000
    repetitions = 1 if quick else 7
    with tempfile.TemporaryDirectory() as folder:
        tree = write_tree(Path(folder), files, producers=producers)
        # CPU time, not wall-clock: both sides are single processes, and on a shared machine the wait for
        # a free core is the other work's cost, not ours.
        samples = interleaved(
            {
                "lint": lambda: cpu_process(package_command("lint", str(tree))),
                "parse": lambda: cpu_process([sys.executable, "-c", PARSE_ONLY, str(tree)]),
            },
            repetitions,
        )
    lint, parse = median(samples["lint"]), median(samples["parse"])
    return Row(
        name=f"lint {files:,} files{label}",
        measured=f"{lint:.2f} s CPU",
        baseline=f"{parse:.2f} s CPU ast.parse alone",
        ratio=paired_ratio(samples["lint"], samples["parse"]),
        spread=spread(samples["lint"], 1, "s"),
        goal=Goal(at_most=1.5),
    )
