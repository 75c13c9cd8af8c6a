"""pytest plugin: make unregistered failure kinds fail the test that emits them.

Registered through the ``pytest11`` entry point and inert unless asked for:

- ``pytest --failure-kinds-strict``, or ``failure_kinds_strict = true`` in the ini file: every
  unregistered value that reaches ``validate_failure_kind`` during a test fails that test, every time,
  not only the first time the process warns about it; so does an undeclared kind of a server given to
  ``failure_kinds.declare_namespace``;
- the ``failure_kinds_reported`` fixture: the unregistered and undeclared values that reached
  ``validate_failure_kind`` during the current test, in order, one entry per occurrence.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import cast

import pytest

# The plugin hooks into the core through its private observer list: they are one package.
import failure_kinds._runtime as _runtime

_REPORTED = pytest.StashKey[list[object]]()
FIXTURE = "failure_kinds_reported"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("failure-kinds")
    group.addoption(
        "--failure-kinds-strict",
        action="store_true",
        default=False,
        help="fail every test in which an unregistered failure kind reaches validate_failure_kind",
    )
    parser.addini(
        "failure_kinds_strict",
        type="bool",
        default=False,
        help="like --failure-kinds-strict, set in the ini file",
    )


def _strict(config: pytest.Config) -> bool:
    return bool(config.getoption("failure_kinds_strict") or config.getini("failure_kinds_strict"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    if _strict(item.config) or FIXTURE in getattr(item, "fixturenames", ()):
        reported: list[object] = []
        item.stash[_REPORTED] = reported
        _runtime.OBSERVERS.append(reported.append)
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    result = yield
    reported = item.stash.get(_REPORTED, None)
    if reported and _strict(item.config):
        pytest.fail(_describe(reported), pytrace=False)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, None, None]:
    try:
        return (yield)
    finally:
        reported = item.stash.get(_REPORTED, None)
        if reported is not None:
            _runtime.OBSERVERS.remove(reported.append)


@pytest.fixture
def failure_kinds_reported(request: pytest.FixtureRequest) -> list[object]:
    """The unregistered values that reached validate_failure_kind during this test, one per occurrence."""
    # pytest types request.node loosely; every node has a stash, where pytest_runtest_setup put the list.
    return cast("pytest.Item", request.node).stash[_REPORTED]  # pyright: ignore[reportUnknownMemberType]


def _describe(reported: list[object]) -> str:
    from failure_kinds._display import shown
    from failure_kinds._suggest import suggest_any

    counts: dict[str, int] = {}
    for value in reported:
        text = _runtime.plain(value)
        described = shown(value if text is None else text)
        if text is not None:
            hint = suggest_any(text)
            if _runtime.category(text) == "undeclared":
                described += f" (undeclared in namespace {shown(text.partition(':')[0])}"
                described += f"; did you mean {hint!r}?)" if hint is not None else ")"
            elif hint is not None:
                described += f" (did you mean {hint!r}?)"
        counts[described] = counts.get(described, 0) + 1
    listed = ", ".join(shown if count == 1 else f"{shown} x{count}" for shown, count in counts.items())
    return f"unregistered failure kinds reached validate_failure_kind: {listed}"
