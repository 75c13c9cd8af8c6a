"""Inputs: files, directories of them, stdin; gzip recognised by content; lines read in batches."""

from __future__ import annotations

import io
import os
import sys

from .errors import AuditError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from typing import Any, BinaryIO, Final, Protocol

    class _Readable(Protocol):
        def read(self, size: int = -1, /) -> bytes: ...
        def close(self) -> None: ...


# Lines are read and decoded in batches of about this many bytes.
BATCH_BYTES: Final = 1 << 20

STDIN: Final = "-"
STDIN_NAME: Final = "<stdin>"
GZIP_MAGIC: Final = b"\x1f\x8b"


class Source:
    """One input: ``display`` is how reports name it, ``path`` is None for stdin."""

    __slots__ = ("display", "path")

    def __init__(self, display: str, path: str | None) -> None:
        self.display: str = display
        self.path: str | None = path


def expand_inputs(inputs: Sequence[str], notes: list[str]) -> list[Source]:
    """Files as given, directories as their *.jsonl and *.jsonl.gz files (recursively, sorted)."""
    if list(inputs).count(STDIN) > 1:
        raise AuditError("- (stdin) can be given only once")
    sources: list[Source] = []
    for item in inputs:
        if item == STDIN:
            sources.append(Source(STDIN_NAME, None))
        elif os.path.isdir(item):
            found = sorted(
                os.path.join(folder, name)
                for folder, _, names in os.walk(item)
                for name in names
                if name.endswith((".jsonl", ".jsonl.gz"))
            )
            if not found:
                notes.append(f"{item}: no *.jsonl or *.jsonl.gz files in this directory")
            sources.extend(Source(path, path) for path in found)
        else:
            sources.append(Source(item, item))
    return sources


class UntilError(io.RawIOBase):
    """Reads ``stream`` until it fails, then reports end of data and keeps the error.

    A truncated gzip file raises only when its end is reached; this way every complete line before the
    break is still counted, and the error is reported afterwards.
    """

    def __init__(self, stream: _Readable) -> None:
        self.stream: _Readable = stream
        # read1 hands over what one underlying read produced, so a failure costs only that read.
        self.read_some: Any = getattr(stream, "read1", stream.read)
        self.error: BaseException | None = None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self.error is not None:
            return 0
        try:
            data = self.read_some(len(buffer))
        except Exception as error:  # OSError, EOFError, zlib.error: all end the file the same way
            self.error = error
            return 0
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self.stream.close()
        super().close()


def open_source(source: Source, start: int = 0) -> tuple[UntilError, io.BufferedReader]:
    """A reader of the source's (decompressed) bytes, from byte ``start`` of a plain file."""
    raw: BinaryIO
    if source.path is None:
        raw = sys.stdin.buffer
        peek = getattr(raw, "peek", None)  # a buffered stdin can be looked at without consuming it
        head: bytes = peek(2)[:2] if peek is not None else b""
    else:
        raw = open(source.path, "rb")  # noqa: SIM115  # closed through the returned reader
        head = raw.read(2)
        raw.seek(start)
        if start:
            head = b""  # a range of a plain file; gzip is read whole
    stream: _Readable = raw
    if head == GZIP_MAGIC or source.display.endswith(".gz"):
        import gzip

        stream = gzip.GzipFile(fileobj=raw, mode="rb")
    guarded = UntilError(stream)
    return guarded, io.BufferedReader(guarded, BATCH_BYTES)


def read_batches(
    reader: _Readable, line_bytes: int, limit: int | None = None
) -> Iterator[list[bytes] | None]:
    """The lines of ``reader`` (without their newline), about BATCH_BYTES at a time; ``None`` stands for
    one line longer than ``line_bytes``, which is skipped as it streams past, never held whole. Reads at
    most ``limit`` bytes when given. Newlines are b"\\n" only: a lone carriage return is part of a line.
    """
    pending: list[bytes] = []  # the start of a line that continues in the next read
    pending_size = 0
    skipping = False  # inside an overlong line: discard until its newline
    while limit is None or limit > 0:
        chunk = reader.read(BATCH_BYTES if limit is None else min(BATCH_BYTES, limit))
        if not chunk:
            break
        if limit is not None:
            limit -= len(chunk)
        if skipping:
            end = chunk.find(b"\n")
            if end < 0:
                continue
            skipping = False
            yield None
            chunk = chunk[end + 1 :]
        lines = chunk.split(b"\n")
        tail = lines.pop()
        if lines and pending:
            lines[0] = b"".join(pending) + lines[0]
            pending, pending_size = [], 0
        if lines:
            if max(map(len, lines)) > line_bytes:
                yield from _without_overlong(lines, line_bytes)
            else:
                yield lines
        if tail:
            pending.append(tail)
            pending_size += len(tail)
            if pending_size > line_bytes:
                pending, pending_size = [], 0
                skipping = True
    if skipping:
        yield None
    elif pending:
        line = b"".join(pending)
        yield None if len(line) > line_bytes else [line]


def _without_overlong(lines: list[bytes], line_bytes: int) -> Iterator[list[bytes] | None]:
    start = 0
    for index, line in enumerate(lines):
        if len(line) > line_bytes:
            if index > start:
                yield lines[start:index]
            yield None
            start = index + 1
    if start < len(lines):
        yield lines[start:]
