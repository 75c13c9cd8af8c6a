"""The command's streams and files. Output goes through :func:`write_output` and :func:`error_line` only:
once stdout fails, the reason is kept and later output dropped, so a run still ends with its diagnostics
and exit code. :func:`stdin_bytes` waits on a descriptor a parent left non-blocking (``O_NONBLOCK``, which
it never clears: the flag belongs to the open file the parent shares) instead of taking ``EAGAIN`` for the
end.

Input, for every command (the lint, the configuration, ``export``/``diff``, the audit): a bounded read of
a regular file that a FIFO cannot hang (:func:`read_regular`), the words for a read error
(:func:`describe_read_error`), UTF-16 and UTF-32 told apart (:func:`wide_encoding`), and the notes of
what a directory walk skips (:class:`Skipped`, :func:`repeated_note`). Each command keeps its own words
around them.
"""

from __future__ import annotations

import bisect
import errno
import io
import os
import stat
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import BinaryIO, Final

    from _typeshed import WriteableBuffer

BROKEN_PIPE = "the reader of standard output went away"

_output_lost: str | None = None


def write_output(text: str) -> None:
    """Write ``text`` to stdout and flush it (``""`` only flushes), never raising."""
    global _output_lost
    stream = sys.stdout
    if _output_lost is not None or stream is None:
        # Started with descriptor 1 closed (`>&-`): the interpreter leaves sys.stdout unset.
        _output_lost = _output_lost or ("standard output is closed" if text else None)
        return
    try:
        try:
            stream.write(text)
        except UnicodeEncodeError:
            # A name the output's encoding cannot show (an ASCII locale) is written escaped, not refused:
            # the findings matter more than their spelling. Nothing was written: encoding comes first.
            encoding = stream.encoding or "utf-8"
            stream.write(text.encode(encoding, "backslashreplace").decode(encoding, "replace"))
        stream.flush()
    except BrokenPipeError:
        lose_output(BROKEN_PIPE)
    except (OSError, ValueError) as error:  # ValueError: a stream closed by someone else
        lose_output(f"cannot write to standard output: {reason(error)}")


def output_lost() -> str | None:
    return _output_lost


def lose_output(why: str | None) -> None:
    """Drop all later output, because of ``why``; None starts a run afresh."""
    global _output_lost
    _output_lost = why
    if why is None:
        return
    # What is still buffered would fail again when the interpreter flushes at exit (a second message and
    # exit status 120), so descriptor 1 now leads nowhere and the buffer drains there.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass  # not a real descriptor (an in-process test's capture): nothing is flushed at exit


