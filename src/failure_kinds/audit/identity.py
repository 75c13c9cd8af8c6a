"""What an engine saw of a file before reading it, and how the file changed while it was read.

Every engine checks the files it reads by path against this: the ``--jobs`` workers and Ray tasks against
what the plan saw, the one-process engine against the descriptor it opened. A file replaced, truncated,
grown or rewritten during its read is reported with ``changed_error``, never counted as if it were whole.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from . import wire


@dataclass(frozen=True)
class Identity:
    """What an engine saw of a file before reading it (the plan, or the one process just before its
    read): the file itself (device and inode), its size and the time it was last modified. ``device``
    None: not compared (on a Ray node a shared file has a device of its own)."""

    device: int | None
    inode: int
    size: int
    modified: int
    """st_mtime_ns."""

    @classmethod
    def of(cls, status: os.stat_result) -> Identity:
        return cls(status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns)

    def change(self, status: os.stat_result) -> str | None:
        """How the file whose status is ``status`` differs from the one planned on; None: it does not."""
        return self.compare(status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns)

    def compare(self, device: int | None, inode: int | None, size: int, modified: int) -> str | None:
        """``change`` for what a filesystem says of a file (None: it does not say; a remote file has no
        inode)."""
        if inode is not None and inode != self.inode:
            return "replaced"
        if device is not None and self.device is not None and device != self.device:
            return "replaced"
        if size < self.size:
            return "truncated"
        if size > self.size:
            return "grown"
        if modified != self.modified:
            return "rewritten"
        return None

    def to_json(self) -> list[int | None]:
        return [self.device, self.inode, self.size, self.modified]

    @classmethod
    def from_json(cls, data: object) -> Identity | None:
        if data is None:
            return None
        device, inode, size, modified = wire.sequence(data)
        return cls(
            None if device is None else wire.integer(device),
            wire.integer(inode),
            wire.integer(size),
            wire.integer(modified),
        )


def path_change(path: str, identity: Identity) -> str | None:
    """How the file ``path`` names now differs from ``identity`` ("removed" when it names none)."""
    try:
        return identity.change(os.stat(path))
    except (OSError, ValueError):
        return "removed"


def changed_error(change: str) -> str:
    return f"changed while it was read ({change}): audit it again once nothing writes to it"
