"""tests/typing/ checked by five type checkers against the package installed from its wheel.

pass_*.py must be clean in every checker. In fail_*.py each mistake carries a marker naming the checkers
that must report its line:

    # expect-error                         every checker
    # expect-error: mypy pyright basedpyright   exactly these; the others must stay silent
    # expect-error: none                   no checker sees it (the lint, audit or runtime must)

Each checker must report exactly the lines marked for it, nothing more and nothing less, so a marker is
both a promise and an admission. Every checker runs once on the whole case folder for each supported
Python version (pyproject.toml's classifiers), given by its own version option: a checker's verdict does
not depend on the interpreter running it, so these tests are marked interpreter_independent and
`make test` runs them on its first Python only.

The table in docs/typing.md of which tool catches which mistake is derived from the same runs (and from
`failure-kinds lint` on the same files) and compared with what the page says, for every version.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata
from pathlib import Path

import pytest
from conftest import ROOT, WheelInstall
from helpers import doc_recipes, needs

CASES = Path(__file__).parent / "typing"
CHECKERS = ("mypy", "pyright", "basedpyright", "pyrefly", "ty")
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
VERSIONS = [
    classifier.rsplit(" :: ", 1)[1]
    for classifier in PYPROJECT["project"]["classifiers"]
    if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", classifier)
]
# Where the documentation says which checker catches what, how to configure them and which versions.
PAGE = ROOT / "docs" / "typing.md"

pytestmark = pytest.mark.interpreter_independent
# The tests that run a checker skip unless all five are installed (extras test and dev).
needs_checkers = needs(*CHECKERS)
MARKER = re.compile(r"#\s*expect-error(?::(?P<checkers>[^#]*))?\s*$")
BIN = Path(sys.executable).parent

# The project the declared-namespace cases use: `failure-kinds generate` writes declared_kinds.py from it.
DECLARATION = """\
[tool.failure-kinds.namespaces]
swe_env = ["patch_apply_failed", "test_collection_error"]
"""
DECLARED_MODULE = "declared_kinds.py"

# The checker configuration the typing page recommends (a pyproject.toml block after this comment line);
# the checkers run with exactly it, so the table holds for a user who copies it.
CONFIGURATION_MARKER = (
    "<!-- checker configuration: tests/test_typing.py runs the checkers with exactly this -->"
)

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


def test_doc_recipes_are_found() -> None:
    assert {"first_use", "pydantic", "dataclass", "typeddict"} <= set(doc_recipes())


def test_every_supported_version_is_checked() -> None:
    assert VERSIONS == ["3.11", "3.12", "3.13"]
    assert PYPROJECT["project"]["requires-python"] == f">={VERSIONS[0]}"


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory, wheel_install: WheelInstall) -> Path:
    # A copy, checked from a folder with no project configuration, so nothing in this repository
    # (mypy.ini, stubs/, the editable install) can stand in for what the wheel provides.
    folder = tmp_path_factory.mktemp("typing_cases")
    for path in CASES.glob("*.py"):
        shutil.copy(path, folder / path.name)
    # The documentation's recipes must type-check cleanly too.
    for name, code in doc_recipes().items():
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
    (folder / "pyproject.toml").write_text(readme_configuration(), encoding="utf-8")
    return folder


def readme_configuration() -> str:
    page = PAGE.read_text(encoding="utf-8")
    found = re.search(re.escape(CONFIGURATION_MARKER) + r"\n```toml\n(.*?)```", page, flags=re.DOTALL)
    assert found, "the typing page shows the checker configuration"
    return found[1]


def python_files(cases: Path) -> list[str]:
    return sorted(path.name for path in cases.glob("*.py"))


def run(command: list[str], cases: Path) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(command, cwd=cases, capture_output=True, text=True)
    # 0 clean, 1 errors found; anything else means the checker itself failed.
    assert result.returncode in (0, 1), f"{command[0]}: {result.stdout[-3000:]}{result.stderr[-3000:]}"
    return result


# Each runner checks `files` in the folder `cases`, whose pyproject.toml (if any) configures it, with the
# installed wheel's environment `python`, as code for Python `version`, and returns the lines it reports
# as errors.


def run_mypy(cases: Path, python: Path, files: list[str], version: str) -> set[Line]:
    configuration = ["--config-file", "pyproject.toml"] if (cases / "pyproject.toml").exists() else []
    result = run(
        [
            str(BIN / "mypy"),
            *configuration,
            "--python-version",
            version,
            "--python-executable",
            str(python),
            "--cache-dir",
            str(cases / ".mypy_cache"),
            "--no-error-summary",
            *files,
        ],
        cases,
    )
    found = (
        re.match(r"(?P<file>[^:]+\.py):(?P<line>\d+): error:", line) for line in result.stdout.splitlines()
    )
    return {(Path(match["file"]).name, int(match["line"])) for match in found if match}


def run_pyright(
    cases: Path, python: Path, files: list[str], version: str, program: str = "pyright"
) -> set[Line]:
    result = run(
        [str(BIN / program), "--outputjson", "--pythonpath", str(python), "--pythonversion", version, *files],
        cases,
    )
    return {
        (Path(diagnostic["file"]).name, diagnostic["range"]["start"]["line"] + 1)
        for diagnostic in json.loads(result.stdout)["generalDiagnostics"]
        if diagnostic["severity"] == "error"
    }


def run_basedpyright(cases: Path, python: Path, files: list[str], version: str) -> set[Line]:
    return run_pyright(cases, python, files, version, program="basedpyright")


def run_pyrefly(cases: Path, python: Path, files: list[str], version: str) -> set[Line]:
    result = run(
        [
            str(BIN / "pyrefly"),
            "check",
            "--python-version",
            version,
            "--python-interpreter-path",
            str(python),
            "--output-format",
            "json",
            "--summary=none",
            "--progress-bar",
            "no",
            *files,
        ],
        cases,
    )
    return {
        (Path(error["path"]).name, error["line"])
        for error in json.loads(result.stdout)["errors"]
        if error["severity"] == "error"
    }


def run_ty(cases: Path, python: Path, files: list[str], version: str) -> set[Line]:
    result = run(
        [
            str(BIN / "ty"),
            "check",
            "--python",
            str(python),
            "--python-version",
            version,
            "--output-format",
            "concise",
            "--no-progress",
            "--color",
            "never",
            *files,
        ],
        cases,
    )
    found = (
        re.match(r"(?P<file>[^:]+\.py):(?P<line>\d+):\d+: error\[", line)
        for line in result.stdout.splitlines()
    )
    return {(Path(match["file"]).name, int(match["line"])) for match in found if match}


RUNNERS: dict[str, Callable[[Path, Path, list[str], str], set[Line]]] = {
    "mypy": run_mypy,
    "pyright": run_pyright,
    "basedpyright": run_basedpyright,
    "pyrefly": run_pyrefly,
    "ty": run_ty,
}


# The tests of one version share one xdist worker, so each version's checkers run once in a run.
BY_VERSION = [
    pytest.param(version, marks=pytest.mark.xdist_group(f"typing-{version}")) for version in VERSIONS
]


@pytest.fixture(scope="module")
def reports_by_version() -> dict[str, dict[str, set[Line]]]:
    """The checkers' reports of the versions asked for so far in this module."""
    return {}


