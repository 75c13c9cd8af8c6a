"""failure_kinds._display: how every module shows a value or a path it did not write."""

from __future__ import annotations

import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from failure_kinds import _display
from failure_kinds._display import escaped, plain, shown


def test_builtin_values_read_as_their_repr() -> None:
    for value in ["judge_faild", 42, None, 1.5, b"x", ["a", 1], ("a",), {"k": [1, 2]}, frozenset(), set()]:
        assert shown(value) == repr(value)


def test_dicts_and_sets_keep_their_own_order() -> None:
    # reprlib sorts them, which runs the elements' comparisons and shows an order the value never had.
    assert shown({"b": 1, "a": 2}) == "{'b': 1, 'a': 2}"
    assert shown({3, 1, 2}) == repr({3, 1, 2})
    assert shown(frozenset({"b", "a"})) == repr(frozenset({"b", "a"}))


class Hostile(str):
    """A str subclass whose every method of its own raises."""

    def __repr__(self) -> str:
        raise RuntimeError("repr")

    def __len__(self) -> int:
        raise RuntimeError("len")

    def __getitem__(self, index: object) -> str:
        raise RuntimeError("getitem")

    def __iter__(self) -> object:
        raise RuntimeError("iter")

    def __lt__(self, other: object) -> bool:
        raise RuntimeError("lt")


def test_a_str_subclass_is_shown_as_its_text_without_running_its_methods() -> None:
    assert shown(Hostile("judge_faild")) == "'judge_faild'"
    assert shown([Hostile("a"), {Hostile("k"): Hostile("v")}]) == "['a', {'k': 'v'}]"
    assert escaped(Hostile("a\nb"), 10) == "a\\x0ab"
    assert escaped(Hostile("a\x1bb")) == "a\\x1bb"
    assert plain(Hostile("judge_faild")) == "judge_faild"
    assert plain(Hostile(" a")) == "' a'"


class RaisingRepr:
    def __repr__(self) -> str:
        raise RuntimeError("repr")


class StrSubclassRepr:
    def __repr__(self) -> str:
        return Hostile("forged\nline")


def test_what_a_value_cannot_say_for_itself_is_named_by_its_type() -> None:
    assert shown(RaisingRepr()) == "<RaisingRepr object whose repr failed>"
    assert shown([1, RaisingRepr()]) == "[1, <RaisingRepr object whose repr failed>]"
    assert shown(StrSubclassRepr()) == "forged\\x0aline"
    forged, long_name = (type(name, (RaisingRepr,), {})() for name in ("Forged\nERROR", "T" * 500))
    assert shown(forged) == "<Forged\\x0aERROR object whose repr failed>"
    assert shown(long_name, 1000) == "<" + "T" * 197 + "... object whose repr failed>"


def test_a_huge_int_is_shown_by_its_size() -> None:
    # Decimal conversion of an int this size is refused (and quadratic before that).
    assert shown(10**20_000) == f"<int of {(10**20_000).bit_length()} bits>"
    assert shown(10**50) == repr(10**50)


class Counted:
    calls = 0

    def __repr__(self) -> str:
        Counted.calls += 1
        return "counted"


@pytest.mark.parametrize("shape", ["list", "tuple", "set", "dict", "nested"])
def test_showing_a_huge_value_reads_only_what_is_shown(shape: str) -> None:
    elements = [Counted() for _ in range(100_000)]
    value: object = {
        "list": elements,
        "tuple": tuple(elements),
        "set": set(elements),
        "dict": dict(enumerate(elements)),
        "nested": [[element] for element in elements],
    }[shape]
    Counted.calls = 0
    text = shown(value, 100)
    assert len(text) == 100
    assert text.endswith("...")
    assert Counted.calls <= 100


def test_deep_nesting_is_cut_at_a_fixed_depth() -> None:
    value: list[object] = []
    for _ in range(10_000):  # deeper than the interpreter's recursion limit
        value = [value]
    assert sys.getrecursionlimit() < 10_000
    assert shown(value) == "[" * 7 + "..." + "]" * 7


def test_a_string_is_cut_before_its_repr_is_made() -> None:
    text = "x" * 10_000_000
    assert shown(text, 20) == "'xxxxxxxxxxxxxxxx..."
    assert escaped(text, 5) == "xx..."
    assert shown("short") == "'short'"


@given(st.text(alphabet=st.characters(codec=None), max_size=400), st.integers(min_value=-5, max_value=300))
def test_escaped_and_plain_text_are_bounded_printable_and_keep_plain_text(text: str, limit: int) -> None:
    for result in (escaped(text, limit), escaped(text), plain(text, max(limit, 0))):
        assert result.isprintable(), ascii(result)
        for character in text:
            if not character.isprintable():
                assert character not in result
    assert len(escaped(text, limit)) <= max(limit, 0)
    if len(escaped(text)) <= limit:
        assert escaped(text, limit) == escaped(text)
    if text.isprintable():
        assert escaped(text) == text
    if text and text.isprintable() and text.strip() == text:
        assert plain(text, max(limit, 0)) == text
    else:
        assert plain(text, max(limit, 0)) == shown(text, max(limit, 0))


# Every shape a value arrives in: strings of any code point, numbers, bytes, and containers of them.
values = st.recursive(
    st.one_of(
        st.text(alphabet=st.characters(codec=None), max_size=300),
        st.text(alphabet=st.sampled_from("\n\r\x1b[]0;m\x00\x85\u2028\u202e\u2066\ud800 a"), max_size=300),
        st.integers(),
        st.floats(),
        st.binary(max_size=100),
        st.none(),
    ),
    lambda children: st.one_of(
        st.lists(children, max_size=8),
        st.tuples(children, children),
        st.dictionaries(st.text(max_size=10), children, max_size=5),
        st.frozensets(st.integers(), max_size=5),
    ),
    max_leaves=40,
)


def depth(value: object) -> int:
    if isinstance(value, (list, tuple, frozenset)):
        return 1 + max(map(depth, value), default=0)  # pyright: ignore[reportUnknownArgumentType]
    if isinstance(value, dict):
        return 1 + max(map(depth, value.values()), default=0)  # pyright: ignore[reportUnknownArgumentType]
    return 0


def quoted(value: object) -> bool:
    return "'" in repr(value) or '"' in repr(value)


@given(values, st.integers(min_value=0, max_value=400))
def test_any_value_shows_as_one_bounded_printable_line(value: object, limit: int) -> None:
    text = shown(value, limit)
    assert len(text) <= limit
    assert text.isprintable(), ascii(text)
    full = escaped(repr(value))
    if len(full) <= limit and depth(value) <= 6:
        assert text == full
    # A string cut before its repr may pick other quotes than the whole one; elsewhere what is shown is
    # the start of the value's own repr, escaped, and the cut marker is past the limit.
    if depth(value) <= 6 and not (len(full) > limit and quoted(value)):
        assert full.startswith(text.removesuffix("...")), (text, full)


def test_the_default_limit_is_the_one_messages_promise() -> None:
    assert _display.LIMIT == 200
    assert len(shown("x" * 1000)) == 200
