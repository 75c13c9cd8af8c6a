"""The documented worked example of a declared namespace: each command it shows, run in examples/swe_env,
prints exactly what the page says, and the generated module there is the declaration's."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT, commands_shown, needs
from helpers import command as command_line

EXAMPLE = ROOT / "examples" / "swe_env"
BLOCK = re.compile(
    r"<!-- worked example: [^\n]*-->\n```\n(?P<body>.*?)```\n<!-- end of worked example -->", re.S
)
# Each shown program, in order, and the exit code it earns: the misspelling is a finding for all but the
# up-to-date check, and the producer still runs (it only logs).
PROGRAMS = {
    "failure-kinds generate": 0,
    "mypy swe_env": 1,
    "failure-kinds lint": 1,
    "failure-kinds check": 1,
    "failure-kinds audit": 1,
    "python -c": 0,
}


def shown_commands() -> list[tuple[str, str]]:
    """(command, output) pairs of the worked example, in order."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]
    blocks = [found for page in pages if (found := BLOCK.search(page.read_text(encoding="utf-8")))]
    assert len(blocks) == 1, "exactly one page shows the worked example"
    return [(command, output.rstrip("\n") + "\n") for command, output in commands_shown(blocks[0]["body"])]


def test_the_example_shows_every_tool() -> None:
    assert [" ".join(shlex.split(command)[:2]) for command, _ in shown_commands()] == list(PROGRAMS)


CASES = [
    pytest.param(command, output, marks=[needs("mypy")] if command.startswith("mypy") else [])
    for command, output in shown_commands()
]


@pytest.mark.parametrize(("command", "output"), CASES, ids=lambda value: value.split(" ")[0][:20])
def test_command_prints_what_the_readme_shows(command: str, output: str, tmp_path: Path) -> None:
    program, *arguments = shlex.split(command)
    argv = {
        "failure-kinds": command_line(*arguments),
        # Checked as a user's code is, against the package's stub (which the wheel ships beside it).
        "mypy": [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "mypy_cache"), *arguments],
        "python": [sys.executable, *arguments],
    }[program]
    environment = {
        **os.environ,
        **{"PYTHONIOENCODING": "utf-8", "PYTHONDONTWRITEBYTECODE": "1", "MYPYPATH": str(ROOT / "stubs")},
        **{"COLUMNS": "200", "NO_COLOR": "1", "MYPY_FORCE_COLOR": "0"},
    }
    result = subprocess.run(argv, cwd=EXAMPLE, capture_output=True, text=True, env=environment, timeout=300)
    assert result.stdout + result.stderr == output
    assert result.returncode == PROGRAMS[" ".join([program, *arguments][:2])]


def test_the_generated_module_is_current_and_declares_at_import() -> None:
    from failure_kinds.codegen import render_module
    from failure_kinds.config import load_config

    config = load_config(start=EXAMPLE)
    assert config.namespaces == {"swe_env": ("patch_apply_failed", "test_collection_error")}
    assert config.generate_path is not None
    assert config.generate_path.read_text(encoding="utf-8") == render_module(config)
    probe = (
        "import failure_kinds as fk, swe_env.failure_kinds_declared as declared;"
        "print(fk.metric_label('swe_env:test_colection_error'),"
        " fk.metric_label(declared.SWE_ENV_PATCH_APPLY_FAILED))"
    )
    environment = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=EXAMPLE, capture_output=True, text=True, env=environment
    )
    assert (result.returncode, result.stdout) == (0, "_other swe_env:patch_apply_failed\n"), result.stderr
