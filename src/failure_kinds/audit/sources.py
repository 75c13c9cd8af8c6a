"""Inputs -> lines -> values: files, directories of them, stdin; what a file was when planned; gzip by
content; lines in batches under the line cap; each line decoded once into what it holds at every path
(each field and stage): a string, None (null), ABSENT, another JSON value (invalid), or the line's
UNPARSEABLE or BLANK."""

from __future__ import annotations

import errno
import functools
import io
import json
from itertools import repeat
from json.scanner import make_scanner
from operator import attrgetter
from typing import TypeAlias

from failure_kinds import FailureKindsError
from failure_kinds._depth import deeper
from failure_kinds._streams import wide_encoding

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from typing import Any, BinaryIO, Final


# Lines are read and decoded in batches of about this many bytes: few enough that what one batch frees
# stays below the C allocator's threshold for giving memory back, so the next batch reuses those pages
# instead of faulting in new ones.
BATCH_BYTES: Final = 256 << 10

STDIN: Final = "-"
STDIN_NAME: Final = "<stdin>"
GZIP_MAGIC: Final = b"\x1f\x8b"

# What a directory walk reads, by name, whatever the case of the suffix.
SUFFIXES: Final = (".jsonl", ".ndjson", ".jsonl.gz", ".ndjson.gz", ".parquet")
WALKED: Final = "*.jsonl, *.ndjson, *.jsonl.gz, *.ndjson.gz or *.parquet"


def is_parquet(path: str) -> bool:
    return path.lower().endswith(".parquet")


def is_walked(name: str) -> bool:
    return name.lower().endswith(SUFFIXES)


def is_uri(path: str) -> bool:
    """Whether an input names a file by URI (``s3://bucket/logs/``), which only ``--ray`` reads."""
    return "://" in path


def is_gzip(name: str, head: bytes) -> bool:
    """Gzip by its first bytes or by its name (a ``.gz`` file that is not gzip is named as such)."""
    return head == GZIP_MAGIC or name.lower().endswith(".gz")


class WideText(FailureKindsError):
    """An input in UTF-16 or UTF-32, which the audit names rather than counting its lines unparseable."""


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


def _first(read: Callable[[int], bytes], size: int) -> bytes:
    """At least 4 bytes (fewer only at the end) of a stream that may give fewer per read."""
    data = read(size)
    while 0 < len(data) < 4:
        more = read(max(size - len(data), 4 - len(data)))
        if not more:
            break
        data += more
    return data


class Input:
    """The bytes of one input, decompressed. A read that fails ends the data and keeps the error (a
    truncated gzip file raises only at its end: every whole line before the break is still counted).
    ``check``: the name of a gzip file, whose first decompressed bytes ``check_text`` looks at."""

    def __init__(
        self, read: Callable[[int], bytes], close: Callable[[], None], check: str | None = None
    ) -> None:
        self._read: Callable[[int], bytes] = read
        self._close: Callable[[], None] = close
        self._check = check
        self.error: BaseException | None = None

    def read(self, size: int) -> bytes:
        """At most ``size`` bytes (a few more at the start); b"" at the end or after an error."""
        if self.error is not None:
            return b""
        try:
            if self._check is not None:
                data = _first(self._read, size)
                check_text(data[:4], self._check)
                self._check = None
            else:
                data = self._read(size)
        except Exception as error:  # OSError, EOFError, zlib.error, WideText: all end the input alike
            self.error = error
            return b""
        return data

    def close(self) -> None:
        self._close()


class _Prefixed:
    """A stream with the bytes already read from its start put back, so that gzip is recognised by its
    first bytes in pipes and FIFOs, which cannot seek back."""

    def __init__(self, prefix: bytes, stream: BinaryIO) -> None:
        self.prefix: bytes = prefix
        self.stream: BinaryIO = stream
        self._read_some: Callable[[int], bytes] = getattr(stream, "read1", stream.read)

    def read(self, size: int = -1, /) -> bytes:
        if self.prefix:
            if size < 0:
                data, self.prefix = self.prefix, b""
                return data + self.stream.read()
            data, self.prefix = self.prefix[:size], self.prefix[size:]
            return data if len(data) == size else data + self._read_some(size - len(data))
        return self.stream.read(size)

    def read1(self, size: int = -1, /) -> bytes:
        if self.prefix:
            return self.read(size)
        return self._read_some(size)

    def seek(self, offset: int, /) -> int:
        raise io.UnsupportedOperation("a stream read as it comes cannot seek")

    def close(self) -> None:
        self.stream.close()


