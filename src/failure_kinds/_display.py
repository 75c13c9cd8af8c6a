"""How the package shows a value or a path it did not write: bounded, escaped, and never raising.

Every message that quotes a caller's value (a warning, an error, a report line, a lint finding) goes through
one of three functions: :func:`shown` for a value as its ``repr``, :func:`plain` for a name or a path that
is printed as is when it can be, and :func:`escaped` for a text printed without quotes. So no control
character, line break, escape sequence, bidirectional override or lone surrogate reaches a log or a
terminal raw, and a megabyte value prints a few hundred characters at the cost of a short one. Loaded only
when something is shown: ``import failure_kinds`` does not import it.
"""

# What is shown is anything a caller passed: its element types are unknown by nature.
# pyright: reportUnknownArgumentType=false, reportUnknownVariableType=false, reportUnknownMemberType=false

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

# A shown value is cut to this many characters unless the caller asks for another limit.
LIMIT = 200

# The exact builtin containers shown is allowed to take apart (a subclass may redefine iteration), each
# with how it is written around its elements, and how deep they are taken apart before "[...]".
_CONTAINERS: "dict[type, tuple[str, str]]" = {
    list: ("[", "]"),
    tuple: ("(", ")"),
    set: ("{", "}"),
    frozenset: ("frozenset({", "})"),
    dict: ("{", "}"),
}
_DEPTH = 6


def shown(value: object, limit: int = LIMIT) -> str:
    """``repr(value)`` escaped and cut to at most ``limit`` characters. Never raises."""
    # Written piece by piece with exact accounting: budget is the limit less what was written so far, and
    # writing stops past it, so the cost follows the limit rather than the value's size. Dicts and sets keep
    # their own order (sorting would run the elements' comparisons), and any str, a subclass included, is
    # written from its text through str's own methods: a hostile __repr__, __len__ or __getitem__ never runs.
    budget = limit = max(limit, 0)

    def failed(x: object) -> str:
        """What stands in for a repr that failed: the qualified name of the value's type, escaped and cut."""
        try:
            qualname: object = type(x).__qualname__  # a metaclass may make it anything
        except Exception:
            qualname = None
        named = escaped(qualname, LIMIT) if isinstance(qualname, str) else "<unnamed type>"
        return f"<{named} object whose repr failed>"

    def written(x: object, level: int) -> str:
        nonlocal budget
        if budget < 0:
            return "..."
        brackets = _CONTAINERS.get(type(x)) if isinstance(x, (list, tuple, set, frozenset, dict)) else None
        if brackets is not None and x and level > 0:
            budget -= len(brackets[0])
            pieces: list[str] = []
            elements: Iterable[object] = dict.items(x) if isinstance(x, dict) else x  # type: ignore[assignment]
            for element in elements:
                if pieces:
                    budget -= 2  # ", "
                if budget < 0:
                    pieces.append("...")
                    break
                if type(x) is dict:
                    key = written(element[0], level - 1)  # type: ignore[index]
                    budget -= 2  # ": "
                    pieces.append(f"{key}: {written(element[1], level - 1)}")  # type: ignore[index]
                else:
                    pieces.append(written(element, level - 1))
            closing = ",)" if type(x) is tuple and len(pieces) == 1 else brackets[1]
            budget -= len(closing)
            return brackets[0] + ", ".join(pieces) + closing
        if isinstance(x, str):
            text = str.__repr__(str.__getitem__(x, slice(0, budget + 1)))
        elif brackets is not None:  # an exact builtin container's empty repr runs no caller code
            text = repr(x) if not x else f"{brackets[0]}...{brackets[1]}"
        elif type(x) is int:
            # Decimal conversion is quadratic and refused past 4,300 digits; a huge int is shown by size.
            text = repr(x) if x.bit_length() <= 4 * budget + 64 else f"<int of {x.bit_length()} bits>"
        else:
            try:  # repr() accepts a str subclass from __repr__; its text is taken without its own methods
                text = str.__getitem__(repr(x), slice(0, budget + 1))
            except Exception:
                text = failed(x)
        budget -= len(text)
        return text

    try:
        text = written(value, _DEPTH)
    except Exception:  # a hostile object deep inside a container (its __repr__ caught; this is the rest)
        text = failed(value)
    return escaped(text, limit)


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
    limit = None if limit is None else max(limit, 0)
    text = str.__str__(text) if limit is None else str.__getitem__(text, slice(0, limit + 1))
    if not text.isprintable():
        text = "".join(
            character
            if character.isprintable()
            else f"\\x{code:02x}"
            if (code := ord(character)) < 0x100
            else f"\\u{code:04x}"
            if code < 0x10000
            else f"\\U{code:08x}"
            for character in text
        )
    if limit is None or len(text) <= limit:
        return text
    return text[: limit - 3] + "..." if limit >= 4 else text[:limit]
