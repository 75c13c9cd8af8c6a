"""`failure-kinds audit` against the naive json.loads + Counter script, each in fresh processes on the same
generated file (CPU seconds, interleaved rounds); a file of nothing but blank lines against records of the
same size; and the audit's peak memory on 200,000 lines against 50,000. The audit runs with --jobs 1: these
rows measure the serial path (benchmarks/scale.py measures --jobs)."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import rollouts
from common import (
    Goal,
    Row,
    audit_command,
    cpu_process,
    interleaved,
    median,
    memory_row,
    paired_ratio,
    peak_memory,
    spread,
)

HERE = Path(__file__).parent


def serial_audit(path: Path, decoder: str) -> list[str]:
    return audit_command(path, "--decoder", decoder, "--jobs", "1")


def write_blank(path: Path, size: int, white_space: bool) -> Path:
    """``size`` bytes of blank lines: empty ones, or (``white_space``) with a few holding spaces, tabs and
    carriage returns among them."""
    block = (b"\n" * 4000 + (b"  \n" * 20 + b"\t\r\n" * 20 if white_space else b"")) * 64
    # Written a block at a time, so this process never holds the whole file.
    with path.open("wb") as file:
        for _ in range(size // len(block) + 1):
            file.write(block)
    return path


def measure(quick: bool) -> list[Row]:
    big_lines, small_lines = (20_000, 5_000) if quick else (200_000, 50_000)
    repetitions = 1 if quick else 7
    with tempfile.TemporaryDirectory() as folder:
        big = rollouts.write(Path(folder) / "big.jsonl", big_lines)
        small = rollouts.write(Path(folder) / "small.jsonl", small_lines)
        blank = write_blank(Path(folder) / "blank.jsonl", big.stat().st_size, white_space=False)
        spaced = write_blank(Path(folder) / "spaced.jsonl", big.stat().st_size, white_space=True)
        size_mb = big.stat().st_size / 1e6
        samples = interleaved(
            {
                "naive": lambda: cpu_process([sys.executable, str(HERE / "naive_audit.py"), str(big)]),
                "stdlib": lambda: cpu_process(serial_audit(big, "stdlib")),
                "msgspec": lambda: cpu_process(serial_audit(big, "msgspec")),
                # A file of blank lines holds no record, which the audit rightly notes on stderr each
                # time: the note is what these inputs are for, not a problem of the run, so it is not shown.
                "blank": lambda: cpu_process(serial_audit(blank, "msgspec"), quiet=True),
                "spaced": lambda: cpu_process(serial_audit(spaced, "msgspec"), quiet=True),
            },
            repetitions,
        )
        memory_big = median([peak_memory(serial_audit(big, "auto")).process for _ in range(repetitions)])
        memory_small = median([peak_memory(serial_audit(small, "auto")).process for _ in range(repetitions)])
    naive = median(samples["naive"])
    rows: list[Row] = []
    for decoder, goal in (("stdlib", 1.0), ("msgspec", 3.0)):
        ours = median(samples[decoder])
        rows.append(
            Row(
                name=f"audit {big_lines:,} lines ({size_mb:.0f} MB), {decoder}",
                measured=f"{big_lines / ours / 1e3:,.0f}k lines/s",
                baseline=f"{big_lines / naive / 1e3:,.0f}k lines/s naive script",
                ratio=paired_ratio(samples["naive"], samples[decoder]),
                spread=spread(samples[decoder], 1, "s"),
                goal=Goal(at_least=goal),
            )
        )
    records_seconds = median(samples["msgspec"])
    # Empty lines must cost no more than records of the same size; lines of white space are each looked
    # at, and may cost a little more.
    for name, label, goal in (
        ("blank", "empty lines", 1.0),
        ("spaced", "blank lines with white space", 1.25),
    ):
        blank_seconds = median(samples[name])
        rows.append(
            Row(
                name=f"audit {size_mb:.0f} MB of {label} vs records",
                measured=f"{size_mb / blank_seconds:,.0f} MB/s",
                baseline=f"{size_mb / records_seconds:,.0f} MB/s of records (msgspec)",
                ratio=paired_ratio(samples[name], samples["msgspec"]),
                spread=spread(samples[name], 1, "s"),
                goal=Goal(at_most=goal),
            )
        )
    rows.append(
        memory_row(
            f"audit peak memory, {big_lines:,} vs {small_lines:,} lines",
            memory_big,
            memory_small,
            small_lines,
        )
    )
    return rows
