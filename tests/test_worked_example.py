"""The documented worked example of a declared namespace: each command it shows, run in examples/swe_env,
prints exactly what the page says, and the generated module there is the one the declaration gives."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT, needs
from helpers import command as command_line

EXAMPLE = ROOT / "examples" / "swe_env"
BLOCK = re.compile(
    r"<!-- worked example: [^\n]*-->\n```\n(?P<body>.*?)```\n<!-- end of worked example -->", flags=re.DOTALL
)
# The exit code each command earns: the misspelling is a finding for all but the up-to-date check, and
# the producer still runs (it only logs).
EXIT_CODES = {
    "failure-kinds generate": 0,
    "mypy": 1,
    "failure-kinds lint": 1,
    "failure-kinds check": 1,
    "failure-kinds audit": 1,
    "python": 0,
}


def shown_commands() -> list[tuple[str, str]]:
    """(command, output) pairs of the worked example (in the docs, or the README before them), in order."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]
    blocks = [found for page in pages if (found := BLOCK.search(page.read_text(encoding="utf-8")))]
    assert len(blocks) == 1, "exactly one page shows the worked example"
    (found,) = blocks
    pairs: list[tuple[str, str]] = []
    for chunk in ("\n" + found["body"]).split("\n$ ")[1:]:
        command, _, output = chunk.partition("\n")
        pairs.append((command, output.rstrip("\n") + "\n"))
    return pairs


def test_the_example_shows_every_tool() -> None:
    programs = [" ".join(shlex.split(command)[:2]) for command, _ in shown_commands()]
    assert programs == [
        "failure-kinds generate",
        "mypy swe_env",
        "failure-kinds lint",
        "failure-kinds check",
        "failure-kinds audit",
        "python -c",
    ]


def cases() -> list[object]:
    """Each shown command, the mypy one marked to skip without mypy (a development extra)."""
    return [
        pytest.param(command, output, marks=[needs("mypy")] if command.startswith("mypy") else [])
        for command, output in shown_commands()
    ]


@pytest.mark.parametrize(("command", "output"), cases(), ids=lambda value: value.split(" ")[0][:20])
def test_command_prints_what_the_readme_shows(command: str, output: str, tmp_path: Path) -> None:
    arguments = shlex.split(command)
    program = arguments.pop(0)
    if program == "failure-kinds":
        argv = command_line(*arguments)
    elif program == "mypy":
        # Checked as a user's code is, against the package's stub (which the wheel ships beside it).
        argv = [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "mypy_cache"), *arguments]
    else:
        assert program == "python"
        argv = [sys.executable, *arguments]
    environment = {
        **os.environ,
        "PYTHONIOENCODING": "utf-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "MYPYPATH": str(ROOT / "stubs"),
        "COLUMNS": "200",
        "NO_COLOR": "1",
        "MYPY_FORCE_COLOR": "0",
    }
    result = subprocess.run(argv, cwd=EXAMPLE, capture_output=True, text=True, env=environment, timeout=300)
    assert result.stdout + result.stderr == output
    key = program if program in ("mypy", "python") else f"{program} {arguments[0]}"
    assert result.returncode == EXIT_CODES[key]


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
    result = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=EXAMPLE,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert (result.returncode, result.stdout) == (0, "_other swe_env:patch_apply_failed\n"), result.stderr
