"""What every benchmark shares: a result row with its goal, and timing helpers."""

from __future__ import annotations

import statistics
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass


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


def time_process(command: Sequence[str], repetitions: int, **options: object) -> list[float]:
    """Wall-clock seconds of ``command`` run ``repetitions`` times, each a fresh process."""
    samples: list[float] = []
    for _ in range(repetitions):
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, **options)  # type: ignore[call-overload]
        samples.append(time.perf_counter() - start)
    return samples


def interleaved(candidates: dict[str, Callable[[], float]], repetitions: int) -> dict[str, list[float]]:
    """Run each candidate once per round, round after round, so machine drift hits all alike."""
    samples: dict[str, list[float]] = {name: [] for name in candidates}
    for _ in range(repetitions):
        for name, measure in candidates.items():
            samples[name].append(measure())
    return samples
