from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

from failure_kinds import _runtime


@pytest.fixture(autouse=True)
def fresh_reports() -> Iterator[None]:
    """Each test starts with nothing reported yet, as a new process would, and leaves the runtime
    declarations and the caches they touch as it found them, so no test sees another's declare_namespace."""
    saved = _runtime.snapshot()
    _runtime.forget_reports()
    yield
    _runtime.restore(saved)


ROOT = Path(__file__).parent.parent


@dataclass(frozen=True)
class WheelInstall:
    """The project built as a wheel and installed, alone, into a fresh virtual environment."""

    wheel: Path
    python: Path


@pytest.fixture(scope="session")
def wheel_install(tmp_path_factory: pytest.TempPathFactory) -> WheelInstall:
    build = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--wheel-dir",
            str(build),
            str(ROOT),
        ],
        check=True,
    )
    (wheel,) = build.glob("failure_kinds-*.whl")
    environment = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", str(environment)], check=True)
    python = environment / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", str(wheel)],
        check=True,
    )
    # The optional integration the typing cases also cover; from the package index like any user's.
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "pydantic>=2.6"], check=True)
    return WheelInstall(wheel=wheel, python=python)


def refuse_to_open(monkeypatch: pytest.MonkeyPatch, module: ModuleType, refused: Path) -> None:
    """Make ``open`` in ``module`` refuse ``refused`` as it would for a user without access. Permissions
    mean nothing to root, as CI runs, so the refusal is what open() raises."""
    real_open = open

    def refusing_open(path: str, mode: str = "r") -> object:
        if path == str(refused):
            raise PermissionError(13, "Permission denied", path)
        return real_open(path, mode)

    monkeypatch.setattr(module, "open", refusing_open, raising=False)
