"""`make test` installs every extra and sets FAILURE_KINDS_NO_SKIPS, under which tests/conftest.py reports
any skip as a failure: a check that never ran cannot pass for one that did."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import NO_SKIPS

TESTS = Path(__file__).parent

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


def pytest_on(tmp_path: Path, source: str, no_skips: bool) -> subprocess.CompletedProcess[str]:
    """pytest on one test file, with this suite's conftest loaded as a plugin and nothing else of it."""
    (tmp_path / "test_case.py").write_text(source, encoding="utf-8")
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
    }
    environment.pop(NO_SKIPS, None)
    if no_skips:
        environment[NO_SKIPS] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "conftest", "-p", "no:cacheprovider", "-rA", "test_case.py"],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("no_skips", [False, True])
def test_a_skipped_test_fails_only_under_the_variable(tmp_path: Path, no_skips: bool) -> None:
    result = pytest_on(tmp_path, SKIPPING, no_skips)
    summary = result.stdout.splitlines()[-1]
    if no_skips:
        # A skip marker is evaluated as the test is set up, so the skip turns into an error of the setup.
        assert result.returncode == 1, result.stdout
        assert "1 passed, 1 xfailed, 1 error" in summary
        assert f"skipped, which {NO_SKIPS} makes a failure: Skipped: needs something absent" in result.stdout
    else:
        assert result.returncode == 0, result.stdout
        assert "1 passed, 1 skipped, 1 xfailed" in summary


@pytest.mark.parametrize("no_skips", [False, True])
def test_a_module_skipped_at_collection_fails_only_under_the_variable(tmp_path: Path, no_skips: bool) -> None:
    result = pytest_on(tmp_path, SKIPPED_MODULE, no_skips)
    summary = result.stdout.splitlines()[-1]
    if no_skips:
        assert result.returncode != 0, result.stdout
        assert "1 error" in summary
        assert "could not import 'a_module_nobody_installed'" in result.stdout
    else:
        # Nothing ran, which pytest says with exit status 5.
        assert result.returncode == pytest.ExitCode.NO_TESTS_COLLECTED, result.stdout
        assert "1 skipped" in summary
