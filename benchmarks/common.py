"""What every benchmark shares: a result row with its goal, and timing helpers."""

from __future__ import annotations

import math
import os
import statistics
import subprocess
import sys
import time
import timeit
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Goal:
    """``ratio <= bound`` (at most) or ``ratio >= bound`` (at least); None means report only."""

    at_most: float | None = None
    at_least: float | None = None

    def met(self, ratio: float) -> bool | None:
        if self.at_most is not None:
            return ratio <= self.at_most
        if self.at_least is not None:
            return ratio >= self.at_least
        return None

    def __str__(self) -> str:
        if self.at_most is not None:
            return f"<= {self.at_most:.2f}x"
        if self.at_least is not None:
            return f">= {self.at_least:.2f}x"
        return "report"


@dataclass(frozen=True)
class Row:
    """One measurement against the baseline timed in the same run."""

    name: str
    measured: str
    baseline: str
    ratio: float
    spread: str
    goal: Goal

    @property
    def met(self) -> bool | None:
        return self.goal.met(self.ratio)


def spread(samples: Sequence[float], scale: float, unit: str) -> str:
    return f"{min(samples) * scale:.3g}-{max(samples) * scale:.3g} {unit}"


def median(samples: Sequence[float]) -> float:
    return statistics.median(samples)


def paired_ratio(numerators: Sequence[float], denominators: Sequence[float]) -> float:
    """The median of the per-round ratios of two interleaved series. Both sides of a round ran moments
    apart, so a slow stretch of a shared machine inflates both and cancels out of their ratio."""
    return statistics.median(top / bottom for top, bottom in zip(numerators, denominators, strict=True))


def time_process(command: Sequence[str], repetitions: int, **options: object) -> list[float]:
    """Wall-clock seconds of ``command`` run ``repetitions`` times, each a fresh process."""
    samples: list[float] = []
    for _ in range(repetitions):
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, **options)  # type: ignore[call-overload]
        samples.append(time.perf_counter() - start)
    return samples


def cpu_process(command: Sequence[str], quiet: bool = False) -> float:
    """CPU seconds (user and system) that one fresh process of ``command`` spent, its waited-for children
    included. Unlike wall-clock time it does not count the time spent waiting for a core that other work
    on the machine held, so it is the measure for single-threaded work on a shared machine. ``quiet``
    discards its standard error too, for a command whose note there is the expected outcome."""
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL if quiet else None
    )
    _, status, usage = os.wait4(process.pid, 0)
    if status != 0:
        raise RuntimeError(f"{list(command)} exited with status {status}")
    return usage.ru_utime + usage.ru_stime


def package_command(*arguments: str) -> list[str]:
    """The ``failure-kinds`` command with ``arguments``, run from this interpreter as a fresh process."""
    return [sys.executable, "-m", "failure_kinds", *arguments]


def audit_command(path: Path, *options: str) -> list[str]:
    """The audit of ``path`` as a fresh process, writing the JSON report."""
    return package_command("audit", str(path), "--format", "json", *options)


# Where generated inputs are kept between runs: inside the project's ignored build folder, which
# `make clean` removes, never the system's temporary directory.
CACHE = Path(__file__).resolve().parent.parent / "build" / "bench"


def cache_folder(name: str) -> Path:
    folder = CACHE / name
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@dataclass(frozen=True)
class PeakMemory:
    """The largest resident set, in KiB, of a command's own process and of the largest of the processes
    it started (0 when it started none)."""

    process: int
    workers: int


# How often the process tree is looked at. A process's high-water mark only grows, so a sample misses
# at most what it grew in its last interval before exiting.
POLL_SECONDS = 0.002