def open_stream(path: str | None) -> BinaryIO:
    """stdin (``path`` None: its reads wait for data even on a non-blocking descriptor) or a FIFO."""
    if path is not None:
        return open(path, "rb")  # closed through the Input it becomes
    from failure_kinds._streams import stdin_bytes

    raw = stdin_bytes()
    if raw is None:
        raise OSError(errno.EBADF, "stdin is closed")
    return raw


def decompressed(raw: BinaryIO, name: str, start: int = 0) -> Input:
    """The bytes of the open stream ``raw`` from byte ``start``, gunzipped when it is gzip (a range after
    the start is plain: gzip is read whole). Closing the Input closes ``raw``."""
    if start:
        # A range of a file is in the file's encoding: every range of a file says what its start says.
        raw.seek(0)
        first = _first(raw.read, 4)[:4]
        raw.seek(start)
        head = b""
    else:
        # A whole read rather than 4 bytes: a small file then comes in one batch, not the rest of a buffer
        # and then its end.
        head = _first(getattr(raw, "read1", raw.read), BATCH_BYTES)
        first = head[:4]
    stream = _Prefixed(head, raw)
    if not start and is_gzip(name, head[: len(GZIP_MAGIC)]):
        import gzip

        unzipped = gzip.GzipFile(fileobj=stream, mode="rb")

        def close_both() -> None:
            unzipped.close()
            raw.close()

        return Input(unzipped.read1, close_both, check=name)
    data = Input(stream.read1, raw.close)
    try:
        check_text(first)
    except WideText as error:
        data.error = error
    return data


Lines: TypeAlias = tuple[list[bytes], bool, int] | int | None
"""What ``read_batches`` yields: lines, whether they are ASCII and a bound on their length (what
``PartialReport.add_lines`` takes), a run of blank lines, or an overlong line."""

# Bytes that make a line blank when it holds nothing else (what bytes.isspace() accepts).
_WHITE_SPACE: Final = b" \t\n\r\x0b\x0c"
_WHITE_SPACE_CODES: Final = frozenset(_WHITE_SPACE)


