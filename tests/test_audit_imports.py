"""The package's import graph has no cycle and no module is over the size budget: a reader who opens one
module of the audit finds what it builds on below it, never a module that needs it back."""

from __future__ import annotations

import ast
import importlib
import itertools
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

PACKAGE = Path(__file__).parent.parent / "src" / "failure_kinds"
LINE_BUDGET = 500


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _is_type_checking(node: ast.If) -> bool:
    return isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def imports_of(name: str, source: str) -> set[str]:
    """The package's modules that ``name`` imports, at its top or inside a function, whenever it runs.
    Left out: imports for type checkers only (under ``if TYPE_CHECKING:``, never run), and a module's
    own enclosing packages, which Python imports before the module whatever it says."""
    package = name if MODULES[name].name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    pending: list[ast.AST] = [ast.parse(source)]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.If) and _is_type_checking(node):
            pending.extend(node.orelse)
            continue
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
        pending.extend(ast.iter_child_nodes(node))
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
    assert "failure_kinds.audit.report" in edges["failure_kinds.audit.partial"]  # a lazy import counts
    assert cycle_in(edges) is None


@given(st.dictionaries(st.sampled_from("abcdef"), st.sets(st.sampled_from("abcdef")), max_size=6))
def test_the_cycle_search_finds_a_cycle_exactly_when_there_is_one(edges: dict[str, set[str]]) -> None:
    found = cycle_in(edges)

    def reaches(start: str, goal: str) -> bool:
        seen: set[str] = set()
        pending = list(edges.get(start, ()))
        while pending:
            node = pending.pop()
            if node == goal:
                return True
            if node not in seen:
                seen.add(node)
                pending.extend(edges.get(node, ()))
        return False

    assert (found is not None) == any(reaches(node, node) for node in edges)
    if found is not None:
        assert found[0] == found[-1]
        assert all(later in edges[earlier] for earlier, later in itertools.pairwise(found))


def test_a_module_that_imports_another_back_is_a_cycle() -> None:
    assert cycle_in({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle_in({"a": {"b"}, "b": set()}) is None


@pytest.mark.parametrize("name", sorted(name for name in MODULES if name.startswith("failure_kinds.audit")))
def test_every_audit_module_imports_and_keeps_to_the_budget(name: str) -> None:
    importlib.import_module(name)  # without its extra: pyarrow and Ray are imported only when used
    lines = MODULES[name].read_text(encoding="utf-8").count("\n")
    assert lines <= LINE_BUDGET, f"{name} has {lines} lines"
