"""The audit's one exception, and the words for what went wrong reading an input."""

from __future__ import annotations

from failure_kinds import FailureKindsError


class AuditError(FailureKindsError):
    """A problem with the audit's own arguments (not with the data): a usage error."""


def describe_read_error(error: BaseException) -> str:
    """A short lowercase phrase for why an input could not be read (to follow ``path:``)."""
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
