"""Run every speed and memory measurement and print each against its baseline and goal.

    python benchmarks/run.py            full run; exit 1 when a goal is missed
    python benchmarks/run.py --quick    a smoke run (what `make test` does): small inputs, few repetitions,
                                        only to check that every benchmark runs; it names what ran and
                                        prints no timing, ratio or verdict

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


def smoke_report(ran: dict[str, int]) -> str:
    """What the smoke run prints: that it is one, and how many measurements each suite made. Its numbers
    are left out: on small inputs start-up dominates, a ratio says nothing about a goal, and a pool may
    not even start a worker, none of which is a failure."""
    suites = ", ".join(f"{name} ({count} measurement{'s' * (count != 1)})" for name, count in ran.items())
    return (
        "Smoke run of the benchmarks: small inputs and few repetitions, to check only that each one runs.\n"
        f"Ran: {suites}.\n"
        "Its timings mean nothing, so none is shown; `make bench` measures each against its goal."
    )


def render(rows: list[Row]) -> str:
    """The table of a full run: each measurement against its baseline and goal."""
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
    ran: dict[str, int] = {}
    for name in arguments.only or SUITES:
        print(f"running {name} ...", file=sys.stderr, flush=True)
        measured = SUITES[name](arguments.quick)
        rows.extend(measured)
        ran[name] = len(measured)
    if arguments.quick:
        print(smoke_report(ran))
        return 0
    print(machine())
    print(render(rows))
    missed = [row.name.strip() for row in rows if row.met is False]
    if missed:
        print(f"missed: {', '.join(missed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
