"""validate_failure_kind and the predicates: spec semantics, warn-once, and never taking a producer down."""

from __future__ import annotations

import contextlib
import enum
import logging
import threading
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import failure_kinds
from failure_kinds import (
    OTHER_LABEL,
    FailureKind,
    _display,
    _runtime,
    _suggest,
    declare_namespace,
    is_namespaced,
    is_registered,
    metric_label,
    namespaced,
    validate_failure_kind,
)
from failure_kinds.history import older_label


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        record.getMessage()
        for record in caplog.records
        if record.name == "failure_kinds" and record.levelno == logging.WARNING
    ]


def unregistered(text: str) -> str:
    """The warning for the unregistered value ``text`` when no kind is close: upstream's words."""
    ending = "register it or namespace it as '<server>:<kind>'. Reported once per name."
    return f"unregistered failure_kind {text!r}; {ending}"


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
    assert warnings_of(caplog) == [
        "unregistered failure_kind 'judge_faild'; did you mean 'judge_failed'? Otherwise register it or "
        "namespace it as '<server>:<kind>'. Reported once per name."
    ]
    assert name in failure_kinds._WARNED_UNKNOWN


def test_no_suggestion_when_nothing_is_close(caplog: pytest.LogCaptureFixture) -> None:
    validate_failure_kind("something_invented")
    assert warnings_of(caplog) == [
        "unregistered failure_kind 'something_invented'; register it or namespace it as '<server>:<kind>'. "
        "Reported once per name."
    ]


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
    shown = message.removeprefix("unregistered failure_kind ").partition("; register it")[0]
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
    assert warnings_of(caplog) == [unregistered("racing_kind")]


def test_reports_are_bounded(caplog: pytest.LogCaptureFixture) -> None:
    limit = _runtime.WARNED_LIMIT
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
        # Twelve times the silent cache's capacity: any memory kept per value would pass 64 KiB here.
        for index in range(50_000):
            validate_failure_kind(f"flood_{index}")
            if index % 10 == 0:
                validate_failure_kind(f"flood_env:kind_{index}")
        after, _ = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    finally:
        logging.getLogger("failure_kinds").disabled = False
    assert after - before < 64 * 1024
    assert len(_runtime.SILENT) <= _runtime.silent_limit


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


# Declared namespaces (declare_namespace) --------------------------------------------------------------


def test_undeclared_kind_of_declared_server_warns_once_with_suggestion(
    caplog: pytest.LogCaptureFixture,
) -> None:
    declare_namespace("swe_env", ["patch_apply_failed", "test_collection_error"])
    for _ in range(3):
        assert validate_failure_kind("swe_env:patch_aply_failed") == "swe_env:patch_aply_failed"
        assert validate_failure_kind("swe_env:patch_apply_failed") == "swe_env:patch_apply_failed"
        assert validate_failure_kind("other_env:anything") == "other_env:anything"
    assert warnings_of(caplog) == [
        "undeclared failure kind 'swe_env:patch_aply_failed' in declared namespace 'swe_env'; "
        "did you mean 'swe_env:patch_apply_failed'?"
    ]
    assert metric_label("swe_env:patch_aply_failed") == OTHER_LABEL
    assert metric_label("swe_env:patch_apply_failed") == "swe_env:patch_apply_failed"
    assert metric_label("other_env:anything") == "other_env:anything"


def test_undeclared_kind_without_a_close_one_warns_without_suggestion(
    caplog: pytest.LogCaptureFixture,
) -> None:
    declare_namespace("swe_env", ["patch_apply_failed"])
    validate_failure_kind("swe_env:zzz")
    assert warnings_of(caplog) == ["undeclared failure kind 'swe_env:zzz' in declared namespace 'swe_env'"]


