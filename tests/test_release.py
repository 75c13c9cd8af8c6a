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
from pathlib import Path

import pytest
from conftest import built_once
from helpers import ROOT, fresh_environment, importable, needs

import failure_kinds

pytestmark = pytest.mark.interpreter_independent

README = (ROOT / "README.md").read_text(encoding="utf-8")
LICENSE = (ROOT / "LICENSE").read_text(encoding="utf-8")
VERSION = failure_kinds.__version__
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
CLONE_IN_README = "/opt/failure-kinds"
# Where the README's pre-commit example wants the full hash of the commit to pin.
COMMIT_IN_README = "COMMIT"


def readme_blocks(start: str, end: str) -> list[str]:
    """The fenced code blocks of the README between the comment lines starting with `start` and `end`."""
    part = README[README.index(start) : README.index(end, README.index(start))]
    return re.findall(r"^```[a-z]*\n(.*?)^```$", part, flags=re.MULTILINE | re.DOTALL)


INSTALL_BLOCKS = readme_blocks("<!-- install:", "<!-- end of install -->")
PRE_COMMIT_BLOCKS = readme_blocks("<!-- pre-commit:", "<!-- end of pre-commit -->")


def run(
    command: list[str], cwd: Path | None = None, env: dict[str, str] | None = None, status: int = 0
) -> str:
    """The output of ``command``, which must exit with ``status``."""
    result = subprocess.run(command, capture_output=True, text=True, cwd=cwd, env=env, timeout=900)
    assert result.returncode == status, f"{command}\n{result.stdout}\n{result.stderr}"
    return result.stdout


@pytest.fixture(scope="session")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A clone of this repository's current commit, as a user makes one; one for all xdist workers."""
    return built_once(
        tmp_path_factory, "failure-kinds", lambda into: run(["git", "clone", "-q", str(ROOT), str(into)])
    )


def test_the_release_names_one_version_and_one_license(clone: Path) -> None:
    # So the README cannot lean on a tag: it installs from a clone, a wheel or a commit.
    assert run(["git", "-C", str(clone), "tag", "--list"]) == ""
    assert "version" not in PROJECT
    assert PROJECT["dynamic"] == ["version"]
    hatch = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["hatch"]
    assert hatch["version"]["path"] == "src/failure_kinds/__init__.py"
    assert set(re.findall(r"failure_kinds-(\d+\.\d+\.\d+)-py3", README)) == {VERSION}
    # No install or pin names a release tag: a clone has none.
    assert re.findall(r"@v\d|rev: v\d|--branch v\d", README) == []
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    releases = re.findall(r"^## \[(\d+\.\d+\.\d+)\]", changelog, flags=re.MULTILINE)
    assert releases[0] == VERSION, "the newest release in CHANGELOG.md is the current version"
    assert "## [Unreleased]" in changelog
    assert PROJECT["license"] == "Apache-2.0"
    lines = [line.strip() for line in LICENSE.splitlines() if line.strip()]
    assert lines[:3] == ["Apache License", "Version 2.0, January 2004", "http://www.apache.org/licenses/"]
    assert "END OF TERMS AND CONDITIONS" in LICENSE


def test_install_section_has_every_way_in_and_no_index_by_name() -> None:
    """Until the package is on an index, `pip install failure-kinds` (with or without extras) fails; the
    README says so once and otherwise installs from a clone, a wheel or a URL."""
    commands = "\n".join(INSTALL_BLOCKS)
    for way in ("pip install .", "python -m build", "git+"):
        assert way in commands
    assert "not yet published to a package index" in README
    assert re.findall(r"pip install ['\"]?failure-kinds\b(?!\S* @)", README) == ["pip install failure-kinds"]
    assert "`pip install failure-kinds` does not work yet" in README


def installed(binaries: Path, cwd: Path, imports: tuple[str, ...] = ("failure_kinds",)) -> None:
    """The environment's command gives this version, and its Python imports ``imports``."""
    assert run([str(binaries / "failure-kinds"), "--version"], cwd=cwd) == f"failure-kinds {VERSION}\n"
    run([str(binaries / "python"), "-c", f"import {', '.join(imports)}"], cwd=cwd)


@needs("build")
@pytest.mark.parametrize("block", INSTALL_BLOCKS, ids=lambda block: block.splitlines()[-1][:40])
def test_readme_install_commands_work(block: str, clone: Path, tmp_path: Path) -> None:
    """Each block in a fresh virtual environment, in the clone, as a user would paste it."""
    binaries = fresh_environment(tmp_path / "venv")
    script = "set -euo pipefail\n" + block.replace(CLONE_IN_README, str(clone))
    environment = {**os.environ, "PATH": f"{binaries}{os.pathsep}{os.environ['PATH']}"}
    environment.pop("VIRTUAL_ENV", None)
    run(["bash", "-c", script], cwd=clone, env=environment)
    extras = {"fast": "msgspec", "pydantic": "pydantic"}
    installed(binaries, tmp_path, ("failure_kinds", *(extras[extra] for extra in extras if extra in block)))


@pytest.fixture(scope="session")
def artifacts(clone: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The wheel and the source archive `python -m build` makes of the clone; once for all workers."""
    if not importable("build"):
        pytest.skip("needs build (an optional extra)")
    output = built_once(
        tmp_path_factory, "dist", lambda f: run([sys.executable, "-m", "build", "-o", str(f), str(clone)])
    )
    built = {
        "wheel": output / f"failure_kinds-{VERSION}-py3-none-any.whl",
        "sdist": output / f"failure_kinds-{VERSION}.tar.gz",
    }
    assert sorted(output.iterdir()) == sorted(built.values())
    return built


@needs("twine")
def test_artifacts_carry_the_license_and_pass_twine_check(artifacts: dict[str, Path]) -> None:
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


INSTALLED_METADATA = """
import importlib.metadata, sys, failure_kinds
distribution = importlib.metadata.distribution("failure-kinds")
licenses = [file for file in distribution.files or [] if file.name == "LICENSE"]
print(failure_kinds.__version__, distribution.version, distribution.metadata["License-Expression"])
print(distribution.metadata.get_all("License-File"), len(licenses))
sys.stdout.write(licenses[0].read_text(encoding="utf-8"))
"""


@pytest.mark.parametrize("kind", ["wheel", "sdist"])
def test_artifact_installs_into_a_fresh_environment(
    artifacts: dict[str, Path], kind: str, tmp_path: Path
) -> None:
    binaries = fresh_environment(tmp_path / "venv")
    # The sdist is built on the way in, which fetches the build backend like any user's install does.
    run([str(binaries / "python"), "-m", "pip", "install", "--quiet", "--no-deps", str(artifacts[kind])])
    installed(binaries, tmp_path)
    metadata = run([str(binaries / "python"), "-c", INSTALLED_METADATA], cwd=tmp_path)
    assert metadata == f"{VERSION} {VERSION} Apache-2.0\n['LICENSE'] 1\n{LICENSE}"


def test_pre_commit_instructions_have_no_placeholders() -> None:
    assert len(PRE_COMMIT_BLOCKS) == 2
    assert [block for block in PRE_COMMIT_BLOCKS if "<" in block or ">" in block] == []
    local, remote = PRE_COMMIT_BLOCKS
    for line in ("repo: local", "language: python", "additional_dependencies"):
        assert line in local
    # The pin is a commit the user fills in, and the README says how to find it.
    assert f"rev: {COMMIT_IN_README}\n" in remote
    told = f"in place of `{COMMIT_IN_README}`: `git -C {CLONE_IN_README} rev-parse HEAD`"
    assert told in " ".join(README.split())


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
