"""`import failure_kinds` must stay cheap and load nothing outside the standard library."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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


# What `import failure_kinds` itself loads of the package: the vocabulary and the runtime state.
CORE = ["failure_kinds", "failure_kinds._runtime"]


def test_import_loads_only_the_standard_library() -> None:
    loaded = modules_loaded_by_import()
    assert [name for name in loaded if name.partition(".")[0] == "failure_kinds"] == CORE
    outside = [
        name for name in loaded if name.partition(".")[0] not in {*sys.stdlib_module_names, "failure_kinds"}
    ]
    assert outside == []


def test_import_loads_no_heavy_standard_modules() -> None:
    loaded = set(modules_loaded_by_import())
    # Suggestions, the display of values and their standard modules serve only values that get reported,
    # so they load on first need.
    heavy = {
        "argparse",
        "ast",
        "dataclasses",
        "difflib",
        "gzip",
        "hashlib",
        "pydantic",
        "reprlib",
        "tomllib",
        "typing",
        "typing_extensions",
        "failure_kinds._arguments",
        "failure_kinds._display",
        "failure_kinds._stages",
        "failure_kinds._suggest",
        "failure_kinds.history",
    }
    assert loaded & heavy == set()


LAZY_PROBE = """
import json, logging, sys
logging.disable(logging.CRITICAL)
import failure_kinds
failure_kinds.validate_failure_kind("cancelled")
failure_kinds.validate_failure_kind("agent_no_generation")
failure_kinds.validate_failure_kind("my_env:quota_hit")
failure_kinds.metric_label("my_env:quota_hit")
failure_kinds.metric_label("protocol_violation")
failure_kinds.is_registered("peer_drop")
failure_kinds.namespaced("my_env", "quota_hit")
failure_kinds.FailureKind.CANCELLED.since, failure_kinds.FailureKind.CANCELLED.replaced_by
quiet = sorted(name for name in sys.modules if name.startswith("failure_kinds"))
failure_kinds.validate_failure_kind("judge_faild")
print(json.dumps([quiet, "failure_kinds._suggest" in sys.modules, "failure_kinds._display" in sys.modules]))
"""


def test_suggestions_and_display_load_only_when_a_warning_is_written() -> None:
    result = subprocess.run(
        [sys.executable, "-I", "-c", LAZY_PROBE], capture_output=True, text=True, check=True
    )
    quiet, suggest_loaded, display_loaded = json.loads(result.stdout)
    assert quiet == CORE  # values that pass load nothing more
    assert suggest_loaded
    assert display_loaded


OLDER_PROBE = """
import json, logging, sys
logging.disable(logging.CRITICAL)
import failure_kinds
loaded = []
for step in (
    lambda: failure_kinds.validate_failure_kind("peer_drop"),
    lambda: failure_kinds.FailureStage,
    lambda: failure_kinds.declare_namespace("my_env", ["quota_hit"]),
):
    step()
    loaded.append(sorted(name for name in sys.modules if name.startswith("failure_kinds")))
print(json.dumps(loaded))
"""


def test_history_stages_and_checks_load_when_first_needed() -> None:
    result = subprocess.run(
        [sys.executable, "-I", "-c", OLDER_PROBE], capture_output=True, text=True, check=True
    )
    warned, staged, declared = (set(step) for step in json.loads(result.stdout))
    # An older label is reported: the warning needs the older labels, not the stages.
    assert {"failure_kinds.history", "failure_kinds._suggest", "failure_kinds._display"} <= warned
    assert "failure_kinds._stages" not in warned
    assert staged - warned == {"failure_kinds._stages"}
    assert declared - staged == {"failure_kinds._arguments"}


def test_the_imported_core_fits_its_line_budget() -> None:
    # The modules `import failure_kinds` loads are what a reader of the core reads: 550 lines in all,
    # the vocabulary's own module at most 300.
    import failure_kinds

    package = Path(failure_kinds.__file__).parent
    lines = {
        name: len((package / f"{name.rpartition('.')[2]}.py").read_text(encoding="utf-8").splitlines())
        for name in CORE[1:]
    }
    lines["failure_kinds"] = len((package / "__init__.py").read_text(encoding="utf-8").splitlines())
    assert lines["failure_kinds"] <= 300, lines
    assert sum(lines.values()) <= 550, lines


# dir() lists the names built on first use before they are; eight threads reading one at once get one
# object (the interpreter told to switch threads as often as it can).
RACE = """
import sys, threading, typing
sys.setswitchinterval(1e-6)
import failure_kinds
deferred = {"FailureStage", "Stage", "AnyFailureKind", "FailureKindName", "NamespacedFailureKind"}
assert not deferred & set(vars(failure_kinds)) and deferred <= set(dir(failure_kinds))
barrier, seen = threading.Barrier(8), []
def read():
    barrier.wait()
    seen.append((failure_kinds.NamespacedFailureKind, failure_kinds.AnyFailureKind))
threads = [threading.Thread(target=read) for _ in range(8)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(len({id(new) for new, _ in seen}), len({id(union) for _, union in seen}))
print(all(typing.get_args(union)[-1] is failure_kinds.NamespacedFailureKind for _, union in seen))
"""


def test_names_built_on_first_use_are_listed_and_built_once_across_threads() -> None:
    result = subprocess.run([sys.executable, "-I", "-c", RACE], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["1", "1", "True"]
