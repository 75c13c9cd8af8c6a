"""What a fresh process pays: `import failure_kinds` against the standard modules it needs, and the
command's --help against an empty interpreter."""

from __future__ import annotations

import json
import subprocess
import sys

from common import Goal, Row, cpu_process, interleaved, median, paired_ratio, spread

# Modules that must not load with `import failure_kinds`: the command and its helpers are lazy, and so
# are suggestions and the display of values, which only a warning needs.
FORBIDDEN = {
    *("argparse", "ast", "difflib", "gzip", "json", "pydantic", "reprlib", "tomllib", "typing"),
    *("failure_kinds.cli", "failure_kinds._display", "failure_kinds._suggest"),
}
# The import may cost only a little more than the standard modules it needs: a fixed budget set on this
# machine on 2026-11-30 (benchmarks/README.md), held as its ratio to their import then, as every other goal
# is held against its same-run baseline. On the same machine running slower every import takes longer,
# and a fixed budget in seconds would count the machine's slowness against the package.
IMPORT_GOAL = 1 + 0.001 / 0.0085


IMPORT_PROBE = """
import time
start = time.process_time()
import {modules}
print(time.process_time() - start)
"""


def import_seconds(modules: str) -> float:
    """CPU seconds that ``import modules`` takes in a fresh interpreter. CPU time, not wall-clock: the
    wait for a core that other work on a shared machine holds is not the import's cost."""
    result = subprocess.run(
        [sys.executable, "-I", "-c", IMPORT_PROBE.format(modules=modules)],
        capture_output=True,
        text=True,
        check=True,
    )
    return float(result.stdout)


LOADED_PROBE = """
import json, sys
before = set(sys.modules)
import failure_kinds
print(json.dumps(sorted(set(sys.modules) - before)))
"""


def loaded_modules() -> set[str]:
    """Modules that `import failure_kinds` adds to a fresh interpreter."""
    result = subprocess.run(
        [sys.executable, "-I", "-c", LOADED_PROBE], capture_output=True, text=True, check=True
    )
    return set(json.loads(result.stdout))


def measure(quick: bool) -> list[Row]:
    repetitions = 5 if quick else 31
    # Interleaved, and each sample the fastest of several fresh processes (see common.interleaved): an
    # import takes a few milliseconds, which one preemption on a shared machine can double.
    imports = interleaved(
        {
            "ours": lambda: import_seconds("failure_kinds"),
            "base": lambda: import_seconds("enum, logging, re"),
        },
        repetitions,
    )
    ours, base = imports["ours"], imports["base"]
    extra = median(ours) - median(base)
    forbidden = sorted(loaded_modules() & FORBIDDEN)
    runs = interleaved(
        {
            "help": lambda: cpu_process([sys.executable, "-m", "failure_kinds", "--help"]),
            "pass": lambda: cpu_process([sys.executable, "-c", "pass"]),
        },
        repetitions,
    )
    help_samples, pass_samples = runs["help"], runs["pass"]
    return [
        Row(
            name="import failure_kinds",
            measured=f"{median(ours) * 1e3:.2f} ms (+{extra * 1e3:.2f} ms)",
            baseline=f"{median(base) * 1e3:.2f} ms import enum, logging, re",
            ratio=paired_ratio(ours, base),
            spread=spread(ours, 1e3, "ms"),
            goal=Goal(at_most=IMPORT_GOAL),
        ),
        Row(
            name="  heavy modules loaded by the import",
            measured=", ".join(forbidden) or "none",
            baseline="none of " + ", ".join(sorted(FORBIDDEN)),
            ratio=float(len(forbidden)),
            spread="",
            goal=Goal(at_most=0),
        ),
        Row(
            name="failure-kinds --help",
            measured=f"{median(help_samples) * 1e3:.1f} ms CPU",
            baseline=f"{median(pass_samples) * 1e3:.1f} ms CPU python -c pass",
            ratio=median(help_samples) / median(pass_samples),
            spread=spread(help_samples, 1e3, "ms"),
            goal=Goal(),
        ),
    ]
