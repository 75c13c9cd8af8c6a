"""How the package shows a value or a path it did not write: bounded, escaped, and never raising.

Every message that quotes a caller's value (a warning, an error, a report line, a lint finding) goes through
one of three functions: :func:`shown` for a value as its ``repr``, :func:`plain` for a name or a path that
is printed as is when it can be, and :func:`escaped` for a text printed without quotes. So no control
character, line break, escape sequence, bidirectional override or lone surrogate reaches a log or a
terminal raw, and a megabyte value prints a few hundred characters at the cost of a short one. Loaded only
when something is shown: ``import failure_kinds`` does not import it, nor :mod:`reprlib`.
"""

import reprlib

# What is shown is anything a caller passed: its element types are unknown by nature.
# pyright: reportUnknownArgumentType=false, reportUnknownVariableType=false, reportUnknownMemberType=false

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

# A shown value is cut to this many characters unless the caller asks for another limit.
LIMIT = 200

# How deep a nested container is taken apart before it is written as "[...]"; elements of one container
# are never capped by count, only by the characters left (see _BoundedRepr.budget).
_DEPTH = 6


class _BoundedRepr(reprlib.Repr):
    """``repr`` that stops once ``budget`` characters are written, so its cost follows the limit rather
    than the value's size.

    Unlike :class:`reprlib.Repr` it keeps dicts and sets in their own order (sorting runs the elements'
    comparisons and shows a set as something it never was), takes apart only the exact builtin containers
    (a subclass may redefine iteration), and writes any ``str``, a subclass included, from its text through
    ``str``'s own methods, so a hostile ``__repr__``, ``__len__`` or ``__getitem__`` never runs.
    """

    def __init__(self, budget: int) -> None:
        super().__init__()
        self.maxlevel = _DEPTH
        self.budget = budget

    def repr1(self, x: object, level: int) -> str:
        # budget is the limit less what was written so far, exactly: text past it is never shown, so
        # whatever stands in for it there ("...") is cut off with it.
        if self.budget < 0:
            return "..."
        if isinstance(x, (list, tuple, set, frozenset, dict)) and type(x) in _CONTAINERS and x and level > 0:
            if isinstance(x, dict):
                return self._mapping(x, level - 1)
            return self._sequence(x, level - 1, *_CONTAINERS[type(x)])
        if isinstance(x, str):
            text = str.__repr__(str.__getitem__(x, slice(0, self.budget + 1)))
        elif type(x) in _CONTAINERS:
            opening, closing = _CONTAINERS[type(x)]
            # An exact builtin container's empty repr runs no caller code.
            text = repr(x) if not x else f"{opening}...{closing}"
        elif type(x) is int:
            # Decimal conversion is quadratic and refused past 4,300 digits; a huge int is shown by size.
            text = repr(x) if x.bit_length() <= 4 * self.budget + 64 else f"<int of {x.bit_length()} bits>"
        else:
            text = self.repr_instance(x, level)
        self.budget -= len(text)
        return text

    def repr_instance(self, x: object, level: int) -> str:
        try:
            text = repr(x)
        except Exception:
            return f"<{self.type_name(x)} object whose repr failed>"
        # repr() accepts a str subclass from __repr__; its text is taken without its own methods.
        return str.__getitem__(text, slice(0, max(self.budget, 0) + 1))

    def _sequence(self, elements: "Iterable[object]", level: int, opening: str, closing: str) -> str:
        self.budget -= len(opening)
        pieces: list[str] = []
        for element in elements:
            if pieces:
                self.budget -= 2  # ", "
            if self.budget < 0:
                pieces.append("...")
                break
            pieces.append(self.repr1(element, level))
        if type(elements) is tuple and len(pieces) == 1:
            closing = ",)"
        self.budget -= len(closing)
        return opening + ", ".join(pieces) + closing

    def _mapping(self, mapping: "dict[object, object]", level: int) -> str:
        self.budget -= 1
        pieces: list[str] = []
        for key, value in dict.items(mapping):
            if pieces:
                self.budget -= 2
            if self.budget < 0:
                pieces.append("...")
                break
            shown_key = self.repr1(key, level)
            self.budget -= 2  # ": "
            pieces.append(f"{shown_key}: {self.repr1(value, level)}")
        self.budget -= 1
        return "{" + ", ".join(pieces) + "}"

    @staticmethod
    def type_name(value: object) -> str:
        """The qualified name of ``value``'s type, escaped and cut; never raises."""
        try:
            qualname: object = type(value).__qualname__  # a metaclass may make it anything
            if not isinstance(qualname, str):  # pyright: ignore[reportUnnecessaryIsInstance]
                return "<unnamed type>"
            return escaped(qualname, LIMIT)
        except Exception:
            return "<unnamed type>"

    @staticmethod
    def escape(character: str) -> str:
        """One character that is not printable, written as its escape."""
        code = ord(character)
        if code < 0x100:
            return f"\\x{code:02x}"
        if code < 0x10000:
            return f"\\u{code:04x}"
        return f"\\U{code:08x}"


# The builtin containers _BoundedRepr takes apart, with how each is written around its elements.
_CONTAINERS: "dict[type, tuple[str, str]]" = {
    list: ("[", "]"),
    tuple: ("(", ")"),
    set: ("{", "}"),
    frozenset: ("frozenset({", "})"),
    dict: ("{", "}"),
}


def shown(value: object, limit: int = LIMIT) -> str:
    """``repr(value)`` escaped and cut to at most ``limit`` characters. Never raises."""
    limit = max(limit, 0)
    try:
        text = _BoundedRepr(limit).repr(value)
    except Exception:  # a hostile object deep inside a container (its __repr__ caught; this is the rest)
        text = f"<{_BoundedRepr.type_name(value)} object whose repr failed>"
    return escaped(text[: limit + 1], limit)


def plain(text: str, limit: int = 1000) -> str:
    """``text`` as is when it is plain text (not empty, printable, no space at either end), else
    ``shown(text, limit)``: quoted, escaped and cut, so a crafted name or path cannot forge a line of
    output and an empty or space-padded one is seen as what it is."""
    text = str.__str__(text)  # a str subclass's own methods never run
    if text and text.isprintable() and text.strip() == text:
        return text
    return shown(text, limit)


def escaped(text: str, limit: int | None = None) -> str:
    """``text`` without quotes, every character that is not printable written as its escape (control
    characters, line breaks, bidirectional overrides and lone surrogates are all not printable), and cut to
    at most ``limit`` characters when a limit is given."""
    # A str subclass's own methods never run: the text is taken through str's.
    if limit is None:
        text = str.__str__(text)
    else:
        limit = max(limit, 0)
        text = str.__getitem__(text, slice(0, limit + 1))
    if not text.isprintable():
        text = "".join(
            character if character.isprintable() else _BoundedRepr.escape(character) for character in text
        )
    if limit is None or len(text) <= limit:
        return text
    return text[: limit - 3] + "..." if limit >= 4 else text[:limit]


# the audit's old names, until its rewrite
escape = escaped
shown_text = escaped
type_name = _BoundedRepr.type_name
