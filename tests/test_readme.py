"""The README's recipes run as written."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import readme_recipes


@pytest.mark.parametrize("name", sorted(readme_recipes()))
def test_recipe_runs(name: str) -> None:
    code = readme_recipes()[name]
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
