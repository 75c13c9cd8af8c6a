"""``failure-kinds lint --fix``, ``--diff`` and SARIF's fixes: the one place replacements are computed
(:func:`apply`), shown as a diff, and written over a file safely (docs/lint.md says what is kept)."""

from __future__ import annotations

import itertools
import os
import re
import stat
from typing import NamedTuple

from failure_kinds import FailureKindsError
from failure_kinds.lint import SIZE_LIMIT, Fix, declared_encoding, read_error

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from typing import BinaryIO

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")
_BYTE_LINE = re.compile(rb"[^\n]*\n|[^\n]+")
# Only the label between one kind of quotes, with at most a one-letter prefix, is rewritten: an escape,
# an implicit concatenation or an f-string would be a guess.
_LITERAL = re.compile(r"(?P<opening>[rRuU]?('''|\"\"\"|'|\"))(?P<body>.*)\2", re.DOTALL)


class Unfixable(FailureKindsError):
    """The file cannot be rewritten exactly; the message says why."""


class Change(NamedTuple):
    """A fix applied: the 1-based character column of its label in the line as it was, and of its literal
    in the line rewritten (where earlier changes on the line moved it)."""

    fix: Fix
    column: int
    rewritten: int


def apply(source: bytes, fixes: Sequence[Fix]) -> tuple[bytes, list[Change]]:
    """``source`` with each fix applied that rewrites a plain literal, and those changes in order. Raises
    Unfixable when the bytes would not come back from decoding and encoding in the declared encoding."""
    try:
        encoding = declared_encoding(source)
    except (SyntaxError, LookupError) as error:
        raise Unfixable(f"cannot tell its encoding: {error}") from None
    try:
        # utf-8-sig, the encoding of a file with a byte-order mark, drops the mark and writes it back.
        text = source.decode(encoding)
        if text.encode(encoding) != source:
            raise UnicodeError
    except (UnicodeError, LookupError):
        raise Unfixable(f"its bytes do not survive decoding as {encoding} and encoding again") from None
    original = _LINE.findall(text)
    lines = list(original)
    changes: list[Change] = []
    usable = (fix for fix in fixes if fix.line == fix.end_line and 0 < fix.line <= len(lines))
    # Each line with fixes is encoded once and built once from its pieces, however many fixes it has.
    ordered = sorted(usable, key=lambda fix: (fix.line, fix.offset))
    for number, together in itertools.groupby(ordered, key=lambda fix: fix.line):
        line, on_line = original[number - 1], list(together)
        indexes = _indexes(line, [offset for fix in on_line for offset in (fix.offset, fix.end_offset)])
        pieces: list[str] = []
        position = shift = 0
        for fix in on_line:
            start, end = next(indexes), next(indexes)
            match = _LITERAL.fullmatch(line[start:end])
            if start < position or match is None or match["body"] != fix.old:
                continue
            pieces += [line[position:start], match["opening"], fix.new, match[2]]
            changes.append(Change(fix, start + len(match["opening"]) + 1, start + shift + 1))
            position, shift = end, shift + len(fix.new) - len(fix.old)
        lines[number - 1] = "".join([*pieces, line[position:]])
    return "".join(lines).encode(encoding), changes


def _indexes(line: str, offsets: list[int]) -> Iterator[int]:
    """The index in ``line`` of each of the parser's UTF-8 byte ``offsets``, which go along the line."""
    encoded, done, characters = line.encode("utf-8", "surrogatepass"), 0, 0
    for offset in offsets:
        characters += len(encoded[done:offset].decode("utf-8", "ignore"))
        done = max(done, offset)
        yield characters


