"""tests/typing/ checked by mypy --strict and pyright (strict) against the installed wheel.

pass_*.py must be clean. In fail_*.py, every line marked `# expect-error` must be reported by each
checker, and nothing else may be reported.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import WheelInstall, readme_recipes

CASES = Path(__file__).parent / "typing"
VERSIONS = ["3.11", "3.12", "3.13"]
CHECKERS = ["mypy", "pyright"]
MARKER = re.compile(r"#\s*expect-error\s*$")

Reported = set[tuple[str, int]]


def expected_lines() -> Reported:
    expected: Reported = set()
    for path in sorted(CASES.glob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if MARKER.search(line):
                assert path.name.startswith("fail_"), f"{path.name}:{number} marked in a pass file"
                expected.add((path.name, number))
    return expected


def test_readme_recipes_are_found() -> None:
    assert set(readme_recipes()) == {"pydantic", "dataclass", "typeddict"}


def run_mypy(cases: Path, python: Path, version: str) -> Reported:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--python-version",
            version,
            "--python-executable",
            str(python),
            "--config-file",
            str(cases / "empty.ini"),
            "--cache-dir",
            str(cases / f".mypy_cache_{version}"),
            "--no-error-summary",
            "--show-error-codes",
            *sorted(path.name for path in cases.glob("*.py")),
        ],
        cwd=cases,
        capture_output=True,
        text=True,
    )
    assert result.returncode in (0, 1), result.stdout + result.stderr
    reported: Reported = set()
    for line in result.stdout.splitlines():
        found = re.match(r"(?P<file>[^:]+\.py):(?P<line>\d+): error:", line)
        if found:
            reported.add((Path(found["file"]).name, int(found["line"])))
    return reported


def run_pyright(cases: Path, python: Path, version: str) -> Reported:
    config = cases / f"pyright_{version}.json"
    config.write_text(
        json.dumps(
            {
                "include": [str(path) for path in sorted(cases.glob("*.py"))],
                "typeCheckingMode": "strict",
                "pythonVersion": version,
            }
        )
    )
    pyright = Path(sys.executable).parent / "pyright"
    result = subprocess.run(
        [str(pyright), "--outputjson", "--project", str(config), "--pythonpath", str(python)],
        cwd=cases,
        capture_output=True,
        text=True,
    )
    assert result.returncode in (0, 1), result.stdout + result.stderr
    report = json.loads(result.stdout)
    return {
        (Path(diagnostic["file"]).name, diagnostic["range"]["start"]["line"] + 1)
        for diagnostic in report["generalDiagnostics"]
        if diagnostic["severity"] == "error"
    }


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # A copy, checked from a folder with no project configuration, so nothing in this repository
    # (mypy.ini, stubs/, the editable install) can stand in for what the wheel provides.
    folder = tmp_path_factory.mktemp("typing_cases")
    for path in CASES.glob("*.py"):
        shutil.copy(path, folder / path.name)
    # The README's recipes must type-check cleanly too.
    for name, code in readme_recipes().items():
        (folder / f"pass_readme_{name}.py").write_text(code, encoding="utf-8")
    (folder / "empty.ini").write_text("[mypy]\n")
    return folder


def test_case_files_exist_on_both_sides() -> None:
    names = [path.name for path in CASES.glob("*.py")]
    assert any(name.startswith("pass_") for name in names)
    assert len(expected_lines()) >= 10


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("checker", CHECKERS)
def test_checker_reports_exactly_the_marked_lines(
    cases: Path, wheel_install: WheelInstall, checker: str, version: str
) -> None:
    run = run_mypy if checker == "mypy" else run_pyright
    reported = run(cases, wheel_install.python, version)
    expected = expected_lines()
    assert sorted(reported - expected) == [], "reported but not marked"
    assert sorted(expected - reported) == [], "marked but not reported"
