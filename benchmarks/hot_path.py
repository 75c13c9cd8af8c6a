"""validate_failure_kind on each of its paths, against a bare set lookup and a straightforward
implementation of the spec, timed in the same process, interleaved."""

from __future__ import annotations

import logging
import re

from common import Goal, Row, interleaved, median, per_call, spread

import failure_kinds
from failure_kinds import FAILURE_KINDS, declare_namespace, validate_failure_kind

PATHS = {
    "registered": "transport_timeout",
    "namespaced": "my_env:quota_hit",
    "declared": "swe_env:patch_apply_failed",
    "reported": "judge_faild",
    "None": None,
}
# The ceiling on validate_failure_kind over the bare lookup, per path. A declared kind must cost what a
# registered one does: declaring a namespace buys checking, not a slower hot path.
BARE_GOALS = {"registered": 1.3, "namespaced": 1.8, "declared": 1.3, "reported": 1.8, "None": 1.3}
# How much faster than the straightforward implementation the cached paths must be.
STRAIGHTFORWARD_GOALS = {"namespaced": 3.0, "reported": 3.0}


def bare(name: object) -> object:
    # The membership test is the point: this is the cheapest validator anyone could write.
    return name if name in FAILURE_KINDS else name  # noqa: RUF034


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
    declare_namespace("swe_env", ["patch_apply_failed", "test_collection_error"])
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
                ratio=ours / base,
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
                    ratio=slow / ours,
                    spread=spread(samples["straightforward"], 1e9, "ns"),
                    goal=Goal(at_least=STRAIGHTFORWARD_GOALS[path]),
                )
            )
    assert "judge_faild" in failure_kinds._WARNED_UNKNOWN  # pyright: ignore[reportPrivateUsage]
    return rows
