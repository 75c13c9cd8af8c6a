"""make test on a machine with some of the supported Pythons, and the benchmarks' smoke run it ends with."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT

MAKE = shutil.which("make")
pytestmark = [pytest.mark.interpreter_independent, pytest.mark.skipif(MAKE is None, reason="needs make")]


def make(tmp_path: Path, on_path: list[str], in_pyenv: list[str], *arguments: str, **variables: str) -> str:
    """`make ARGUMENTS`'s exit status and output, with only sed, date and the given pythonX.Y on PATH and a
    pyenv that knows the versions `in_pyenv`, when there are any."""
    bin_folder = tmp_path / "bin"
    bin_folder.mkdir()
    for tool in ("sed", "date"):
        (bin_folder / tool).symlink_to(shutil.which(tool) or tool)
    programs = [bin_folder / f"python{version}" for version in on_path]
    lines = ['#!/bin/sh\ncase "$1 $2" in', f'  "root "*) echo "{tmp_path}";;']
    for version in in_pyenv:
        programs.append(tmp_path / "versions" / f"{version}.1" / "bin" / f"python{version}")
        lines.append(f'  "latest {version}") echo "{version}.1";;')
    for program in programs:
        program.parent.mkdir(parents=True, exist_ok=True)
        program.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    if in_pyenv:
        programs.append(bin_folder / "pyenv")
        programs[-1].write_text("\n".join([*lines, "  *) exit 1;;", "esac", ""]), encoding="utf-8")
    for program in programs:
        program.chmod(0o755)
    # No MAKEFLAGS: under make test it carries the outer make's jobserver.
    environment = {"PATH": str(bin_folder), "HOME": str(tmp_path), "LC_ALL": "C", **variables}
    command = [str(MAKE), "--no-print-directory", *arguments]
    result = subprocess.run(command, cwd=ROOT, env=environment, capture_output=True, text=True, timeout=120)
    return f"{result.returncode}\n{result.stdout}{result.stderr}"


CASES: dict[str, tuple[list[str], list[str], dict[str, str], int, str]] = {
    "one on PATH": (["3.12"], [], {}, 0, "make test: Python 3.11, 3.13 not found, on PATH or through pyenv:"),
    "one in pyenv": ([], ["3.13"], {}, 0, "testing on 3.13 only"),
    "one missing on CI": (["3.11", "3.12"], [], {"CI": "true"}, 2, "CI=true needs every supported Python"),
    "none": ([], [], {}, 2, "none of Python 3.11, 3.12, 3.13 found, on PATH or through pyenv"),
    "all on CI": (["3.11", "3.12"], ["3.13"], {"CI": "true"}, 0, ""),
}


@pytest.mark.parametrize("case", CASES)
def test_make_test_names_the_missing_pythons_and_goes_on(case: str, tmp_path: Path) -> None:
    on_path, in_pyenv, variables, status, says = CASES[case]
    status_line, output = make(tmp_path, on_path, in_pyenv, "pythons", **variables).split("\n", 1)
    assert status_line == str(status), output
    assert says in output
    # One line names every missing version.
    assert len([line for line in output.splitlines() if "not found" in line]) <= 1


@pytest.mark.parametrize("goal", ["demo", "test"])
def test_without_a_supported_python_make_says_which_it_looked_for_in_one_line(
    goal: str, tmp_path: Path
) -> None:
    status, output = make(tmp_path, [], [], "--dry-run", "--always-make", goal).split("\n", 1)
    assert status == "2", output
    (line,) = output.splitlines()
    assert "none of Python 3.11, 3.12, 3.13 found, on PATH or through pyenv" in line


def test_the_first_python_found_gets_every_tool_and_every_test(tmp_path: Path) -> None:
    status, shown = make(tmp_path, ["3.12", "3.13"], [], "--dry-run", "--always-make", "test").split("\n", 1)
    assert status == "0", shown
    assert ".venv/3.11" not in shown
    assert "--python .venv/3.12/bin/python \\\n\t--upgrade pip --editable '.[dev]'" in shown
    assert "--python .venv/3.13/bin/python \\\n\t--upgrade pip --editable '.[test]'" in shown
    assert "FAILURE_KINDS_NO_SKIPS=1 .venv/3.12/bin/python -m pytest -n 2 --dist loadgroup ||" in shown
    assert ".venv/3.12/bin/mypy --strict src" in shown
    for stage in ("environments", "lint"):  # each stage's time, printed when it ends
        assert f"== {stage} (" in shown


# The quick run's main with suites that measure nothing but give what small inputs give: an infinite
# ratio, a pool that started no worker, a missed goal.
SMOKE_RUN = """
import math, sys
sys.path.insert(0, "benchmarks")
import run
from common import Goal, Row

row = Row("jobs memory", "no worker started", "1.0 MiB on 10 lines", math.inf, "", Goal(at_most=1.15))
run.SUITES = {"hot_path": lambda quick: [row] * 5, "scale": lambda quick: [row]}
run.compile_package = lambda: None
sys.argv = ["run.py", "--quick"]
sys.exit(run.main())
"""


def test_the_benchmarks_smoke_run_says_so_and_shows_no_number() -> None:
    result = subprocess.run(
        [sys.executable, "-c", SMOKE_RUN], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Smoke run of the benchmarks:")
    assert "Ran: hot_path (5 measurements), scale (1 measurement)." in result.stdout
    assert re.search(r"\d\.\d+x|infx|MISSED|\bmet\b|no worker started|MiB", result.stdout) is None


def test_the_benchmarks_readme_says_how_to_run_each_suite_and_shows_the_latest_run_alone() -> None:
    text = (ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8")
    assert re.findall(r"^## (.*)$", text, flags=re.MULTILINE) == [
        *("Running them", "How they measure", "Suites", "Latest full run"),
    ]
    run_py = (ROOT / "benchmarks" / "run.py").read_text(encoding="utf-8")
    suites = re.findall(r'^    "(\w+)": \w+\.measure,$', run_py, flags=re.MULTILINE)
    assert re.findall(r"^\| `(\w+)` \|", text, flags=re.MULTILINE) == suites
    # Each row of the run has its goal and verdict, or is a report without one; no earlier run is told.
    rows = re.findall(r"^\| (?!measurement|-).*\|$", text.split("## Latest full run")[1], flags=re.MULTILINE)
    verdicts = [re.search(r"\| (?:[<>]= [\d.]+x \| (?:met|MISSED)|report +\| -) +\|", row) for row in rows]
    assert len(rows) > 30
    assert all(verdicts), rows
    assert len(re.findall(r"\b20\d\d-\d\d-\d\d\b", text)) == 1