def reason(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return str(error) or type(error).__name__


def error_line(line: str) -> None:
    """One line on stderr; a closed stderr gets nothing."""
    if sys.stderr is None:
        return
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def hold_standard_descriptors() -> None:
    """Give a closed descriptor 0, 1 or 2 to /dev/null, or the next file opened would become "stdout" (and
    children would inherit it so). sys.stdin and sys.stdout stay None: the command knows they were closed."""
    for descriptor in (0, 1, 2):
        try:
            os.fstat(descriptor)
        except OSError:
            try:
                held = os.open(os.devnull, os.O_RDWR)
            except OSError:
                return
            if held != descriptor:
                os.dup2(held, descriptor)
                os.close(held)


def stdin_bytes() -> BinaryIO | None:
    """Standard input as a binary stream whose reads wait for data or the end; None when it is closed. A
    ``sys.stdin`` without a descriptor (replaced by a test, say) is read through its own buffer."""
    buffer: BinaryIO | None = getattr(sys.stdin, "buffer", None)
    if sys.stdin is None or (buffer is not None and buffer.closed):
        return None
    try:
        descriptor = sys.stdin.fileno()
    except (OSError, ValueError, AttributeError):  # io.UnsupportedOperation is both of the first two
        return buffer
    return io.BufferedReader(_WaitingReader(descriptor), buffer_size=64 * 1024)


class _WaitingReader(io.RawIOBase):
    """Reads that wait for a non-blocking descriptor to become readable; closing this leaves it open."""

    def __init__(self, descriptor: int) -> None:
        super().__init__()
        self.descriptor = descriptor

    def readable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self.descriptor

    def readinto(self, buffer: WriteableBuffer, /) -> int:
        import select

        view = memoryview(buffer).cast("B")
        while True:
            try:
                data = os.read(self.descriptor, len(view))
            except BlockingIOError:
                # Nothing yet, which is not the end: wait until the writer writes or closes its end.
                select.select([self.descriptor], [], [])
                continue
            view[: len(data)] = data
            return len(data)


# Input


def read_regular(
    path: str | os.PathLike[str], limit: int, seen: set[tuple[int, int]] | None = None
) -> bytes | str:
    """At most ``limit + 1`` bytes of the regular file ``path``; "is a directory" or "not a regular file"
    (a FIFO is opened without blocking, so it cannot hang the command); "repeated" for a file (device,
    inode) already in ``seen``, which gets each file read. The file opened is judged, not its name.
    Raises OSError."""
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            return "is a directory" if stat.S_ISDIR(status.st_mode) else "not a regular file"
        if seen is not None:
            if (status.st_dev, status.st_ino) in seen:
                return "repeated"
            seen.add((status.st_dev, status.st_ino))
        with os.fdopen(descriptor, "rb", closefd=False) as file:
            return file.read(limit + 1)
    finally:
        os.close(descriptor)


OUT_OF_MEMORY: Final = "out of memory while reading"


def describe_read_error(error: BaseException) -> str:
    """A short lowercase phrase for why an input could not be read (to follow ``path:``)."""
    if isinstance(error, MemoryError):
        return OUT_OF_MEMORY
    if isinstance(error, FileNotFoundError):
        return "no such file"
    if isinstance(error, PermissionError):
        return "permission denied"
    if isinstance(error, IsADirectoryError):
        return "is a directory"
    if isinstance(error, EOFError):
        return "truncated gzip: the compressed stream ends early"
    if type(error).__name__ == "BadGzipFile" and str(error).startswith("Not a gzipped file ("):
        return f"not a gzip file (it starts with {str(error).removeprefix('Not a gzipped file (')}"
    if type(error).__name__ == "BadGzipFile" or type(error).__module__ == "zlib":  # a checksum, a length
        return f"corrupt gzip data ({error})"
    if isinstance(error, OSError) and error.strerror:
        return error.strerror[0].lower() + error.strerror[1:]
    return str(error) or type(error).__name__


# Byte order marks, longest first; without one, the places of the NUL bytes around the first two ASCII
# characters tell the encoding (the way RFC 4627 tells JSON's encodings apart), when the first is one a
# line of records begins with (so binary junk stays unparseable lines).
_MARKS: Final = {
    b"\xff\xfe\x00\x00": ("UTF-32", "little"),
    b"\x00\x00\xfe\xff": ("UTF-32", "big"),
    b"\xff\xfe": ("UTF-16", "little"),
    b"\xfe\xff": ("UTF-16", "big"),
}
_NULS: Final[dict[tuple[bool, ...], tuple[str, str]]] = {
    (False, True, False, True): ("UTF-16", "little"),
    (True, False, True, False): ("UTF-16", "big"),
    (False, True, True, True): ("UTF-32", "little"),
    (True, True, True, False): ("UTF-32", "big"),
}


def wide_encoding(head: bytes, first: bytes = b"") -> tuple[str, str, str] | None:
    """The encoding, byte order and iconv's name for it of the UTF-16 or UTF-32 text that ``head``, its
    first 4 bytes, begins; None for other text. Without a mark, only text whose first character is one of
    ``first`` counts (empty: any)."""
    name, order = next((found for mark, found in _MARKS.items() if head.startswith(mark)), ("", ""))
    if name:
        return name, order, name  # iconv reads the mark
    if len(head) == 4 and max(head) < 0x80:
        name, order = _NULS.get(tuple(byte == 0 for byte in head), ("", ""))
        if name and (not first or max(head[:2] if name == "UTF-16" else head) in first):
            return name, order, name + order[0].upper() + "E"
    return None


# The skipped entries a note names (the first in sorted order); the others are counted.
SKIPPED_NAMED: Final = 5


class Skipped:
    """The entries of the directories walked that are not read: how many, and the first few names."""

    def __init__(self) -> None:
        self.count: int = 0
        self.names: list[str] = []  # the first SKIPPED_NAMED in sorted order

    def add(self, name: str) -> None:
        self.count += 1
        bisect.insort(self.names, name)
        del self.names[SKIPPED_NAMED:]

    def note(self, notes: list[str], walked: str) -> None:
        """One note of what was skipped (``walked``: what a walk reads, such as ``*.py files``)."""
        from failure_kinds._display import plain

        if not self.count:
            return
        one, more = self.count == 1, self.count - len(self.names)
        named = ", ".join(plain(name) for name in self.names)
        entries = (
            "1 entry found in a directory is" if one else f"{self.count:,} entries found in directories are"
        )
        files = f"a {walked} regular file and was" if one else f"{walked} regular files and were"
        notes.append(f"{entries} not {files} skipped: {named}" + (f" and {more:,} more" if more else ""))


def walk(top: str, wanted: Callable[[str], bool], skipped: Skipped) -> list[tuple[str, OSError | None]]:
    """The regular files under ``top`` whose name ``wanted`` accepts, recursively, sorted, and each folder
    that could not be listed, with its error. Links to directories are not followed, and a FIFO is never
    opened: every entry that is not read goes to ``skipped``, with what it is."""
    found: list[tuple[str, OSError | None]] = []
    folders = [top]
    while folders:
        folder = folders.pop()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            folders.append(entry.path)
                        elif wanted(entry.name) and entry.is_file():
                            found.append((entry.path, None))
                        else:
                            skipped.add(entry.path + _what_else(entry.path))
                    except OSError:  # a symbolic link loop (ELOOP), or an entry that vanished while listed
                        if os.path.islink(entry.path):
                            skipped.add(entry.path + _what_else(entry.path))
        except OSError as error:
            found.append((folder, error))
    return sorted(found, key=lambda item: item[0])


def _what_else(path: str) -> str:
    """What an entry a walk skips is, when not a regular file (a name alone says why it was skipped)."""
    try:
        mode = stat.S_IFMT(os.stat(path).st_mode)
    except OSError as error:
        if not os.path.islink(path):
            return ""
        return " (a symbolic link loop)" if error.errno == errno.ELOOP else " (a dangling symbolic link)"
    kinds = {stat.S_IFREG: "", stat.S_IFDIR: " (a link to a directory)", stat.S_IFIFO: " (a FIFO)"}
    return kinds.get(mode, " (a socket)" if mode == stat.S_IFSOCK else " (a device)")


READ_ONCE: Final = " a file already read; each file is read once"


def repeated_note(repeated: int) -> str:
    """The note for ``repeated`` inputs that name a file already read."""
    return ("1 input names" if repeated == 1 else f"{repeated:,} inputs name") + READ_ONCE
