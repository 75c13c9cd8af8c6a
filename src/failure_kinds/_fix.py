"""``failure-kinds lint --fix`` and ``--diff``: rewrite the literals of older labels that have one
replacement, leaving every other byte of the file as it was.

A literal is rewritten only when its text is exactly the label between one kind of quotes (with an
optional ``r`` or ``u`` prefix): an escape, an implicit concatenation or an f-string is left alone, since
rewriting it would be a guess. A file whose bytes do not come back unchanged from decoding and encoding
in its declared encoding is left alone too.
"""

from __future__ import annotations

import re

from failure_kinds import FailureKindsError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from failure_kinds.lint import Fix

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")
_LITERAL = re.compile(r"(?P<prefix>[rRuU]?)(?P<quote>'''|\"\"\"|'|\")(?P<body>.*)(?P=quote)", re.DOTALL)
_BOM = b"\xef\xbb\xbf"


class Unfixable(FailureKindsError):
    """The file cannot be rewritten exactly; the message says why."""


def lines_of(text: str) -> list[str]:
    """``text`` in lines, each with its own line end, split where Python ends lines (and nowhere else)."""
    return _LINE.findall(text)


def decoded(source: bytes) -> tuple[str, str, bool]:
    """The text of ``source``, its encoding and whether it starts with a byte-order mark. Raises
    Unfixable when encoding the text again would not give back the same bytes."""
    import io
    import tokenize

    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
    except (SyntaxError, LookupError) as error:
        raise Unfixable(f"cannot tell its encoding: {error}") from None
    bom = source.startswith(_BOM) and encoding == "utf-8-sig"
    body = source[len(_BOM) :] if bom else source
    codec = "utf-8" if encoding == "utf-8-sig" else encoding
    try:
        text = body.decode(codec)
        if text.encode(codec) == body:
            return text, codec, bom
    except (UnicodeError, LookupError):
        pass
    raise Unfixable(f"its bytes do not survive decoding as {encoding} and encoding again")


def apply(source: bytes, fixes: Sequence[Fix]) -> tuple[bytes, list[Fix]]:
    """``source`` with each fix applied that rewrites a plain literal, and the fixes applied."""
    text, codec, bom = decoded(source)
    lines = lines_of(text)
    applied: list[Fix] = []
    # From the end of each line backwards, so an earlier fix does not move a later one's offsets.
    for fix in sorted(fixes, key=lambda item: (item.line, item.offset), reverse=True):
        if fix.line != fix.end_line or not 0 < fix.line <= len(lines):
            continue
        line = lines[fix.line - 1]
        start, end = _character(line, fix.offset), _character(line, fix.end_offset)
        match = _LITERAL.fullmatch(line[start:end])
        if match is None or match.group("body") != fix.old:
            continue
        literal = match.group("prefix") + match.group("quote") + fix.new + match.group("quote")
        lines[fix.line - 1] = line[:start] + literal + line[end:]
        applied.append(fix)
    applied.reverse()
    rewritten = "".join(lines).encode(codec)
    return (_BOM + rewritten if bom else rewritten), applied


def _character(line: str, offset: int) -> int:
    """The index in ``line`` of the parser's UTF-8 byte ``offset``."""
    return len(line.encode("utf-8", "surrogatepass")[:offset].decode("utf-8", "ignore"))


def unified_diff(path: str, before: bytes, after: bytes) -> str:
    """The change from ``before`` to ``after`` as a unified diff naming ``path`` on both sides."""
    import difflib

    from failure_kinds._display import shown_text

    old, _, _ = decoded(before)
    new, _, _ = decoded(after)
    # A name that is not printable is shown escaped, so a crafted file name cannot add headers or hunks.
    name = path if path.isprintable() else shown_text(path, 1000)
    lines = difflib.unified_diff(lines_of(old), lines_of(new), fromfile=name, tofile=name)
    return "".join(map(_ended, lines))


def _ended(line: str) -> str:
    """A diff line as printed. A last line without a line end is marked, as diff and git mark it, so the
    diff applies; one ending in a lone carriage return (old Mac files) gets a line feed, so the next line
    starts on a line of its own."""
    if line.endswith("\n"):
        return line
    return line + "\n" if line.endswith("\r") else line + "\n\\ No newline at end of file\n"


def _reason(error: OSError) -> str:
    from failure_kinds.audit.errors import describe_read_error

    return describe_read_error(error)


def replace_file(path: str, before: bytes, after: bytes) -> None:
    """Write ``after`` over the file at ``path`` in one step, keeping its permissions. Raises Unfixable
    (and writes nothing) when the file no longer holds ``before``."""
    import contextlib
    import os
    import tempfile

    real = os.path.realpath(path)
    try:
        with open(real, "rb") as file:
            current = file.read(len(before) + 1)
        mode = os.stat(real).st_mode & 0o7777
    except OSError as error:
        raise Unfixable(_reason(error)) from None
    if current != before:
        raise Unfixable("it changed while being fixed; nothing written")
    folder, name = os.path.split(real)
    try:
        descriptor, temporary = tempfile.mkstemp(dir=folder or ".", prefix=f".{name}.", suffix=".fix")
    except OSError as error:
        raise Unfixable(_reason(error)) from None
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(after)
        os.chmod(temporary, mode)
        os.replace(temporary, real)
    except OSError as error:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise Unfixable(_reason(error)) from None
