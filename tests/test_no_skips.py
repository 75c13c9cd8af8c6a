"""`make test` installs every extra and sets FAILURE_KINDS_NO_SKIPS, under which tests/conftest.py reports
any skip as a failure: a check that never ran cannot pass for one that did."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import NO_SKIPS

SKIPPING = """
import pytest

def test_runs():
    pass

@pytest.mark.skipif(True, reason="needs something absent")
def test_skipped():
    pass

@pytest.mark.xfail(reason="a known failure, not a skip")
def test_expected_to_fail():
    raise AssertionError
"""

SKIPPED_MODULE = """
import pytest

pytest.importorskip("a_module_nobody_installed")

def test_never_collected():
    pass
"""


@pytest.mark.parametrize("no_skips", [False, True])
def test_a_skipped_test_or_module_fails_only_under_the_variable(tmp_path: Path, no_skips: bool) -> None:
    """pytest on a test file and a module skipped as it is collected, with this suite's conftest loaded as
    a plugin and nothing else of it."""
    (tmp_path / "test_case.py").write_text(SKIPPING, encoding="utf-8")
    (tmp_path / "test_module.py").write_text(SKIPPED_MODULE, encoding="utf-8")
    path = os.pathsep.join([str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")])
    environment = {**os.environ, "PYTHONPATH": path}
    environment.pop(NO_SKIPS, None)
    environment |= {NO_SKIPS: "1"} if no_skips else {}
    plugins = ["-p", "conftest", "-p", "no:cacheprovider", "-p", "no:randomly"]
    command = [sys.executable, "-m", "pytest", *plugins, "-rA", "--continue-on-collection-errors"]
    result = subprocess.run(
        command, cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=120
    )
    summary = result.stdout.splitlines()[-1]
    if no_skips:
        # A skip marker is evaluated as the test is set up, so the skip turns into an error of the setup.
        assert result.returncode == 1, result.stdout
        assert "1 passed, 1 xfailed, 2 errors" in summary
        assert f"skipped, which {NO_SKIPS} makes a failure: Skipped: needs something absent" in result.stdout
        assert "could not import 'a_module_nobody_installed'" in result.stdout
    else:
        assert result.returncode == 0, result.stdout
        assert "1 passed, 2 skipped, 1 xfailed" in summary


GROUPED = """
import os

import pytest

pytestmark = pytest.mark.xdist_group("shared")


@pytest.mark.parametrize("case", range(6))
def test_grouped(case):
    with open("workers.txt", "a") as file:
        file.write(os.environ["PYTEST_XDIST_WORKER"] + "\\n")
"""


def test_a_group_runs_on_one_worker_under_make_tests_options(tmp_path: Path) -> None:
    """The Ray tests share one cluster and each checker's cases one cache only while --dist loadgroup
    keeps an xdist_group on one worker, which some pytest and xdist versions together do not."""
    pytest.importorskip("xdist", reason="needs pytest-xdist, which make test runs the suite with")
    (tmp_path / "test_grouped.py").write_text(GROUPED, encoding="utf-8")
    command = [sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-p", "no:cacheprovider"]
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout
    workers = (tmp_path / "workers.txt").read_text(encoding="utf-8").split()
    assert (len(workers), len(set(workers))) == (6, 1), workers
