"""validate_failure_kind and the predicates: spec semantics, warn-once, and never taking a producer down."""

from __future__ import annotations

import logging
import threading
import tracemalloc

import pytest
from hypothesis import given
from hypothesis import strategies as st

import failure_kinds
from failure_kinds import (
    OTHER_LABEL,
    FailureKind,
    is_namespaced,
    is_registered,
    metric_label,
    namespaced,
    validate_failure_kind,
)


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        record.getMessage()
        for record in caplog.records
        if record.name == "failure_kinds" and record.levelno == logging.WARNING
    ]


class Hostile:
    """Every dunder a validator might touch raises."""

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("eq")

    def __hash__(self) -> int:
        raise RuntimeError("hash")

    def __repr__(self) -> str:
        raise RuntimeError("repr")


class CollidingHostile:
    """Hashes like a registered name, then raises when compared."""

    def __hash__(self) -> int:
        return hash("cancelled")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("eq")


@pytest.mark.parametrize("name", ["cancelled", "my_env:quota_hit", "a:b", "a1_:b_2"])
def test_registered_and_namespaced_pass_silently(caplog: pytest.LogCaptureFixture, name: str) -> None:
    assert validate_failure_kind(name) is name
    assert warnings_of(caplog) == []


def test_none_passes_silently(caplog: pytest.LogCaptureFixture) -> None:
    assert validate_failure_kind(None) is None
    assert warnings_of(caplog) == []


def test_enum_member_counts_as_registered(caplog: pytest.LogCaptureFixture) -> None:
    member = FailureKind.JUDGE_UNPARSEABLE
    assert is_registered(member)
    assert validate_failure_kind(member) is member
    assert warnings_of(caplog) == []


def test_unregistered_warns_once_with_suggestion(caplog: pytest.LogCaptureFixture) -> None:
    name = "judge_faild"
    for _ in range(3):
        assert validate_failure_kind(name) is name
    assert warnings_of(caplog) == ["unregistered failure kind 'judge_faild'; did you mean 'judge_failed'?"]
    assert name in failure_kinds._WARNED_UNKNOWN


def test_no_suggestion_when_nothing_is_close(caplog: pytest.LogCaptureFixture) -> None:
    validate_failure_kind("something_invented")
    assert warnings_of(caplog) == ["unregistered failure kind 'something_invented'"]


def test_discarding_from_warned_set_warns_again(caplog: pytest.LogCaptureFixture) -> None:
    validate_failure_kind("legacy_label")
    failure_kinds._WARNED_UNKNOWN.discard("legacy_label")
    validate_failure_kind("legacy_label")
    assert len(warnings_of(caplog)) == 2


@pytest.mark.parametrize(
    "name",
    [
        "judge_failed\n",
        "Cancelled",
        "my_env:",
        ":quota",
        "My_env:quota",
        "my_env:quota\n",
        "a:b:c",
        "1env:quota",
        "",
        " cancelled",
    ],
)
def test_near_misses_are_not_legal(caplog: pytest.LogCaptureFixture, name: str) -> None:
    assert not is_registered(name)
    assert not is_namespaced(name)
    assert metric_label(name) == OTHER_LABEL
    assert validate_failure_kind(name) is name
    assert len(warnings_of(caplog)) == 1


def test_non_string_is_reported_with_its_type(caplog: pytest.LogCaptureFixture) -> None:
    assert validate_failure_kind(42) == 42  # type: ignore[type-var]
    assert warnings_of(caplog) == ["failure kind is not a string: 42 of type int"]


def test_predicates_reject_non_strings() -> None:
    for value in [None, 1, b"cancelled", ["cancelled"], {"a": 1}]:
        assert not is_registered(value)
        assert not is_namespaced(value)
        assert metric_label(value) == OTHER_LABEL


def test_metric_label_returns_plain_str() -> None:
    assert metric_label(FailureKind.CANCELLED) == "cancelled"
    assert type(metric_label(FailureKind.CANCELLED)) is str
    assert metric_label("my_env:quota") == "my_env:quota"
    assert metric_label("my_env:quota") == "my_env:quota"  # second call takes the cached path
    assert metric_label("judge_faild") == OTHER_LABEL
    assert OTHER_LABEL == "_other"


@pytest.mark.parametrize(
    "value",
    [
        42,
        3.5,
        b"judge_failed",
        bytearray(b"x"),
        ["cancelled"],
        {"kind": "cancelled"},
        {"cancelled"},
        "x" * 1_000_000,
        "\ud800",
        "bad\x1b[31m\nkind",
        Hostile(),
        CollidingHostile(),
        object(),
    ],
    ids=lambda value: type(value).__name__,
)
def test_never_raises_and_returns_same_object(value: object) -> None:
    assert validate_failure_kind(value) is value  # type: ignore[type-var]
    assert validate_failure_kind(value) is value  # type: ignore[type-var]
    assert is_registered(value) in (True, False)
    assert is_namespaced(value) in (True, False)
    assert isinstance(metric_label(value), str)


def test_unhashable_values_warn_once_each(caplog: pytest.LogCaptureFixture) -> None:
    for _ in range(2):
        validate_failure_kind([1])  # type: ignore[type-var]
        validate_failure_kind([2])  # type: ignore[type-var]
    assert len(warnings_of(caplog)) == 2


