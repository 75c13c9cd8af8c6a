"""validate_failure_kind on each of its paths, against a bare set lookup and a straightforward
implementation of the spec, timed in the same process, interleaved."""

from __future__ import annotations

import functools
import json
import logging
import os
import random
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from common import Goal, Row, interleaved, median, paired_ratio, per_call, spread

import failure_kinds
from failure_kinds import FAILURE_KINDS, declare_namespace, validate_failure_kind

PATHS = {
    "registered": "transport_timeout",
    "member": failure_kinds.FailureKind.TRANSPORT_TIMEOUT,
    "namespaced": "my_env:quota_hit",
    "declared": "swe_env:patch_apply_failed",
    "reported": "judge_faild",
    "None": None,
}
# The ceiling on validate_failure_kind over the bare lookup, per path. A declared kind must cost what a
# registered one does: declaring a namespace buys checking, not a slower hot path.
BARE_GOALS = {
    "registered": 1.4,
    "member": 1.5,
    "namespaced": 1.8,
    "declared": 1.4,
    "reported": 2.0,
    "None": 1.3,
}
# How much faster than the straightforward implementation the cached paths must be.
STRAIGHTFORWARD_GOALS = {"namespaced": 3.0, "reported": 3.0}


# The server and kinds measure() declares, as an environment does at import.
DECLARED_SERVER, DECLARED_KINDS = "swe_env", ("patch_apply_failed", "test_collection_error")
# What the bare function accepts: the vocabulary and those declared kinds, so that it gives every path the
# answer ours does. Over the vocabulary alone a declared value would miss, and a miss costs less than a
# hit, which compares the text (a value is never the object its kind was declared as).
ACCEPTED = FAILURE_KINDS | {f"{DECLARED_SERVER}:{kind}" for kind in DECLARED_KINDS}


def bare(name: object) -> object:
    # The membership test is the point: this is the cheapest validator anyone could write.
    return name if name in ACCEPTED else name  # noqa: RUF034


_pattern = re.compile(r"[a-z][a-z0-9_]*:[a-z][a-z0-9_]*")
_warned: set[object] = set()
_logger = logging.getLogger("straightforward")


def straightforward(name: object) -> object:
    """The spec read literally: one fullmatch per call, an unbounded set of reported values."""
    if name is None or name in FAILURE_KINDS:
        return name
    if isinstance(name, str) and _pattern.fullmatch(name):
        return name
    if name not in _warned:
        _warned.add(name)
        _logger.warning("unregistered failure kind %r", name)
    return name


def measure(quick: bool) -> list[Row]:
    number = 20_000 if quick else 400_000
    repetitions = 3 if quick else 15
    logging.getLogger("failure_kinds").disabled = True
    _logger.disabled = True
    rows: list[Row] = []
    # As an environment does at import: its server's other kinds are now checked, not waved through.
    declare_namespace(DECLARED_SERVER, DECLARED_KINDS)
    for path, value in PATHS.items():
        # Warm every cache the way a running producer has: the value was seen before.
        for function in (validate_failure_kind, straightforward):
            function(value)
        samples = interleaved(
            {
                "ours": per_call(validate_failure_kind, value, number),
                "bare": per_call(bare, value, number),
                "straightforward": per_call(straightforward, value, number),
            },
            repetitions,
        )
        ours, base = median(samples["ours"]), median(samples["bare"])
        rows.append(
            Row(
                name=f"validate_failure_kind, {path}",
                measured=f"{ours * 1e9:.1f} ns",
                baseline=f"{base * 1e9:.1f} ns bare lookup",
                ratio=paired_ratio(samples["ours"], samples["bare"]),
                spread=spread(samples["ours"], 1e9, "ns"),
                goal=Goal(at_most=BARE_GOALS[path]),
            )
        )
        if path in STRAIGHTFORWARD_GOALS:
            slow = median(samples["straightforward"])
            rows.append(
                Row(
                    name=f"  speed-up over straightforward, {path}",
                    measured=f"{ours * 1e9:.1f} ns",
                    baseline=f"{slow * 1e9:.1f} ns straightforward",
                    ratio=paired_ratio(samples["straightforward"], samples["ours"]),
                    spread=spread(samples["straightforward"], 1e9, "ns"),
                    goal=Goal(at_least=STRAIGHTFORWARD_GOALS[path]),
                )
            )
    assert "judge_faild" in failure_kinds._WARNED_UNKNOWN  # pyright: ignore[reportPrivateUsage]
    return rows + declared_at_scale(quick)


