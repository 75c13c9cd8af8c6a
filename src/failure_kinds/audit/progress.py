"""Progress lines on stderr, only when stderr is a terminal: records read by one process, or bytes
audited by the parallel and Ray engines."""

from __future__ import annotations

import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, ClassVar


class _StatusLine:
    """One line on a terminal, rewritten in place at most every INTERVAL seconds and cleared at the end;
    nothing at all when the stream is not a terminal (a pipe or a file never gets one)."""

    INTERVAL: ClassVar[float] = 0.25

    def __init__(self, stream: IO[str] | None, last: float | None = None) -> None:
        self.stream: IO[str] | None = stream if stream is not None and _is_terminal(stream) else None
        self.shown: bool = False
        # When the line was last shown; 0.0 shows the first update at once.
        self.last: float = time.monotonic() if last is None else last

    def _due(self, now: float) -> bool:
        return self.stream is not None and now - self.last >= self.INTERVAL

    def _show(self, text: str, now: float) -> None:
        if self.stream is None:
            return
        self.last = now
        self.stream.write(f"\r\033[K{text}")
        self.stream.flush()
        self.shown = True

    def clear(self) -> None:
        if self.stream is not None and self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self.shown = False


class Progress(_StatusLine):
    """``reading logs/a.jsonl: 120,000 records``: how far one process has read."""

    def update(self, display: str, records: int) -> None:
        now = time.monotonic()
        if self._due(now):
            from .render import printable

            self._show(f"reading {printable(display, 200)}: {records:,} records", now)


class ByteProgress(_StatusLine):
    """``audited 312 MB of 1.21 GB (640 MB/s)``: how far the parallel and Ray engines have got."""

    def __init__(self, stream: IO[str] | None, total: int) -> None:
        super().__init__(stream, last=0.0)  # the first finished part is shown at once
        self.total: int = total
        self.done: int = 0
        self.started: float = time.monotonic()

    def advance(self, size: int) -> None:
        self.done += size
        now = time.monotonic()
        if self._due(now) or (self.stream is not None and self.done >= self.total):
            elapsed = max(now - self.started, 1e-9)
            rate = _size(int(self.done / elapsed))
            self._show(f"audited {_size(self.done)} of {_size(self.total)} ({rate}/s)", now)


def _is_terminal(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (ValueError, OSError):  # closed
        return False


def _size(count: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if count >= scale:
            return f"{count / scale:,.1f} {unit}" if count < 10 * scale else f"{count / scale:,.0f} {unit}"
    return f"{count} B"
