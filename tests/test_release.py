"""What a user gets: the README's install and pre-commit instructions work as written, and the wheel and
the source archive pass `twine check`, install into fresh environments and carry the license. The
README's clone at /opt/failure-kinds is a fresh clone of this repository (no tags travel with it). The
package is one py3-none-any wheel, so these run on the first Python only (interpreter_independent)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest
from conftest import built_once
from helpers import ROOT, fresh_environment, needs

import failure_kinds

pytestmark = pytest.mark.interpreter_independent

README = (ROOT / "README.md").read_text(encoding="utf-8")
LICENSE = (ROOT / "LICENSE").read_text(encoding="utf-8")
VERSION = failure_kinds.__version__
CLONE_IN_README = "/opt/failure-kinds"
COMMIT_IN_README = "COMMIT"  # where the pre-commit example wants the full hash of the commit to pin


def readme_blocks(start: str, end: str) -> list[str]:
    part = README[README.index(start) : README.index(end, README.index(start))]
    return re.findall(r"^```[a-z]*\n(.*?)^```$", part, flags=re.MULTILINE | re.DOTALL)


INSTALL_BLOCKS = readme_blocks("<!-- install:", "<!-- end of install -->")
(WHEEL_BLOCK,) = [block for block in INSTALL_BLOCKS if "python -m build" in block]
PRE_COMMIT_BLOCKS = readme_blocks("<!-- pre-commit:", "<!-- end of pre-commit -->")


def run(
    command: list[str], cwd: Path | None = None, env: dict[str, str] | None = None, status: int = 0
) -> str:
    result = subprocess.run(command, capture_output=True, text=True, cwd=cwd, env=env, timeout=900)
    assert result.returncode == status, f"{command}\n{result.stdout}\n{result.stderr}"
    return result.stdout


@pytest.fixture(scope="session")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return built_once(
        tmp_path_factory, "failure-kinds", lambda into: run(["git", "clone", "-q", str(ROOT), str(into)])
    )


def run_block(block: str, clone: Path, folder: Path) -> Path:
    """``block`` pasted into bash in the clone, in a fresh virtual environment in ``folder``: its binaries."""
    binaries = fresh_environment(folder)
    environment = {**os.environ, "PATH": f"{binaries}{os.pathsep}{os.environ['PATH']}"}
    environment.pop("VIRTUAL_ENV", None)
    run(
        ["bash", "-c", "set -euo pipefail\n" + block.replace(CLONE_IN_README, str(clone))], clone, environment
    )
    return binaries


INSTALLED_METADATA = """
import importlib.metadata, sys, failure_kinds
distribution = importlib.metadata.distribution("failure-kinds")
licenses = [file for file in distribution.files or [] if file.name == "LICENSE"]
print(failure_kinds.__version__, distribution.version, distribution.metadata["License-Expression"])
print(distribution.metadata.get_all("License-File"), len(licenses))
sys.stdout.write(licenses[0].read_text(encoding="utf-8"))
"""


def installed(binaries: Path, cwd: Path, imports: tuple[str, ...] = ("failure_kinds",)) -> None:
    """The environment's command gives this version, and its Python imports ``imports``."""
    assert run([str(binaries / "failure-kinds"), "--version"], cwd=cwd) == f"failure-kinds {VERSION}\n"
    run([str(binaries / "python"), "-c", f"import {', '.join(imports)}"], cwd=cwd)
    metadata = run([str(binaries / "python"), "-c", INSTALLED_METADATA], cwd=cwd)
    assert metadata == f"{VERSION} {VERSION} Apache-2.0\n['LICENSE'] 1\n{LICENSE}"


