"""`import failure_kinds` stays cheap and loads nothing outside the standard library; what a reported value
needs loads on first use; and the package's modules import one another without a cycle."""

from __future__ import annotations

import ast
import graphlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

import failure_kinds

PACKAGE = Path(failure_kinds.__file__).parent
# What `import failure_kinds` itself loads of the package: the vocabulary and the runtime state.
CORE = ["failure_kinds", "failure_kinds._runtime"]

# The package's modules loaded after each step, a step being the import, values that pass, a warned-about
# value (argv[1]: a misspelling or an older label), the first stage and the first declaration.
STEPS = """
import json, sys
before = set(sys.modules)
import failure_kinds as fk
steps = [sorted(set(sys.modules) - before)]
def after(*calls):
    steps.append(sorted(name for name in sys.modules if name.startswith("failure_kinds")))
for value in ("cancelled", "agent_no_generation", "my_env:quota_hit"):
    fk.validate_failure_kind(value)
fk.metric_label("my_env:quota_hit"), fk.metric_label("protocol_violation"), fk.is_registered("peer_drop")
fk.namespaced("my_env", "quota_hit"), fk.FailureKind.CANCELLED.since, fk.FailureKind.CANCELLED.replaced_by
after()
after(fk.validate_failure_kind(sys.argv[1]))
after(fk.FailureStage)
after(fk.declare_namespace("my_env", ["quota_hit"]))
print(json.dumps(steps))
"""
# Suggestions, the display of values and their standard modules serve only values that get reported.
HEAVY = {"argparse", "ast", "dataclasses", "difflib", "gzip", "hashlib", "pydantic", "reprlib", "tomllib"}
HEAVY |= {"typing", "typing_extensions", "failure_kinds.history"}
HEAVY |= {f"failure_kinds.{name}" for name in ("_arguments", "_display", "_stages", "_suggest")}


@pytest.mark.parametrize("warned", ["judge_faild", "peer_drop"])
def test_import_loads_the_standard_library_and_the_rest_on_first_need(warned: str) -> None:
    # -I: no user site, no PYTHON* variables, so only what the import itself pulls in counts.
    run = subprocess.run(
        [sys.executable, "-I", "-c", STEPS, warned], capture_output=True, text=True, check=True
    )
    imported, quiet, reported, staged, declared = (set(step) for step in json.loads(run.stdout))
    assert sorted(name for name in imported if name.partition(".")[0] == "failure_kinds") == CORE
    assert {name.partition(".")[0] for name in imported} <= {*sys.stdlib_module_names, "failure_kinds"}
    assert imported & HEAVY == set()
    assert sorted(quiet) == CORE  # values that pass load nothing more
    assert {"failure_kinds._suggest", "failure_kinds._display"} <= reported
    if warned == "peer_drop":  # an older label needs the older labels, not the stages
        assert "failure_kinds.history" in reported
    assert "failure_kinds._stages" not in reported
    assert staged - reported == {"failure_kinds._stages"}
    assert declared - staged == {"failure_kinds._arguments"}


def test_the_imported_core_fits_its_line_budget() -> None:
    # The modules `import failure_kinds` loads are what a reader of the core reads: 550 lines in all,
    # the vocabulary's own module at most 300.
    files = {"failure_kinds": "__init__.py", **{name: f"{name.rpartition('.')[2]}.py" for name in CORE[1:]}}
    lines = {
        name: len((PACKAGE / file).read_text(encoding="utf-8").splitlines()) for name, file in files.items()
    }
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


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imports_of(name: str, source: str) -> set[str]:
    """The package's modules that ``name`` imports anywhere: at its top, inside a function or under ``if
    TYPE_CHECKING:`` (ast.walk visits every node). Left out: its own enclosing packages, which Python
    imports before the module whatever it says."""
    package = (name if MODULES[name].name == "__init__.py" else name.rpartition(".")[0]).split(".")
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            anchor = package[: len(package) - node.level + 1] if node.level else []
            base = ".".join([*anchor, *([node.module] if node.module else [])])
            # ``from . import tasks`` imports the module ``tasks``; ``from .tasks import x`` only ``tasks``.
            found.update([base, *(f"{base}.{alias.name}" for alias in node.names)])
    enclosing = {".".join(name.split(".")[:depth]) for depth in range(1, name.count(".") + 1)}
    return {module for module in found & set(MODULES) if module != name and module not in enclosing}


def test_no_import_cycle_counting_lazy_and_type_checking_imports() -> None:
    lazy = "def f():\n    from . import history\nif TYPE_CHECKING:\n    import failure_kinds.audit\n"
    assert imports_of("failure_kinds.cli", lazy) == {"failure_kinds.history", "failure_kinds.audit"}
    graph = {name: imports_of(name, path.read_text(encoding="utf-8")) for name, path in MODULES.items()}
    assert len([name for name in graph if name.startswith("failure_kinds.audit.")]) > 1  # the audit too
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as error:
        pytest.fail(f"import cycle: {' -> '.join(error.args[1])}")
