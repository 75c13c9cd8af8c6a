"""validate_failure_kind and metric_label decide on a value's own text (or identity, for None), never on
methods the caller's value defines: a str subclass equal to a registered name in its own sense, or an
object equal to anything, is reported and seen by observers like any other value that does not pass."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Generator

import pytest
from hypothesis import given
from hypothesis import strategies as st

import failure_kinds
import failure_kinds._runtime as _runtime
from failure_kinds import OTHER_LABEL, declare_namespace, metric_label, validate_failure_kind
from failure_kinds._display import shown
from failure_kinds.history import OLDER_LABELS

# Every call of a hostile method, as (method, value's text): none may happen at all.
CALLS: list[tuple[str, str]] = []


def case_insensitive_eq(self: str, other: object) -> bool:
    CALLS.append(("__eq__", str.__str__(self)))
    return isinstance(other, str) and str.lower(self) == str.lower(other)


def case_insensitive_hash(self: str) -> int:
    CALLS.append(("__hash__", str.__str__(self)))
    return hash(str.lower(self))


def equal_to_anything(self: object, other: object) -> bool:
    CALLS.append(("__eq__", type(self).__name__))
    return True


def raising(method: str) -> Callable[..., object]:
    def fail(self: object, *arguments: object) -> object:
        CALLS.append((method, type(self).__name__))
        raise RuntimeError(method)

    return fail


def hash_of(text: str | None) -> Callable[[object], int]:
    def collide(self: object) -> int:
        CALLS.append(("__hash__", type(self).__name__))
        return hash(text)

    return collide


# What a str subclass may redefine to look like another value: case-insensitive equality (as some
# configuration libraries give), equality with anything at the hash of a target, or raising.
STR_METHODS: dict[str, dict[str, object]] = {
    "case insensitive": {"__eq__": case_insensitive_eq, "__hash__": case_insensitive_hash},
    "equal to anything": {"__eq__": equal_to_anything, "__hash__": case_insensitive_hash},
    "raising": {"__eq__": raising("__eq__"), "__hash__": raising("__hash__")},
}

registered = st.sampled_from(sorted(failure_kinds.FAILURE_KINDS))
texts = st.one_of(
    registered,
    registered.map(str.upper),
    registered.map(lambda name: name.replace("_", "-").title()),
    st.sampled_from(sorted(OLDER_LABELS)),
    st.from_regex(r"[a-z][a-z0-9_]{0,10}:[a-z][a-z0-9_]{0,10}", fullmatch=True),
    st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,10}:[A-Za-z][A-Za-z0-9_]{0,10}", fullmatch=True),
    st.text(max_size=40),
    st.text(max_size=400).map(lambda text: "x" * 300 + text),
)


@contextlib.contextmanager
def watched() -> Generator[tuple[list[str], list[object]]]:
    """The warnings logged and the values observers were given inside the block, from a fresh start."""
    messages: list[str] = []
    observed: list[object] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            messages.append(record.getMessage())

    handler = Collect(logging.WARNING)
    saved = _runtime.snapshot()
    _runtime.forget_reports()
    failure_kinds.logger.addHandler(handler)
    _runtime.OBSERVERS.append(observed.append)  # what the pytest plugin does
    try:
        yield messages, observed
    finally:
        _runtime.OBSERVERS.remove(observed.append)
        failure_kinds.logger.removeHandler(handler)
        _runtime.restore(saved)


def outcome(value: object, times: int = 3) -> tuple[list[str], int, str]:
    """The warnings, the number of observer calls and the metric label ``value`` gets, validated
    ``times`` times from a fresh start."""
    with watched() as (messages, observed):
        for _ in range(times):
            assert validate_failure_kind(value) is value
        label = metric_label(value)
    assert all(seen is value for seen in observed)
    return messages, len(observed), label


@given(text=texts, methods=st.sampled_from(sorted(STR_METHODS)), declared=st.booleans())
def test_a_str_subclass_is_judged_by_its_text_alone(text: str, methods: str, declared: bool) -> None:
    value = type("Hostile", (str,), dict(STR_METHODS[methods]))(text)
    saved = _runtime.snapshot()
    try:
        if declared:  # a declared server changes which of its values pass: both must follow the text
            declare_namespace("my_env", ["quota_hit"])
        CALLS.clear()
        hostile = outcome(value)
        assert CALLS == []
        assert hostile == outcome(text)
    finally:
        _runtime.restore(saved)
    label = hostile[2]
    assert type(label) is str
    assert label in (text, OTHER_LABEL) or OLDER_LABELS[text].replacement == label
    assert failure_kinds.is_registered(value) == failure_kinds.is_registered(text)
    assert _runtime.category(value) == _runtime.category(text)


@given(target=st.one_of(st.none(), registered, st.just("my_env:quota_hit")))
def test_an_object_equal_to_anything_is_reported_to_observers_every_time(target: str | None) -> None:
    # Hashes like None, a registered name or a namespaced value, then claims to equal whatever it meets.
    value = type("EqualsAnything", (), {"__eq__": equal_to_anything, "__hash__": hash_of(target)})()
    CALLS.clear()
    messages, observed, label = outcome(value)
    assert CALLS == []
    assert messages == [f"failure kind is not a string: {shown(value)} of type EqualsAnything"]
    assert observed == 3
    assert label == OTHER_LABEL
    assert not failure_kinds.is_registered(value)


def test_the_attacker_case_insensitive_string() -> None:
    value = type("CaseInsensitive", (str,), dict(STR_METHODS["case insensitive"]))("AGENT_TIMEOUT")
    messages, observed, label = outcome(value)
    assert messages == [
        "unregistered failure_kind 'AGENT_TIMEOUT'; did you mean 'agent_timeout'? Otherwise register it or "
        "namespace it as '<server>:<kind>'. Reported once per name."
    ]
    assert observed == 3
    assert label == OTHER_LABEL
    assert not failure_kinds.is_registered(value)


# Only Exception is swallowed: an interrupt raised in code of the caller's that runs goes on up --------

INTERRUPTS = st.sampled_from([KeyboardInterrupt, SystemExit])


@given(interrupt=INTERRUPTS)
def test_an_interrupt_in_a_values_repr_goes_up(interrupt: type[BaseException]) -> None:
    def interrupted(self: object) -> str:
        raise interrupt

    value = type("Interrupting", (), {"__repr__": interrupted})()
    with watched() as (messages, _), pytest.raises(interrupt):
        validate_failure_kind(value)
    assert messages == []


@given(interrupt=INTERRUPTS, text=st.from_regex(r"[a-z]{1,12}_kind", fullmatch=True))
def test_an_interrupt_in_an_observer_goes_up_and_the_warning_stays_owed(
    interrupt: type[BaseException], text: str
) -> None:
    def interrupting(value: object) -> None:
        raise interrupt

    with watched() as (messages, observed):
        _runtime.OBSERVERS.insert(0, interrupting)
        try:
            with pytest.raises(interrupt):
                validate_failure_kind(text)
        finally:
            _runtime.OBSERVERS.remove(interrupting)
        assert messages == []
        validate_failure_kind(text)  # nothing was marked as reported: the warning comes now
        assert messages == [
            f"unregistered failure_kind {text!r}; register it or namespace it as '<server>:<kind>'. "
            "Reported once per name."
        ]
        assert observed == [text]


class Stop(BaseException):
    """Stands in for KeyboardInterrupt where raising one would end the test run instead of failing a test."""


@given(interrupt=st.sampled_from([SystemExit, Stop]), text=texts)
def test_an_interrupting_hash_or_eq_is_never_called(interrupt: type[BaseException], text: str) -> None:
    def interrupted(self: object, *arguments: object) -> object:
        raise interrupt

    methods = {"__eq__": interrupted, "__hash__": interrupted}
    value = type("Interrupting", (str,), methods)(text)
    assert outcome(value) == outcome(text)
    other = type("Interrupting", (), methods)()
    messages, observed, label = outcome(other)
    assert (len(messages), observed, label) == (1, 3, OTHER_LABEL)


@given(text=texts)
def test_an_exact_string_is_warned_about_once_and_observed_every_time(text: str) -> None:
    # What the one-lookup path of an exact str keeps: a reported value is quiet only without observers.
    with watched() as (messages, observed):
        validate_failure_kind(text)
        before = (len(messages), len(observed))
        for _ in range(3):
            validate_failure_kind(text)
    assert len(messages) == before[0]
    assert len(observed) == 4 * before[1]


class RaisingLookup(type):
    def __getattribute__(cls, name: str) -> object:
        raise RuntimeError(name)


def test_a_metaclass_cannot_hide_the_name_of_a_values_type() -> None:
    value = RaisingLookup("Hidden", (), {})()
    assert outcome(value, times=1)[0] == [f"failure kind is not a string: {shown(value)} of type Hidden"]
    with pytest.raises(ValueError, match=r"kind names, not <.*Hidden object at .*> of type Hidden$"):
        declare_namespace("my_env", value)  # type: ignore[arg-type]