@pytest.fixture(scope="session")
def wheel_block(clone: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The README's wheel block, run once: its environment's binaries (the clone's dist/ has its build)."""
    folder = built_once(
        tmp_path_factory, "wheel-block", lambda into: run_block(WHEEL_BLOCK, clone, into / "venv")
    )
    return folder / "venv" / "bin"


@pytest.fixture(scope="session")
def artifacts(clone: Path, wheel_block: Path) -> dict[str, Path]:
    built = {
        "wheel": clone / "dist" / f"failure_kinds-{VERSION}-py3-none-any.whl",
        "sdist": clone / "dist" / f"failure_kinds-{VERSION}.tar.gz",
    }
    assert sorted((clone / "dist").iterdir()) == sorted(built.values())
    return built


def test_the_readme_names_no_tag_no_index_install_and_no_placeholder(clone: Path) -> None:
    # A clone carries no tag, so the README installs from a clone, a wheel or a commit.
    assert run(["git", "-C", str(clone), "tag", "--list"]) == ""
    assert re.findall(r"@v\d|rev: v\d|--branch v\d", README) == []
    commands = "\n".join(INSTALL_BLOCKS)
    assert all(way in commands for way in ("pip install .", "python -m build", "git+"))
    # Until the package is on an index, `pip install failure-kinds` fails; the README says so once.
    assert "not yet published to a package index" in README
    assert re.findall(r"pip install ['\"]?failure-kinds\b(?!\S* @)", README) == ["pip install failure-kinds"]
    assert "`pip install failure-kinds` does not work yet" in README
    assert len(PRE_COMMIT_BLOCKS) == 2
    assert [block for block in PRE_COMMIT_BLOCKS if "<" in block or ">" in block] == []
    local, remote = PRE_COMMIT_BLOCKS
    assert all(line in local for line in ("repo: local", "language: python", "additional_dependencies"))
    # The pin is a commit the user fills in, and the README says how to find it.
    assert f"rev: {COMMIT_IN_README}\n" in remote
    told = f"in place of `{COMMIT_IN_README}`: `git -C {CLONE_IN_README} rev-parse HEAD`"
    assert told in " ".join(README.split())


def test_the_release_names_its_version_in_the_changelog_and_carries_the_license() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    releases = re.findall(r"^## \[(\d+\.\d+\.\d+)\]", changelog, flags=re.MULTILINE)
    assert releases[0] == VERSION, "the newest release in CHANGELOG.md is the current version"
    assert "## [Unreleased]" in changelog
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "Apache-2.0"
    lines = [line.strip() for line in LICENSE.splitlines() if line.strip()]
    assert lines[:3] == ["Apache License", "Version 2.0, January 2004", "http://www.apache.org/licenses/"]
    assert "END OF TERMS AND CONDITIONS" in LICENSE


@pytest.mark.parametrize(
    "block", [block for block in INSTALL_BLOCKS if block != WHEEL_BLOCK], ids=lambda block: block[:30]
)
def test_readme_install_commands_work(block: str, clone: Path, tmp_path: Path) -> None:
    binaries = run_block(block, clone, tmp_path / "venv")
    extras = {"fast": "msgspec", "pydantic": "pydantic"}
    installed(binaries, tmp_path, ("failure_kinds", *(extras[extra] for extra in extras if extra in block)))


@needs("twine")
def test_the_readme_wheel_installs_and_the_artifacts_carry_the_license_and_pass_twine_check(
    wheel_block: Path, artifacts: dict[str, Path], tmp_path: Path
) -> None:
    installed(wheel_block, tmp_path)
    with zipfile.ZipFile(artifacts["wheel"]) as wheel:
        info = f"failure_kinds-{VERSION}.dist-info"
        assert wheel.read(f"{info}/licenses/LICENSE").decode("utf-8") == LICENSE
        metadata = wheel.read(f"{info}/METADATA").decode("utf-8").splitlines()
    assert {"License-Expression: Apache-2.0", "License-File: LICENSE"} <= set(metadata)
    top = f"failure_kinds-{VERSION}"
    with tarfile.open(artifacts["sdist"]) as sdist:
        assert {f"{top}/CHANGELOG.md", f"{top}/PKG-INFO"} <= set(sdist.getnames())
        member = sdist.extractfile(f"{top}/LICENSE")
        assert member is not None
        assert member.read().decode("utf-8") == LICENSE
    checked = run([sys.executable, "-m", "twine", "check", "--strict", *map(str, artifacts.values())])
    assert checked.count("PASSED") == 2, checked


def test_the_sdist_installs_into_a_fresh_environment(artifacts: dict[str, Path], tmp_path: Path) -> None:
    binaries = fresh_environment(tmp_path / "venv")
    # The sdist is built on the way in, which fetches the build backend like any user's install does.
    run([str(binaries / "python"), "-m", "pip", "install", "--quiet", "--no-deps", str(artifacts["sdist"])])
    installed(binaries, tmp_path)


@needs("pre_commit")
@pytest.mark.parametrize("block", PRE_COMMIT_BLOCKS, ids=["local", "commit"])
def test_readme_pre_commit_configuration_works(block: str, clone: Path, tmp_path: Path) -> None:
    pre_commit = str(Path(sys.executable).parent / "pre-commit")
    project = tmp_path / "project"
    run(["git", "init", "--quiet", str(project)])
    commit = run(["git", "-C", str(clone), "rev-parse", "HEAD"]).strip()
    configuration = block.replace(CLONE_IN_README, str(clone)).replace(
        f"rev: {COMMIT_IN_README}", f"rev: {commit}"
    )
    (project / ".pre-commit-config.yaml").write_text(configuration)
    (project / "bad.py").write_text('row = {"failure_kind": "judge_faild"}\n')
    (project / "good.py").write_text('row = {"failure_kind": "judge_failed"}\n')
    run(["git", "-C", str(project), "add", "."])
    git = Path(shutil.which("git") or "git").parent
    environment = {
        **os.environ,
        "PRE_COMMIT_HOME": str(tmp_path / "cache"),
        "PATH": f"{git}{os.pathsep}{os.environ['PATH']}",
    }
    failing = run([pre_commit, "run", "--all-files"], cwd=project, env=environment, status=1)
    assert "bad.py:1:24: FK001 unregistered failure kind 'judge_faild'" in failing
    assert "good.py" not in failing
    run([pre_commit, "run", "--files", "good.py"], cwd=project, env=environment)