# A project may declare thousands of kinds; suggesting one of them for each distinct undeclared value must
# not cost what comparing the value with every one of them would. The audit and check of the same input
# with no declarations are the baselines (same run, interleaved). With 2,000 declared kinds both cost about
# what they do with none; with 30,000 the reading of the declaration itself by tomllib is most of what
# they cost, which may grow with it but no faster. A quick run declares a tenth of each, at least 1,000.
DECLARED_GOALS = {2_000: {"audit": 1.3, "check": 1.3}, 30_000: {"audit": 2.5, "check": 4.0}}
WORDS = [
    *("alpha", "beta", "gamma", "delta", "patch", "apply", "test", "collect", "quota", "region", "shard"),
    *("index", "cache", "disk", "net", "pool"),
]


def cpu_finished(command: Sequence[str], stdin: Path | None = None) -> float:
    """CPU seconds of one fresh process of ``command``; exit 1 (findings) counts as finished."""
    with open(stdin if stdin is not None else os.devnull, "rb") as source:
        process = subprocess.Popen(command, stdin=source, stdout=subprocess.DEVNULL)
        _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise RuntimeError(f"{list(command)} exited with status {status}")
    return usage.ru_utime + usage.ru_stime


def declared_at_scale(quick: bool) -> list[Row]:
    rows: list[Row] = []
    for count, goals in DECLARED_GOALS.items():
        rows += declared_rows(max(count // 10, 1_000) if quick else count, goals, quick)
    return rows


def declared_rows(count: int, goals: dict[str, float], quick: bool) -> list[Row]:
    records = 20_000 if quick else 200_000
    repetitions = 2 if quick else 7
    chosen = random.Random(16)
    kinds: set[str] = set()
    while len(kinds) < count:
        kinds.add("_".join(chosen.sample(WORDS, 2)) + f"_{chosen.randrange(1000)}")
    # Each distinct value is a declared kind with one letter changed: undeclared, with a close suggestion.
    values = [
        f"swe_env:{kind[:8]}{'y' if kind[8] == 'x' else 'x'}{kind[9:]}"
        for kind in chosen.sample(sorted(kinds), 300)
    ]
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        declared, empty = root / "declared.toml", root / "empty.toml"
        declared.write_text(f"[namespaces]\nswe_env = {json.dumps(sorted(kinds))}\n", encoding="utf-8")
        empty.write_text("", encoding="utf-8")
        log, names = root / "rollouts.jsonl", root / "names.txt"
        # A log of a day's shard, so that what is measured is the audit and its suggestions rather than the
        # fixed cost of reading the configuration.
        log.write_text(
            "".join(json.dumps({"failure_kind": values[index % 300]}) + "\n" for index in range(records))
        )
        names.write_text("\n".join(values[:100]) + "\n", encoding="utf-8")
        command = [sys.executable, "-m", "failure_kinds"]
        runs: dict[str, Callable[[], float]] = {}
        for config in (declared, empty):
            audit = [*command, "audit", str(log), "--jobs", "1", "--config", str(config)]
            check = [*command, "check", "-", "--config", str(config)]
            runs[f"audit {config.stem}"] = functools.partial(cpu_finished, audit)
            runs[f"check {config.stem}"] = functools.partial(cpu_finished, check, names)
        samples = interleaved(runs, repetitions)
    rows: list[Row] = []
    for job, what in (
        ("audit", f"an audit of {records:,} records, 300 distinct values"),
        ("check", "check - of 100 names"),
    ):
        ours, base = samples[f"{job} declared"], samples[f"{job} empty"]
        rows.append(
            Row(
                name=f"{job} with {count:,} declared kinds",
                measured=f"{median(ours) * 1e3:.0f} ms CPU",
                baseline=f"{median(base) * 1e3:.0f} ms CPU, {what}, none declared",
                ratio=paired_ratio(ours, base),
                spread=spread(ours, 1e3, "ms"),
                goal=Goal(at_most=goals[job]),
            )
        )
    return rows