@pytest.fixture
def reports(
    reports_by_version: dict[str, dict[str, set[Line]]],
    cases: Path,
    wheel_install: WheelInstall,
    version: str,
) -> dict[str, set[Line]]:
    """What each checker reports on the case folder as code for ``version``: each runs once, two at a
    time."""
    if version not in reports_by_version:
        with ThreadPoolExecutor(max_workers=2) as pool:
            futures = {
                checker: pool.submit(
                    RUNNERS[checker], cases, wheel_install.python, python_files(cases), version
                )
                for checker in CHECKERS
            }
            reports_by_version[version] = {checker: future.result() for checker, future in futures.items()}
    return reports_by_version[version]


@needs_checkers
@pytest.mark.parametrize("version", BY_VERSION)
@pytest.mark.parametrize("checker", CHECKERS)
def test_checker_reports_exactly_the_marked_lines(reports: dict[str, set[Line]], checker: str) -> None:
    reported = reports[checker]
    expected = expected_for(checker)
    assert sorted(reported - expected) == [], "reported but not marked"
    assert sorted(expected - reported) == [], "marked but not reported"


# The typing page's table of which tool catches which mistake: one row per fail_*.py file, one column per
# checker and one for `failure-kinds lint`. A file's mistakes are its top-level statements holding a
# marked line; a tool catches a mistake when it reports a line of that statement.
TABLE_START = (
    "<!-- static checking table: tests/test_typing.py derives every cell from the checkers' runs -->"
)
TABLE_END = "<!-- end of static checking table -->"
TOOLS = (*CHECKERS, "lint")


def mistakes(name: str) -> list[range]:
    marked = {number for (file, number) in markers() if file == name}
    statements = ast.parse((CASES / name).read_text(encoding="utf-8")).body
    spans = [range(node.lineno, (node.end_lineno or node.lineno) + 1) for node in statements]
    return [span for span in spans if marked.intersection(span)]


def verdict(name: str, reported: set[Line]) -> str:
    lines = {number for (file, number) in reported if file == name}
    caught = [span for span in mistakes(name) if lines.intersection(span)]
    if len(caught) == len(mistakes(name)):
        return "yes"
    return "partly" if caught else "no"


