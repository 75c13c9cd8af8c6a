"""The command's standard streams: output that survives a reader going away, and a standard input that
waits for its data.

Output goes through :func:`write_output` and :func:`error_line` only. Once stdout fails, the reason is
kept and further output dropped, so a run still finishes its work, its diagnostics and its exit code.

:func:`stdin_bytes` is how every command reads standard input. A parent may hand over a descriptor with
``O_NONBLOCK`` set (an event loop's pipe, a shell that set it and forgot): reading it then fails with
``EAGAIN`` until the writer has written, and a plain ``read()`` takes that for the end of the stream. The
reader here waits for the descriptor to be readable instead. It never clears the flag, which belongs to
the open file the parent shares, not to this process.
"""

from __future__ import annotations

import io
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import BinaryIO

    from _typeshed import WriteableBuffer

BROKEN_PIPE = "the reader of standard output went away"

_output_lost: str | None = None
# Standard input is read this many bytes at a time.
_READ_SIZE = 64 * 1024


def write_output(text: str) -> None:
    """Write ``text`` to stdout, flushed, never raising: if the reader has gone (a closed pipe) or stdout is
    closed or full, remember why and drop this and every later write."""
    global _output_lost
    if _output_lost is not None or not text:
        return
    stream = sys.stdout
    if stream is None:
        # Started with descriptor 1 closed (`>&-`): the interpreter leaves sys.stdout unset.
        _output_lost = "standard output is closed"
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
    except (OSError, ValueError) as error:
        # ValueError: a stream closed by someone else ("I/O operation on closed file").
        lose_output(f"cannot write to standard output: {reason(error)}")


def output_lost() -> str | None:
    """Why standard output stopped taking writes, or None while it works."""
    return _output_lost


def reset_output() -> None:
    global _output_lost
    _output_lost = None


def lose_output(why: str) -> None:
    global _output_lost
    _output_lost = why
    # What is still buffered would fail again when the interpreter flushes at exit (a second message and
    # exit status 120), so descriptor 1 now leads nowhere and the buffer drains there.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass  # not a real descriptor (an in-process test's capture): nothing is flushed at exit


def reason(error: BaseException) -> str:
    """What went wrong, in words: the system's message for an OSError, else the exception's text."""
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return str(error) or type(error).__name__


def error_line(line: str) -> None:
    """One line on stderr; `print(file=None)` would write to stdout, so a closed stderr gets nothing."""
    if sys.stderr is None:
        return
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def hold_standard_descriptors() -> None:
    """Give a closed descriptor 0, 1 or 2 to /dev/null. Left free, it would be handed to the next file
    opened, an input file could become "stdout", and child processes would inherit it as such. sys.stdin
    and sys.stdout stay None, which is how the command knows they were closed."""
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
    """Standard input as a binary stream whose reads block until data or the end arrives, even when the
    descriptor is non-blocking; None when standard input is closed.

    A ``sys.stdin`` without a descriptor (replaced by a test, say) is read through its own buffer.
    """
    stream = sys.stdin
    if stream is None:
        return None
    buffer: BinaryIO | None = getattr(stream, "buffer", None)
    try:
        descriptor = stream.fileno()
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return buffer if buffer is not None and not buffer.closed else None
    if buffer is not None and buffer.closed:
        return None
    return io.BufferedReader(_WaitingReader(descriptor), buffer_size=_READ_SIZE)


class _WaitingReader(io.RawIOBase):
    """Reads of a descriptor that wait for it to become readable when it is non-blocking; the descriptor
    stays open when this is closed (it is the process's standard input)."""

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
