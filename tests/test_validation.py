"""validate_failure_kind, the predicates, metric_label and declare_namespace: the spec's semantics, warn-once,
bounded memory, and never taking a producer down, whatever the value's own methods do."""

from __future__ import annotations

import contextlib
import enum
import logging
import threading
import tracemalloc
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import pytest
from helpers import warnings_of
from hypothesis import example, given
from hypothesis import strategies as st

import failure_kinds
from failure_kinds import (
    OTHER_LABEL,
    FailureKind,
    _runtime,
    declare_namespace,
    is_namespaced,
    is_registered,
    metric_label,
    namespaced,
    validate_failure_kind,
)
from failure_kinds.history import OLDER_LABELS

HOW = (
    "register it or namespace it as '<server>:<kind>'"
    " (how: docs/validation.md#declaring-an-environments-own-kinds)"
)
# The shown value, a part of it or the type name, a suggestion, and the fixed words around them.
MESSAGE_LIMIT = 200 + 200 + 300


def unregistered(text: str, said: str = "") -> str:
    """The warning for ``text``: upstream's words around what we ``said`` and how to register a kind."""
    return f"unregistered failure_kind {text!r}; {said}{HOW}. Reported once per name."


# Every call of a hostile method, as (method, value's text or type): none may happen at all.
CALLS: list[tuple[str, str]] = []


def recorded(method: str, result: Callable[[object, object], object]) -> Callable[..., object]:
    def call(self: object, *arguments: object) -> object:
        CALLS.append((method, type(self).__name__))
        return result(self, arguments[0] if arguments else None)

    return call


def raise_(method: str) -> Callable[..., object]:
    def fail(self: object, *arguments: object) -> object:
        raise RuntimeError(method)

    return fail


def hostile_str(methods: dict[str, Callable[..., object]]) -> type[str]:
    return type("Hostile", (str,), methods)


# What a str subclass may redefine to look like another value: case-insensitive equality (as some
# configuration libraries give), equality with anything, or raising, in any method a validator might use.
STR_METHODS = ["__len__", "__hash__", "__eq__", "__repr__", "__str__", "__getitem__", "__iter__"]
STR_METHODS += ["__contains__", "lower", "strip", "startswith", "partition", "isprintable", "encode"]
LOOKALIKES: dict[str, dict[str, Callable[..., object]]] = {
    "case insensitive": {
        "__eq__": recorded("__eq__", lambda self, other: str.lower(self) == str(other).lower()),  # type: ignore[arg-type]
        "__hash__": recorded("__hash__", lambda self, _: hash(str.lower(self))),  # type: ignore[arg-type]
    },
    "equal to anything": {
        "__eq__": recorded("__eq__", lambda self, other: True),
        "__hash__": recorded("__hash__", lambda self, _: hash(str.lower(self))),  # type: ignore[arg-type]
    },
    **{f"raising {method}": {method: recorded(method, raise_(method))} for method in STR_METHODS},
}


# Every dunder a validator might touch raises.
Hostile = type("Hostile", (), {method: raise_(method) for method in ("__eq__", "__hash__", "__repr__")})


class RaisingLookup(type):
    """A metaclass that hides every attribute of its classes, their name included."""

    def __getattribute__(cls, name: str) -> object:
        raise RuntimeError(name)


HIDDEN = RaisingLookup("Hidden", (), {})()


class Colliding:
    """Hashes like ``text``, then raises or claims equality when compared."""

    def __init__(self, text: str | None, equal: bool = False) -> None:
        self.text, self.equal = text, equal

    def __hash__(self) -> int:
        return hash(self.text)

    def __eq__(self, other: object) -> bool:
        if self.equal:
            return True
        raise RuntimeError("eq")


@contextlib.contextmanager
def watched() -> Iterator[tuple[list[str], list[object]]]:
    """The warnings logged and the values observers were given in the block, from a fresh start."""
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
    """The warnings, observer calls and metric label of ``value`` validated ``times`` times afresh."""
    with watched() as (messages, observed):
        for _ in range(times):
            assert validate_failure_kind(value) is value
        label = metric_label(value)
    assert all(seen is value for seen in observed)
    return messages, len(observed), label


