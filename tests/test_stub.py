"""The committed stub is exactly what the generator writes from the enum."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from failure_kinds import FailureKind

ROOT = Path(__file__).parent.parent
GENERATOR = ROOT / "stubs" / "generate.py"
STUB = ROOT / "stubs" / "failure_kinds" / "__init__.pyi"
PAGE = ROOT / "docs" / "vocabulary.md"


def load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("stub_generator", GENERATOR)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_stub_is_the_generators_and_spells_out_every_kind_and_stage() -> None:
    import failure_kinds

    text = STUB.read_text(encoding="utf-8")
    assert text == load_generator().render()
    for kind in FailureKind:
        assert f'{kind.name}: Final[Literal["{kind.value}"]]' in text
        assert f'    {kind.name} = "{kind.value}"' in text
        assert f'    "{kind.value}",' in text
    stages = list(failure_kinds.Stage)
    block = text.split("FailureStage: TypeAlias = Literal[", 1)[1].split("]", 1)[0]
    assert [line.strip().strip('",') for line in block.strip().splitlines()] == [s.value for s in stages]
    assert all(f'    {stage.name} = "{stage.value}"' in text for stage in stages)
    for line in (
        "class Stage(enum.StrEnum):",
        "    def since(self) -> str: ...",
        '    "Stage",',
        '    "FailureStage",',
    ):
        assert line in text
    assert "    def replaced_by(self) -> FailureKind | None: ..." in text


@pytest.mark.parametrize("page", ["current", "stale", "unmarked"])
def test_check_mode_detects_drift_of_the_stub_and_the_page(tmp_path: Path, page: str) -> None:
    # A copy of the generator whose stub is edited by hand must fail its --check, and so must one whose
    # vocabulary page is stale; a page without its markers is an error (exit 2) that writes nothing.
    copy = tmp_path / "stubs"
    (copy / "failure_kinds").mkdir(parents=True)
    (tmp_path / "docs").mkdir()
    (copy / "generate.py").write_text(GENERATOR.read_text(encoding="utf-8"), encoding="utf-8")
    stub, vocabulary = STUB.read_text(encoding="utf-8"), PAGE.read_text(encoding="utf-8")
    edited = {"current": vocabulary, "stale": vocabulary.replace("| `cancelled` |", "| `canceled` |")}
    (tmp_path / "docs" / "vocabulary.md").write_text(edited.get(page, "# no markers\n"), encoding="utf-8")
    (copy / "failure_kinds" / "__init__.pyi").write_text(
        stub.replace('"cancelled"', '"canceled"'), encoding="utf-8"
    )
    (tmp_path / "src").symlink_to(ROOT / "src")
    command = [sys.executable, str(copy / "generate.py"), "--check"]
    drifted = subprocess.run(command, capture_output=True, text=True)
    assert drifted.returncode == (2 if page == "unmarked" else 1)
    assert ("needs one line" if page == "unmarked" else "__init__.pyi is out of date") in drifted.stderr
    assert ("vocabulary.md is out of date" in drifted.stderr) == (page == "stale")
    written = subprocess.run([sys.executable, str(copy / "generate.py")], capture_output=True)
    assert written.returncode == (2 if page == "unmarked" else 0)
    if page != "unmarked":
        assert subprocess.run(command).returncode == 0
        assert (copy / "failure_kinds" / "__init__.pyi").read_text(encoding="utf-8") == stub
        assert (tmp_path / "docs" / "vocabulary.md").read_text(encoding="utf-8") == vocabulary
