"""The audit at scale: `--jobs` on every core against DuckDB and the `wc -l` reading floor, on a JSON Lines
file of 2,000,000 rollout rows (about 1.2 GB), and the Parquet audit against a bare pyarrow column read.

Every side runs as a fresh process on the same file, interleaved round after round; each ratio is the
median of the per-round ratios, so a busy stretch of a shared machine cancels out. The generated files
are cached in build/bench/scale/ (keyed by the row generator's source), since writing 1.2 GB takes longer
than all the timings together; `make clean` removes them. DuckDB is a benchmark-only dependency (extra
`bench`).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import random
import sys
from pathlib import Path
from typing import Any

import rollouts
from common import (
    DUCKDB_SCRIPT,
    Goal,
    Row,
    audit_command,
    cache_folder,
    interleaved,
    median,
    memory_row,
    paired_ratio,
    peak_memory,
    spread,
    time_process,
)

FULL_ROWS = 2_000_000
QUICK_ROWS = 5_000
# Rows per Parquet row group, as a writer flushing every so often would leave them.
ROW_GROUP = 100_000

ARROW_SCRIPT = """
import sys
import pyarrow.compute as pc
import pyarrow.parquet as pq
table = pq.read_table(sys.argv[1], columns=[sys.argv[2]])
print(len(pc.value_counts(table.column(0))))
"""


def generated(rows: int) -> tuple[Path, Path]:
    """The JSON Lines file of ``rows`` rollout rows and the same rows as Parquet, written once."""
    generator = Path(rollouts.__file__).read_bytes() + f"row groups of {ROW_GROUP}".encode()
    key = hashlib.sha256(generator).hexdigest()[:12]
    jsonl = cache_folder("scale") / f"rollouts-{rows}-{key}.jsonl"
    parquet = jsonl.with_suffix(".parquet")
    if not (jsonl.exists() and parquet.exists()):
        write_both(jsonl, parquet, rows)
    return jsonl, parquet


def write_both(jsonl: Path, parquet: Path, rows: int) -> None:
    # pyarrow has no type information; it stays behind Any here.
    pa: Any = importlib.import_module("pyarrow")
    pq: Any = importlib.import_module("pyarrow.parquet")
    random_source = random.Random(7)
    partial_jsonl = jsonl.with_name(jsonl.name + ".partial")
    partial_parquet = parquet.with_name(parquet.name + ".partial")
    writer: Any = None
    with partial_jsonl.open("w", encoding="utf-8") as text:
        for start in range(0, rows, ROW_GROUP):
            batch = [
                rollouts.row(random_source, index) for index in range(start, min(rows, start + ROW_GROUP))
            ]
            text.writelines(json.dumps(row) + "\n" for row in batch)
            table = pa.Table.from_pylist(batch)
            if writer is None:
                writer = pq.ParquetWriter(str(partial_parquet), table.schema)
            writer.write_table(table)
    if writer is not None:
        writer.close()
    partial_jsonl.replace(jsonl)
    partial_parquet.replace(parquet)


def jobs() -> int:
    return len(os.sched_getaffinity(0))


def measure(quick: bool) -> list[Row]:
    rows = QUICK_ROWS if quick else FULL_ROWS
    repetitions = 1 if quick else 7
    jsonl, parquet = generated(rows)
    small_jsonl, _ = generated(rows // 10)
    size_mb = jsonl.stat().st_size / 1e6
    cores = jobs()
    samples = interleaved(
        {
            "wc": lambda: time_process(["wc", "-l", str(jsonl)], 1)[0],
            "duckdb": lambda: time_process([sys.executable, "-c", DUCKDB_SCRIPT, str(jsonl)], 1)[0],
            "serial": lambda: time_process(audit_command(jsonl, "--jobs", "1"), 1)[0],
            "parallel": lambda: time_process(audit_command(jsonl, "--jobs", str(cores)), 1)[0],
            "arrow": lambda: time_process(
                [sys.executable, "-c", ARROW_SCRIPT, str(parquet), "failure_kind"], 1
            )[0],
            "parquet": lambda: time_process(audit_command(parquet), 1)[0],
        },
        repetitions,
    )
    # Each worker's own peak and the command's, on the big file and on one a tenth of its size: both
    # stay flat however large the input.
    big = [peak_memory(audit_command(jsonl, "--jobs", str(cores))) for _ in range(repetitions)]
    small = [peak_memory(audit_command(small_jsonl, "--jobs", str(cores))) for _ in range(repetitions)]
    worker_big, worker_small = (median([run.workers for run in runs]) for runs in (big, small))
    command_big, command_small = (median([run.process for run in runs]) for runs in (big, small))
    arrow, ours_parquet = median(samples["arrow"]), median(samples["parquet"])
    label = f"{rows:,} lines ({size_mb:,.0f} MB)"

    def rate(name: str) -> str:
        return f"{size_mb / median(samples[name]):,.0f} MB/s"

    def speed_up(
        name: str, ours: str, baseline: str, described: str, goal: Goal | None = None, spread_of: str = ""
    ) -> Row:
        """How many times faster the audit ``ours`` read the file than ``baseline`` did."""
        return Row(
            name=name,
            measured=rate(ours),
            baseline=f"{rate(baseline)} {described}",
            ratio=paired_ratio(samples[baseline], samples[ours]),
            spread=spread(samples[spread_of or ours], 1, "s"),
            goal=goal or Goal(),
        )

    duckdb = "DuckDB read_json + GROUP BY"
    return [
        speed_up(f"audit --jobs {cores}, {label}", "parallel", "duckdb", duckdb, goal=Goal(at_least=1.0)),
        # The floor's own spread: the row above already gives the --jobs run's.
        speed_up(
            f"audit --jobs {cores} against the reading floor", "parallel", "wc", "wc -l", spread_of="wc"
        ),
        speed_up(f"audit --jobs 1 (one core), {label}", "serial", "duckdb", duckdb),
        memory_row(
            f"audit --jobs {cores} peak memory of each worker, {rows:,} vs {rows // 10:,} lines",
            worker_big,
            worker_small,
            rows // 10,
            absent="no worker started",
        ),
        memory_row(
            f"audit --jobs {cores} peak memory of the command, {rows:,} vs {rows // 10:,} lines",
            command_big,
            command_small,
            rows // 10,
        ),
        Row(
            name=f"audit Parquet, {rows:,} rows",
            measured=f"{ours_parquet * 1e3:,.0f} ms",
            baseline=f"{arrow * 1e3:,.0f} ms read_table(columns=[...]) + value_counts",
            ratio=paired_ratio(samples["parquet"], samples["arrow"]),
            spread=spread(samples["parquet"], 1e3, "ms"),
            goal=Goal(at_most=1.2),
        ),
    ]
