"""A progress line on stderr, only when stderr is a terminal."""

from __future__ import annotations

import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, ClassVar


class Progress:
    """A line on stderr that says how far reading has got; only when stderr is a terminal."""

    INTERVAL: ClassVar[float] = 0.25

    def __init__(self, stream: IO[str] | None) -> None:
        self.stream: IO[str] | None = stream if stream is not None and stream.isatty() else None
        self.shown: bool = False
        self.last: float = time.monotonic()

    def update(self, display: str, records: int) -> None:
        if self.stream is None:
            return
        now = time.monotonic()
        if now - self.last >= self.INTERVAL:
            self.last = now
            from .render import printable

            self.stream.write(f"\r\033[Kreading {printable(display, 200)}: {records:,} records")
            self.stream.flush()
            self.shown = True

    def clear(self) -> None:
        if self.stream is not None and self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self.shown = False
