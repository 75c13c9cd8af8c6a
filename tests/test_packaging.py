"""What a user gets from `pip install failure-kinds`: the package, its marker and its stub. The wheel is
installed into a fresh environment of the Python running the tests, and stubtest compares the stub with
that Python's runtime, so these run on every supported Python."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import ROOT, WheelInstall
from helpers import needs

ALLOWLIST = ROOT / "stubs" / "stubtest-allowlist.txt"


def test_wheel_ships_stub_beside_init(wheel_install: WheelInstall) -> None:
    names = set(zipfile.ZipFile(wheel_install.wheel).namelist())
    assert {
        "failure_kinds/__init__.py",
        "failure_kinds/__init__.pyi",
        "failure_kinds/py.typed",
    } <= names
    assert not any(name.startswith(("stubs/", "tests/", "src/")) for name in names)


def test_wheel_has_no_runtime_dependencies(wheel_install: WheelInstall) -> None:
    with zipfile.ZipFile(wheel_install.wheel) as archive:
        (metadata_name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        metadata = archive.read(metadata_name).decode()
    requirements = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    assert requirements, "the dev extra should be declared"
    assert all("extra ==" in line for line in requirements), requirements
    assert "Requires-Python: >=3.11" in metadata


def test_installed_package_has_stub_next_to_module(wheel_install: WheelInstall) -> None:
    code = (
        "import pathlib, failure_kinds; "
        "folder = pathlib.Path(failure_kinds.__file__).parent; "
        "print(sorted(p.name for p in folder.iterdir() if p.suffix in {'.py', '.pyi', '.typed'}))"
    )
    result = subprocess.run(
        [str(wheel_install.python), "-c", code], capture_output=True, text=True, check=True
    )
    listed = result.stdout
    assert "'__init__.py'" in listed
    assert "'__init__.pyi'" in listed
    assert "'py.typed'" in listed


@pytest.fixture(scope="module")
def stubtest_errors(
    wheel_install: WheelInstall, tmp_path_factory: pytest.TempPathFactory
) -> set[tuple[str, str]]:
    """What stubtest reports without the allowlist, as (name, problem) pairs: one run (it analyses the
    package and pydantic afresh each time, a slow step) serves both tests below."""
    output = run_stubtest(wheel_install, tmp_path_factory.mktemp("stubtest"))
    return set(re.findall(r"^error: (\S+) (.+)$", output, flags=re.MULTILINE))


def allowlisted() -> set[str]:
    return {
        line.strip()
        for line in ALLOWLIST.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }


def run_stubtest(wheel_install: WheelInstall, tmp_path: Path, *options: str) -> str:
    # The runtime and the stub both come from the installed wheel: PYTHONPATH puts its site-packages
    # ahead of the editable install, and an empty config keeps the repository's mypy_path out.
    purelib = subprocess.run(
        [str(wheel_install.python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    config = tmp_path / "empty.ini"
    config.write_text("[mypy]\n")
    result = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "failure_kinds", "--mypy-config-file", str(config), *options],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": purelib},
    )
    return result.stdout + result.stderr


@needs("mypy")
def test_stubtest_is_clean(stubtest_errors: set[tuple[str, str]]) -> None:
    # Every error is of an allowlisted name and every entry names one: with the allowlist, stubtest has
    # nothing to report and no unused entry. An error of another kind (a mypy build error) is one more
    # pair here, so it fails too.
    assert {name for name, _ in stubtest_errors} == allowlisted(), stubtest_errors


@needs("mypy")
def test_stubtest_allowlist_holds_only_known_limitations(stubtest_errors: set[tuple[str, str]]) -> None:
    assert stubtest_errors == {
        ("failure_kinds.FailureKindName", "is not a Union"),
        ("failure_kinds.FailureStage", "is not a Union"),
        ("failure_kinds.NamespacedFailureKind", "is not a type"),
        ("failure_kinds.pydantic.FailureKindField", "is not a Union"),
    }


# pyright reads the installed package as code for its own default version: the same on every Python.
@pytest.mark.interpreter_independent
@needs("pyright")
def test_public_interface_is_fully_typed(wheel_install: WheelInstall, tmp_path: Path) -> None:
    # pyright reads the package from the environment of the first `python` on PATH: the wheel's.
    environment = {
        **os.environ,
        "PATH": f"{wheel_install.python.parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "VIRTUAL_ENV": str(wheel_install.python.parent.parent),
    }
    result = subprocess.run(
        [
            str(Path(sys.executable).parent / "pyright"),
            "--verifytypes",
            "failure_kinds",
            "--ignoreexternal",
            "--outputjson",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=environment,
    )
    report = json.loads(result.stdout)
    completeness = report["typeCompleteness"]
    assert completeness["packageRootDirectory"].startswith(str(wheel_install.python.parent.parent))
    incomplete = [
        f"{symbol['name']}: {diagnostic['message']}"
        for symbol in completeness["symbols"]
        for diagnostic in symbol["diagnostics"]
        if diagnostic["severity"] == "error"
    ]
    assert completeness["completenessScore"] == 1, "\n".join(incomplete)
    assert completeness["exportedSymbolCounts"]["withKnownType"] > 0
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr


def test_each_allowlist_entry_names_the_runtime_test_that_covers_it() -> None:
    # An entry hides a stubtest error, so the fact it stands for must be tested at run time instead: the
    # comment above each entry names that test as tests/FILE::NAME, and the test must exist.
    comment: list[str] = []
    for line in ALLOWLIST.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            comment.append(line)
        elif line.strip():
            named = re.findall(r"tests/(\w+\.py)::(\w+)", " ".join(comment))
            assert named, f"{line}: no runtime test named in its comment"
            for file, test in named:
                source = (ROOT / "tests" / file).read_text(encoding="utf-8")
                assert f"def {test}(" in source, f"{line}: {file}::{test} does not exist"
            comment = []
        else:
            comment = []  # a blank line ends a comment: only the one right above an entry counts