def peak_memory(command: Sequence[str]) -> PeakMemory:
    """Each process's own peak, read as VmHWM from /proc while the command runs. Not the wait status's
    ru_maxrss: a process started by this one carries this process's high-water mark from before its
    exec, so it would report the benchmark's memory instead of the command's."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    peaks: dict[int, int] = {}
    while process.poll() is None:
        for pid in [process.pid, *descendants(process.pid)]:
            peak = high_water_kib(pid)
            if peak is not None:
                peaks[pid] = max(peaks.get(pid, 0), peak)
        time.sleep(POLL_SECONDS)
    if process.returncode != 0:
        raise RuntimeError(f"{list(command)} exited with status {process.returncode}")
    workers = [peak for pid, peak in peaks.items() if pid != process.pid]
    return PeakMemory(process=peaks.get(process.pid, 0), workers=max(workers, default=0))


# How much more a peak may be on the larger input: what the audit holds must not grow with its input.
FLAT_MEMORY = 1.15


def memory_row(name: str, larger: float, smaller: float, smaller_lines: int, absent: str = "not seen") -> Row:
    """Peak memory in KiB on a larger input against a smaller one. A peak not seen on either input
    leaves nothing measured: that misses the goal rather than passing as no growth."""
    return Row(
        name=name,
        measured=f"{larger / 1024:.1f} MiB" if larger else absent,
        baseline=f"{smaller / 1024:.1f} MiB on {smaller_lines:,} lines",
        ratio=larger / smaller if larger and smaller else math.inf,
        spread="",
        goal=Goal(at_most=FLAT_MEMORY),
    )


def descendants(pid: int) -> list[int]:
    """The processes below ``pid``, found through each of its threads' children lists."""
    found: list[int] = []
    pending = [pid]
    while pending:
        parent = pending.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{parent}/task/{task}/children", encoding="ascii") as file:
                    children = [int(child) for child in file.read().split()]
            except OSError:
                continue
            found.extend(children)
            pending.extend(children)
    return found


def high_water_kib(pid: int) -> int | None:
    """The peak resident set of ``pid`` so far, or None once it is gone."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as file:
            for line in file:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def per_call(function: Callable[[Any], object], argument: object, number: int) -> Callable[[], float]:
    """A measurement of ``function(argument)``: CPU seconds per call over ``number`` calls. CPU time of
    this thread, not wall-clock: time spent preempted by other work on a shared machine is not counted."""
    timer = timeit.Timer(
        "function(argument)", timer=time.thread_time, globals={"function": function, "argument": argument}
    )
    return lambda: timer.timeit(number) / number


# A measurement shorter than this is taken several times back to back and the fastest kept: one
# preemption by another process costs it more than the difference being measured.
SHORT_SECONDS = 0.05
BEST_OF = 5


def interleaved(candidates: dict[str, Callable[[], float]], repetitions: int) -> dict[str, list[float]]:
    """Each candidate once per round, round after round, so machine drift hits all alike; the order within
    a round rotates, so no candidate always runs first (after a pause) or last. A short candidate's sample
    is the fastest of BEST_OF back-to-back runs, since noise only ever adds time."""
    names = list(candidates)
    samples: dict[str, list[float]] = {name: [] for name in names}
    best_of = dict.fromkeys(names, 1)
    for round_number in range(repetitions):
        shift = round_number % len(names)
        for name in names[shift:] + names[:shift]:
            sample = min(candidates[name]() for _ in range(best_of[name]))
            if round_number == 0 and sample < SHORT_SECONDS:
                best_of[name] = BEST_OF
                sample = min([sample] + [candidates[name]() for _ in range(BEST_OF - 1)])
            samples[name].append(sample)
    return samples


# The peer both scale suites measure against: DuckDB counting the same field of the same JSON Lines,
# run as a fresh process like ours.
DUCKDB_SCRIPT = """
import sys, duckdb
rows = duckdb.sql(
    "SELECT failure_kind, count(*) FROM read_json(?, format='newline_delimited', "
    "columns={'failure_kind': 'VARCHAR'}, ignore_errors=true) GROUP BY failure_kind",
    params=[sys.argv[1]],
).fetchall()
print(len(rows))
"""


def compile_package() -> None:
    """Write the package's bytecode, as pip does when it installs a package; run.py does it before any
    suite. Under PYTHONDONTWRITEBYTECODE (or from a fresh checkout) every fresh process would otherwise
    compile the command's modules again, a cost no installed copy pays and the standard library's own
    modules (every baseline's) never do."""
    import compileall

    import failure_kinds

    compileall.compile_dir(Path(failure_kinds.__file__).parent, quiet=1)
