"""pytest plugin: make unregistered failure kinds fail the test that emits them.

Registered through the ``pytest11`` entry point and inert unless asked for:

- ``pytest --failure-kinds-strict``, or ``failure_kinds_strict = true`` in the ini file: every value
  ``validate_failure_kind`` warns about fails the test it reaches, every time, not only the first time
  the process warns about it. That is an unregistered value (a misspelling, with the kind it probably
  meant), an older label (with its replacement, or saying it has none), a deprecated kind (with its
  replacement), and an undeclared kind of a server given to ``failure_kinds.declare_namespace``;
- the ``failure_kinds_reported`` fixture: those values, as they reached ``validate_failure_kind``
  during the current test, in order, one entry per occurrence;
- the ``failure_kinds_allow(*values)`` marker: the strict mode lets the test validate those values, or
  any value when it names none; the fixture still lists them.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import cast

import pytest

# The plugin hooks into the core through its private observer list: they are one package.
import failure_kinds._runtime as _runtime

_REPORTED = pytest.StashKey[list[object]]()
# What a test's failure_kinds_allow markers name; None when one names nothing, which allows every value.
_ALLOWED = pytest.StashKey["frozenset[str] | None"]()
# The values a phase that already ended in its own failure, skip or xfail validated: its report names
# them instead of the plugin changing its outcome.
_ALONGSIDE = pytest.StashKey[list[object]]()
FIXTURE = "failure_kinds_reported"


def pytest_addoption(parser: pytest.Parser) -> None:
    strict = (
        "fail every test in which a failure kind that validate_failure_kind warns about (unregistered, "
        "undeclared, an older label or deprecated) reaches it"
    )
    parser.getgroup("failure-kinds").addoption("--failure-kinds-strict", action="store_true", help=strict)
    ini = "like --failure-kinds-strict, set in the ini file"
    parser.addini("failure_kinds_strict", type="bool", default=False, help=ini)


def pytest_configure(config: pytest.Config) -> None:
    allow = "failure_kinds_allow(*values): the strict mode lets the test validate these values (all if none)"
    config.addinivalue_line("markers", allow)


def _strict(config: pytest.Config) -> bool:
    return bool(config.getoption("failure_kinds_strict") or config.getini("failure_kinds_strict"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    markers = list(item.iter_markers("failure_kinds_allow"))
    if markers:
        item.stash[_ALLOWED] = _allowed(markers)
    if _strict(item.config) or FIXTURE in getattr(item, "fixturenames", ()):
        reported: list[object] = []
        item.stash[_REPORTED] = reported
        _runtime.OBSERVERS.append(reported.append)
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    # What the fixtures' setup and the test itself reported fails the test here; what the fixtures'
    # teardown reports fails its teardown, the one phase left that can still fail.
    reported = item.stash.get(_REPORTED, None)
    try:
        result = yield
    except BaseException:
        if reported:
            item.stash[_ALONGSIDE] = _failing(item, reported)
        raise
    failing = _failing(item, reported or [])
    if failing and _strict(item.config):
        pytest.fail(_describe(failing), pytrace=False)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, None, None]:
    reported = item.stash.get(_REPORTED, None)
    start = len(reported or ())
    try:
        result = yield
    finally:
        if reported is not None:
            _runtime.OBSERVERS.remove(reported.append)
    failing = _failing(item, (reported or [])[start:])
    if failing and _strict(item.config):
        pytest.fail(_describe(failing, when=" in teardown"), pytrace=False)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if not _strict(item.config):
        return report
    alongside: list[object] | None = None
    if call.when == "call":
        alongside = item.stash.get(_ALONGSIDE, None)
    elif call.when == "setup" and not report.passed:  # the call phase, which would report them, won't run
        alongside = _failing(item, item.stash.get(_REPORTED, list[object]()))
    if alongside:
        report.sections.append(("failure-kinds", _describe(alongside)))
    return report


@pytest.fixture
def failure_kinds_reported(request: pytest.FixtureRequest) -> list[object]:
    """The values validate_failure_kind reported during this test, one per occurrence."""
    # pytest types request.node loosely; every node has a stash, where pytest_runtest_setup put the list.
    return cast("pytest.Item", request.node).stash[_REPORTED]  # pyright: ignore[reportUnknownMemberType]


def _allowed(markers: list[pytest.Mark]) -> frozenset[str] | None:
    """The values ``markers`` allow, None for every value; fails the test's setup on a value that is not a
    string, which no failure kind is."""
    if keywords := [keyword for marker in markers for keyword in marker.kwargs]:
        pytest.fail(f"failure_kinds_allow takes the values as arguments, not {keywords[0]}=", pytrace=False)
    named = [value for marker in markers for value in marker.args]
    texts = [_runtime.text_of(value) for value in named]
    if None in texts:
        from failure_kinds._display import shown

        wrong = shown(named[texts.index(None)])
        pytest.fail(f"failure_kinds_allow takes failure kinds, which are strings, not {wrong}", pytrace=False)
    return frozenset(map(str, texts)) if all(marker.args for marker in markers) else None


def _failing(item: pytest.Item, reported: list[object]) -> list[object]:
    """The values of ``reported`` that fail ``item`` in strict mode: those its markers do not allow."""
    allowed = item.stash.get(_ALLOWED, frozenset[str]())
    return [] if allowed is None else [value for value in reported if _runtime.text_of(value) not in allowed]


def _describe(reported: list[object], when: str = "") -> str:
    """The failure's message, the values first: pytest's short summary (``-ra``) cuts the line to the
    terminal's width, and what to fix must survive the cut."""
    from failure_kinds._display import shown

    counts: dict[str, int] = {}
    for value in reported:
        text = _runtime.text_of(value)
        described = shown(value) if text is None else shown(text) + _advice(text)
        counts[described] = counts.get(described, 0) + 1
    listed = ", ".join(shown if count == 1 else f"{shown} x{count}" for shown, count in counts.items())
    return f"{listed} reached validate_failure_kind{when}"


def _advice(text: str) -> str:
    """What to write instead of ``text``, in parentheses after it, or nothing when nothing is known."""
    from failure_kinds._display import shown
    from failure_kinds._suggest import suggest_any
    from failure_kinds.history import OLDER_LABELS

    found = _runtime.category(text)
    if found == "registered":  # registered and still reported: deprecated
        return f" (deprecated; use {_runtime.DEPRECATED.get(text)!r})"
    if found == "legacy":
        replacement = OLDER_LABELS[text].replacement
        if replacement is None:
            return " (an older label without a single replacement)"
        return f" (an older label; use {replacement!r})"
    hint = suggest_any(text)
    words = [f"undeclared in namespace {shown(text.partition(':')[0])}"] if found == "undeclared" else []
    words += [] if hint is None else [f"did you mean {hint!r}?"]
    return f" ({'; '.join(words)})" if words else ""
