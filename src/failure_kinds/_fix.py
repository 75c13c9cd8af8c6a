"""``failure-kinds lint --fix`` and ``--diff``: rewrite the literals of older labels that have one
replacement, leaving every other byte of the file as it was.

A literal is rewritten only when its text is exactly the label between one kind of quotes (with an
optional ``r`` or ``u`` prefix): an escape, an implicit concatenation or an f-string is left alone, since
rewriting it would be a guess. A file whose bytes do not come back unchanged from decoding and encoding
in its declared encoding is left alone too.
"""

from __future__ import annotations

import os
import re
import stat

from failure_kinds import FailureKindsError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import BinaryIO

    from failure_kinds.lint import Fix

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")
_BYTE_LINE = re.compile(rb"[^\n]*\n|[^\n]+")
_SOURCE_LINE = re.compile(rb"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")
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
    try:
        encoding = declared_encoding(source)
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


def declared_encoding(source: bytes) -> str:
    """The encoding of ``source`` as the parser reads it (PEP 263), whose first two lines may also end
    in a lone carriage return, as they may for the parser (tokenize's reader splits at line feeds only).
    Raises SyntaxError or LookupError as tokenize.detect_encoding does."""
    import itertools
    import tokenize

    first = itertools.islice(_SOURCE_LINE.finditer(source), 2)
    lines = [line.group().rstrip(b"\r\n") + b"\n" for line in first]
    return tokenize.detect_encoding(iter(lines).__next__)[0]


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


def diff_name(path: str) -> tuple[bytes, bool]:
    """The name of ``path`` in a diff's headers, and whether it is outside the working directory (an
    absolute path elsewhere, or one through ".."), which ``patch -p0`` and ``git apply`` refuse."""
    parts = path.split(os.sep)
    if ".." not in parts:
        # git apply refuses a "." in a name (./a.py); a ".." stays, as a link may lead elsewhere.
        path = os.path.normpath(path)
        relative = os.path.relpath(path)
        if os.path.isabs(path) and relative.split(os.sep)[0] != os.pardir:
            path = relative
    outside = os.path.isabs(path) or ".." in path.split(os.sep)
    name = os.fsencode(path)
    if path.isprintable() and not path.startswith(" ") and not re.search(rb'["\\]', name):
        # A tab ends a name holding a space, which would end it otherwise.
        return name + (b"\t" if b" " in name else b""), outside
    # Quoted as git quotes a name, which patch reads too: a crafted name cannot add headers or hunks.
    return b'"' + re.sub(rb'["\\]|[^ -~]', _escape, name) + b'"', outside


def _escape(match: re.Match[bytes]) -> bytes:
    byte = match.group()
    named = {b'"': b'\\"', b"\\": b"\\\\", b"\t": b"\\t", b"\n": b"\\n", b"\r": b"\\r"}
    return named.get(byte, b"\\%03o" % ord(byte))


def unified_diff(path: str, before: bytes, after: bytes) -> bytes:
    """The change from ``before`` to ``after`` as a unified diff naming ``path`` on both sides (as
    diff_name gives it), in the file's own bytes: a byte-order mark, a declared encoding and every line
    end come through as they are, and lines end at line feeds only, as ``patch`` and ``git apply`` read
    them."""
    import difflib

    name = diff_name(path)[0]
    old, new = _BYTE_LINE.findall(before), _BYTE_LINE.findall(after)
    hunks = list(difflib.diff_bytes(difflib.unified_diff, old, new))[2:]
    if not hunks:
        return b""
    # A last line without a line end is marked, as diff and git mark it.
    body = b"".join(
        line if line.endswith(b"\n") else line + b"\n\\ No newline at end of file\n" for line in hunks
    )
    return b"--- " + name + b"\n+++ " + name + b"\n" + body


def _reason(error: OSError) -> str:
    from failure_kinds.audit.errors import describe_read_error

    return describe_read_error(error)


def check_replaceable(path: str, after: bytes) -> None:
    """Raise Unfixable when ``replace_file`` would leave the file at ``path`` alone before writing
    anything, so ``--diff`` and SARIF offer no fix that ``--fix`` refuses."""
    try:
        status = os.stat(path)
    except OSError as error:
        raise Unfixable(_reason(error)) from None
    _replaceable(status, after)


def _replaceable(status: os.stat_result, after: bytes) -> None:
    from failure_kinds.lint import SIZE_LIMIT

    if len(after) > SIZE_LIMIT:
        # The lint would then report the file as FK000 on every later run.
        raise Unfixable(
            f"its fixed text would be larger than {SIZE_LIMIT >> 20} MiB, the lint's limit; nothing written"
        )
    if status.st_nlink > 1:
        raise Unfixable(
            f"it has {status.st_nlink} names (hard links) and a replacement would fix this one only; "
            "nothing written"
        )
    user = os.geteuid()
    # Who may give a file an owner and group: root any, anyone else only themselves and their groups.
    if user != 0 and (status.st_uid != user or status.st_gid not in {os.getegid(), *os.getgroups()}):
        raise Unfixable(f"its owner {status.st_uid}:{status.st_gid} cannot be kept; nothing written")


def replace_file(path: str, before: bytes, after: bytes) -> None:
    """Write ``after`` over the file at ``path`` in one step, keeping its owner, group and mode. Raises
    Unfixable, writing nothing, when the file no longer holds ``before`` (looked at again just before the
    replace), has other names (hard links) or its owner cannot be kept. SIGINT, SIGTERM and SIGHUP wait
    until the file is replaced or left alone, so an interrupt leaves no temporary or half-written file."""
    import signal

    held = {getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)}
    mask = getattr(signal, "pthread_sigmask", None)
    previous = mask(signal.SIG_BLOCK, held) if mask else None
    try:
        _replace(os.path.realpath(path), before, after)
    finally:
        if mask and previous is not None:
            mask(signal.SIG_SETMASK, previous)


def _replace(real: str, before: bytes, after: bytes) -> None:
    import contextlib
    import tempfile

    temporary = None
    try:
        with open(real, "rb") as original:
            status = os.fstat(original.fileno())
            _unchanged(real, original, status, before)
            _replaceable(status, after)
            # A short name: the file's own may already be as long as the file system allows.
            descriptor, temporary = tempfile.mkstemp(dir=os.path.dirname(real), prefix=".fk", suffix="")
            with os.fdopen(descriptor, "wb") as file:
                file.write(after)
                file.flush()
                try:
                    os.fchown(descriptor, status.st_uid, status.st_gid)
                except PermissionError:
                    owner = f"{status.st_uid}:{status.st_gid}"
                    raise Unfixable(f"its owner {owner} cannot be kept; nothing written") from None
                # After the owner, as a change of owner clears setuid and setgid bits.
                os.fchmod(descriptor, stat.S_IMODE(status.st_mode))
                os.fsync(descriptor)
            _unchanged(real, original, status, before)
            os.replace(temporary, real)
            temporary = None
    except OSError as error:
        raise Unfixable(_reason(error)) from None
    finally:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)


def _unchanged(real: str, original: BinaryIO, status: os.stat_result, before: bytes) -> None:
    """Raise Unfixable unless ``real`` still names the file opened as ``original``, with the size, time
    and bytes it had (``before``)."""
    now = os.stat(real)
    original.seek(0)
    identity = (now.st_dev, now.st_ino, now.st_size, now.st_mtime_ns)
    if identity != (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns) or (
        original.read(len(before) + 1) != before
    ):
        raise Unfixable("it changed while being fixed; nothing written")