def assert_safe_line(message: str) -> None:
    """Nothing in ``message`` can end the log line, drive a terminal or be cut off by a decoder."""
    assert message.isprintable(), ascii(message)
    assert len(message) <= MESSAGE_LIMIT


# value, registered, namespaced, metric label, and the warning: None for none, "" for one of any text,
# else what the one warning says (or, for values whose repr varies, a part of it).
NOT = (False, False, OTHER_LABEL)
CASES = [
    ("cancelled", True, False, "cancelled", None),
    (FailureKind.JUDGE_UNPARSEABLE, True, False, "judge_unparseable", None),
    ("my_env:quota_hit", False, True, "my_env:quota_hit", None),
    ("a:b", False, True, "a:b", None),
    ("a1_:b_2", False, True, "a1_:b_2", None),
    (None, *NOT, None),
    ("judge_faild", *NOT, unregistered("judge_faild", "did you mean 'judge_failed'? Otherwise ")),
    ("something_invented", *NOT, unregistered("something_invented")),
    # Around the older labels: a misspelling or a constant's name is unregistered, never an older label;
    # one in another case is suggested the kind that replaced it.
    ("peer_dorp", *NOT, unregistered("peer_dorp")),
    *[
        (value, *NOT, unregistered(value, "did you mean 'transport_peer_drop'? Otherwise "))
        for value in ("Peer_Drop", "PEER_DROP")
    ],
    ("transport_peer_drop", True, False, "transport_peer_drop", None),
    ("peer_drop:x", False, True, "peer_drop:x", None),
    (b"peer_drop", *NOT, "failure kind is not a string: b'peer_drop' of type bytes"),
    (
        hostile_str(LOOKALIKES["case insensitive"])("AGENT_TIMEOUT"),
        *NOT,
        unregistered("AGENT_TIMEOUT", "did you mean 'agent_timeout'? Otherwise "),
    ),
    (42, *NOT, "failure kind is not a string: 42 of type int"),
    (Hostile(), *NOT, "failure kind is not a string: <Hostile object whose repr failed>"),
    (HIDDEN, *NOT, f"failure kind is not a string: {HIDDEN!r} of type Hidden"),  # not hidden by a metaclass
    *[
        (value, *NOT, "")
        for value in [
            *("judge_failed\n", "Cancelled", "my_env:", ":quota", "My_env:quota", "my_env:quota\n", "a:b:c"),
            *("1env:quota", "", " cancelled", "x" * 1_000_000, "\ud800", "bad\x1b[31m\nkind"),
            *(3.5, b"cancelled", bytearray(b"x"), ["cancelled"], {"kind": "cancelled"}, {"cancelled"}),
            *(Colliding("cancelled"), Colliding(None, equal=True), object()),
        ]
    ],
]


@pytest.mark.parametrize(
    ("value", "registered", "is_namespaced_", "label", "said"),
    CASES,
    ids=lambda value: type.__getattribute__(type(value), "__name__"),
)
def test_each_value_is_judged_labelled_and_reported_once(
    value: object, registered: bool, is_namespaced_: bool, label: str, said: str | None
) -> None:
    messages, observed, found = outcome(value)
    assert (is_registered(value), is_namespaced(value), found) == (registered, is_namespaced_, label)
    assert type(found) is str
    assert observed == (0 if said is None else 3)  # observers hear of a reported value every time
    assert len(messages) == (said is not None)
    assert said is None or said in messages[0]


NO_MATCH = " does not match [a-z][a-z0-9_]*"


@pytest.mark.parametrize(("value", "said"), [
    ("peer_drop", "an older label: use 'transport_peer_drop'. Otherwise "),
    ("skipped", "an older label without a single replacement: an outcome, not a failure. Otherwise "),
    ("SWE_env:patch", f"a malformed namespaced kind: the server part 'SWE_env'{NO_MATCH}. Otherwise "),
    ("a:b:c", f"a malformed namespaced kind: the kind part 'b:c'{NO_MATCH}. Otherwise "),
    ("Judge_Faild:x", f"a malformed namespaced kind: the server part 'Judge_Faild'{NO_MATCH}; did you mean"
                      " 'judge_failed'? Otherwise "),
])  # fmt: skip
def test_what_upstream_calls_unregistered_is_warned_in_its_words_with_ours_between(
    value: str, said: str
) -> None:
    assert outcome(value)[0] == [unregistered(value, said)]


