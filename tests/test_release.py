"""What a user gets: the README's install and pre-commit instructions work as written, the wheel and the
source archive build, pass `twine check`, install into fresh virtual environments and carry the license,
and every place that names the version names the one in failure_kinds/__init__.py.

The README's commands assume a clone at /opt/failure-kinds; here that path becomes a fresh clone of this
repository, which carries no tag (tags do not travel with a clone), and the commit the README tells a user
to pin is that clone's.

The package is pure Python without dependencies (one py3-none-any wheel), so what builds and installs on
one supported Python does on every one: these tests are marked interpreter_independent, and `make test`
runs them on its first Python. What depends on the interpreter (the stub against each runtime) is in
tests/test_packaging.py, which runs on every Python.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import built_once
from helpers import fresh_environment, importable, needs

import failure_kinds

pytestmark = pytest.mark.interpreter_independent

ROOT = Path(__file__).parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
LICENSE = (ROOT / "LICENSE").read_text(encoding="utf-8")
VERSION = failure_kinds.__version__
CLONE_IN_README = "/opt/failure-kinds"
# Where the README's pre-commit example wants the full hash of the commit to pin.
COMMIT_IN_README = "COMMIT"


def readme_blocks(start: str, end: str) -> list[str]:
    """The fenced code blocks of the README between the comment lines starting with `start` and `end`."""
    first = README.index(start)
    part = README[first : README.index(end, first)]
    return re.findall(r"^```[a-z]*\n(.*?)^```$", part, flags=re.MULTILINE | re.DOTALL)


INSTALL_BLOCKS = readme_blocks("<!-- install:", "<!-- end of install -->")
PRE_COMMIT_BLOCKS = readme_blocks("<!-- pre-commit:", "<!-- end of pre-commit -->")


def run(
    command: list[str], cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, env=env, timeout=900)


def checked(
    command: list[str], cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    result = run(command, cwd=cwd, env=env)
    assert result.returncode == 0, f"{command}\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="session")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A clone of this repository's current commit, as a user makes one; one for all xdist workers."""

    def make(folder: Path) -> None:
        checked(["git", "clone", "--quiet", str(ROOT), str(folder / "failure-kinds")])

    return built_once(tmp_path_factory, "clone", make) / "failure-kinds"


def test_a_clone_carries_no_tag(clone: Path) -> None:
    """So the README cannot lean on one: it installs from a clone, a wheel or a commit."""
    assert checked(["git", "-C", str(clone), "tag", "--list"]).stdout == ""


# version


def test_the_version_has_one_source() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"]
    assert project["project"]["dynamic"] == ["version"]
    assert project["tool"]["hatch"]["version"]["path"] == "src/failure_kinds/__init__.py"
    assert re.fullmatch(r"\d+\.\d+\.\d+", VERSION)


def test_every_version_the_docs_name_is_this_one() -> None:
    named = re.findall(r"failure_kinds-(\d+\.\d+\.\d+)-py3", README)
    assert len(named) >= 1
    assert set(named) == {VERSION}
    # No install or pin names a release tag: a clone has none.
    assert re.findall(r"@v\d|rev: v\d|--branch v\d", README) == []
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    releases = re.findall(r"^## \[(\d+\.\d+\.\d+)\]", changelog, flags=re.MULTILINE)
    assert releases[0] == VERSION, "the newest release in CHANGELOG.md is the current version"
    assert "## [Unreleased]" in changelog


def test_license_is_the_declared_one() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["license"] == "Apache-2.0"
    lines = [line.strip() for line in LICENSE.splitlines() if line.strip()]
    assert lines[:3] == ["Apache License", "Version 2.0, January 2004", "http://www.apache.org/licenses/"]
    assert "END OF TERMS AND CONDITIONS" in LICENSE


# the README's install commands


def test_install_section_has_every_way_in() -> None:
    commands = "\n".join(INSTALL_BLOCKS)
    assert "pip install ." in commands
    assert "python -m build" in commands
    assert "git+" in commands
    assert "not yet published to a package index" in README


