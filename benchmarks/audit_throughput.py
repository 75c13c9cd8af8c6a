"""`failure-kinds audit` against the naive json.loads + Counter script, each in fresh processes on the same
generated file, and the audit's peak memory on 200,000 lines against 50,000."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import rollouts
from common import Goal, Row, interleaved, median, spread, time_process

HERE = Path(__file__).parent


def audit_command(path: Path, decoder: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "failure_kinds",
        "audit",
        str(path),
        "--decoder",
        decoder,
        "--format",
        "json",
    ]


def peak_rss_kib(command: list[str]) -> int:
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    if status != 0:
        raise RuntimeError(f"{command} exited with status {status}")
    return usage.ru_maxrss  # kibibytes on Linux


def measure(quick: bool) -> list[Row]:
    big_lines, small_lines = (20_000, 5_000) if quick else (200_000, 50_000)
    repetitions = 1 if quick else 5
    with tempfile.TemporaryDirectory() as folder:
        big = rollouts.write(Path(folder) / "big.jsonl", big_lines)
        small = rollouts.write(Path(folder) / "small.jsonl", small_lines)
        size_mb = big.stat().st_size / 1e6
        samples = interleaved(
            {
                "naive": lambda: time_process([sys.executable, str(HERE / "naive_audit.py"), str(big)], 1)[0],
                "stdlib": lambda: time_process(audit_command(big, "stdlib"), 1)[0],
                "msgspec": lambda: time_process(audit_command(big, "msgspec"), 1)[0],
            },
            repetitions,
        )
        memory_big = median([peak_rss_kib(audit_command(big, "auto")) for _ in range(repetitions)])
        memory_small = median([peak_rss_kib(audit_command(small, "auto")) for _ in range(repetitions)])
    naive = median(samples["naive"])
    rows: list[Row] = []
    for decoder, goal in (("stdlib", 1.0), ("msgspec", 3.0)):
        ours = median(samples[decoder])
        rows.append(
            Row(
                name=f"audit {big_lines:,} lines ({size_mb:.0f} MB), {decoder}",
                measured=f"{big_lines / ours / 1e3:,.0f}k lines/s",
                baseline=f"{big_lines / naive / 1e3:,.0f}k lines/s naive script",
                ratio=naive / ours,
                spread=spread(samples[decoder], 1, "s"),
                goal=Goal(at_least=goal),
            )
        )
    rows.append(
        Row(
            name=f"audit peak memory, {big_lines:,} vs {small_lines:,} lines",
            measured=f"{memory_big / 1024:.1f} MiB",
            baseline=f"{memory_small / 1024:.1f} MiB on {small_lines:,} lines",
            ratio=memory_big / memory_small,
            spread="",
            goal=Goal(at_most=1.15),
        )
    )
    return rows
