"""Run every speed and memory measurement and print each against its baseline and goal.

    python benchmarks/run.py            full run; exit 1 when a goal is missed
    python benchmarks/run.py --quick    small inputs, few repetitions: only checks that every benchmark
                                        runs (what `make test` does); no goals, no verdicts

Each ratio compares against a baseline measured in the same run, the two interleaved round after round;
timings are medians over repetitions (short ones each the fastest of a few back-to-back runs), with the
min-max of the measured side shown so a noisy machine is visible.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import audit_throughput
import hot_path
import lint_speed
import scale
import shards
import startup
from common import Row, compile_package

SUITES = {
    "hot_path": hot_path.measure,
    "startup": startup.measure,
    "audit": audit_throughput.measure,
    "lint": lint_speed.measure,
    "scale": scale.measure,
    "shards": shards.measure,
}


def render(rows: list[Row], enforced: bool = True) -> str:
    """The table; without enforcement (the quick run) it has no goal and no verdict columns, since on
    small inputs start-up dominates and a ratio says nothing about a goal."""
    header: tuple[str, ...] = (
        "measurement",
        "measured",
        "baseline",
        "ratio",
        "goal",
        "met",
        "spread (min-max)",
    )
    table: list[tuple[str, ...]] = [header]
    for row in rows:
        met = {True: "met", False: "MISSED", None: "-"}[row.met]
        table.append(
            (row.name, row.measured, row.baseline, f"{row.ratio:.2f}x", str(row.goal), met, row.spread)
        )
    if not enforced:
        table = [line[:4] + line[6:] for line in table]
        header = table[0]
    widths = [max(len(line[column]) for line in table) for column in range(len(header))]
    lines: list[str] = []
    for line in table:
        cells = (cell.ljust(width) for cell, width in zip(line, widths, strict=True))
        lines.append("| " + " | ".join(cells) + " |")
    lines.insert(1, "|" + "|".join("-" * (width + 2) for width in widths) + "|")
    return "\n".join(lines)


def machine() -> str:
    return (
        f"Python {platform.python_version()} on {platform.system()} {platform.machine()}, "
        f"{os.cpu_count()} cores, {time.strftime('%Y-%m-%d')}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="small inputs: only checks that every benchmark runs (for CI)"
    )
    parser.add_argument("--only", choices=sorted(SUITES), action="append", help="run just this suite")
    arguments = parser.parse_args()
    compile_package()
    rows: list[Row] = []
    for name in arguments.only or SUITES:
        print(f"running {name} ...", file=sys.stderr, flush=True)
        rows.extend(SUITES[name](arguments.quick))
    if arguments.quick:
        print(
            "Quick run: small inputs and few repetitions, only to check that every benchmark runs. "
            "These ratios are not comparable with the goals; `make bench` measures those."
        )
    print(machine())
    print(render(rows, enforced=not arguments.quick))
    missed = [row.name.strip() for row in rows if row.met is False]
    if missed and not arguments.quick:
        print(f"missed: {', '.join(missed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
