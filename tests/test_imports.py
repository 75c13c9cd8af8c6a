"""`import failure_kinds` must stay cheap and load nothing outside the standard library."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import json, sys
before = set(sys.modules)
import failure_kinds
print(json.dumps(sorted(set(sys.modules) - before)))
"""


def modules_loaded_by_import() -> list[str]:
    # -I: no user site, no PYTHON* variables, so only what the import itself pulls in counts.
    result = subprocess.run([sys.executable, "-I", "-c", PROBE], capture_output=True, text=True, check=True)
    loaded: list[str] = json.loads(result.stdout)
    return loaded


def test_import_loads_only_the_standard_library() -> None:
    loaded = modules_loaded_by_import()
    assert "failure_kinds" in loaded
    outside = [
        name
        for name in loaded
        if name.partition(".")[0] not in sys.stdlib_module_names and name != "failure_kinds"
    ]
    assert outside == []


def test_import_loads_no_heavy_standard_modules() -> None:
    loaded = set(modules_loaded_by_import())
    # difflib and hashlib serve only values that get reported, so they load on first need.
    heavy = {
        "argparse",
        "ast",
        "difflib",
        "gzip",
        "hashlib",
        "pydantic",
        "tomllib",
        "typing",
        "typing_extensions",
    }
    assert loaded & heavy == set()
    assert not any(name.startswith("failure_kinds.") for name in loaded)