def readme_table() -> dict[str, list[str]]:
    """The docs table's cells by case file name, in the order of TOOLS."""
    page = PAGE.read_text(encoding="utf-8")
    assert TABLE_START in page
    assert TABLE_END in page
    body = page.split(TABLE_START, 1)[1].split(TABLE_END, 1)[0].strip().splitlines()
    header = [cell.strip() for cell in body[0].strip("|").split("|")]
    assert header[2:] == [*CHECKERS, "`failure-kinds lint`"], header
    rows: dict[str, list[str]] = {}
    for row in body[2:]:
        cells = [cell.strip() for cell in row.strip().strip("|").split("|")]
        found = re.fullmatch(r"`(fail_\w+\.py)`", cells[1])
        assert found, f"the second cell names the case file: {row}"
        rows[found[1]] = cells[2:]
    return rows


@pytest.fixture(scope="module")
def lint_report(cases: Path, wheel_install: WheelInstall) -> set[Line]:
    """What `failure-kinds lint` reports on the fail files, with the cases' declared namespace."""
    result = subprocess.run(
        [
            str(wheel_install.python),
            "-m",
            "failure_kinds",
            "lint",
            "--format",
            "json",
            "--config",
            str(cases / "declaration" / "pyproject.toml"),
            *sorted(name for name in python_files(cases) if name.startswith("fail_")),
        ],
        cwd=cases,
        capture_output=True,
        text=True,
    )
    assert result.returncode in (0, 1), result.stderr
    return {(Path(finding["path"]).name, finding["line"]) for finding in json.loads(result.stdout)}


@needs_checkers
@pytest.mark.parametrize("version", BY_VERSION)
def test_table_says_which_tool_catches_each_mistake(
    reports: dict[str, set[Line]], lint_report: set[Line], version: str
) -> None:
    found = {**reports, "lint": lint_report}
    derived = {
        path.name: [verdict(path.name, found[tool]) for tool in TOOLS]
        for path in sorted(CASES.glob("fail_*.py"))
    }
    table = readme_table()
    shown = "\n".join(f"{name}: {' '.join(cells)}" for name, cells in derived.items())
    assert sorted(table) == sorted(derived), "one row per fail_*.py file\n" + shown
    wrong = [
        f"{name} (Python {version}): the page says {table[name]}, the tools say {cells}"
        for name, cells in derived.items()
        if table[name] != cells
    ]
    assert wrong == [], "\n".join(wrong)


# What the typing page says about configuration, each claim checked on the files it concerns: with no
# configuration the checker still reports every mistake of those files the table credits it with
# ("all"), or without one setting it reports none of them ("none"). A claim is about a setting, not a
# Python version, so it is checked as code for the oldest supported version only.
PLAIN = ["fail_literals.py", "fail_names.py", "fail_members.py"]
CLAIMS = {
    "mypy without configuration": ("mypy", None, PLAIN, "all"),
    "pyright without configuration": ("pyright", None, PLAIN, "all"),
    "basedpyright without configuration": ("basedpyright", None, PLAIN, "all"),
    "mypy without warn_unreachable": ("mypy", "[tool.mypy]\nstrict = true\n", ["fail_match_typo.py"], "none"),
    "pyright without configuration, comparisons": (
        "pyright",
        None,
        ["fail_equality.py", "fail_match_typo.py"],
        "none",
    ),
    "pyrefly without configuration": ("pyrefly", None, None, "none"),
    "pyrefly strict without unreachable-match-case": (
        "pyrefly",
        '[tool.pyrefly]\npreset = "strict"\n',
        ["fail_match_typo.py"],
        "none",
    ),
}


@needs_checkers
@pytest.mark.parametrize("claim", CLAIMS)
def test_configuration_claims(cases: Path, wheel_install: WheelInstall, tmp_path: Path, claim: str) -> None:
    checker, configuration, names, reports = CLAIMS[claim]
    files = names or sorted(name for name in python_files(cases) if name.startswith("fail_"))
    for name in [*files, DECLARED_MODULE]:
        shutil.copy(cases / name, tmp_path / name)
    if configuration is not None:
        (tmp_path / "pyproject.toml").write_text(configuration, encoding="utf-8")
    reported = RUNNERS[checker](tmp_path, wheel_install.python, files, VERSIONS[0])
    credited = {line for line in expected_for(checker) if line[0] in files}
    assert credited, "the table credits the checker with these mistakes"
    if reports == "all":
        assert sorted(credited - reported) == []
    else:
        assert sorted(reported & credited) == []


@needs_checkers
def test_docs_name_the_pinned_versions() -> None:
    page = PAGE.read_text(encoding="utf-8")
    found = re.search(r"Versions tested: (.*?) \(pinned", page, flags=re.DOTALL)
    assert found, "the typing page names the checker versions it was tested with"
    named = dict(item.split() for item in found[1].replace("\n", " ").split(", "))
    extras = PYPROJECT["project"]["optional-dependencies"]
    pins = dict(
        requirement.split("==")
        for requirements in extras.values()
        for requirement in requirements
        if "==" in requirement
    )
    assert named == {checker: pins[checker] for checker in CHECKERS}
    # The environment running the checkers holds exactly those versions.
    assert named == {checker: metadata.version(checker) for checker in CHECKERS}