def test_no_instruction_installs_from_an_index_by_name() -> None:
    """Until the package is on an index, `pip install failure-kinds` (with or without extras) fails; the
    README says so once and otherwise installs from a clone, a wheel or a URL."""
    by_name = re.findall(r"pip install ['\"]?failure-kinds\b(?!\S* @)", README)
    assert by_name == ["pip install failure-kinds"]
    assert "`pip install failure-kinds` does not work yet" in README


@needs("build")
@pytest.mark.parametrize("block", INSTALL_BLOCKS, ids=lambda block: block.splitlines()[-1][:40])
def test_readme_install_commands_work(block: str, clone: Path, tmp_path: Path) -> None:
    """Each block in a fresh virtual environment, in the clone, as a user would paste it."""
    binaries = fresh_environment(tmp_path / "venv")
    script = "set -euo pipefail\n" + block.replace(CLONE_IN_README, str(clone))
    environment = {**os.environ, "PATH": f"{binaries}{os.pathsep}{os.environ['PATH']}"}
    environment.pop("VIRTUAL_ENV", None)
    checked(["bash", "-c", script], cwd=clone, env=environment)
    version = checked([str(binaries / "failure-kinds"), "--version"])
    assert version.stdout == f"failure-kinds {VERSION}\n"
    extras = {"fast": "msgspec", "pydantic": "pydantic"}
    imports = ["failure_kinds"] + [module for extra, module in extras.items() if extra in block]
    checked([str(binaries / "python"), "-c", f"import {', '.join(imports)}"], cwd=tmp_path)


# the built artifacts


@dataclass(frozen=True)
class Artifacts:
    wheel: Path
    sdist: Path


@pytest.fixture(scope="session")
def artifacts(clone: Path, tmp_path_factory: pytest.TempPathFactory) -> Artifacts:
    """The wheel and the source archive `python -m build` makes of the clone; once for all workers."""
    if not importable("build"):
        pytest.skip("needs build (an optional extra)")

    def make(output: Path) -> None:
        checked([sys.executable, "-m", "build", "--outdir", str(output), str(clone)])

    output = built_once(tmp_path_factory, "dist", make)
    (wheel,) = output.glob("*.whl")
    (sdist,) = output.glob("*.tar.gz")
    assert wheel.name == f"failure_kinds-{VERSION}-py3-none-any.whl"
    assert sdist.name == f"failure_kinds-{VERSION}.tar.gz"
    return Artifacts(wheel=wheel, sdist=sdist)


def test_wheel_carries_the_license(artifacts: Artifacts) -> None:
    with zipfile.ZipFile(artifacts.wheel) as wheel:
        info = f"failure_kinds-{VERSION}.dist-info"
        assert wheel.read(f"{info}/licenses/LICENSE").decode("utf-8") == LICENSE
        metadata = wheel.read(f"{info}/METADATA").decode("utf-8")
    assert "License-Expression: Apache-2.0" in metadata.splitlines()
    assert "License-File: LICENSE" in metadata.splitlines()


def test_sdist_carries_the_license_and_the_changelog(artifacts: Artifacts) -> None:
    top = f"failure_kinds-{VERSION}"
    with tarfile.open(artifacts.sdist) as sdist:
        names = set(sdist.getnames())
        member = sdist.extractfile(f"{top}/LICENSE")
        assert member is not None
        assert member.read().decode("utf-8") == LICENSE
    assert f"{top}/CHANGELOG.md" in names
    assert f"{top}/PKG-INFO" in names


@needs("twine")
@pytest.mark.parametrize("kind", ["wheel", "sdist"])
def test_twine_check_passes(artifacts: Artifacts, kind: str) -> None:
    artifact = getattr(artifacts, kind)
    result = checked([sys.executable, "-m", "twine", "check", "--strict", str(artifact)])
    assert "PASSED" in result.stdout


