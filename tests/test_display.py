"""How every message shows a value or a path it did not write, seen where a user sees it: the warning
validate_failure_kind logs for a value that is not a string, and a configuration error naming a path."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_validation import hostile_str, outcome, raise_

from failure_kinds import _runtime
from failure_kinds.config import ConfigError, load_config

LIMIT = 200  # what a warning shows of a value, as docs/validation.md promises


def escape(text: str) -> str:
    """``text`` with each character that is not printable written as its escape."""

    def one(code: int) -> str:
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"

    return "".join(character if character.isprintable() else one(ord(character)) for character in text)


def warned(value: object) -> str:
    """The one warning validating ``value`` logs, from a fresh start."""
    (message,), _, _ = outcome(value, times=1)
    assert message.isprintable(), ascii(message)
    return message


def shown(value: object) -> str:
    """How the warning about ``value``, which is not a string, shows it."""
    message = warned(value)
    assert message.startswith("failure kind is not a string: ")
    return message.removeprefix("failure kind is not a string: ").rpartition(" of type ")[0]


# A str subclass whose every method of its own raises.
Hostile = hostile_str(
    {method: raise_(method) for method in ("__repr__", "__len__", "__getitem__", "__iter__", "__lt__")}
)
RaisingRepr = type("RaisingRepr", (), {"__repr__": raise_("__repr__")})
LongName = type("T" * 500, (RaisingRepr,), {})


@pytest.mark.parametrize(("value", "expected"), [
    *[(value, repr(value)) for value in [42, 1.5, b"x", ["a", 1], ("a",), {"k": [1]}, 10**50]],
    *[(value, repr(value)) for value in [frozenset(), set(), {3, 1, 2}, frozenset({"b", "a"})]],
    # Dicts and sets keep their own order: sorting would run the elements' comparisons.
    ({"b": 1, "a": 2}, "{'b': 1, 'a': 2}"),
    # Decimal conversion of an int this size is refused (and quadratic before that).
    (10**20_000, f"<int of {(10**20_000).bit_length()} bits>"),
    ([Hostile("a"), {Hostile("k"): Hostile("v")}], "['a', {'k': 'v'}]"),  # its text, not its methods
    # What a value cannot say for itself is named by its type.
    ([1, RaisingRepr()], "[1, <RaisingRepr object whose repr failed>]"),
    (type("Forged\nERROR", (RaisingRepr,), {})(), "<Forged\\x0aERROR object whose repr failed>"),
    (LongName(), "<" + "T" * 196 + "..."),
    (type("StrRepr", (), {"__repr__": lambda self: Hostile("forged\nline")})(), "forged\\x0aline"),
    (["x" * 1000], "['" + "x" * 195 + "..."),  # cut to the limit, ending in "..."
], ids=lambda value: type(value).__name__[:20])  # fmt: skip
def test_a_value_reads_as_its_repr_escaped_and_cut(value: object, expected: str) -> None:
    assert shown(value) == expected


def test_a_types_name_is_escaped_and_cut_as_a_value_is() -> None:
    assert warned(type("Forged\nERROR", (), {})()).endswith(" of type Forged\\x0aERROR")
    assert warned(LongName()).endswith(" of type " + "T" * 197 + "...")


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
    text = shown(value)
    assert (len(text), text[-3:]) == (LIMIT, "...")
    # Once to tell the value from others (cut at REPR_LENGTH), once for the warning.
    assert Counted.calls <= _runtime.REPR_LENGTH + LIMIT + 2


def test_deep_nesting_is_cut_at_a_fixed_depth() -> None:
    value: list[object] = []
    for _ in range(10_000):  # deeper than the interpreter's recursion limit
        value = [value]
    assert sys.getrecursionlimit() < 10_000
    assert shown(value) == "[" * 7 + "..." + "]" * 7


def test_a_string_is_cut_before_its_repr_is_made_and_its_escapes_shown() -> None:
    assert warned("evil\n\x1b[2J" + "y" * 10_000_000).startswith(
        "unregistered failure_kind 'evil\\n\\x1b[2J" + "y" * 183 + "...; register it or namespace it as"
    )


# Every shape a value arrives in: strings of any code point, numbers, bytes, and containers of them.
leaves = st.one_of(
    st.text(alphabet=st.characters(codec=None), max_size=300),
    st.text(alphabet=st.sampled_from("\n\r\x1b[]0;m\x00\x85\u2028\u202e\u2066\ud800 a"), max_size=300),
    st.integers(),
    st.floats(),
    st.binary(max_size=100),
    st.none(),
)
containers = st.recursive(
    leaves,
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


@given(containers.filter(lambda value: value is not None and not isinstance(value, str)))
def test_any_value_shows_as_one_bounded_printable_line(value: object) -> None:
    text = shown(value)
    assert len(text) <= LIMIT
    full = escape(repr(value))
    if len(full) <= LIMIT and depth(value) <= 6:
        assert text == full
    # A string cut before its repr may pick other quotes than the whole one; elsewhere what is shown is
    # the start of the value's own repr, escaped, and the cut marker is past the limit.
    quoted = "'" in repr(value) or '"' in repr(value)
    if depth(value) <= 6 and not (len(full) > LIMIT and quoted):
        assert full.startswith(text.removesuffix("...")), (text, full)


@given(st.text(alphabet=st.characters(codec=None), max_size=400))
def test_a_custom_repr_is_escaped_after_repr(text: str) -> None:
    assert len(shown(type("Shown", (), {"__repr__": lambda self: text})())) <= LIMIT


ABSENT = Path(tempfile.gettempdir(), "failure-kinds-absent")


@given(st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\x00/"), max_size=60))
def test_a_path_is_printed_as_is_when_plain_and_quoted_and_escaped_otherwise(name: str) -> None:
    path = str(ABSENT / f"k{name}")
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    plain = path.isprintable() and path.strip() == path
    assert str(raised.value) == (path if plain else escape(repr(path))) + ": no such file"
