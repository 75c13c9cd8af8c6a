"""`--jobs` on the shapes real rollout logs have: a directory of 5,000 and one of 20,000 small JSON Lines
shards with about 10,000 distinct failure kinds between them, and one file with 30,000 distinct values.

Each input is audited with --jobs 1 and with --jobs on every core, interleaved round after round, and read
by DuckDB. The goal: --jobs N takes at most 1.3 times the one process plus a fixed allowance for start-up
(START_UP_SECONDS; the ratio shown is --jobs N less it, over --jobs 1), and its report is byte for byte the
one of --jobs 1.
A run still going after its time limit is stopped, with its workers, and counts as missed, so a merge
whose cost grows with the square of the tasks cannot stall `make bench`.

The inputs are cached in build/bench/shards/ (keyed by this generator's source), which `make clean`
removes.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import rollouts
from common import DUCKDB_SCRIPT, Goal, Row, cache_folder, interleaved, median, paired_ratio, spread

from failure_kinds import FailureKind

ROWS_PER_SHARD = 20
FULL_SHARDS = (5_000, 20_000)
QUICK_SHARDS = (100, 400)
FULL_DISTINCT = (10_000, 30_000)  # across the shards, in the one file
QUICK_DISTINCT = (500, 2_000)
START_UP_SECONDS = 0.5
GOAL = 1.3
FULL_LIMIT_SECONDS = 120.0
QUICK_LIMIT_SECONDS = 60.0


def kind(random_source: random.Random, distinct: int, index: int | None = None) -> str | None:
    """A quarter without a kind, a quarter registered, half one of ``distinct`` namespaced values (each
    team's own kind, undeclared here); ``index`` picks that value instead of chance."""
    if index is not None:
        return f"team_{index % distinct:05d}:step_failed"
    draw = random_source.random()
    if draw < 0.25:
        return None
    if draw < 0.5:
        return random_source.choice(list(FailureKind)).value
    return f"team_{random_source.randrange(distinct):05d}:step_failed"


def rows_text(random_source: random.Random, start: int, kinds: list[str | None]) -> str:
    """Rollout rows numbered from ``start``, one for each of ``kinds``."""
    lines: list[str] = []
    for offset, value in enumerate(kinds):
        row = rollouts.row(random_source, start + offset)
        row["failure_kind"] = value
        lines.append(json.dumps(row))
    return "\n".join(lines) + "\n"


def source_key(*parts: object) -> str:
    generator = Path(__file__).read_bytes() + Path(rollouts.__file__).read_bytes() + repr(parts).encode()
    return hashlib.sha256(generator).hexdigest()[:12]


def generated_shards(shards: int, distinct: int) -> Path:
    """A directory of ``shards`` files of ROWS_PER_SHARD rows each, written once."""
    folder = cache_folder("shards") / f"shards-{shards}-{distinct}-{source_key(shards, distinct)}"
    if folder.is_dir():
        return folder
    partial = folder.with_name(folder.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir()
    random_source = random.Random(11)
    for number in range(shards):
        kinds = [kind(random_source, distinct) for _ in range(ROWS_PER_SHARD)]
        text = rows_text(random_source, number * ROWS_PER_SHARD, kinds)
        (partial / f"shard-{number:05d}.jsonl").write_text(text, encoding="utf-8")
    partial.replace(folder)
    return folder


def generated_file(distinct: int) -> Path:
    """One file in which each of ``distinct`` values occurs twice, in shuffled order."""
    path = cache_folder("shards") / f"distinct-{distinct}-{source_key(distinct)}.jsonl"
    if path.exists():
        return path
    random_source = random.Random(13)
    kinds: list[str | None] = [kind(random_source, distinct, index) for index in range(2 * distinct)]
    random_source.shuffle(kinds)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(rows_text(random_source, 0, kinds), encoding="utf-8")
    partial.replace(path)
    return path


class Run:
    """One side of the comparison: its wall-clock seconds per call, its last output, and a time limit
    after which it is stopped and every later call is taken as over the limit too."""

    def __init__(self, command: list[str], limit: float) -> None:
        self.command = command
        self.limit = limit
        self.output: bytes | None = None
        self.timed_out = False

    def __call__(self) -> float:
        if self.timed_out:
            return math.inf
        start = time.perf_counter()
        # A session of its own, so the workers can be stopped with the command.
        process = subprocess.Popen(
            self.command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
        )
        try:
            output, errors = process.communicate(timeout=self.limit)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            self.timed_out = True
            return math.inf
        elapsed = time.perf_counter() - start
        # 0 clean, 1 findings (the typos among the kinds); anything else is a broken run.
        if process.returncode not in (0, 1):
            raise RuntimeError(f"{self.command} exited with {process.returncode}: {errors[-2000:]!r}")
        self.output = output
        return elapsed


def audit_command(path: Path, jobs: int) -> list[str]:
    command = [sys.executable, "-m", "failure_kinds", "audit", str(path), "--format", "json"]
    return [*command, "--jobs", str(jobs)]


def seconds(value: float, limit: float) -> str:
    return f"> {limit:.0f} s" if math.isinf(value) else f"{value:.2f} s"


def measure_one(label: str, path: Path, duckdb_path: str, repetitions: int, limit: float) -> list[Row]:
    cores = len(os.sched_getaffinity(0))
    serial = Run(audit_command(path, 1), limit)
    parallel = Run(audit_command(path, cores), limit)
    duckdb = Run([sys.executable, "-c", DUCKDB_SCRIPT, duckdb_path], limit)
    candidates: dict[str, Callable[[], float]] = {"serial": serial, "parallel": parallel, "duckdb": duckdb}
    samples = interleaved(candidates, repetitions)
    parallel_seconds, serial_seconds = median(samples["parallel"]), median(samples["serial"])
    duckdb_seconds = median(samples["duckdb"])
    same = serial.output is not None and serial.output == parallel.output
    over_start_up = [max(sample - START_UP_SECONDS, 0.0) for sample in samples["parallel"]]
    # A one-process run over its limit leaves nothing to compare with.
    ratio = math.inf if serial.timed_out else paired_ratio(over_start_up, samples["serial"])
    return [
        Row(
            name=f"audit --jobs {cores} vs --jobs 1, {label}",
            measured=seconds(parallel_seconds, limit),
            baseline=f"{seconds(serial_seconds, limit)} --jobs 1; ratio (N - {START_UP_SECONDS} s) / 1",
            ratio=ratio,
            spread=spread(samples["parallel"], 1, "s"),
            goal=Goal(at_most=GOAL),
        ),
        Row(
            name=f"audit --jobs {cores} report is --jobs 1's, {label}",
            measured="identical" if same else "different or missing",
            baseline="--jobs 1 report, byte for byte",
            ratio=1.0 if same else 0.0,
            spread="",
            goal=Goal(at_least=1.0),
        ),
        Row(
            name=f"audit --jobs {cores} vs DuckDB, {label}",
            measured=seconds(parallel_seconds, limit),
            baseline=f"{seconds(duckdb_seconds, limit)} DuckDB read_json + GROUP BY",
            ratio=paired_ratio(samples["duckdb"], samples["parallel"]),
            spread=spread(samples["duckdb"], 1, "s"),
            goal=Goal(),
        ),
    ]


def measure(quick: bool) -> list[Row]:
    shard_counts = QUICK_SHARDS if quick else FULL_SHARDS
    shard_distinct, file_distinct = QUICK_DISTINCT if quick else FULL_DISTINCT
    repetitions = 1 if quick else 5
    limit = QUICK_LIMIT_SECONDS if quick else FULL_LIMIT_SECONDS
    rows: list[Row] = []
    for shards in shard_counts:
        folder = generated_shards(shards, shard_distinct)
        label = f"{shards:,} shards, {shard_distinct:,} distinct"
        rows += measure_one(label, folder, str(folder / "*.jsonl"), repetitions, limit)
    one_file = generated_file(file_distinct)
    rows += measure_one(f"one file, {file_distinct:,} distinct", one_file, str(one_file), repetitions, limit)
    return rows
