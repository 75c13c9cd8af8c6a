"""The command's standard streams. Output goes through :func:`write_output` and :func:`error_line` only:
once stdout fails, the reason is kept and later output dropped, so a run still ends with its diagnostics
and exit code. :func:`stdin_bytes` waits on a descriptor a parent left non-blocking (``O_NONBLOCK``, which
it never clears: the flag belongs to the open file the parent shares) instead of taking ``EAGAIN`` for the
end.
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