def test_declaring_after_values_were_seen_stops_them_passing(caplog: pytest.LogCaptureFixture) -> None:
    # Seen (and cached as silent, and labelled) while the server declared nothing.
    for _ in range(2):
        assert validate_failure_kind("late_env:typo_kind") == "late_env:typo_kind"
        assert metric_label("late_env:typo_kind") == "late_env:typo_kind"
        validate_failure_kind("late_env:good_kind")
    assert warnings_of(caplog) == []
    declare_namespace("late_env", ["good_kind"])
    validate_failure_kind("late_env:typo_kind")
    validate_failure_kind("late_env:good_kind")
    assert warnings_of(caplog) == [
        "undeclared failure kind 'late_env:typo_kind' in declared namespace 'late_env'"
    ]
    assert metric_label("late_env:typo_kind") == OTHER_LABEL
    assert metric_label("late_env:good_kind") == "late_env:good_kind"


def test_repeated_declarations_add_kinds_and_are_idempotent(caplog: pytest.LogCaptureFixture) -> None:
    labelled = _runtime.labelled_namespaced
    silent_room = _runtime.silent_limit - len(_runtime.SILENT)
    declare_namespace("grow_env", ["first"])
    declare_namespace("grow_env", ["first"])
    declare_namespace("grow_env", iter(["second", "first"]))
    assert _runtime.DECLARED["grow_env"] == {"first", "second"}
    # Declared names take no room from the values of undeclared servers, however often declared.
    assert _runtime.labelled_namespaced == labelled
    assert _runtime.silent_limit - len(_runtime.SILENT) == silent_room
    for name in ("grow_env:first", "grow_env:second"):
        validate_failure_kind(name)
        assert metric_label(name) == name
    assert warnings_of(caplog) == []
    # A value warned about as undeclared passes once declared.
    validate_failure_kind("grow_env:third")
    declare_namespace("grow_env", ["third"])
    validate_failure_kind("grow_env:third")
    assert metric_label("grow_env:third") == "grow_env:third"
    assert len(warnings_of(caplog)) == 1


def test_declared_kinds_may_be_string_enum_members(caplog: pytest.LogCaptureFixture) -> None:
    class EnvKind(enum.StrEnum):
        PATCH_APPLY_FAILED = "patch_apply_failed"

    declare_namespace("enum_env", EnvKind)
    assert _runtime.DECLARED["enum_env"] == {"patch_apply_failed"}
    assert all(type(kind) is str for kind in _runtime.DECLARED["enum_env"])
    validate_failure_kind("enum_env:patch_apply_failed")
    assert warnings_of(caplog) == []


@pytest.mark.parametrize(
    ("server", "kinds", "message"),
    [
        ("Swe-Env", ["a"], r"the server 'Swe-Env' does not match"),
        ("", ["a"], r"the server '' does not match"),
        (None, ["a"], r"the server None does not match"),
        ("swe_env:x", ["a"], r"the server 'swe_env:x' does not match"),
        ("swe_env", "patch_apply_failed", r"not the single value 'patch_apply_failed'"),
        ("swe_env", b"patch", r"names \(strings\), not b'patch' of type bytes; write \['patch'\]$"),
        (
            "swe_env",
            [b"patch"],
            r"the kind b'patch' of server 'swe_env' is not a string but bytes; write 'patch'$",
        ),
        ("swe_env", bytearray(b"\xff"), r"not bytearray\(b'\\xff'\) of type bytearray$"),
        ("swe_env", 5, r"not 5 of type int"),
        ("swe_env", ["ok", 5], r"the kind 5 of server 'swe_env' is not a string but int"),
        ("swe_env", ["ok", "Bad"], r"the kind 'Bad' of server 'swe_env' does not match"),
        ("swe_env", ["ok", "a:b"], r"the kind 'a:b' of server 'swe_env' does not match"),
        ("swe_env", ["bad\n\x1b[2J"], r"the kind 'bad\\n\\x1b\[2J' of server"),
        ("swe_env", [], r"the server 'swe_env' declares no kinds"),
        ("swe_env", iter(()), r"the server 'swe_env' declares no kinds"),
    ],
)
def test_declare_namespace_rejects_bad_arguments_naming_them(
    server: object, kinds: object, message: str
) -> None:
    with pytest.raises(ValueError, match=message) as raised:
        declare_namespace(server, kinds)  # type: ignore[arg-type]
    assert "\n" not in str(raised.value)
    assert "swe_env" not in _runtime.DECLARED  # nothing declared when it raises