def test_hostile_repr_is_still_reported(caplog: pytest.LogCaptureFixture) -> None:
    validate_failure_kind(Hostile())  # type: ignore[type-var]
    (message,) = warnings_of(caplog)
    assert "Hostile object whose repr failed" in message


def test_message_is_log_safe_and_truncated(caplog: pytest.LogCaptureFixture) -> None:
    validate_failure_kind("evil\n\x1b[2J" + "y" * 5000)
    (message,) = warnings_of(caplog)
    assert "\n" not in message
    assert "\x1b" not in message
    assert "\\n" in message
    assert "\\x1b" in message
    shown = message.removeprefix("unregistered failure kind ")
    assert len(shown) <= 200
    assert shown.endswith("...")


def test_failing_handler_does_not_reach_the_producer() -> None:
    class BrokenHandler(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            raise RuntimeError("log sink down")

        def handleError(self, record: logging.LogRecord) -> None:
            raise RuntimeError("and the error handler too")

    handler = BrokenHandler()
    failure_kinds.logger.addHandler(handler)
    try:
        assert validate_failure_kind("broken_sink_kind") == "broken_sink_kind"
    finally:
        failure_kinds.logger.removeHandler(handler)


def test_exactly_one_warning_under_concurrency(caplog: pytest.LogCaptureFixture) -> None:
    barrier = threading.Barrier(32)

    def hit() -> None:
        barrier.wait()
        for _ in range(50):
            validate_failure_kind("racing_kind")

    threads = [threading.Thread(target=hit) for _ in range(32)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert warnings_of(caplog) == ["unregistered failure kind 'racing_kind'"]


def test_reports_are_bounded(caplog: pytest.LogCaptureFixture) -> None:
    limit = failure_kinds._WARNED_LIMIT
    assert limit == 1024
    for index in range(limit + 500):
        validate_failure_kind(f"bad_kind_{index}")
    messages = warnings_of(caplog)
    assert len(messages) == limit + 1
    assert "no longer reported one by one" in messages[-1]
    assert len(failure_kinds._WARNED_UNKNOWN) == limit
    # Room made again (as a test suite does by discarding) lets reporting resume.
    failure_kinds._WARNED_UNKNOWN.discard("bad_kind_0")
    validate_failure_kind("bad_kind_0")
    assert len(warnings_of(caplog)) == limit + 2


def test_memory_stays_flat_under_a_flood() -> None:
    logging.getLogger("failure_kinds").disabled = True
    try:
        for index in range(5_000):
            validate_failure_kind(f"warm_up_{index}")
            validate_failure_kind(f"warm_env:kind_{index}")
        tracemalloc.start()
        before, _ = tracemalloc.get_traced_memory()
        for index in range(1_000_000):
            validate_failure_kind(f"flood_{index}")
            if index % 10 == 0:
                validate_failure_kind(f"flood_env:kind_{index}")
        after, _ = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    finally:
        logging.getLogger("failure_kinds").disabled = False
    assert after - before < 64 * 1024
    assert len(failure_kinds._SILENT) <= failure_kinds._SILENT_LIMIT


def test_namespaced_builds_and_checks_both_parts() -> None:
    assert namespaced("my_env", "quota_hit") == "my_env:quota_hit"
    assert is_namespaced(namespaced("browser", "tab_crashed"))
    with pytest.raises(ValueError, match=r"server part 'My-Env'"):
        namespaced("My-Env", "quota")
    with pytest.raises(ValueError, match=r"kind part 'quota:x'"):
        namespaced("my_env", "quota:x")
    with pytest.raises(ValueError, match=r"kind part ''"):
        namespaced("my_env", "")
    with pytest.raises(ValueError, match=r"server part 1"):
        namespaced(1, "quota")  # type: ignore[arg-type]


names = st.from_regex(r"[a-z][a-z0-9_]{0,20}", fullmatch=True)


@given(server=names, kind=names)
def test_namespaced_round_trips(server: str, kind: str) -> None:
    built = namespaced(server, kind)
    assert is_namespaced(built)
    assert not is_registered(built)
    assert built.split(":") == [server, kind]
    assert metric_label(built) == built
    assert validate_failure_kind(built) is built


@given(st.sampled_from(list(FailureKind)))
def test_registered_round_trips(kind: FailureKind) -> None:
    assert FailureKind(kind.value) is kind
    assert is_registered(kind.value)
    assert metric_label(kind) == kind.value
    assert validate_failure_kind(kind.value) is kind.value


anything = st.one_of(
    st.none(),
    st.text(),
    st.binary(),
    st.integers(),
    st.floats(allow_nan=True),
    st.lists(st.text(), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=3),
)


@given(anything)
def test_never_raises_on_anything(value: object) -> None:
    assert validate_failure_kind(value) is value  # type: ignore[type-var]
    label = metric_label(value)
    assert label == OTHER_LABEL or is_registered(label) or is_namespaced(label)


@given(st.text())
def test_predicates_agree_with_the_patterns(text: str) -> None:
    assert is_registered(text) == (text in failure_kinds.FAILURE_KINDS)
    assert is_namespaced(text) == (failure_kinds._NAMESPACED_PATTERN.fullmatch(text) is not None)
    assert not (is_registered(text) and is_namespaced(text))