@pytest.mark.parametrize(("server", "kind", "message"), [
    ("My-Env", "quota", "server part 'My-Env'"), ("my_env", "quota:x", "kind part 'quota:x'"),
    ("my_env", "", "kind part ''"), (1, "quota", "server part 1"),
])  # fmt: skip
def test_namespaced_names_the_malformed_part(server: str, kind: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        namespaced(server, kind)


names = st.from_regex(r"[a-z][a-z0-9_]{0,20}", fullmatch=True)


@given(
    server=names | names.map(lambda name: name * 6), kind=names, registered=st.sampled_from(list(FailureKind))
)
def test_namespaced_and_registered_values_round_trip(server: str, kind: str, registered: FailureKind) -> None:
    built = namespaced(server, kind)
    assert (is_namespaced(built), is_registered(built)) == (True, False)
    assert built.split(":") == [server, kind]
    assert metric_label(built) == (built if len(built) <= _runtime.LABEL_LENGTH else OTHER_LABEL)  # bounded
    assert validate_failure_kind(built) is built
    assert FailureKind(registered.value) is registered
    assert (is_registered(registered.value), metric_label(registered)) == (True, registered.value)
    assert validate_failure_kind(registered.value) is registered.value


anything = st.one_of(st.none(), st.text(), st.binary(), st.integers(), st.floats(allow_nan=True))
anything |= st.lists(st.text(), max_size=3) | st.dictionaries(st.text(max_size=3), st.integers(), max_size=3)


@given(anything)
def test_never_raises_and_the_predicates_follow_the_patterns(value: object) -> None:
    assert validate_failure_kind(value) is value
    label = metric_label(value)
    assert label == OTHER_LABEL or is_registered(label) or is_namespaced(label)
    if isinstance(value, str):
        assert is_registered(value) == (value in failure_kinds.FAILURE_KINDS)
        assert is_namespaced(value) == (failure_kinds._NAMESPACED_PATTERN.fullmatch(value) is not None)
        assert not (is_registered(value) and is_namespaced(value))


# Warn-once under pressure: threads, a failing log sink, a handler that validates, a flood -------------


class FailingTimes(logging.Handler):
    """Raises on its first ``times`` records, in its filter or its handler (and its error handler)."""

    def __init__(self, times: int, where: str) -> None:
        super().__init__()
        self.times, self.where = times, where

    def fail(self) -> bool:
        if self.times > 0:
            self.times -= 1
            raise RuntimeError("sink down")
        return True

    def filter(self, record: logging.LogRecord) -> bool:
        return self.fail() if self.where == "filter" else True

    def emit(self, record: logging.LogRecord) -> None:
        self.fail()

    def handleError(self, record: logging.LogRecord) -> None:
        raise RuntimeError("and the error handler too")


@given(times=st.integers(1, 4), text=st.from_regex(r"[a-z]{1,12}_kind", fullmatch=True), where=st.booleans())
def test_a_value_counts_as_reported_only_once_its_warning_was_emitted(
    times: int, text: str, where: bool
) -> None:
    failing = FailingTimes(times, "filter" if where else "handler")
    with watched() as (messages, _):
        if where:
            failure_kinds.logger.addFilter(failing)
        else:
            failure_kinds.logger.addHandler(failing)
        try:
            for attempt in range(times):
                assert validate_failure_kind(text) is text  # the sink's failure never reaches the producer
                assert text not in failure_kinds._WARNED_UNKNOWN, attempt
            validate_failure_kind(text)
            assert text in failure_kinds._WARNED_UNKNOWN
            validate_failure_kind(text)
        finally:
            failure_kinds.logger.removeFilter(failing)
            failure_kinds.logger.removeHandler(failing)
    # The capturing handler comes before the raising one; a raising filter stops every handler.
    assert len(messages) == (1 if where else times + 1)


def test_reports_are_bounded_and_the_notice_is_marked_only_once_emitted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    limit = _runtime.WARNED_LIMIT
    assert limit == 1024
    for index in range(limit):
        validate_failure_kind(f"bad_kind_{index}")
    failing = FailingTimes(1, "filter")
    failure_kinds.logger.addFilter(failing)
    try:
        validate_failure_kind("one_too_many")
        assert not _runtime.warned_overflow
    finally:
        failure_kinds.logger.removeFilter(failing)
    for index in range(500):
        validate_failure_kind(f"too_many_{index}")
    messages = warnings_of(caplog)
    assert len(messages) == limit + 1
    assert messages[-1] == (
        "unregistered failure_kind 'too_many_0'; 1024 distinct names are reported already, so this and "
        "later new ones are no longer reported one by one. Reported once per name."
    )
    assert _runtime.warned_overflow
    assert len(failure_kinds._WARNED_UNKNOWN) == limit
    # Room made again (as a test suite does by discarding) lets reporting resume.
    failure_kinds._WARNED_UNKNOWN.discard("bad_kind_0")
    validate_failure_kind("bad_kind_0")
    assert len(warnings_of(caplog)) == limit + 2


def test_a_handler_that_validates_kinds_itself_neither_deadlocks_nor_repeats() -> None:
    # A warning is logged while the runtime lock is held; the lock is reentrant, so a handler on the
    # same thread may validate (and so warn about) kinds of its own, each still exactly once.
    seen: list[str] = []

    class Validating(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record.getMessage())
            validate_failure_kind("handler_own_kind")
            validate_failure_kind("outer_kind")  # the value being reported: marked already, so quiet

    handler = Validating()
    failure_kinds.logger.addHandler(handler)
    try:
        worker = threading.Thread(target=lambda: [validate_failure_kind("outer_kind") for _ in range(3)])
        worker.start()
        worker.join(timeout=10)
        assert not worker.is_alive()
    finally:
        failure_kinds.logger.removeHandler(handler)
    assert seen == [unregistered("outer_kind"), unregistered("handler_own_kind")]


def validate_all(values: Iterable[object]) -> None:
    for value in values:
        validate_failure_kind(value)
        metric_label(value)


def traced(run: Callable[[], None]) -> tuple[int, int]:
    """What ``run`` leaves allocated, and its peak above where it started, with logging off."""
    logging.getLogger("failure_kinds").disabled = True
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        run()
        after, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        logging.getLogger("failure_kinds").disabled = False
    return after - before, peak - before


def test_work_and_memory_are_bounded_whatever_arrives(caplog: pytest.LogCaptureFixture) -> None:
    calls: list[None] = []
    huge = [type("Counted", (), {"__repr__": lambda self: calls.append(None) or "counted"})()] * 200_000
    for _ in range(5):
        assert validate_failure_kind(huge) is huge
        metric_label(huge)
    # Each call shows the value to key it and for its warning, each showing stopping at its limit.
    assert len(calls) <= 5 * (_runtime.REPR_LENGTH + 200 + 2)
    assert len(warnings_of(caplog)) == 1
    wide = [list(range(100)) for _ in range(20_000)]  # its repr would be ~8 MB
    assert traced(lambda: validate_all([wide] * 3))[1] < 1024 * 1024

    def fill() -> None:  # each value is built, validated and dropped: only what the module keeps stays
        validate_all(f"{index}_" + "x" * 100_000 for index in range(1_100))
        validate_all(f"big_env:k{index}_" + "y" * 100_000 for index in range(4_200))
        validate_all(f"env_{index}:kind_" + "z" * 200 for index in range(4_200))
        validate_all([index, "w" * 10_000] for index in range(1_100))
        validate_all(index * 10**3000 for index in range(1_100))

    # The stated bound for all that is remembered (~2 MiB is reached).
    assert traced(fill)[0] < 8 * 1024 * 1024
    validate_all(f"warm_env:kind_{index}" for index in range(5_000))
    # Twelve times the silent cache's capacity: any memory kept per value would pass 64 KiB here.
    flood = (f"flood_{index}" if index % 10 else f"flood_env:kind_{index}" for index in range(50_000))
    assert traced(lambda: validate_all(flood))[0] < 64 * 1024
    assert len(failure_kinds._WARNED_UNKNOWN) <= _runtime.WARNED_LIMIT
    assert len(_runtime.SILENT) <= _runtime.silent_limit


@given(st.lists(st.text(min_size=1, max_size=30), min_size=12, max_size=40), st.integers(0, 1000))
def test_values_shown_alike_are_remembered_apart(elements: list[str], tail: int) -> None:
    # Two values whose warnings read alike are still two reports: the second is another value to fix.
    prefix = ["p" * 210, *elements]  # the first 200 characters of both reprs are the same
    with watched() as (messages, _):
        for _ in range(2):
            validate_failure_kind([*prefix, tail])
            validate_failure_kind([*prefix, tail + 1])
            validate_failure_kind(([*prefix, tail],))  # another type: another warning
            validate_failure_kind([[1, tail]])
            validate_failure_kind("x" * 300 + str(tail))  # long strings alike in their first characters
            validate_failure_kind("x" * 300 + str(tail + 1))
    assert len(messages) == 6, messages
    assert all(type(key) in (str, tuple) for key in failure_kinds._WARNED_UNKNOWN)  # not the values


# Values whose own methods lie: judged by their text (or identity), never by what they claim -----------

registered = st.sampled_from(sorted(failure_kinds.FAILURE_KINDS))
texts = st.one_of(
    registered,
    registered.map(str.upper),
    registered.map(lambda name: name.replace("_", "-").title()),
    st.sampled_from(sorted(OLDER_LABELS)),
    st.from_regex(r"[a-z][a-z_]{0,30}", fullmatch=True),
    st.from_regex(r"[a-z][a-z0-9_]{0,10}:[a-z][a-z0-9_]{0,10}", fullmatch=True),
    st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,10}:[A-Za-z][A-Za-z0-9_]{0,10}", fullmatch=True),
    st.text(max_size=40),
    st.text(max_size=400).map(lambda text: "x" * 300 + text),
    st.text(alphabet=st.characters(codec=None), max_size=400),
    st.text(alphabet=st.sampled_from("\n\r\x1b[]0123;m\x00\x07\x85\u2028\u202e\ud800 ab"), max_size=400),
)


