"""failure_kinds._display: how every module shows a value or a path it did not write."""

from __future__ import annotations

import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from failure_kinds import _display
from failure_kinds._display import escaped, plain, shown


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        *[
            (value, repr(value))
            for value in ["judge_faild", 42, None, 1.5, b"x", ["a", 1], ("a",), {"k": [1]}]
        ],
        *[(value, repr(value)) for value in [frozenset(), set(), {3, 1, 2}, frozenset({"b", "a"}), 10**50]],
        # Dicts and sets keep their own order: sorting would run the elements' comparisons.
        ({"b": 1, "a": 2}, "{'b': 1, 'a': 2}"),
        # Decimal conversion of an int this size is refused (and quadratic before that).
        (10**20_000, f"<int of {(10**20_000).bit_length()} bits>"),
        ("x" * 1000, "'" + "x" * 196 + "..."),  # the limit messages promise
    ],
    ids=lambda value: type(value).__name__,
)
def test_a_value_reads_as_its_repr(value: object, expected: str) -> None:
    assert shown(value) == expected
    assert _display.LIMIT == 200


def raising(*arguments: object) -> object:
    raise RuntimeError("a method of the value's own")


# A str subclass whose every method of its own raises.
Hostile = type(
    "Hostile", (str,), dict.fromkeys(["__repr__", "__len__", "__getitem__", "__iter__", "__lt__"], raising)
)


def test_a_str_subclass_is_shown_as_its_text_without_running_its_methods() -> None:
    assert shown(Hostile("judge_faild")) == "'judge_faild'"
    assert shown([Hostile("a"), {Hostile("k"): Hostile("v")}]) == "['a', {'k': 'v'}]"
    assert escaped(Hostile("a\nb"), 10) == "a\\x0ab"
    assert escaped(Hostile("a\x1bb")) == "a\\x1bb"
    assert plain(Hostile("judge_faild")) == "judge_faild"
    assert plain(Hostile(" a")) == "' a'"


RaisingRepr = type("RaisingRepr", (), {"__repr__": raising})
StrSubclassRepr = type("StrSubclassRepr", (), {"__repr__": lambda self: Hostile("forged\nline")})


def test_what_a_value_cannot_say_for_itself_is_named_by_its_type() -> None:
    assert shown(RaisingRepr()) == "<RaisingRepr object whose repr failed>"
    assert shown([1, RaisingRepr()]) == "[1, <RaisingRepr object whose repr failed>]"
    assert shown(StrSubclassRepr()) == "forged\\x0aline"
    forged, long_name = (type(name, (RaisingRepr,), {})() for name in ("Forged\nERROR", "T" * 500))
    assert shown(forged) == "<Forged\\x0aERROR object whose repr failed>"
    assert shown(long_name, 1000) == "<" + "T" * 197 + "... object whose repr failed>"


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
    assert [escaped(text, limit) for limit in (5, 4, 3, 0)] == ["xx...", "x...", "xxx", ""]
    assert shown("short") == "'short'"


@given(st.text(alphabet=st.characters(codec=None), max_size=400), st.integers(min_value=-5, max_value=300))
def test_escaped_and_plain_text_are_bounded_printable_and_keep_plain_text(text: str, limit: int) -> None:
    for result in (escaped(text, limit), escaped(text), plain(text, max(limit, 0))):
        assert result.isprintable(), ascii(result)
        for character in text:
            if not character.isprintable():
                assert character not in result
    full, cut = escaped(text), max(limit, 0)
    # What does not fit is cut to the limit, ending in "..." where four characters or more are left.
    assert escaped(text, limit) == (
        full if len(full) <= cut else full[: cut - 3] + "..." if cut >= 4 else full[:cut]
    )
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


@given(st.text(alphabet=st.characters(codec=None), max_size=400))
def test_a_custom_repr_is_escaped_after_repr(text: str) -> None:
    class Shown:
        def __repr__(self) -> str:
            return text

    class ShownStr(str):
        def __repr__(self) -> str:
            return text

    for value in (Shown(), ShownStr(text), ShownStr("legacy" + text)):
        for limit in (0, 3, 4, 40, 200):
            assert shown(value, limit).isprintable()
            assert len(shown(value, limit)) <= limit