INSTALLED_METADATA = """
import importlib.metadata, sys
distribution = importlib.metadata.distribution("failure-kinds")
metadata = distribution.metadata
licenses = [file for file in distribution.files or [] if file.name == "LICENSE"]
print(distribution.version)
print(metadata["License-Expression"])
print(metadata.get_all("License-File"))
print(len(licenses))
sys.stdout.write(licenses[0].read_text(encoding="utf-8"))
"""


@pytest.mark.parametrize("kind", ["wheel", "sdist"])
def test_artifact_installs_into_a_fresh_environment(artifacts: Artifacts, kind: str, tmp_path: Path) -> None:
    artifact: Path = getattr(artifacts, kind)
    binaries = fresh_environment(tmp_path / "venv")
    # The sdist is built on the way in, which fetches the build backend like any user's install does.
    checked([str(binaries / "python"), "-m", "pip", "install", "--quiet", "--no-deps", str(artifact)])
    version = checked([str(binaries / "failure-kinds"), "--version"], cwd=tmp_path)
    assert version.stdout == f"failure-kinds {VERSION}\n"
    show_version = "import failure_kinds; print(failure_kinds.__version__)"
    imported = checked([str(binaries / "python"), "-c", show_version], cwd=tmp_path)
    assert imported.stdout == f"{VERSION}\n"
    metadata = checked([str(binaries / "python"), "-c", INSTALLED_METADATA], cwd=tmp_path).stdout
    version_line, expression, files, count, text = metadata.split("\n", 4)
    assert (version_line, expression, files, count) == (VERSION, "Apache-2.0", "['LICENSE']", "1")
    assert text == LICENSE


# pre-commit, as the README configures it


def test_pre_commit_instructions_have_no_placeholders() -> None:
    assert len(PRE_COMMIT_BLOCKS) == 2
    for block in PRE_COMMIT_BLOCKS:
        assert "<" not in block
        assert ">" not in block
    local, remote = PRE_COMMIT_BLOCKS
    assert "repo: local" in local
    assert "language: python" in local
    assert "additional_dependencies" in local
    # The pin is a commit the user fills in, and the README says how to find it.
    assert f"rev: {COMMIT_IN_README}\n" in remote
    told = f"in place of `{COMMIT_IN_README}`: `git -C {CLONE_IN_README} rev-parse HEAD`"
    assert told in " ".join(README.split())


@needs("pre_commit")
@pytest.mark.parametrize("block", PRE_COMMIT_BLOCKS, ids=["local", "commit"])
def test_readme_pre_commit_configuration_works(block: str, clone: Path, tmp_path: Path) -> None:
    pre_commit = Path(sys.executable).parent / "pre-commit"
    project = tmp_path / "project"
    project.mkdir()
    checked(["git", "init", "--quiet", str(project)])
    commit = checked(["git", "-C", str(clone), "rev-parse", "HEAD"]).stdout.strip()
    configuration = block.replace(CLONE_IN_README, str(clone)).replace(
        f"rev: {COMMIT_IN_README}", f"rev: {commit}"
    )
    (project / ".pre-commit-config.yaml").write_text(configuration)
    (project / "bad.py").write_text('row = {"failure_kind": "judge_faild"}\n')
    (project / "good.py").write_text('row = {"failure_kind": "judge_failed"}\n')
    checked(["git", "-C", str(project), "add", "."])
    environment = {
        **os.environ,
        "PRE_COMMIT_HOME": str(tmp_path / "cache"),
        "PATH": f"{Path(shutil.which('git') or 'git').parent}{os.pathsep}{os.environ['PATH']}",
    }
    failing = run([str(pre_commit), "run", "--all-files"], cwd=project, env=environment)
    assert failing.returncode == 1, failing.stdout + failing.stderr
    assert "bad.py:1:24: FK001 unregistered failure kind 'judge_faild'" in failing.stdout
    assert "good.py" not in failing.stdout
    passing = run([str(pre_commit), "run", "--files", "good.py"], cwd=project, env=environment)
    assert passing.returncode == 0, passing.stdout + passing.stderr
