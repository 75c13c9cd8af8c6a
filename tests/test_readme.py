"""The README's recipes run as written, and say truly what the log and the type checker print.

In a recipe, a comment `# logs: TEXT` is a line the recipe writes to stderr when it runs (nothing else may
be written there), and `#   error: TEXT` right after a commented-out call is the error mypy reports
for that call once it is uncommented (`...` ends a shortened message).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, readme_recipes

LOGGED = re.compile(r"^# logs: (?P<line>.*)$", flags=re.MULTILINE)
CHECKED = re.compile(
    r"^# (?P<code>\w+\(.*\)) .*\n#   error: (?P<message>.*)$",
    flags=re.MULTILINE,
)


@pytest.mark.parametrize("name", sorted(readme_recipes()))
def test_recipe_runs(name: str) -> None:
    code = readme_recipes()[name]
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == LOGGED.findall(code)


def test_first_recipe_shows_a_log_line_and_a_checker_error() -> None:
    code = readme_recipes()["first_use"]
    assert LOGGED.findall(code)
    assert CHECKED.findall(code)


def mypy_errors(code: str, folder: Path) -> list[str]:
    """mypy's errors for `code`, checked as users' code is: against the stub in stubs/."""
    source = folder / "recipe.py"
    source.write_text(code, encoding="utf-8")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "mypy.ini"),
            "--cache-dir",
            str(folder / ".mypy_cache"),
            "--no-error-summary",
            "--hide-error-codes",
            str(source),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode in (0, 1), result.stdout + result.stderr
    return [line.split(": error: ", 1)[1] for line in result.stdout.splitlines() if ": error: " in line]


@pytest.mark.parametrize("name", sorted(readme_recipes()))
def test_recipe_shows_what_mypy_says(name: str, tmp_path: Path) -> None:
    code = readme_recipes()[name]
    assert mypy_errors(code, tmp_path) == []
    for found in CHECKED.finditer(code):
        # The rejected call, uncommented, at the end of the recipe: mypy must report exactly the shown error.
        errors = mypy_errors(code + found["code"] + "\n", tmp_path)
        shown = found["message"]
        assert len(errors) == 1, errors
        if shown.endswith("..."):
            assert errors[0].startswith(shown.removesuffix("...").rstrip()), errors[0]
        else:
            assert errors[0] == shown
