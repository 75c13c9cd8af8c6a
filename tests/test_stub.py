"""The committed stub is exactly what the generator writes from the enum."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from failure_kinds import FailureKind

ROOT = Path(__file__).parent.parent
GENERATOR = ROOT / "stubs" / "generate.py"
STUB = ROOT / "stubs" / "failure_kinds" / "__init__.pyi"


def load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("stub_generator", GENERATOR)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_stub_matches_generator() -> None:
    assert STUB.read_text(encoding="utf-8") == load_generator().render()


def test_stub_spells_out_every_kind() -> None:
    text = STUB.read_text(encoding="utf-8")
    for kind in FailureKind:
        assert f'{kind.name}: Final[Literal["{kind.value}"]]' in text
        assert f'    {kind.name} = "{kind.value}"' in text
        assert f'    "{kind.value}",' in text


def test_stub_spells_out_every_stage_and_the_lifecycle_properties() -> None:
    import failure_kinds

    text = STUB.read_text(encoding="utf-8")
    stages = list(failure_kinds.Stage)
    assert len(stages) == 5
    block = text.split("FailureStage: TypeAlias = Literal[", 1)[1].split("]", 1)[0]
    assert [line.strip().strip('",') for line in block.strip().splitlines()] == [s.value for s in stages]
    for stage in stages:
        assert f'    {stage.name} = "{stage.value}"' in text
    assert "class Stage(enum.StrEnum):" in text
    assert "    def since(self) -> str: ..." in text
    assert "    def replaced_by(self) -> FailureKind | None: ..." in text
    for name in ("Stage", "FailureStage"):
        assert f'    "{name}",' in text


def test_check_mode_detects_drift(tmp_path: Path) -> None:
    # A copy of the generator whose stub is edited by hand must fail its --check.
    copy = tmp_path / "stubs"
    (copy / "failure_kinds").mkdir(parents=True)
    (copy / "generate.py").write_text(GENERATOR.read_text(encoding="utf-8"), encoding="utf-8")
    (copy / "failure_kinds" / "__init__.pyi").write_text(
        STUB.read_text(encoding="utf-8").replace('"cancelled"', '"canceled"'), encoding="utf-8"
    )
    (tmp_path / "src").symlink_to(ROOT / "src")
    command = [sys.executable, str(copy / "generate.py"), "--check"]
    drifted = subprocess.run(command, capture_output=True, text=True)
    assert drifted.returncode == 1
    assert "out of date" in drifted.stderr
    subprocess.run([sys.executable, str(copy / "generate.py")], check=True, capture_output=True)
    assert subprocess.run(command).returncode == 0
    assert (copy / "failure_kinds" / "__init__.pyi").read_text(encoding="utf-8") == STUB.read_text(
        encoding="utf-8"
    )
