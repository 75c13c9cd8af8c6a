"""tests/typing/ checked by five type checkers against the package installed from its wheel.

pass_*.py must be clean in every checker. In fail_*.py each mistake carries a marker naming the checkers
that must report its line:

    # expect-error                         every checker
    # expect-error: mypy pyright basedpyright   exactly these; the others must stay silent
    # expect-error: none                   no checker sees it (the lint, audit or runtime must)

Each checker must report exactly the lines marked for it: a marker is both a promise and an admission.
Each checker runs once on the case folder per supported Python version (pyproject.toml's classifiers),
told by its version option, so these tests are interpreter_independent. docs/typing.md's table of which
tool catches which mistake is derived from the same runs (and `failure-kinds lint`) and compared."""

from __future__ import annotations

import ast
import functools
import json
import re
import shutil
import subprocess
import sys
import tomllib
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
    found[1]
    for classifier in PYPROJECT["project"]["classifiers"]
    if (found := re.fullmatch(r"Programming Language :: Python :: (3\.\d+)", classifier))
]
PAGE = (ROOT / "docs" / "typing.md").read_text(encoding="utf-8")
MARKER = re.compile(r"#\s*expect-error(?::(?P<checkers>[^#]*))?\s*$")
BIN = Path(sys.executable).parent
# The project the declared-namespace cases use: `failure-kinds generate` writes declared_kinds.py from it.
DECLARATION = '[tool.failure-kinds.namespaces]\nswe_env = ["patch_apply_failed", "test_collection_error"]\n'
DECLARED_MODULE = "declared_kinds.py"
FAILING = sorted(path.name for path in CASES.glob("fail_*.py"))

pytestmark = [pytest.mark.interpreter_independent, needs(*CHECKERS)]
Line = tuple[str, int]


def markers() -> dict[Line, frozenset[str]]:
    """Every marked line of the case files, with the checkers that must report it."""
    marked: dict[Line, frozenset[str]] = {}
    for path in sorted(CASES.glob("*.py")):
        for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if (found := MARKER.search(text)) is None:
                continue
            where = f"{path.name}:{number}"
            assert path.name.startswith("fail_"), f"{where} marked in a pass file"
            named = (" ".join(CHECKERS) if found["checkers"] is None else found["checkers"]).split()
            assert named, f"{where}: expect-error: names no checker"
            assert named == ["none"] or set(named) <= set(CHECKERS), f"{where}: unknown checkers in {named}"
            marked[(path.name, number)] = frozenset(named) - {"none"}
    return marked


def expected_for(checker: str) -> set[Line]:
    return {line for line, checkers in markers().items() if checker in checkers}


def test_markers_are_well_formed_and_every_version_is_checked() -> None:
    marked = markers()
    assert any(path.name.startswith("pass_") for path in CASES.glob("*.py"))
    # Every fail file holds code some checker must reject, and every checker rejects something.
    assert [name for name in FAILING if not any(line[0] == name for line in marked)] == []
    for checker in CHECKERS:
        assert len(expected_for(checker)) >= 10, checker
    assert VERSIONS == ["3.11", "3.12", "3.13"]
    assert PYPROJECT["project"]["requires-python"] == f">={VERSIONS[0]}"


def block_after(marker: str, language: str) -> str:
    found = re.search(re.escape(marker) + rf"\n```{language}\n(.*?)```", PAGE, flags=re.DOTALL)
    assert found, f"the typing page shows the block after {marker}"
    return found[1]


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory, wheel_install: WheelInstall) -> Path:
    # A copy, checked from a folder with no other project configuration, so nothing in this repository
    # (mypy.ini, stubs/, the editable install) can stand in for what the wheel provides; the
    # documentation's recipes must type-check cleanly too, and the declared-namespace cases import the
    # module the installed command generates.
    folder = tmp_path_factory.mktemp("typing_cases")
    for path in CASES.glob("*.py"):
        shutil.copy(path, folder / path.name)
    for name, code in doc_recipes().items():
        (folder / f"pass_readme_{name}.py").write_text(code, encoding="utf-8")
    (folder / "declaration").mkdir()
    (folder / "declaration" / "pyproject.toml").write_text(DECLARATION, encoding="utf-8")
    generate = ["generate", "--config", "declaration/pyproject.toml", "--output", DECLARED_MODULE]
    subprocess.run([wheel_install.python, "-m", "failure_kinds", *generate], cwd=folder, check=True)
    configuration = "<!-- checker configuration: tests/test_typing.py runs the checkers with exactly this -->"
    (folder / "pyproject.toml").write_text(block_after(configuration, "toml"), encoding="utf-8")
    return folder