def read_batches(data: Input, line_bytes: int, limit: int | None = None) -> Iterator[Lines]:
    """The lines of ``data`` (at most ``limit`` bytes), about BATCH_BYTES at a time: ``(lines, ascii,
    longest)`` (each line with its newline, but the last maybe; ``ascii`` when the read held only ASCII
    bytes; ``longest`` no less than the longest line),
    an int for that many blank lines in a row, None for a line longer than ``line_bytes`` that does not
    fit in one read, skipped as it streams past so that memory stays bounded (``PartialReport.add_lines``
    judges the others against the cap). A line of white space only is blank whatever its length. Only
    b"\\n" ends a line, or the end of the data: not a read error, after which the line it cut off is
    dropped."""
    pending: list[bytes] = []  # the start of a line that continues in the next read
    pending_size = 0
    skipping = False  # inside an overlong line: discard until its newline
    skipped_blank = False  # while skipping: the line so far is white space only
    while limit is None or limit > 0:
        chunk = data.read(BATCH_BYTES if limit is None else min(BATCH_BYTES, limit))
        if not chunk:
            break
        if limit is not None:
            limit -= len(chunk)
        offset = 0  # where the lines not yet handed over start in ``chunk``
        completed: list[bytes] = []  # the line that ``pending`` began, once this read ends it
        if skipping or pending:
            end = chunk.find(b"\n")
            if end < 0:
                if skipping:
                    skipped_blank = skipped_blank and chunk.isspace()
                else:
                    pending.append(chunk)
                    pending_size += len(chunk)
                    if pending_size > line_bytes:
                        skipped_blank = all(map(bytes.isspace, pending))
                        pending, pending_size, skipping = [], 0, True
                continue
            if skipping:
                skipping = False
                yield 1 if skipped_blank and (end == 0 or chunk[:end].isspace()) else None
            else:
                pending.append(chunk[: end + 1])
                completed = [b"".join(pending)]
                pending, pending_size = [], 0
            offset = end + 1
        if offset < len(chunk) and chunk[offset] in _WHITE_SPACE_CODES:
            # Blank lines at the start of a read are counted without splitting them: a file of nothing
            # else costs less than one of records. A read of newlines only is found by counting them;
            # deleting the white space is the quickest test of one that holds nothing else; lstrip
            # finds where a shorter run ends.
            newlines = chunk.count(b"\n", offset)
            rest = chunk[offset:] if offset else chunk
            if newlines == len(rest) or not rest.translate(None, _WHITE_SPACE):
                blank_end = chunk.rfind(b"\n", offset) + 1 if newlines else 0
            else:
                blank_end = chunk.rfind(b"\n", offset, len(chunk) - len(rest.lstrip(_WHITE_SPACE))) + 1
                newlines = chunk.count(b"\n", offset, blank_end) if blank_end else 0
            if blank_end:
                if completed:
                    yield completed, completed[0].isascii(), len(completed[0])
                    completed = []
                yield newlines
                offset = blank_end
        stream = io.BytesIO(chunk)  # shares the bytes: nothing is copied to read lines from it
        stream.seek(offset)
        # A line completed by this read goes with the read's own lines: one batch per read, not two.
        lines = completed + stream.readlines()
        if lines and not lines[-1].endswith(b"\n"):
            tail = lines.pop()
            if len(tail) > line_bytes:
                skipping, skipped_blank = True, tail.isspace()
            else:
                pending, pending_size = [tail], len(tail)
        if lines:
            ascii = chunk.isascii() and (not completed or completed[0].isascii())
            yield lines, ascii, max(len(chunk), len(completed[0]) if completed else 0)
    if data.error is not None:
        return  # a line cut off by a read error (a truncated gzip file) is no record
    if skipping:
        yield 1 if skipped_blank else None
    elif pending:
        line = b"".join(pending)
        yield [line], line.isascii(), len(line)


# Decoding: a line -> what it holds at each path. The standard library decides every line; the msgspec
# path must agree with it line for line.


class _Marker:
    """A named sentinel: what a line decodes to besides a string and None."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name: str = name

    def __repr__(self) -> str:
        return self.name

    def __reduce__(self) -> str:
        return self.name  # the module's one instance of that name, in whichever process unpickles it


INVALID: Final = _Marker("INVALID")  # a number, bool, object or list at the path
ABSENT: Final = _Marker("ABSENT")  # no such key (or the path runs through a value that is no object)
UNPARSEABLE: Final = _Marker("UNPARSEABLE")  # not UTF-8, not JSON, not an object, over the line cap
BLANK: Final = _Marker("BLANK")  # empty or white space only: not a record, but a line
OTHER: Final = _Marker("OTHER")  # in a kind's stages: a stage without a row of its own (past the cap)
Row: TypeAlias = tuple[object, ...]
"""What one line holds at each path, or the line's marker at every one (``Decoder.batch`` gives columns)."""
Columns: TypeAlias = list[list[object]]
"""Values already decoded, one list per path (``PartialReport.add_columns``)."""


