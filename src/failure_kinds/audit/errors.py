"""The audit's one exception, and the words for what went wrong reading an input."""

from __future__ import annotations

from failure_kinds import FailureKindsError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final


class AuditError(FailureKindsError):
    """A problem with the audit's own arguments (not with the data): a usage error."""


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
    if type(error).__name__ == "BadGzipFile":
        return f"not a gzip file ({error})"
    if type(error).__module__ == "zlib":
        return f"corrupt gzip data ({error})"
    if isinstance(error, OSError) and error.strerror:
        return error.strerror[0].lower() + error.strerror[1:]
    return str(error) or type(error).__name__


class WideText(Exception):
    """An input in UTF-16 or UTF-32, which the audit names rather than counting its lines unparseable."""


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


def check_text(head: bytes, gzipped: str | None = None) -> None:
    """Raise WideText when ``head``, the first 4 bytes of an input, begin text in UTF-16 or UTF-32;
    ``gzipped``: the name of the gzip file they were decompressed from, which the hint decompresses."""
    found = wide_encoding(head, b"{ \t\r\n")
    if found is not None:
        name, order, source = found
        command = f"iconv -f {source} -t UTF-8"
        if gzipped is not None:
            import shlex

            named = "" if gzipped == "<stdin>" else " " + shlex.quote(gzipped)
            command = f"gzip -dc{named} | {command}"
        raise WideText(f"{name} ({order}-endian) text; the audit reads UTF-8: convert it with {command}")


def cannot_start(jobs: int, error: OSError) -> str:
    return (
        f"--jobs {jobs}: cannot start the worker processes ({describe_read_error(error)}); "
        "give fewer jobs, or raise the limit (ulimit -n, ulimit -u)"
    )
