"""The package's import graph has no cycle, counting every import (module level, function level and for type
checkers only), and no audit module is over the size budget: a reader who opens one module of the audit
finds what it builds on below it, never a module that needs it back."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parent.parent / "src" / "failure_kinds"
LINE_BUDGET = 600


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imports_of(name: str, source: str) -> set[str]:
    """The package's modules that ``name`` imports anywhere: at its top, inside a function or under ``if
    TYPE_CHECKING:``. Left out: a module's own enclosing packages, which Python imports before the module
    whatever it says."""
    package = name if MODULES[name].name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            found.add(base)
            # ``from . import wire`` imports the module ``wire``; ``from .wire import x`` only ``wire``.
            found.update(f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in MODULES)
    enclosing = {".".join(name.split(".")[:depth]) for depth in range(1, name.count(".") + 1)}
    return {module for module in found if module in MODULES and module != name and module not in enclosing}


def graph() -> dict[str, set[str]]:
    return {name: imports_of(name, path.read_text(encoding="utf-8")) for name, path in MODULES.items()}


def cycle_in(edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph as the modules along it (the first repeated at the end), or None."""
    done: set[str] = set()
    for root in sorted(edges):
        if root in done:
            continue
        trail: list[str] = [root]
        on_trail = {root}
        iterators = [iter(sorted(edges.get(root, ())))]
        while iterators:
            following = next(iterators[-1], None)
            if following is None:
                iterators.pop()
                done.add(trail[-1])
                on_trail.discard(trail.pop())
            elif following in on_trail:
                return [*trail[trail.index(following) :], following]
            elif following not in done:
                trail.append(following)
                on_trail.add(following)
                iterators.append(iter(sorted(edges.get(following, ()))))
    return None


def test_the_import_graph_has_no_cycle() -> None:
    edges = graph()
    assert "failure_kinds.audit.parquet" in edges["failure_kinds.audit.tasks"]  # a lazy import counts
    assert "failure_kinds.audit.render" in edges["failure_kinds.audit.engine"]  # a type checker's too
    assert cycle_in(edges) is None


def test_a_module_that_imports_another_back_is_a_cycle() -> None:
    assert cycle_in({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle_in({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None
    assert cycle_in({"a": {"a"}}) == ["a", "a"]
    source = "TYPE_CHECKING = False\nif TYPE_CHECKING:\n    from .render import Report\n"
    assert imports_of("failure_kinds.audit.engine", source) == {"failure_kinds.audit.render"}


@pytest.mark.parametrize("name", sorted(name for name in MODULES if name.startswith("failure_kinds.audit")))
def test_every_audit_module_imports_and_keeps_to_the_budget(name: str) -> None:
    importlib.import_module(name)  # without its extra: pyarrow and Ray are imported only when used
    lines = MODULES[name].read_text(encoding="utf-8").count("\n")
    assert lines <= LINE_BUDGET, f"{name} has {lines} lines"