class Decoder:
    """Turns lines into what they hold at each path, in one decode per line. With ``msgspec`` it builds
    only the objects on the paths (msgspec validates the rest of the line but builds nothing); where
    msgspec refuses a line, or a line is not ASCII, the standard library decides, always from the same
    call depth, so a line nested as deep as the interpreter allows gets the same answer either way."""

    def __init__(self, paths: Sequence[str], msgspec: Any = None) -> None:
        self.paths: list[list[str]] = [path.split(".") for path in paths]
        keys = [path[0] for path in self.paths] if max(map(len, self.paths)) == 1 else None
        self._pick: Callable[[dict[str, Any]], Row] | None = None if keys is None else _picker(keys)
        # The C scanner behind json.loads, called directly: json.loads adds type checks and two regular
        # expression matches per call. typeshed types its argument as the scanner class; any decoder is.
        self._scan: Callable[[str, int], tuple[Any, int]] = make_scanner(json.JSONDecoder())  # type: ignore[arg-type]
        self._decode: Callable[[bytes], Any] | None = None
        if msgspec is not None:
            self._decode = msgspec.json.Decoder(_shape(msgspec, self.paths, [], "Record")).decode
            self._getters = _getters(self.paths)

    def batch(self, lines: list[bytes], ascii: bool = False) -> Columns:
        """One list per path, one entry per line: the string there, None, ABSENT, INVALID (or the value
        itself for an invalid one); or the line's BLANK or UNPARSEABLE at every path. ``ascii``: every
        byte of ``lines`` is."""
        fast = self._decode is not None and (ascii or all(map(bytes.isascii, lines)))
        if fast and lines and lines[-1] != b"\n" and lines[-1]:
            columns = self._whole(lines)
            if columns is not None:
                return columns
        # An empty line fails a whole batch (a file's last line is the likeliest): without them the batch
        # may still decode at once, and they are BLANK in their place.
        if not fast or (b"\n" not in lines and b"" not in lines):
            return self._one_by_one(lines)
        empty = [not line or line == b"\n" for line in lines]
        present = [line for line, skipped in zip(lines, empty, strict=True) if not skipped]
        columns = self._whole(present) or self._one_by_one(present)
        spread: Columns = []
        for column in columns:
            values = iter(column)
            spread.append([BLANK if skipped else next(values) for skipped in empty])
        return spread

    def _whole(self, lines: list[bytes]) -> Columns | None:
        """The batch decoded in C, every line by msgspec (all ASCII, so valid UTF-8: msgspec does not
        check the strings it skips), read a column at a time: the values of a path that is not there are
        ABSENT, with no tuple made per line. None when a line fails."""
        decode = self._decode
        assert decode is not None
        try:
            records: list[Any] = deeper(lambda: list(map(decode, lines)))
        except Exception:
            return None
        return [list(map(get, records)) for get in self._getters]

    def _one_by_one(self, lines: list[bytes]) -> Columns:
        """Line by line: msgspec from deeper than the careful reading (see _depth), which decides the rest
        from one depth with either decoder, so that both give the same answer at any depth."""
        attempts: list[Row | None] = [None] * len(lines)
        if self._decode is not None:
            attempts = deeper(lambda: list(map(self._attempt, lines)))
        blank, careful = (BLANK,) * len(self.paths), self._careful
        rows: list[Row] = [
            attempt if attempt is not None else blank if not line or line.isspace() else careful(line)
            for line, attempt in zip(lines, attempts, strict=True)
        ]
        return [list(column) for column in zip(*rows, strict=True)] if rows else [[] for _ in self.paths]

    def _attempt(self, line: bytes) -> Row | None:
        """msgspec's reading of a line, or None where the careful reading decides."""
        if not line.isascii() or line.isspace() or self._decode is None:
            return None
        try:
            record = self._decode(line)
            return tuple(_leaf(get(record)) for get in self._getters)
        except Exception:
            return None

    def _careful(self, line: bytes) -> tuple[object, ...]:
        document: Any
        try:
            text = line.decode()
            try:
                document, end = self._parse(text, self._scan)
            except ValueError as error:
                if "integer string conversion" not in str(error):
                    raise
                # An integer of more digits than int() converts: valid JSON all the same, and never a
                # kind, so it is read as a float rather than refused.
                document, end = self._parse(text, _LENIENT_SCAN)
            if end != len(text) and text[end:].strip(" \t\r\n"):
                return (UNPARSEABLE,) * len(self.paths)
        except (ValueError, RecursionError):
            return (UNPARSEABLE,) * len(self.paths)
        # __class__ rather than type(): the same test, without narrowing Any to an unknown dict.
        if document.__class__ is not dict:
            return (UNPARSEABLE,) * len(self.paths)
        if self._pick is not None:  # paths of one name each; an invalid value stays itself
            return self._pick(document)
        return tuple(value_at(document, path) for path in self.paths)

    @staticmethod
    def _parse(text: str, scan: Callable[[str, int], tuple[Any, int]]) -> tuple[Any, int]:
        try:
            return scan(text, 0)
        except StopIteration:
            # Leading white space, or not JSON at all: the full decoder says which, at the same depth.
            decoder = json.JSONDecoder(parse_int=float) if scan is _LENIENT_SCAN else json.JSONDecoder()
            return decoder.decode(text), len(text)