def test_an_empty_declaration_is_rejected_as_the_configuration_rejects_it(tmp_path: Path) -> None:
    from failure_kinds.config import ConfigError, load_config

    written = tmp_path / "pyproject.toml"
    written.write_text("[tool.failure-kinds.namespaces]\nswe_env = []\n", encoding="utf-8")
    with pytest.raises(ConfigError) as configured:
        load_config(written)
    with pytest.raises(ValueError, match="declares no kinds") as declared:
        declare_namespace("swe_env", [])
    assert str(configured.value).endswith("'swe_env': declares no kinds")
    assert str(declared.value) == "declare_namespace: the server 'swe_env' declares no kinds"
    # A server already declared is not emptied either: the call is refused and changes nothing.
    declare_namespace("swe_env", ["patch_apply_failed"])
    with pytest.raises(ValueError, match="declares no kinds"):
        declare_namespace("swe_env", [])
    assert _runtime.DECLARED["swe_env"] == {"patch_apply_failed"}


not_a_name = st.text(max_size=30).filter(lambda text: failure_kinds._NAME_PATTERN.fullmatch(text) is None)


@given(server=names, good=names, bad=not_a_name, position=st.integers(0, 3))
def test_declare_namespace_rejects_any_malformed_kind_atomically(
    server: str, good: str, bad: str, position: int
) -> None:
    saved = dict(_runtime.DECLARED)
    kinds = [good] * 3
    kinds.insert(position, bad)
    try:
        with pytest.raises(ValueError, match=r"declare_namespace: the kind .* does not match") as raised:
            declare_namespace(server, kinds)
        assert "\n" not in str(raised.value)
        assert "\x1b" not in str(raised.value)
        assert saved == _runtime.DECLARED
        with pytest.raises(ValueError, match=r"declare_namespace: the server .* does not match"):
            declare_namespace(bad, [good])
    finally:
        _runtime.DECLARED.clear()
        _runtime.DECLARED.update(saved)


def hostile_bytes(base: type) -> type:
    """A bytes type whose own methods raise: the message is built from the value, never with them."""

    def fail(*arguments: object) -> object:
        raise RuntimeError("bytes method")

    methods = ("__len__", "__iter__", "__repr__", "__str__", "decode", "__getitem__", "__eq__", "__hash__")
    return type(f"Hostile{base.__name__}", (base,), dict.fromkeys(methods, fail))


@given(
    data=st.one_of(names.map(str.encode), st.binary(max_size=300)),
    kind=st.sampled_from([bytes, bytearray, hostile_bytes(bytes), hostile_bytes(bytearray)]),
    listed=st.booleans(),
)
def test_bytes_as_kinds_are_refused_as_bytes_with_the_name_to_write(
    data: bytes, kind: type, listed: bool
) -> None:
    value = kind(data)
    saved = _runtime.snapshot()
    try:
        said = rf"(not .* of type|is not a string but) {type(value).__name__}(;|$)"
        with pytest.raises(ValueError, match=said) as raised:
            declare_namespace("bytes_env", [value] if listed else value)
        message = str(raised.value)
        assert message.isprintable()
        assert len(message) <= MESSAGE_LIMIT
        assert "write [b" not in message  # never the advice that is refused in turn
        assert "write b" not in message
        name = data.decode("ascii", "replace")
        hinted = kind in (bytes, bytearray) and failure_kinds._NAME_PATTERN.fullmatch(name) is not None
        hint = f"; write [{name!r}]" if not listed else f"; write {name!r}"
        assert message.endswith(hint) == hinted
        assert "bytes_env" not in _runtime.DECLARED
        if hinted:  # what the message says to write is accepted
            declare_namespace("bytes_env", [name])
            assert _runtime.DECLARED["bytes_env"] == {name}
    finally:
        _runtime.restore(saved)