@given(text=texts, methods=st.sampled_from(sorted(LOOKALIKES)), declared=st.booleans(), equal=st.booleans())
@example(text="timeout", methods="case insensitive", declared=False, equal=True)  # labelled as a replacement
def test_a_value_is_judged_by_what_it_is_never_by_what_its_methods_claim(
    text: str, methods: str, declared: bool, equal: bool
) -> None:
    odd_type = type("Odd", (), {"__repr__": lambda self: text})
    odd_type.__qualname__ = text or "Odd"  # a type name is escaped too
    anything = {
        "__eq__": recorded("__eq__", lambda *_: True),
        "__hash__": recorded("__hash__", lambda *_: hash(text)),
    }
    # Each hashes like the text (or is a container of it) and raises or claims equality when compared.
    others = [
        Colliding(text, equal),
        type("EqualsAnything", (), anything)(),
        [text],
        {text: text},
        (text,),
        odd_type(),
    ]
    lookalike = hostile_str(LOOKALIKES[methods])(text)
    saved = _runtime.snapshot()
    try:
        if declared:  # a declared server changes which of its values pass: all must follow the text
            declare_namespace("my_env", ["quota_hit"])
        CALLS.clear()
        expected = outcome(text)
        assert outcome(lookalike) == expected
        judged = (is_registered(text), is_namespaced(text))
        assert (is_registered(lookalike), is_namespaced(lookalike)) == judged
        with watched() as (messages, observed):
            for value in others:
                for _ in range(3):
                    assert validate_failure_kind(value) is value
                    assert metric_label(value) == OTHER_LABEL
            assert (len(messages), len(observed)) == (len(others), 3 * len(others))
            assert messages[1] == f"failure kind is not a string: {others[1]!r} of type EqualsAnything"
            for _ in range(3):
                validate_failure_kind(text)
            # Nothing the others did changed how the text is judged, or is remembered as the value itself.
            assert (messages[len(others) :], len(observed) - 3 * len(others)) == expected[:2]
            assert all(type(key) in (str, tuple) for key in failure_kinds._WARNED_UNKNOWN)
            assert all(key is None or type(key) is str for key in _runtime.SILENT)
        assert CALLS == []
    finally:
        _runtime.restore(saved)
    warned, observed_times, label = expected
    # An exact str is warned about once and observed every time it does not pass.
    assert (len(warned) <= 1, observed_times) == (True, 3 * len(warned))
    assert label in (text, OTHER_LABEL) or OLDER_LABELS[text].replacement == label
    assert label == text or not is_registered(text)
    for message in [*warned, *messages]:
        assert_safe_line(message)


