"""Decoding one line into what it holds at the field: a string (with a kind), None (without a kind),
INVALID (another JSON type there), UNPARSEABLE (not UTF-8, not JSON, or not a JSON object) or BLANK.

The standard library decides every line; FastDecoder is the msgspec path, which must agree with it line
for line (a property test holds them to that).
"""

from __future__ import annotations

import json
from json.scanner import make_scanner
from operator import attrgetter

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any, Final


class _Marker:
    """A named sentinel: what a line decodes to besides a string and None."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name: str = name

    def __repr__(self) -> str:
        return self.name


INVALID: Final = _Marker("INVALID")
"""The field holds a number, bool, object or list."""
UNPARSEABLE: Final = _Marker("UNPARSEABLE")
"""The line is not UTF-8, not JSON, not a JSON object, or longer than the line cap."""
BLANK: Final = _Marker("BLANK")
"""The line is empty or white space only: not a record, but it still counts as a line."""


class Decoder:
    """Turns lines into what they hold at the field, with the standard library."""

    def __init__(self, path: Sequence[str]) -> None:
        self.path: list[str] = list(path)
        # The common case, without a loop.
        self.key: str | None = self.path[0] if len(self.path) == 1 else None
        # The C scanner behind json.loads, called directly: json.loads adds type checks and two regular
        # expression matches per call, a fifth of the work on a typical line.
        # typeshed types make_scanner's argument as the scanner class itself; any JSONDecoder is right.
        self._scan: Callable[[str, int], tuple[Any, int]] = make_scanner(json.JSONDecoder())  # type: ignore[arg-type]

    def line(self, line: bytes) -> object:
        document: Any
        try:
            text = line.decode()
            try:
                document, end = self._scan(text, 0)
            except StopIteration:
                document, end = json.loads(text), len(text)  # leading white space, or not JSON at all
            if end != len(text) and text[end:].strip(" \t\r\n"):
                return UNPARSEABLE
        except (ValueError, RecursionError):
            return UNPARSEABLE
        # __class__ rather than type(): the same test, without narrowing Any to an unknown dict.
        if document.__class__ is not dict:
            return UNPARSEABLE
        fields: dict[str, Any] = document
        if self.key is not None:
            value: Any = fields.get(self.key)
        else:
            value = fields
            for segment in self.path:
                if value.__class__ is not dict:
                    return None  # the path runs through a non-object: the field is not there
                fields = value
                value = fields.get(segment)
        if value is None or type(value) is str:
            return value
        return INVALID

    def batch(self, lines: list[bytes]) -> list[object]:
        """One entry per line: the string at the field, None, BLANK, UNPARSEABLE, or for an invalid value
        INVALID or the value itself (the fast path leaves numbers, lists and objects as decoded)."""
        decode = self.line
        return [BLANK if not line or line.isspace() else decode(line) for line in lines]


class FastDecoder(Decoder):
    """msgspec decodes only the field asked for (it validates the rest of the line but builds nothing).
    Where msgspec refuses a line, or a line is not UTF-8, the standard library decides."""

    def __init__(self, path: Sequence[str], msgspec: Any) -> None:
        super().__init__(path)
        shape: Any = object
        for depth, segment in enumerate(reversed(self.path)):
            shape = msgspec.defstruct(f"Level{depth}", [("f", shape | None, None)], rename={"f": segment})
        self._decode: Callable[[bytes], Any] = msgspec.json.Decoder(shape).decode
        self._leaf: Callable[[Any], object] = attrgetter(".".join(["f"] * len(self.path)))

    def batch(self, lines: list[bytes]) -> list[object]:
        # The whole batch in C when every line is ASCII (so valid UTF-8) and decodes: a blank line, a
        # refused line or a null on the way to a nested field sends the batch down the careful path.
        if all(map(bytes.isascii, lines)):
            try:
                values: list[object] = list(map(self._leaf, map(self._decode, lines)))
                return values
            except Exception:
                pass
        return super().batch(lines)

    def line(self, line: bytes) -> object:
        if line.isascii():
            try:
                value: Any = self._decode(line)
                for _ in self.path:
                    value = value.f
                    if value is None:
                        return None
            except Exception:
                return super().line(line)
            return value if value is None or type(value) is str else INVALID
        return super().line(line)


def hashable(value: object) -> object:
    """A list or object found at the field stands in the tally as INVALID, which is what it counts as."""
    return value if value is None or type(value) in (str, _Marker) else INVALID


def make_decoder(path: Sequence[str], fast: bool) -> Decoder:
    """The msgspec decoder when ``fast`` and msgspec is installed, else the standard library's."""
    if fast:
        try:
            import msgspec
        except ImportError:
            pass
        else:
            return FastDecoder(path, msgspec)
    return Decoder(path)


def fast_available() -> bool:
    """Whether msgspec is installed (the ``fast`` extra)."""
    import importlib.util

    return importlib.util.find_spec("msgspec") is not None