# How each checker is told the interpreter whose environment holds the wheel and the version to check
# for, and asked for its errors in a form read below (basedpyright takes pyright's options).
CHECKER_OPTIONS = {
    "mypy": "--python-executable {python} --python-version {version} --no-error-summary",
    "pyright": "--outputjson --pythonpath {python} --pythonversion {version}",
    "pyrefly": "check --python-interpreter-path {python} --python-version {version} --output-format json"
    " --summary=none --progress-bar no",
    "ty": "check --python {python} --python-version {version} --output-format concise --no-progress"
    " --color never",
}


def checker_errors(checker: str, folder: Path, python: Path, files: list[str], version: str) -> set[Line]:
    """The lines ``checker`` reports as errors in ``files`` of ``folder`` (configured by its
    pyproject.toml, if any), for the installed wheel's environment ``python``, as code for ``version``."""
    template = CHECKER_OPTIONS["pyright" if checker == "basedpyright" else checker].split()
    options = [option.format(python=python, version=version) for option in template]
    if checker == "mypy":
        options += ["--cache-dir", str(folder / ".mypy_cache")]
        options += ["--config-file", "pyproject.toml"] if (folder / "pyproject.toml").exists() else []
    command = [str(BIN / checker), *options, *files]
    result = subprocess.run(command, cwd=folder, capture_output=True, text=True)
    # 0 clean, 1 errors found; anything else means the checker itself failed.
    assert result.returncode in (0, 1), f"{checker}: {result.stdout[-3000:]}{result.stderr[-3000:]}"
    if checker in ("mypy", "ty"):
        found = re.findall(r"^([^:\s]+\.py):(\d+):(?:\d+:)? error\b", result.stdout, flags=re.MULTILINE)
        return {(Path(file).name, int(line)) for file, line in found}
    if checker == "pyrefly":
        errors = json.loads(result.stdout)["errors"]
        return {(Path(error["path"]).name, error["line"]) for error in errors if error["severity"] == "error"}
    return {
        (Path(diagnostic["file"]).name, diagnostic["range"]["start"]["line"] + 1)
        for diagnostic in json.loads(result.stdout)["generalDiagnostics"]
        if diagnostic["severity"] == "error"
    }


@functools.cache
def checkers_on(cases: Path, python: Path, version: str) -> dict[str, set[Line]]:
    """What each checker reports on the case folder as code for ``version``: each runs once, two at a
    time."""
    files = sorted(path.name for path in cases.glob("*.py"))
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {
            name: pool.submit(checker_errors, name, cases, python, files, version) for name in CHECKERS
        }
        return {checker: future.result() for checker, future in futures.items()}


@pytest.fixture
def reports(cases: Path, wheel_install: WheelInstall, version: str) -> dict[str, set[Line]]:
    return checkers_on(cases, wheel_install.python, version)


@pytest.fixture(scope="module")
def lint_report(cases: Path, wheel_install: WheelInstall) -> set[Line]:
    """What `failure-kinds lint` reports on the fail files, with the cases' declared namespace."""
    lint = ["lint", "--format", "json", "--config", "declaration/pyproject.toml", *FAILING]
    result = subprocess.run(
        [wheel_install.python, "-m", "failure_kinds", *lint], cwd=cases, capture_output=True, text=True
    )
    assert result.returncode in (0, 1), result.stderr
    return {(Path(finding["path"]).name, finding["line"]) for finding in json.loads(result.stdout)}


# The tests of one version share one xdist worker, so each version's checkers run once in a run.
BY_VERSION = [
    pytest.param(version, marks=pytest.mark.xdist_group(f"typing-{version}")) for version in VERSIONS
]


@pytest.mark.parametrize("version", BY_VERSION)
@pytest.mark.parametrize("checker", CHECKERS)
def test_checker_reports_exactly_the_marked_lines(reports: dict[str, set[Line]], checker: str) -> None:
    expected = expected_for(checker)
    assert sorted(reports[checker] - expected) == [], "reported but not marked"
    assert sorted(expected - reports[checker]) == [], "marked but not reported"


