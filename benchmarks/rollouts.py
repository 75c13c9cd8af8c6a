"""Realistic rollout result rows, a few hundred bytes to a kilobyte each, for the audit benchmark."""

from __future__ import annotations

import json
import random
from pathlib import Path

from failure_kinds import FailureKind

EXTRA_KINDS = ["swe_env:patch_apply_failed", "web_env:page_load_failed", "timeout_exceeded", "transient"]
TYPOS = ["transport_timout", "verifer_error", "Judge-Failed"]
WORDS = [
    "the",
    "agent",
    "called",
    "the",
    "tool",
    "with",
    "a",
    "malformed",
    "argument",
    "and",
    "the",
    "sandbox",
    "returned",
    "an",
    "error",
]


def row(random_source: random.Random, index: int) -> dict[str, object]:
    draw = random_source.random()
    if draw < 0.25:
        kind: str | None = None
    elif draw < 0.85:
        kind = random_source.choice(list(FailureKind)).value
    elif draw < 0.97:
        kind = random_source.choice(EXTRA_KINDS)
    else:
        kind = random_source.choice(TYPOS)
    reason_words = random_source.randint(10, 120)
    return {
        "rollout_id": f"ro-{index:09d}",
        "task_id": f"task-{random_source.randint(0, 50_000):06d}",
        "environment": random_source.choice(["swe_bench_lite", "webshop", "math_verify"]),
        "model": "policy-7b-step-1200",
        "started_at": f"2026-11-28T10:{index // 60 % 60:02d}:{index % 60:02d}Z",
        "duration_s": round(random_source.uniform(1, 900), 3),
        "reward": None if kind else random_source.choice([0.0, 1.0]),
        "usage": {
            "prompt_tokens": random_source.randint(100, 9000),
            "completion_tokens": random_source.randint(5, 4000),
        },
        "turns": random_source.randint(1, 50),
        "failure_kind": kind,
        "failure_reason": " ".join(random_source.choice(WORDS) for _ in range(reason_words))
        if kind
        else None,
    }


def write(path: Path, lines: int, seed: int = 7) -> Path:
    random_source = random.Random(seed)
    with path.open("w", encoding="utf-8") as file:
        for index in range(lines):
            file.write(json.dumps(row(random_source, index)) + "\n")
    return path
