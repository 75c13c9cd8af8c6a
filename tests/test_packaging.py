"""What a user gets from `pip install failure-kinds`: the package, its marker and its stub, installed into a
fresh environment of each supported Python, where stubtest compares the stub with that Python's runtime."""

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


def test_wheel_ships_the_stub_beside_the_module_and_no_runtime_dependency(
    wheel_install: WheelInstall,
) -> None:
    with zipfile.ZipFile(wheel_install.wheel) as archive:
        names = set(archive.namelist())
        (metadata_name,) = [name for name in names if name.endswith(".dist-info/METADATA")]
        metadata = archive.read(metadata_name).decode()
    assert {"failure_kinds/__init__.py", "failure_kinds/__init__.pyi", "failure_kinds/py.typed"} <= names
    assert not any(name.startswith(("stubs/", "tests/", "src/")) for name in names)
    requirements = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    assert requirements, "the dev extra should be declared"
    assert all("extra ==" in line for line in requirements), requirements
    assert "Requires-Python: >=3.11" in metadata
    listing = (
        "import pathlib, failure_kinds; print(*sorted(pathlib.Path(failure_kinds.__file__).parent.iterdir()))"
    )
    listed = subprocess.run([wheel_install.python, "-c", listing], capture_output=True, text=True, check=True)
    assert {"__init__.py", "__init__.pyi", "py.typed"} <= {Path(path).name for path in listed.stdout.split()}


@needs("mypy")
def test_stubtest_reports_only_the_allowlisted_known_limitations(
    wheel_install: WheelInstall, tmp_path: Path
) -> None:
    """Without the allowlist, stubtest reports exactly its entries (so with it, nothing and no unused entry),
    on the wheel's runtime and stub: PYTHONPATH puts them first and an empty config drops mypy_path."""
    where = "import sysconfig; print(sysconfig.get_path('purelib'))"
    purelib = subprocess.run([wheel_install.python, "-c", where], capture_output=True, text=True, check=True)
    (tmp_path / "empty.ini").write_text("[mypy]\n")
    result = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "failure_kinds", "--mypy-config-file", "empty.ini"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": purelib.stdout.strip()},
    )
    errors = set(re.findall(r"^error: (\S+) (.+)$", result.stdout + result.stderr, flags=re.MULTILINE))
    allowlisted = {
        line.strip() for line in ALLOWLIST.read_text().splitlines() if line.strip()[:1] not in ("", "#")
    }
    assert {name for name, _ in errors} == allowlisted, errors
    assert errors == {
        ("failure_kinds.FailureKindName", "is not a Union"),
        ("failure_kinds.FailureStage", "is not a Union"),
        ("failure_kinds.NamespacedFailureKind", "is not a type"),
        ("failure_kinds.pydantic.FailureKindField", "is not a Union"),
    }


def test_each_allowlist_entry_names_the_runtime_test_that_covers_it() -> None:
    # An entry hides a stubtest error, so the fact it stands for must be tested at run time instead: the
    # comment right above each entry names that test as tests/FILE::NAME, and the test must exist.
    comment: list[str] = []
    for line in ALLOWLIST.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            comment.append(line)
            continue
        if line.strip():
            named = re.findall(r"tests/(\w+\.py)::(\w+)", " ".join(comment))
            assert named, f"{line}: no runtime test named in its comment"
            for file, test in named:
                assert f"def {test}(" in (ROOT / "tests" / file).read_text(encoding="utf-8"), (
                    f"{line}: {test}"
                )
        comment = []  # a blank line ends a comment


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
    command = [
        str(Path(sys.executable).parent / "pyright"),
        "--verifytypes",
        "failure_kinds",
        "--ignoreexternal",
    ]
    result = subprocess.run(
        [*command, "--outputjson"], capture_output=True, text=True, cwd=tmp_path, env=environment
    )
    completeness = json.loads(result.stdout)["typeCompleteness"]
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
