"""tests/typing/ checked by five type checkers against the package installed from its wheel.

pass_*.py must be clean in every checker. In fail_*.py each mistake carries a marker naming the checkers
that must report its line:

    # expect-error                         every checker
    # expect-error: mypy pyright basedpyright   exactly these; the others must stay silent
    # expect-error: none                   no checker sees it (the lint, audit or runtime must)

Each checker must report exactly the lines marked for it, nothing more and nothing less, so a marker is
both a promise and an admission. Every checker runs once on the whole case folder, with the Python
version of the interpreter running the tests (`make test` runs them on 3.11, 3.12 and 3.13).

The README's table of which tool catches which mistake is derived from the same runs (and from
`failure-kinds lint` on the same files) and compared with what the README says.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import WheelInstall, readme_recipes

CASES = Path(__file__).parent / "typing"
CHECKERS = ("mypy", "pyright", "basedpyright", "pyrefly", "ty")
VERSION = f"{sys.version_info.major}.{sys.version_info.minor}"
MARKER = re.compile(r"#\s*expect-error(?::(?P<checkers>[^#]*))?\s*$")
BIN = Path(sys.executable).parent

# The project the declared-namespace cases use: `failure-kinds generate` writes declared_kinds.py from it.
DECLARATION = """\
[tool.failure-kinds.namespaces]
swe_env = ["patch_apply_failed", "test_collection_error"]
"""
DECLARED_MODULE = "declared_kinds.py"

# What each checker needs to see the mistakes in the table; the README's configuration table says the same.
MYPY_OPTIONS = ("--strict", "--warn-unreachable")
PYRIGHT_MODE = "strict"
PYREFLY_OPTIONS = ("--preset", "strict", "--error", "unreachable-match-case")

Line = tuple[str, int]


def markers() -> dict[Line, frozenset[str]]:
    """Every marked line of the case files, with the checkers that must report it."""
    marked: dict[Line, frozenset[str]] = {}
    for path in sorted(CASES.glob("*.py")):
        for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            found = MARKER.search(text)
            if found is None:
                continue
            assert path.name.startswith("fail_"), f"{path.name}:{number} marked in a pass file"
            named = (found["checkers"] or "").split()
            if found["checkers"] is None:
                checkers = frozenset(CHECKERS)
            elif named == ["none"]:
                checkers = frozenset()
            else:
                unknown = set(named) - set(CHECKERS)
                assert named, f"{path.name}:{number}: expect-error: names no checker"
                assert not unknown, f"{path.name}:{number}: unknown checkers {sorted(unknown)}"
                checkers = frozenset(named)
            marked[(path.name, number)] = checkers
    return marked


def expected_for(checker: str) -> set[Line]:
    return {line for line, checkers in markers().items() if checker in checkers}


def test_markers_are_well_formed() -> None:
    marked = markers()
    names = {path.name for path in CASES.glob("*.py")}
    assert any(name.startswith("pass_") for name in names)
    # Every fail file holds code some checker must reject, and every checker rejects something.
    for name in sorted(name for name in names if name.startswith("fail_")):
        assert any(line[0] == name for line in marked), f"{name} has no marked line"
    for checker in CHECKERS:
        assert len(expected_for(checker)) >= 10, checker


def test_readme_recipes_are_found() -> None:
    assert set(readme_recipes()) == {"first_use", "pydantic", "dataclass", "typeddict"}


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory, wheel_install: WheelInstall) -> Path:
    # A copy, checked from a folder with no project configuration, so nothing in this repository
    # (mypy.ini, stubs/, the editable install) can stand in for what the wheel provides.
    folder = tmp_path_factory.mktemp("typing_cases")
    for path in CASES.glob("*.py"):
        shutil.copy(path, folder / path.name)
    # The README's recipes must type-check cleanly too.
    for name, code in readme_recipes().items():
        (folder / f"pass_readme_{name}.py").write_text(code, encoding="utf-8")
    # The declared-namespace cases import the module the installed command generates.
    declaration = folder / "declaration"
    declaration.mkdir()
    (declaration / "pyproject.toml").write_text(DECLARATION, encoding="utf-8")
    subprocess.run(
        [
            str(wheel_install.python),
            "-m",
            "failure_kinds",
            "generate",
            "--config",
            str(declaration / "pyproject.toml"),
            "--output",
            str(folder / DECLARED_MODULE),
        ],
        check=True,
        capture_output=True,
    )
    (folder / "empty.ini").write_text("[mypy]\n")
    return folder


def python_files(cases: Path) -> list[str]:
    return sorted(path.name for path in cases.glob("*.py"))


def run(command: list[str], cases: Path) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(command, cwd=cases, capture_output=True, text=True)
    # 0 clean, 1 errors found; anything else means the checker itself failed.
    assert result.returncode in (0, 1), f"{command[0]}: {result.stdout[-3000:]}{result.stderr[-3000:]}"
    return result


def run_mypy(cases: Path, python: Path, *options: str) -> set[Line]:
    result = run(
        [
            str(BIN / "mypy"),
            *options,
            "--python-version",
            VERSION,
            "--python-executable",
            str(python),
            "--config-file",
            "empty.ini",
            "--cache-dir",
            str(cases / ".mypy_cache"),
            "--no-error-summary",
            "--show-error-codes",
            *python_files(cases),
        ],
        cases,
    )
    reported: set[Line] = set()
    for line in result.stdout.splitlines():
        found = re.match(r"(?P<file>[^:]+\.py):(?P<line>\d+): error:", line)
        if found:
            reported.add((Path(found["file"]).name, int(found["line"])))
    return reported


def run_pyright_family(program: str, cases: Path, python: Path, mode: str) -> set[Line]:
    config = cases / f"{program}.json"
    config.write_text(
        json.dumps(
            {
                "include": [str(cases / name) for name in python_files(cases)],
                "typeCheckingMode": mode,
                "pythonVersion": VERSION,
            }
        )
    )
    result = run(
        [str(BIN / program), "--outputjson", "--project", str(config), "--pythonpath", str(python)], cases
    )
    report = json.loads(result.stdout)
    return {
        (Path(diagnostic["file"]).name, diagnostic["range"]["start"]["line"] + 1)
        for diagnostic in report["generalDiagnostics"]
        if diagnostic["severity"] == "error"
    }


def run_pyrefly(cases: Path, python: Path, *options: str) -> set[Line]:
    result = run(
        [
            str(BIN / "pyrefly"),
            "check",
            *options,
            "--python-version",
            VERSION,
            "--python-interpreter-path",
            str(python),
            "--output-format",
            "json",
            "--summary=none",
            "--progress-bar",
            "no",
            *python_files(cases),
        ],
        cases,
    )
    return {
        (Path(error["path"]).name, error["line"])
        for error in json.loads(result.stdout)["errors"]
        if error["severity"] == "error"
    }


def run_ty(cases: Path, python: Path) -> set[Line]:
    result = run(
        [
            str(BIN / "ty"),
            "check",
            "--python",
            str(python),
            "--python-version",
            VERSION,
            "--output-format",
            "concise",
            "--no-progress",
            "--color",
            "never",
            *python_files(cases),
        ],
        cases,
    )
    reported: set[Line] = set()
    for line in result.stdout.splitlines():
        found = re.match(r"(?P<file>[^:]+\.py):(?P<line>\d+):\d+: error\[", line)
        if found:
            reported.add((Path(found["file"]).name, int(found["line"])))
    return reported


RUNNERS: dict[str, Callable[[Path, Path], set[Line]]] = {
    "mypy": lambda cases, python: run_mypy(cases, python, *MYPY_OPTIONS),
    "pyright": lambda cases, python: run_pyright_family("pyright", cases, python, PYRIGHT_MODE),
    "basedpyright": lambda cases, python: run_pyright_family("basedpyright", cases, python, PYRIGHT_MODE),
    "pyrefly": lambda cases, python: run_pyrefly(cases, python, *PYREFLY_OPTIONS),
    "ty": run_ty,
}


@pytest.fixture(scope="module")
def reports(cases: Path, wheel_install: WheelInstall) -> dict[str, set[Line]]:
    """What each checker reports on the case folder: each runs once, two at a time."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {
            checker: pool.submit(RUNNERS[checker], cases, wheel_install.python) for checker in CHECKERS
        }
        return {checker: future.result() for checker, future in futures.items()}


@pytest.mark.parametrize("checker", CHECKERS)
def test_checker_reports_exactly_the_marked_lines(reports: dict[str, set[Line]], checker: str) -> None:
    reported = reports[checker]
    expected = expected_for(checker)
    assert sorted(reported - expected) == [], "reported but not marked"
    assert sorted(expected - reported) == [], "marked but not reported"