_LENIENT_SCAN: Final[Callable[[str, int], tuple[Any, int]]] = make_scanner(json.JSONDecoder(parse_int=float))  # type: ignore[arg-type]


def _picker(keys: list[str]) -> Callable[[dict[str, Any]], Row]:
    """What an object holds at each of ``keys``: for one or two keys (the common cases: a field, and its
    stage) a call per key, which costs less than a map over them."""
    if len(keys) == 1:
        (first,) = keys
        return lambda document: (document.get(first, ABSENT),)
    if len(keys) == 2:
        first, second = keys
        return lambda document: (document.get(first, ABSENT), document.get(second, ABSENT))
    return lambda document: tuple(map(document.get, keys, repeat(ABSENT)))


def value_at(document: Any, path: list[str]) -> object:
    """What a decoded object holds at ``path``: a string, None (null, or null on the way), ABSENT, or
    INVALID for any other value."""
    value = document
    for segment in path:
        if value is None:
            return None
        if value.__class__ is not dict:
            return ABSENT
        value = value.get(segment, ABSENT)
    return value if value is None or value is ABSENT or type(value) is str else INVALID


def _shape(msgspec: Any, paths: list[list[str]], prefix: list[str], name: str) -> Any:
    """A Struct type holding the next segment of every path under ``prefix``: an object (or null) where
    a path goes on, any value at its end; ABSENT where the key is missing."""
    children = dict.fromkeys(
        path[len(prefix)] for path in paths if len(path) > len(prefix) and path[: len(prefix)] == prefix
    )
    fields: list[tuple[str, Any, Any]] = []
    rename: dict[str, str] = {}
    for number, key in enumerate(children):
        below = [*prefix, key]
        ends = below in paths
        goes_on = any(len(path) > len(below) and path[: len(below)] == below for path in paths)
        if ends and goes_on:
            raise ValueError("a path ends where another goes on")  # read by the standard library
        kind = _shape(msgspec, paths, below, f"{name}_{number}") | None if goes_on else object
        fields.append((f"f{number}", kind, ABSENT))
        rename[f"f{number}"] = key
    # gc=False: decoded lines hold no cycles, and untracked structs cost the collector nothing.
    return msgspec.defstruct(name, fields, rename=rename, gc=False)


def _getters(paths: list[list[str]]) -> list[Callable[[Any], object]]:
    """For each path, what the msgspec Struct of a line holds there (attributes named as ``_shape``
    names them), as decoded: the tally sorts the values into kinds and invalid ones. A path of one name
    is read in C."""
    getters: list[Callable[[Any], object]] = []
    for path in paths:
        names: list[str] = []
        for depth in range(len(path)):
            siblings = dict.fromkeys(
                other[depth] for other in paths if len(other) > depth and other[:depth] == path[:depth]
            )
            names.append(f"f{list(siblings).index(path[depth])}")
        getters.append(attrgetter(names[0]) if len(names) == 1 else functools.partial(_walk, names))
    return getters


def _walk(names: list[str], record: Any) -> object:
    value = record
    for name in names:
        if value is None or value is ABSENT:
            return value
        value = getattr(value, name)
    return value


def _leaf(value: object) -> object:
    return value if value is None or value is ABSENT or type(value) is str else INVALID


def make_decoder(paths: Sequence[str], fast: bool) -> Decoder:
    """The msgspec decoder when ``fast`` and msgspec is installed, else the standard library's."""
    if fast and all(path.count(".") < _FAST_SEGMENTS for path in paths):
        try:
            import msgspec
        except ImportError:
            pass
        else:
            try:
                return Decoder(paths, msgspec)
            except (RecursionError, ValueError, TypeError, UnicodeError):
                # msgspec refuses some legal JSON keys as field names (a quote, a backslash, a control
                # character, text that is not UTF-8), and a path that ends where another goes on: the
                # standard library reads those instead.
                pass
    return Decoder(paths)


# A path of more segments is read by the standard library: msgspec needs a nested type per segment.
_FAST_SEGMENTS: Final = 64


def fast_available() -> bool:
    """Whether msgspec (the ``fast`` extra) is installed."""
    import importlib.util

    return importlib.util.find_spec("msgspec") is not None
