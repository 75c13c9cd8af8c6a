"""Decoding one line into what it holds at the field: a string (with a kind), None (without a kind),
INVALID (another JSON type there), UNPARSEABLE (not UTF-8, not JSON, or not a JSON object) or BLANK.

The standard library decides every line; FastDecoder is the msgspec path, which must agree with it line
for line (a property test holds them to that).
"""

from __future__ import annotations

import json
from json.scanner import make_scanner
from operator import attrgetter

from failure_kinds._depth import deeper

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
    """Turns lines into what they hold at the field, with the standard library.

    Subclasses offer a quicker answer through ``_quick_batch`` and ``_quick_line``; where they have
    none, the standard library decides, always from the same call depth, so a line nested as deep as
    the interpreter allows gets the same answer whichever decoder reads it.
    """

    def __init__(self, path: Sequence[str]) -> None:
        self.path: list[str] = list(path)
        # The common case, without a loop.
        self.key: str | None = self.path[0] if len(self.path) == 1 else None
        # The C scanner behind json.loads, called directly: json.loads adds type checks and two regular
        # expression matches per call, a fifth of the work on a typical line.
        # typeshed types make_scanner's argument as the scanner class itself; any JSONDecoder is right.
        self._scan: Callable[[str, int], tuple[Any, int]] = make_scanner(json.JSONDecoder())  # type: ignore[arg-type]

    def batch(self, lines: list[bytes], ascii: bool = False) -> list[object]:
        """One entry per line: the string at the field, None, BLANK, UNPARSEABLE, or for an invalid value
        INVALID or the value itself (the fast path leaves numbers, lists and objects as decoded).
        ``ascii``: the caller knows every byte of ``lines`` is ASCII."""
        quick = self._quick_batch(lines, ascii)
        if quick is not None:
            return quick
        decode = self._careful
        known = self._quick_lines(lines)
        if known is None:
            return [BLANK if not line or line.isspace() else decode(line) for line in lines]
        return [
            BLANK if not line or line.isspace() else value if value is not _UNDECIDED else decode(line)
            for line, value in zip(lines, known, strict=True)
        ]

    def line(self, line: bytes) -> object:
        """What one line holds at the field (as ``batch`` would say)."""
        known = self._quick_lines([line])
        if known is not None and known[0] is not _UNDECIDED:
            return known[0]
        return self._careful(line)

    def _careful(self, line: bytes) -> object:
        document: Any
        try:
            text = line.decode()
            try:
                document, end = self._parse(text, self._scan)
            except ValueError as error:
                if "integer string conversion" not in str(error):
                    raise
                # An integer of more digits than int() converts: valid JSON all the same, and never a
                # kind, so it is read as a float rather than refused.
                document, end = self._parse(text, _LENIENT_SCAN)
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

    def _quick_batch(self, lines: list[bytes], ascii: bool) -> list[object] | None:
        return None

    def _quick_lines(self, lines: list[bytes]) -> list[object] | None:
        """Per line, the answer or _UNDECIDED (the standard library decides); None: no quick answers."""
        return None

    @staticmethod
    def _parse(text: str, scan: Callable[[str, int], tuple[Any, int]]) -> tuple[Any, int]:
        try:
            return scan(text, 0)
        except StopIteration:
            # Leading white space, or not JSON at all: the full decoder says which, at the same depth.
            decoder = json.JSONDecoder(parse_int=float) if scan is _LENIENT_SCAN else json.JSONDecoder()
            return decoder.decode(text), len(text)


class FastDecoder(Decoder):
    """msgspec decodes only the field asked for (it validates the rest of the line but builds nothing).
    Where msgspec refuses a line, or a line is not UTF-8, the standard library decides."""

    def __init__(self, path: Sequence[str], msgspec: Any) -> None:
        super().__init__(path)
        shape: Any = object
        for depth, segment in enumerate(reversed(self.path)):
            # gc=False: the decoded lines cannot hold cycles, and untracked structs leave the collector
            # nothing to walk.
            shape = msgspec.defstruct(
                f"Level{depth}", [("f", shape | None, None)], rename={"f": segment}, gc=False
            )
        self._decode: Callable[[bytes], Any] = msgspec.json.Decoder(shape).decode
        self._leaf: Callable[[Any], object] = attrgetter(".".join(["f"] * len(self.path)))

    def _quick_batch(self, lines: list[bytes], ascii: bool) -> list[object] | None:
        # The whole batch in C when every line is ASCII (so valid UTF-8: msgspec does not check the
        # strings it skips) and decodes: a blank line, a refused line or a null on the way to a nested
        # field sends the batch down the careful path.
        if not ascii and not all(map(bytes.isascii, lines)):
            return None
        try:
            values: list[object] = deeper(lambda: list(map(self._leaf, map(self._decode, lines))))
        except Exception:
            return None
        return values

    def _quick_lines(self, lines: list[bytes]) -> list[object] | None:
        return deeper(lambda: list(map(self._attempt, lines)))

    def _attempt(self, line: bytes) -> object:
        if not line.isascii():
            return _UNDECIDED
        try:
            value: Any = self._decode(line)
            for _ in self.path:
                value = value.f
                if value is None:
                    return None
        except Exception:
            return _UNDECIDED
        return value if value is None or type(value) is str else INVALID


_UNDECIDED: Final = _Marker("UNDECIDED")
_LENIENT_SCAN: Final[Callable[[str, int], tuple[Any, int]]] = make_scanner(json.JSONDecoder(parse_int=float))  # type: ignore[arg-type]


def hashable(value: object) -> object:
    """A list or object found at the field stands in the tally as INVALID, which is what it counts as."""
    return value if value is None or type(value) in (str, _Marker) else INVALID


def make_decoder(path: Sequence[str], fast: bool) -> Decoder:
    """The msgspec decoder when ``fast`` and msgspec is installed, else the standard library's."""
    if fast and len(path) <= _FAST_SEGMENTS:
        try:
            import msgspec
        except ImportError:
            pass
        else:
            try:
                return FastDecoder(path, msgspec)
            except (RecursionError, ValueError, TypeError, UnicodeError):
                # msgspec refuses some legal JSON keys as field names (a quote, a backslash, a control
                # character, text that is not UTF-8): the standard library reads those paths instead.
                pass
    return Decoder(path)


# A --field of more segments than this is read by the standard library decoder: msgspec would need one
# nested type per segment, and building hundreds of them overflows the interpreter's stack.
_FAST_SEGMENTS: Final = 64


def fast_available() -> bool:
    """Whether msgspec is installed (the ``fast`` extra)."""
    import importlib.util

    return importlib.util.find_spec("msgspec") is not None
