from __future__ import annotations

import fcntl
import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import ROOT, examples, fresh_environment
from hypothesis import settings

from failure_kinds import _runtime

# A property that names no number of examples gets hypothesis's default of a hundred, scaled as the others
# are (helpers.FEWER_EXAMPLES). No deadline: a per-example time limit is a timed assertion, which fails
# on a busy machine rather than on a bug.
settings.register_profile("failure_kinds", max_examples=examples(100), deadline=None)
settings.load_profile("failure_kinds")


@pytest.fixture(autouse=True)
def fresh_reports() -> Iterator[None]:
    """Each test starts with nothing reported yet, as a new process would, and leaves the runtime
    declarations and the caches they touch as it found them, so no test sees another's declare_namespace."""
    saved = _runtime.snapshot()
    _runtime.forget_reports()
    yield
    _runtime.restore(saved)


@dataclass(frozen=True)
class WheelInstall:
    """The project built as a wheel and installed, alone, into a fresh virtual environment."""

    wheel: Path
    python: Path


# `make test` installs every extra, so a test that skips there for a missing one hides a check that
# never ran: with this variable set, such a skip is reported as a failure. xfail is not a skip.
NO_SKIPS = "FAILURE_KINDS_NO_SKIPS"


Report = pytest.CollectReport | pytest.TestReport


def fail_if_skipped(report: Report) -> None:
    if not (report.skipped and os.environ.get(NO_SKIPS)) or hasattr(report, "wasxfail"):
        return
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    report.outcome = "failed"
    report.longrepr = f"skipped, which {NO_SKIPS} makes a failure: {reason}"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport() -> Generator[None, Report, Report]:
    report = yield
    fail_if_skipped(report)
    return report


pytest_make_collect_report = pytest_runtest_makereport  # the same for a module skipped as it is collected


def built_once(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]) -> Path:
    """The folder ``name`` that ``build`` fills, made once per test run. Under pytest-xdist every worker
    has a temporary directory of its own inside the run's; the folder goes beside them, and the first
    worker to ask builds it while the others wait on the lock, so a wheel is not built once per worker."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    folder = base / name
    done = base / f"{name}.built"
    with open(base / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            build(folder)
            done.touch()
    return folder


@pytest.fixture(scope="session")
def wheel_install(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> WheelInstall:
    def build(folder: Path) -> None:
        # Without the build backend installed, pip fetches it into an isolated environment, as for any
        # user; `make test` has it, and saves the download.
        isolation = [] if importlib.util.find_spec("hatchling") is None else ["--no-build-isolation"]
        subprocess.run(
            [
                *(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", *isolation),
                *("--wheel-dir", str(folder / "wheel"), str(ROOT)),
            ],
            check=True,
        )
        (wheel,) = (folder / "wheel").glob("failure_kinds-*.whl")
        python = fresh_environment(folder / "venv") / "python"
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", str(wheel)],
            check=True,
        )
        # The optional integrations the typing cases (tests/test_typing.py) also cover, from the package
        # index like any user's. Only those cases need them, and they are all interpreter_independent: a
        # run that leaves such tests out (make test on its other Pythons) does not fetch them.
        if "not interpreter_independent" not in request.config.option.markexpr:
            extras = ["pydantic>=2.6", "opentelemetry-sdk>=1.20", "prometheus_client>=0.17"]
            subprocess.run([str(python), "-m", "pip", "install", "--quiet", *extras], check=True)

    folder = built_once(tmp_path_factory, "wheel_install", build)
    (wheel,) = (folder / "wheel").glob("failure_kinds-*.whl")
    return WheelInstall(wheel=wheel, python=folder / "venv" / "bin" / "python")
