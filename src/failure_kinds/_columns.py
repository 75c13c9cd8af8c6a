"""Where a finding is: the character column of a parser's offset, and the raw line a ``# noqa`` is on.

The parser counts UTF-8 bytes of the decoded line; people and editors count characters of the file as
written, in its declared (PEP 263) encoding.
"""

from __future__ import annotations

import re

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


class Columns:
    """Character columns from the parser's offsets, which count UTF-8 bytes of the decoded line. The
    source is decoded (with its declared encoding) only when a file has something to report."""

    source: bytes
    _raw_lines: list[bytes] | None
    _text_lines: list[str] | None

    def __init__(self, source: bytes) -> None:
        self.source = source
        self._raw_lines = None
        self._text_lines = None

    def raw_line(self, number: int) -> bytes:
        if self._raw_lines is None:
            self._raw_lines = re.split(rb"\r\n|\r|\n", self.source)
        lines = self._raw_lines
        return lines[number - 1] if 0 < number <= len(lines) else b""

    def column(self, number: int, offset: int) -> int:
        """The 1-based character column of UTF-8 byte ``offset`` on line ``number``."""
        if self._text_lines is None:
            self._text_lines = _LINE_BREAK.split(_decode(self.source))
        lines = self._text_lines
        line = lines[number - 1] if 0 < number <= len(lines) else ""
        return len(line.encode("utf-8", "surrogatepass")[:offset].decode("utf-8", "replace")) + 1


def _decode(source: bytes) -> str:
    """The source as the parser read it: in its declared (PEP 263) encoding, byte-order mark dropped."""
    import io
    import tokenize

    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
        return source.decode(encoding, "replace")
    except (SyntaxError, LookupError):
        # Cannot happen for a file that parsed; a best effort all the same.
        return source.decode("utf-8", "replace")