def test_concurrent_declarations_and_validations_agree(caplog: pytest.LogCaptureFixture) -> None:
    barrier = threading.Barrier(16)
    kinds = [f"kind_{index}" for index in range(64)]

    def declare_and_validate(offset: int) -> None:
        barrier.wait()
        for kind in kinds[offset::16]:
            validate_failure_kind("race_env:never_declared")
            metric_label("race_env:never_declared")
            declare_namespace("race_env", [kind])
            validate_failure_kind(f"race_env:{kind}")

    threads = [threading.Thread(target=declare_and_validate, args=(offset,)) for offset in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert _runtime.DECLARED["race_env"] == set(kinds)
    # However the threads interleaved, the undeclared value was not left cached as silent or labelled.
    assert "race_env:never_declared" not in _runtime.SILENT
    assert metric_label("race_env:never_declared") == OTHER_LABEL
    caplog.clear()
    failure_kinds._WARNED_UNKNOWN.discard("race_env:never_declared")
    validate_failure_kind("race_env:never_declared")
    assert len(warnings_of(caplog)) == 1
    assert all(f"race_env:{kind}" in _runtime.SILENT for kind in kinds)


def test_category_and_suggestion_follow_runtime_or_given_declarations() -> None:
    declare_namespace("swe_env", ["patch_apply_failed"])
    category = _runtime.category
    assert category("cancelled") == "registered"
    assert category("swe_env:patch_apply_failed") == "namespaced"
    assert category("swe_env:patch_aply_failed") == "undeclared"
    assert category("free_env:anything") == "namespaced"
    assert category("Swe_env:patch") == "unregistered"
    assert category(42) == "unregistered"  # type: ignore[arg-type]
    given_declarations = {"free_env": ("known",)}
    assert category("free_env:anything", given_declarations) == "undeclared"
    assert category("swe_env:patch_aply_failed", given_declarations) == "namespaced"
    assert category("free_env:known", given_declarations) == "namespaced"
    assert _suggest.suggest_any("swe_env:patch_aply_failed") == "swe_env:patch_apply_failed"
    assert _suggest.suggest_any("free_env:knwn", given_declarations) == "free_env:known"
    assert _suggest.suggest_any("judge_faild") == "judge_failed"
    assert _suggest.suggest_any("free_env:knwn") is None


@given(name=st.text(max_size=80), candidates=st.lists(st.text(max_size=40), max_size=8))
def test_closest_is_a_candidate_or_none(name: str, candidates: list[str]) -> None:
    result = _suggest.closest(name, candidates)
    assert result is None or result in candidates


@given(st.lists(st.from_regex(r"[a-z][a-z0-9_]{0,20}(:[a-z][a-z0-9_]{0,20})?", fullmatch=True), min_size=1))
def test_closest_finds_each_candidate_itself(candidates: list[str]) -> None:
    for candidate in candidates:
        assert _suggest.closest(candidate, candidates) == candidate
        if not any(character.isdigit() for character in candidate):
            # (A digit before a capital reads as a word boundary: "A0A" is "a0_a".)
            assert _suggest.closest(candidate.upper(), candidates) == candidate


# Hostile values: what is logged, what is remembered, and what it costs ------------------------------------

MESSAGE_LIMIT = 200 + 200 + 100  # the shown value, the type name, and the fixed words around them


@contextlib.contextmanager
def fresh_warnings() -> Iterator[list[str]]:
    """The warnings logged inside the block, starting with nothing reported: caplog's counterpart for
    tests run once per generated input."""
    messages: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.levelno == logging.WARNING:
                messages.append(record.getMessage())

    handler = Collect()
    saved = _runtime.snapshot()
    _runtime.forget_reports()
    failure_kinds.logger.addHandler(handler)
    try:
        yield messages
    finally:
        failure_kinds.logger.removeHandler(handler)
        _runtime.restore(saved)


def assert_safe_line(message: str) -> None:
    """Nothing in ``message`` can end the log line, drive a terminal or be cut off by a decoder."""
    assert message.isprintable(), ascii(message)
    assert len(message) <= MESSAGE_LIMIT


any_text = st.text(alphabet=st.characters(codec=None), max_size=400)
control_heavy = st.text(
    alphabet=st.sampled_from("\n\r\x1b[]0123;m\x00\x07\x85\u2028\u202e\ud800 ab"), max_size=400
)


@given(st.one_of(any_text, control_heavy))
def test_a_custom_repr_is_escaped_after_repr(text: str) -> None:
    class Shown:
        def __repr__(self) -> str:
            return text

    class ShownStr(str):
        def __repr__(self) -> str:
            return text

    for value in (Shown(), ShownStr(text), ShownStr("legacy" + text)):
        for limit in (0, 3, 4, 40, 200):
            shown = _display.shown(value, limit)
            assert shown.isprintable()
            assert len(shown) <= limit


@given(st.one_of(any_text, control_heavy).filter(lambda text: text != ""))
def test_a_type_name_is_escaped(qualname: str) -> None:
    odd_type = type("Odd", (), {"__repr__": lambda self: qualname})
    odd_type.__qualname__ = qualname
    with fresh_warnings() as messages:
        validate_failure_kind(odd_type())
        validate_failure_kind([odd_type()])
    assert len(messages) == 2
    for message in messages:
        assert_safe_line(message)


@given(st.one_of(any_text, control_heavy))
def test_every_warning_is_one_safe_line(text: str) -> None:
    class Sub(str):
        def __repr__(self) -> str:
            return "\n" + text

    with fresh_warnings() as messages:
        for value in (text, Sub(text), [text], {text: text}, (text,), Sub(text + "x" * 300)):
            validate_failure_kind(value)
    assert messages or is_registered(text) or is_namespaced(text)
    for message in messages:
        assert_safe_line(message)


class Colliding:
    """Hashes like ``text``, then raises or claims equality when compared."""

    def __init__(self, text: str, equal: bool) -> None:
        self.text = text
        self.equal = equal

    def __hash__(self) -> int:
        return hash(self.text)

    def __eq__(self, other: object) -> bool:
        if self.equal:
            return True
        raise RuntimeError("eq")


ordinary = st.one_of(
    st.from_regex(r"[a-z][a-z_]{0,30}", fullmatch=True),
    st.from_regex(r"[a-z][a-z0-9_]{0,10}:[a-z][a-z0-9_]{0,10}", fullmatch=True),
    st.sampled_from(sorted(failure_kinds.FAILURE_KINDS)),
    st.text(max_size=40),
)


@given(text=ordinary, equal=st.booleans())
@example(text="timeout", equal=True)  # an older label: labelled as the kind that replaced it
def test_a_colliding_hostile_value_changes_nothing_for_ordinary_strings(text: str, equal: bool) -> None:
    hostile = Colliding(text, equal)
    with fresh_warnings() as messages:
        for _ in range(2):
            validate_failure_kind(hostile)
            metric_label(hostile)
        hostile_warnings = len(messages)
        validate_failure_kind(text)
        validate_failure_kind(text)
    assert hostile_warnings == 1  # judged by what it is, never by what it claims to equal
    passes = is_registered(text) or is_namespaced(text)
    assert len(messages) == hostile_warnings + (0 if passes else 1)
    older = older_label(text)
    assert metric_label(text) in (OTHER_LABEL, text, older and older.replacement)
    if is_registered(text):
        assert metric_label(text) == text
    # Nothing the hostile value did is remembered as the value itself.
    assert all(type(key) in (str, tuple) for key in failure_kinds._WARNED_UNKNOWN)
    assert all(key is None or type(key) is str for key in _runtime.SILENT)


def raising_str_subclass(method: str) -> type[str]:
    def fail(*args: object, **kwargs: object) -> object:
        raise RuntimeError(method)

    return type(f"Raising_{method}", (str,), {method: fail})


STR_METHODS = [
    "__len__",
    "__hash__",
    "__eq__",
    "__repr__",
    "__str__",
    "__getitem__",
    "__iter__",
    "__contains__",
    "lower",
    "strip",
    "startswith",
    "partition",
    "isprintable",
    "encode",
]


@given(method=st.sampled_from(STR_METHODS), text=st.from_regex(r"[a-z]{1,10}_label", fullmatch=True))
def test_a_str_subclass_with_a_raising_method_is_reported_exactly_once(method: str, text: str) -> None:
    value = raising_str_subclass(method)(text)
    with fresh_warnings() as messages:
        for _ in range(3):
            assert validate_failure_kind(value) is value
        assert text in failure_kinds._WARNED_UNKNOWN
    assert messages == [unregistered(text)]


@given(method=st.sampled_from(STR_METHODS), text=st.sampled_from(["cancelled", "my_env:quota_hit"]))
def test_a_str_subclass_with_a_raising_method_is_judged_by_its_text(method: str, text: str) -> None:
    value = raising_str_subclass(method)(text)
    with fresh_warnings() as messages:
        assert validate_failure_kind(value) is value
    assert messages == []
    assert metric_label(value) == text
    assert type(metric_label(value)) is str


class FailingTimes(logging.Filter):
    """Raises on its first ``times`` calls, then lets records through."""

    def __init__(self, times: int) -> None:
        super().__init__()
        self.times = times

    def filter(self, record: logging.LogRecord) -> bool:
        if self.times > 0:
            self.times -= 1
            raise RuntimeError("filter down")
        return True


class HandlerFailingTimes(logging.Handler):
    def __init__(self, times: int) -> None:
        super().__init__()
        self.times = times

    def emit(self, record: logging.LogRecord) -> None:
        if self.times > 0:
            self.times -= 1
            raise RuntimeError("sink down")


@given(times=st.integers(1, 4), text=st.from_regex(r"[a-z]{1,12}_kind", fullmatch=True), where=st.booleans())
def test_a_value_counts_as_reported_only_once_its_warning_was_emitted(
    times: int, text: str, where: bool
) -> None:
    with fresh_warnings() as messages:
        failing: logging.Filter | logging.Handler = (
            FailingTimes(times) if where else HandlerFailingTimes(times)
        )
        if isinstance(failing, logging.Filter):
            failure_kinds.logger.addFilter(failing)
        else:
            failure_kinds.logger.addHandler(failing)
        try:
            for attempt in range(times):
                assert validate_failure_kind(text) is text
                assert text not in failure_kinds._WARNED_UNKNOWN, attempt
            validate_failure_kind(text)
            assert text in failure_kinds._WARNED_UNKNOWN
            validate_failure_kind(text)
        finally:
            failure_kinds.logger.removeFilter(failing)  # type: ignore[arg-type]
            failure_kinds.logger.removeHandler(failing)  # type: ignore[arg-type]
    # The capturing handler comes before the raising one; a raising filter stops every handler.
    assert len(messages) == (1 if where else times + 1)


def test_the_overflow_notice_is_marked_only_once_emitted(caplog: pytest.LogCaptureFixture) -> None:
    for index in range(_runtime.WARNED_LIMIT):
        validate_failure_kind(f"filler_{index}")
    failing = FailingTimes(1)
    failure_kinds.logger.addFilter(failing)
    try:
        validate_failure_kind("one_too_many")
        assert not _runtime.warned_overflow
    finally:
        failure_kinds.logger.removeFilter(failing)
    validate_failure_kind("two_too_many")
    validate_failure_kind("three_too_many")
    assert _runtime.warned_overflow
    assert sum("no longer reported" in message for message in warnings_of(caplog)) == 1


@given(st.lists(st.text(min_size=1, max_size=30), min_size=12, max_size=40), st.integers(0, 1000))
def test_non_strings_are_remembered_by_type_and_whole_repr(elements: list[str], tail: int) -> None:
    # Two values whose warnings read alike are still two reports: the second is another value to fix.
    prefix = ["p" * 210, *elements]  # the first 200 characters of both reprs are the same
    with fresh_warnings() as messages:
        for _ in range(2):
            validate_failure_kind([*prefix, tail])
            validate_failure_kind([*prefix, tail + 1])
            validate_failure_kind(([*prefix, tail],))  # another type: another warning
            validate_failure_kind([[1, tail]])
    assert len(messages) == 4, messages
    assert all(type(key) in (str, tuple) for key in failure_kinds._WARNED_UNKNOWN)  # not the values


class CountedRepr:
    calls = 0

    def __repr__(self) -> str:
        CountedRepr.calls += 1
        return "counted"


def test_a_huge_unhashable_value_costs_bounded_work_per_call(caplog: pytest.LogCaptureFixture) -> None:
    huge = [CountedRepr() for _ in range(200_000)]
    CountedRepr.calls = 0
    for _ in range(5):
        assert validate_failure_kind(huge) is huge
        metric_label(huge)
    # Each call shows the value to key it and for its warning, each showing stopping at its limit.
    assert CountedRepr.calls <= 5 * (_runtime.REPR_LENGTH + _display.LIMIT + 2)
    assert len(warnings_of(caplog)) == 1


def test_a_huge_unhashable_value_costs_bounded_memory_per_call() -> None:
    huge = [list(range(100)) for _ in range(20_000)]  # its repr would be ~8 MB
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before, _ = tracemalloc.get_traced_memory()
        for _ in range(3):
            validate_failure_kind(huge)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak - before < 1024 * 1024


def warn_and_forget(values: Iterator[object]) -> None:
    for value in values:
        validate_failure_kind(value)
        metric_label(value)


def test_retention_is_bounded_in_bytes() -> None:
    logging.getLogger("failure_kinds").disabled = True
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        # Each value is built, validated and dropped: only what the module keeps stays allocated.
        warn_and_forget(f"{index}_" + "x" * 100_000 for index in range(1_100))
        warn_and_forget(f"big_env:k{index}_" + "y" * 100_000 for index in range(4_200))
        warn_and_forget(f"env_{index}:kind_" + "z" * 200 for index in range(4_200))
        warn_and_forget([index, "w" * 10_000] for index in range(1_100))
        warn_and_forget(index * 10**3000 for index in range(1_100))
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        logging.getLogger("failure_kinds").disabled = False
    assert len(failure_kinds._WARNED_UNKNOWN) <= _runtime.WARNED_LIMIT
    assert len(_runtime.SILENT) <= _runtime.silent_limit
    # The stated bound: under 8 MiB for everything remembered (about 2 MiB is reached here).
    assert after - before < 8 * 1024 * 1024


@given(st.lists(st.from_regex(r"[a-z][a-z0-9_]{0,150}:[a-z][a-z0-9_]{0,150}", fullmatch=True), max_size=30))
def test_metric_labels_are_bounded_in_length(values: list[str]) -> None:
    for value in values:
        label = metric_label(value)
        assert label == (value if len(value) <= _runtime.LABEL_LENGTH else OTHER_LABEL)
        assert type(label) is str


def test_distinct_namespaced_labels_are_capped() -> None:
    declare_namespace("capped_env", ["declared_kind"])
    room = _runtime.LABEL_LIMIT - _runtime.labelled_namespaced
    labels = [metric_label(f"flood_env:kind_{index}") for index in range(20_000)]
    assert labels[:room] == [f"flood_env:kind_{index}" for index in range(room)]
    assert labels[room:] == [OTHER_LABEL] * (20_000 - room)
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
    assert f"cut to {_display.LIMIT} characters and then escaped" in boundaries
    assert f"at most {_runtime.WARNED_LIMIT} reported values" in boundaries
    assert f"up to {_runtime.REMEMBER_LENGTH} characters is remembered as itself" in boundaries
    assert (
        "any other value (a number, a list, a hostile object) by a 16-byte digest of its type and of its "
        f"`repr` cut at {_runtime.REPR_LENGTH:,} characters" in boundaries
    )
    assert f"at most {_runtime.SILENT_CACHE_LIMIT} namespaced values" in boundaries
    assert "stays under 8 MiB" in boundaries  # what test_retention_is_bounded_in_bytes holds it to
    assert f"at most {_runtime.LABEL_LENGTH} characters long" in labels
    assert f"first {_runtime.LABEL_LIMIT} distinct such values" in labels


def test_declare_namespace_takes_the_text_of_str_subclasses() -> None:
    class Forging(str):
        def __repr__(self) -> str:
            return "'x'\nERROR forged"

    with pytest.raises(ValueError, match=r"of server 'forge_env' does not match") as raised:
        declare_namespace(Forging("forge_env"), ["Bad"])
    assert "\n" not in str(raised.value)
    declare_namespace(Forging("forge_env"), [Forging("good_kind")])
    assert all(type(server) is str for server in _runtime.DECLARED)
    assert all(type(kind) is str for kind in _runtime.DECLARED["forge_env"])


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
    assert seen == [
        unregistered("outer_kind"),
        unregistered("handler_own_kind"),
    ]