def diff_name(path: str) -> tuple[bytes, bool]:
    """The name of ``path`` in a diff's headers, and whether it is outside the working directory (an
    absolute path elsewhere, or one through ".."), which ``patch -p0`` and ``git apply`` refuse."""
    if ".." not in path.split(os.sep):
        # git apply refuses a "." in a name (./a.py); a ".." stays, as a link may lead elsewhere.
        path = os.path.normpath(path)
        if os.path.isabs(path) and os.path.relpath(path).split(os.sep)[0] != os.pardir:
            path = os.path.relpath(path)
    outside = os.path.isabs(path) or ".." in path.split(os.sep)
    name = os.fsencode(path)
    if path.isprintable() and not path.startswith(" ") and not re.search(rb'["\\]', name):
        # A tab ends a name holding a space, which would end it otherwise.
        return name + (b"\t" if b" " in name else b""), outside
    # Quoted as git quotes a name, which patch reads too: a crafted name cannot add headers or hunks.
    return b'"' + re.sub(rb'["\\]|[^ -~]', _escape, name) + b'"', outside


def _escape(match: re.Match[bytes]) -> bytes:
    named = {b'"': b'\\"', b"\\": b"\\\\", b"\t": b"\\t", b"\n": b"\\n", b"\r": b"\\r"}
    return named.get(match[0], b"\\%03o" % ord(match[0]))


def unified_diff(path: str, before: bytes, after: bytes) -> bytes:
    """The change as a unified diff in the file's own bytes, lines ending at line feeds only, as ``patch``
    and ``git apply`` read them."""
    import difflib

    name = diff_name(path)[0]
    hunks = list(
        difflib.diff_bytes(difflib.unified_diff, _BYTE_LINE.findall(before), _BYTE_LINE.findall(after))
    )
    # A last line without a line end is marked, as diff and git mark it.
    marked = (
        line if line.endswith(b"\n") else line + b"\n\\ No newline at end of file\n" for line in hunks[2:]
    )
    return b"--- " + name + b"\n+++ " + name + b"\n" + b"".join(marked) if hunks else b""


def check_replaceable(path: str, after: bytes, status: os.stat_result | None = None) -> None:
    """Raise Unfixable when ``replace_file`` would leave the file alone before writing anything, so
    ``--diff`` and SARIF offer no fix that ``--fix`` refuses."""
    try:
        status = status or os.stat(path)
    except OSError as error:
        raise Unfixable(read_error(error)) from None
    if len(after) > SIZE_LIMIT:  # the lint would then report it as FK000 on every later run
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
    """Write ``after`` over ``path`` in one step, keeping owner, group and mode, or raise Unfixable having
    written nothing. SIGINT, SIGTERM and SIGHUP wait, so an interrupt leaves no temporary or half file."""
    import contextlib
    import signal
    import tempfile

    held = {getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)}
    mask = getattr(signal, "pthread_sigmask", None)
    previous = mask(signal.SIG_BLOCK, held) if mask else None
    temporary = None
    try:
        real = os.path.realpath(path)
        with open(real, "rb") as original:
            status = os.fstat(original.fileno())
            _unchanged(real, original, status, before)
            check_replaceable(real, after, status)
            # A short name: the file's own may already be as long as the file system allows.
            descriptor, temporary = tempfile.mkstemp(dir=os.path.dirname(real), prefix=".fk", suffix="")
            with os.fdopen(descriptor, "wb") as file:
                file.write(after)
                file.flush()
                try:
                    os.fchown(descriptor, status.st_uid, status.st_gid)
                except PermissionError:
                    raise Unfixable(
                        f"its owner {status.st_uid}:{status.st_gid} cannot be kept; nothing written"
                    ) from None
                # After the owner, as a change of owner clears setuid and setgid bits.
                os.fchmod(descriptor, stat.S_IMODE(status.st_mode))
                os.fsync(descriptor)
            _unchanged(real, original, status, before)
            os.replace(temporary, real)
            temporary = None
    except OSError as error:
        raise Unfixable(read_error(error)) from None
    finally:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
        if mask and previous is not None:
            mask(signal.SIG_SETMASK, previous)


def _unchanged(real: str, original: BinaryIO, status: os.stat_result, before: bytes) -> None:
    """Raise Unfixable unless ``real`` still names the file opened, with its size, time and bytes."""
    now = os.stat(real)
    original.seek(0)
    identity = (now.st_dev, now.st_ino, now.st_size, now.st_mtime_ns)
    if identity != (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns) or (
        original.read(len(before) + 1) != before
    ):
        raise Unfixable("it changed while being fixed; nothing written")