def verdict(name: str, reported: set[Line]) -> str:
    """Whether a tool catches the mistakes of a fail file: its top-level statements holding a marked
    line, each caught when the tool reports a line of it."""
    marked = {number for (file, number) in markers() if file == name}
    statements = ast.parse((CASES / name).read_text(encoding="utf-8")).body
    mistakes = [span for node in statements if marked & set(span := range(node.lineno, node.end_lineno + 1))]
    caught = [
        span for span in mistakes if {number for (file, number) in reported if file == name} & set(span)
    ]
    return "yes" if len(caught) == len(mistakes) else "partly" if caught else "no"


@pytest.mark.parametrize("version", BY_VERSION)
def test_table_says_which_tool_catches_each_mistake(
    reports: dict[str, set[Line]], lint_report: set[Line], version: str
) -> None:
    """The typing page's table: one row per fail_*.py file, one column per checker and one for
    `failure-kinds lint`."""
    start = "<!-- static checking table: tests/test_typing.py derives every cell from the checkers' runs -->"
    assert "<!-- end of static checking table -->" in PAGE.split(start, 1)[1]
    body = PAGE.split(start, 1)[1].split("<!-- end of static checking table -->", 1)[0].strip().splitlines()
    assert [cell.strip() for cell in body[0].strip("|").split("|")][2:] == [*CHECKERS, "`failure-kinds lint`"]
    table: dict[str, list[str]] = {}
    for row in body[2:]:
        cells = [cell.strip() for cell in row.strip().strip("|").split("|")]
        found = re.fullmatch(r"`(fail_\w+\.py)`", cells[1])
        assert found, f"the second cell names the file: {row}"
        table[found[1]] = cells[2:]
    found = {**reports, "lint": lint_report}
    derived = {name: [verdict(name, found[tool]) for tool in (*CHECKERS, "lint")] for name in FAILING}
    assert sorted(table) == FAILING, "one row per fail_*.py file"
    wrong = [
        f"{name} (Python {version}): the page says {table[name]}, the tools say {cells}"
        for name, cells in derived.items()
        if table[name] != cells
    ]
    assert wrong == [], "\n".join(wrong)


# What the typing page says about configuration, each claim checked on the files it concerns: with no
# configuration (None) the checker still reports every mistake of those files the table credits it with
# ("all"), or without one setting it reports none of them ("none"). A claim is about a setting, not a
# Python version, so it is checked as code for the oldest supported version only.
PLAIN = ["fail_literals.py", "fail_names.py", "fail_members.py"]
CLAIMS = {
    "mypy without configuration": ("mypy", None, PLAIN, "all"),
    "pyright without configuration": ("pyright", None, PLAIN, "all"),
    "basedpyright without configuration": ("basedpyright", None, PLAIN, "all"),
    "mypy without warn_unreachable": ("mypy", "[tool.mypy]\nstrict = true\n", ["fail_match_typo.py"], "none"),
    "pyright, comparisons": ("pyright", None, ["fail_equality.py", "fail_match_typo.py"], "none"),
    "pyrefly without configuration": ("pyrefly", None, FAILING, "none"),
    "pyrefly strict without unreachable-match-case":
        ("pyrefly", '[tool.pyrefly]\npreset = "strict"\n', ["fail_match_typo.py"], "none"),
}  # fmt: skip


@pytest.mark.parametrize("claim", CLAIMS)
def test_configuration_claims(cases: Path, wheel_install: WheelInstall, tmp_path: Path, claim: str) -> None:
    checker, configuration, files, reports = CLAIMS[claim]
    for name in [*files, DECLARED_MODULE]:
        shutil.copy(cases / name, tmp_path / name)
    if configuration is not None:
        (tmp_path / "pyproject.toml").write_text(configuration, encoding="utf-8")
    reported = checker_errors(checker, tmp_path, wheel_install.python, files, VERSIONS[0])
    credited = {line for line in expected_for(checker) if line[0] in files}
    assert credited, "the table credits the checker with these mistakes"
    assert sorted(credited - reported if reports == "all" else reported & credited) == []


def test_docs_name_the_pinned_versions() -> None:
    found = re.search(r"Versions tested: (.*?) \(pinned", PAGE, flags=re.DOTALL)
    assert found, "the typing page names the checker versions it was tested with"
    named = dict(item.split() for item in found[1].replace("\n", " ").split(", "))
    requirements = [
        item for extra in PYPROJECT["project"]["optional-dependencies"].values() for item in extra
    ]
    pins = dict(requirement.split("==") for requirement in requirements if "==" in requirement)
    assert named == {checker: pins[checker] for checker in CHECKERS}
    # The environment running the checkers holds exactly those versions.
    assert named == {checker: metadata.version(checker) for checker in CHECKERS}