# Only Exception is swallowed: an interrupt raised in code of the caller's that runs goes on up --------

INTERRUPTS = st.sampled_from([KeyboardInterrupt, SystemExit])


@given(interrupt=INTERRUPTS, text=st.from_regex(r"[a-z]{1,12}_kind", fullmatch=True))
def test_an_interrupt_in_a_repr_or_an_observer_goes_up_and_the_warning_stays_owed(
    interrupt: type[BaseException], text: str
) -> None:
    def interrupting(*arguments: object) -> str:
        raise interrupt

    with watched() as (messages, observed), pytest.raises(interrupt):
        validate_failure_kind(type("Interrupting", (), {"__repr__": interrupting})())
    assert messages == []
    with watched() as (messages, observed):
        _runtime.OBSERVERS.insert(0, interrupting)
        try:
            with pytest.raises(interrupt):
                validate_failure_kind(text)
        finally:
            _runtime.OBSERVERS.remove(interrupting)
        assert messages == []
        validate_failure_kind(text)  # nothing was marked as reported: the warning comes now
        assert messages == [unregistered(text)]
        assert observed == [text]


# Declared namespaces (declare_namespace) --------------------------------------------------------------


def labels_of(*values: str) -> list[str]:
    return [metric_label(value) for value in values]


def test_a_declared_servers_undeclared_kinds_are_reported_whenever_it_declared(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Seen (cached as silent, and labelled) while the server declared nothing.
    seen_before = ["swe_env:patch_aply_failed", "swe_env:zzz"]
    for _ in range(2):
        assert validate_failure_kind(seen_before[0]) == seen_before[0]
    assert (labels_of(*seen_before), warnings_of(caplog)) == (seen_before, [])
    labelled, silent_room = _runtime.labelled_namespaced, _runtime.silent_limit - len(_runtime.SILENT)

    class EnvKind(enum.StrEnum):
        TEST_COLLECTION_ERROR = "test_collection_error"

    declare_namespace("swe_env", ["patch_apply_failed"])
    declare_namespace("swe_env", ["patch_apply_failed"])  # repeating a declaration changes nothing
    declare_namespace("swe_env", iter([EnvKind.TEST_COLLECTION_ERROR]))  # an environment's own StrEnum: added
    assert _runtime.DECLARED["swe_env"] == {"patch_apply_failed", "test_collection_error"}
    assert all(type(kind) is str for kind in _runtime.DECLARED["swe_env"])
    values = ["swe_env:patch_aply_failed", "swe_env:patch_apply_failed", "other_env:any", "swe_env:zzz"]
    for _ in range(3):
        assert [validate_failure_kind(value) for value in values] == values
    assert warnings_of(caplog) == [
        "undeclared failure kind 'swe_env:patch_aply_failed' in declared namespace 'swe_env'; "
        "did you mean 'swe_env:patch_apply_failed'?",
        "undeclared failure kind 'swe_env:zzz' in declared namespace 'swe_env'",
    ]
    labelled_now = labels_of("swe_env:patch_aply_failed", "swe_env:test_collection_error", "other_env:any")
    assert labelled_now == [OTHER_LABEL, "swe_env:test_collection_error", "other_env:any"]
    # Declared names take no room from the values of undeclared servers, however often declared.
    assert _runtime.labelled_namespaced == labelled - 2 + 1  # the two labelled before lose theirs; other_env
    assert _runtime.silent_limit - len(_runtime.SILENT) == silent_room  # one value uncached, one cached
    # A value warned about as undeclared passes once declared.
    declare_namespace("swe_env", ["zzz"])
    validate_failure_kind("swe_env:zzz")
    assert labels_of("swe_env:zzz") == ["swe_env:zzz"]
    assert len(warnings_of(caplog)) == 2


@pytest.mark.parametrize(("server", "kinds", "message"), [
    *[(name, ["a"], rf"the server {name!r} does not match") for name in ("Swe-Env", "", None, "swe_env:x")],
    ("swe_env", "patch_apply_failed", r"not the single value 'patch_apply_failed'"),
    ("swe_env", b"patch", r"names \(strings\), not b'patch' of type bytes; write \['patch'\]$"),
    ("swe_env", [b"patch"],
     r"the kind b'patch' of server 'swe_env' is not a string but bytes; write 'patch'$"),
    ("swe_env", bytearray(b"\xff"), r"not bytearray\(b'\\xff'\) of type bytearray$"),
    ("swe_env", 5, r"not 5 of type int"),
    ("swe_env", HIDDEN, r"kind names, not <.*Hidden object at .*> of type Hidden$"),
    ("swe_env", ["ok", 5], r"the kind 5 of server 'swe_env' is not a string but int"),
    ("swe_env", ["ok", "Bad"], r"the kind 'Bad' of server 'swe_env' does not match"),
    ("swe_env", ["ok", "a:b"], r"the kind 'a:b' of server 'swe_env' does not match"),
    ("swe_env", ["bad\n\x1b[2J"], r"the kind 'bad\\n\\x1b\[2J' of server"),
    ("swe_env", [], r"^declare_namespace: the server 'swe_env' declares no kinds$"),
    ("swe_env", iter(()), r"the server 'swe_env' declares no kinds"),
])  # fmt: skip
def test_declare_namespace_rejects_bad_arguments_naming_them(
    server: object, kinds: object, message: str
) -> None:
    with pytest.raises(ValueError, match=message) as raised:
        declare_namespace(server, kinds)  # type: ignore[arg-type]
    assert "\n" not in str(raised.value)
    assert "swe_env" not in _runtime.DECLARED  # nothing declared when it raises


def test_a_refused_declaration_changes_nothing_and_one_is_kept_as_plain_text() -> None:
    # A server already declared is not emptied: the call is refused and changes nothing.
    declare_namespace("swe_env", ["patch_apply_failed"])
    with pytest.raises(ValueError, match="declares no kinds"):
        declare_namespace("swe_env", [])
    assert _runtime.DECLARED["swe_env"] == {"patch_apply_failed"}
    # A str subclass is taken by its text: its own repr never forges a line.
    forging = type("Forging", (str,), {"__repr__": lambda self: "'x'\nERROR forged"})
    with pytest.raises(ValueError, match=r"of server 'forge_env' does not match") as raised:
        declare_namespace(forging("forge_env"), ["Bad"])
    assert "\n" not in str(raised.value)
    declare_namespace(forging("forge_env"), [forging("good_kind")])
    assert all(type(server) is str for server in _runtime.DECLARED)
    assert all(type(kind) is str for kind in _runtime.DECLARED["forge_env"])


not_a_name = st.text(max_size=30).filter(lambda text: failure_kinds._NAME_PATTERN.fullmatch(text) is None)


def hostile_bytes(base: type) -> type:
    """A bytes type whose own methods raise: the message is built from the value, never with them."""
    methods = ("__len__", "__iter__", "__repr__", "__str__", "decode", "__getitem__", "__eq__", "__hash__")
    return type(f"Hostile{base.__name__}", (base,), {method: raise_(method) for method in methods})


@given(
    server=names,
    good=names,
    bad=not_a_name,
    position=st.integers(0, 3),
    data=st.one_of(names.map(str.encode), st.binary(max_size=300)),
    kind=st.sampled_from([bytes, bytearray, hostile_bytes(bytes), hostile_bytes(bytearray)]),
    listed=st.booleans(),
)
def test_a_malformed_kind_or_bytes_are_refused_atomically_naming_what_to_write(
    server: str, good: str, bad: str, position: int, data: bytes, kind: type, listed: bool
) -> None:
    saved = _runtime.snapshot()
    kinds = [good] * 3
    kinds.insert(position, bad)
    try:
        with pytest.raises(ValueError, match=r"declare_namespace: the kind .* does not match") as raised:
            declare_namespace(server, kinds)
        assert str(raised.value).isprintable()
        assert saved[1] == _runtime.DECLARED
        with pytest.raises(ValueError, match=r"declare_namespace: the server .* does not match"):
            declare_namespace(bad, [good])
        value = kind(data)
        said = rf"(not .* of type|is not a string but) {type(value).__name__}(;|$)"
        with pytest.raises(ValueError, match=said) as raised:
            declare_namespace("bytes_env", [value] if listed else value)
        message = str(raised.value)
        assert_safe_line(message)
        assert "write b" not in message.replace("write [b", "write b")  # never advice refused in turn
        name = data.decode("ascii", "replace")
        hinted = kind in (bytes, bytearray) and failure_kinds._NAME_PATTERN.fullmatch(name) is not None
        assert message.endswith(f"; write {name!r}" if listed else f"; write [{name!r}]") == hinted
        assert "bytes_env" not in _runtime.DECLARED
        if hinted:  # what the message says to write is accepted
            declare_namespace("bytes_env", [name])
            assert _runtime.DECLARED["bytes_env"] == {name}
    finally:
        _runtime.restore(saved)


def test_threads_validating_and_declaring_at_once_agree(caplog: pytest.LogCaptureFixture) -> None:
    barrier = threading.Barrier(16)
    kinds = [f"kind_{index}" for index in range(64)]

    def validate_and_declare(offset: int) -> None:
        barrier.wait()
        for kind in kinds[offset::16]:
            for _ in range(12):
                validate_failure_kind("racing_kind")
            validate_failure_kind("race_env:never_declared")
            metric_label("race_env:never_declared")
            declare_namespace("race_env", [kind])
            validate_failure_kind(f"race_env:{kind}")

    threads = [threading.Thread(target=validate_and_declare, args=(offset,)) for offset in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert warnings_of(caplog).count(unregistered("racing_kind")) == 1
    assert _runtime.DECLARED["race_env"] == set(kinds)
    # However the threads interleaved, the undeclared value was not left cached as silent or labelled.
    assert "race_env:never_declared" not in _runtime.SILENT
    assert metric_label("race_env:never_declared") == OTHER_LABEL
    caplog.clear()
    failure_kinds._WARNED_UNKNOWN.discard("race_env:never_declared")  # discarding re-arms its warning
    validate_failure_kind("race_env:never_declared")
    assert len(warnings_of(caplog)) == 1
    assert all(f"race_env:{kind}" in _runtime.SILENT for kind in kinds)


# Metric labels: bounded in length and in number -------------------------------------------------------


def test_distinct_namespaced_labels_are_capped() -> None:
    declare_namespace("capped_env", ["declared_kind"])
    room = _runtime.LABEL_LIMIT - _runtime.labelled_namespaced
    labels = [metric_label(f"flood_env:kind_{index}") for index in range(20_000)]
    assert labels == [f"flood_env:kind_{index}" for index in range(room)] + [OTHER_LABEL] * (20_000 - room)
    assert _runtime.labelled_namespaced == _runtime.LABEL_LIMIT
    # Labels given before the cap are kept; later values get OTHER_LABEL; registered and declared names
    # keep theirs whatever came before.
    assert metric_label("flood_env:kind_0") == "flood_env:kind_0"
    assert metric_label("flood_env:kind_19999") == OTHER_LABEL
    assert metric_label("cancelled") == "cancelled"
    assert metric_label("capped_env:declared_kind") == "capped_env:declared_kind"
    declare_namespace("late_env", ["late_kind"])
    assert metric_label("late_env:late_kind") == "late_env:late_kind"
    # Values past the cap still validate silently: the cap is about metrics, not about validity.
    assert validate_failure_kind("flood_env:kind_19999") == "flood_env:kind_19999"


def test_the_docs_state_the_bounds_in_force() -> None:
    docs = Path(__file__).parent.parent / "docs"
    page = (docs / "validation.md").read_text(encoding="utf-8")
    boundaries = " ".join(page.split("\n## Validating at boundaries\n")[1].split("\n## ")[0].split())
    labels = " ".join((docs / "metric-labels.md").read_text(encoding="utf-8").split())
    assert "cut to 200 characters and then escaped" in boundaries
    assert f"at most {_runtime.WARNED_LIMIT} reported values" in boundaries
    assert f"up to {_runtime.REMEMBER_LENGTH} characters is remembered as itself" in boundaries
    assert (
        "any other value (a number, a list, a hostile object) by a 16-byte digest of its type and of its "
        f"`repr` cut at {_runtime.REPR_LENGTH:,} characters" in boundaries
    )
    assert f"at most {_runtime.SILENT_CACHE_LIMIT} namespaced values" in boundaries
    assert "stays under 8 MiB" in boundaries  # what test_work_and_memory_are_bounded_... holds it to
    assert f"at most {_runtime.LABEL_LENGTH} characters long" in labels
    assert f"first {_runtime.LABEL_LIMIT} distinct such values" in labels
