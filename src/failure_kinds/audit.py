"""Count the failure kinds in JSON Lines rollout logs: which occurred, which are not in the vocabulary,
what they probably meant, and how the counts regroup once legacy labels are aliased.

Every non-blank line is one record and lands in exactly one of: with a kind (a string at the field),
without a kind (absent or null, or the path runs through a non-object), invalid (something else at the
field), unparseable (not UTF-8, not JSON, or not a JSON object). Input is streamed; memory is bounded by
the number of distinct values kept, not by the size of the input.
"""

from __future__ import annotations

import io
import json
import os
import sys
import time
from collections import Counter
from json.scanner import make_scanner
from operator import attrgetter

import failure_kinds

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import IO, Any, BinaryIO, Final, Protocol

    class _Readable(Protocol):
        def read(self, size: int = -1, /) -> bytes: ...
        def close(self) -> None: ...


# At most this many distinct values of each unbounded category (unregistered, namespaced) get a row of
# their own; the rest are counted together in one overflow row per category.
DISTINCT_LIMIT: Final = 10_000
# Lines are read and decoded in batches of about this many bytes.
BATCH_BYTES: Final = 1 << 20

STDIN: Final = "-"
STDIN_NAME: Final = "<stdin>"
BOM: Final = b"\xef\xbb\xbf"
GZIP_MAGIC: Final = b"\x1f\x8b"

# What a line decodes to besides a string (with a kind) and None (without a kind).
INVALID: Final = object()
UNPARSEABLE: Final = object()
BLANK: Final = object()


class KindRow:
    """One distinct value found at the field, or (value None) the overflow row of a category."""

    __slots__ = ("canonical", "category", "count", "first_seen", "suggestion", "value")

    def __init__(self, value: str | None, count: int, category: str, first_seen: str) -> None:
        self.value = value
        self.count = count
        self.category = category
        self.first_seen = first_seen
        self.suggestion: str | None = None
        self.canonical: str | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "value": self.value,
            "count": self.count,
            "category": self.category,
            "suggestion": self.suggestion,
            "canonical": self.canonical,
            "first_seen": self.first_seen,
        }


class FileReport:
    __slots__ = ("error", "path", "records")

    def __init__(self, path: str) -> None:
        self.path = path
        self.records = 0
        self.error: str | None = None

    def to_json(self) -> dict[str, object]:
        return {"path": self.path, "records": self.records, "error": self.error}


class Report:
    """What an audit found. ``records == with_kind + without_kind + invalid + unparseable``."""

    def __init__(self, field: str) -> None:
        self.field = field
        self.records = 0
        self.with_kind = 0
        self.without_kind = 0
        self.invalid = 0
        self.unparseable = 0
        self.kinds: list[KindRow] = []
        self.namespaces: dict[str, int] = {}
        self.files: list[FileReport] = []
        self.notes: list[str] = []

    @property
    def failed_files(self) -> list[FileReport]:
        return [file for file in self.files if file.error is not None]

    @property
    def unregistered(self) -> list[KindRow]:
        return [row for row in self.kinds if row.category == "unregistered"]

    def canonical_totals(self) -> dict[str, int]:
        """Records per registered kind once aliased labels are counted with what they stand for."""
        totals: dict[str, int] = {}
        for row in self.kinds:
            if row.canonical is not None:
                totals[row.canonical] = totals.get(row.canonical, 0) + row.count
        return dict(sorted(totals.items(), key=lambda item: (-item[1], item[0])))

    def to_json(self) -> dict[str, object]:
        return {
            "field": self.field,
            "records": self.records,
            "with_kind": self.with_kind,
            "without_kind": self.without_kind,
            "invalid": self.invalid,
            "unparseable": self.unparseable,
            "kinds": [row.to_json() for row in self.kinds],
            "namespaces": self.namespaces,
            "canonical": self.canonical_totals(),
            "files": [file.to_json() for file in self.files],
        }


class AuditError(Exception):
    """A problem with the audit's own arguments (not with the data): a usage error."""


# Decoding: one line -> str | None | INVALID | UNPARSEABLE


class Decoder:
    """Turns lines into what they hold at the field. The standard library decides every line; see
    FastDecoder for the msgspec path, which must agree with it line for line."""

    def __init__(self, path: Sequence[str]) -> None:
        self.path = list(path)
        self.key = self.path[0] if len(self.path) == 1 else None  # the common case, without a loop
        # The C scanner behind json.loads, called directly: json.loads adds type checks and two regular
        # expression matches per call, a fifth of the work on a typical line.
        # typeshed types make_scanner's argument as the scanner class itself; any JSONDecoder is right.
        self._scan = make_scanner(json.JSONDecoder())  # type: ignore[arg-type]

    def line(self, line: bytes) -> object:
        document: Any
        try:
            text = line.decode()
            try:
                document, end = self._scan(text, 0)
            except StopIteration:
                document, end = json.loads(text), len(text)  # leading white space, or not JSON at all
            if end != len(text) and text[end:].strip(" \t\r\n"):
                return UNPARSEABLE
        except (ValueError, RecursionError):
            return UNPARSEABLE
        # __class__ rather than type(): the same test, without narrowing Any to an unknown dict.
        if document.__class__ is not dict:
            return UNPARSEABLE
        fields: dict[str, Any] = document
        if self.key is not None:
            value: Any = fields.get(self.key)
        else:
            value = fields
            for segment in self.path:
                if value.__class__ is not dict:
                    return None  # the path runs through a non-object: the field is not there
                fields = value
                value = fields.get(segment)
        if value is None or type(value) is str:
            return value
        return INVALID

    def batch(self, lines: list[bytes]) -> list[object]:
        """One entry per line: the string at the field, None, BLANK, UNPARSEABLE, or for an invalid value
        INVALID or the value itself (the fast path leaves numbers, lists and objects as decoded)."""
        decode = self.line
        return [BLANK if not line or line.isspace() else decode(line) for line in lines]


class FastDecoder(Decoder):
    """msgspec decodes only the field asked for (it validates the rest of the line but builds nothing).
    Where msgspec refuses a line, or a line is not UTF-8, the standard library decides."""

    def __init__(self, path: Sequence[str], msgspec: Any) -> None:
        super().__init__(path)
        shape: Any = object
        for depth, segment in enumerate(reversed(self.path)):
            shape = msgspec.defstruct(f"Level{depth}", [("f", shape | None, None)], rename={"f": segment})
        self._decode: Callable[[bytes], Any] = msgspec.json.Decoder(shape).decode
        self._leaf: Callable[[Any], object] = attrgetter(".".join(["f"] * len(self.path)))

    def batch(self, lines: list[bytes]) -> list[object]:
        # The whole batch in C when every line is ASCII (so valid UTF-8) and decodes: a blank line, a
        # refused line or a null on the way to a nested field sends the batch down the careful path.
        if all(map(bytes.isascii, lines)):
            try:
                values: list[object] = list(map(self._leaf, map(self._decode, lines)))
                return values
            except Exception:
                pass
        return super().batch(lines)

    def line(self, line: bytes) -> object:
        if line.isascii():
            try:
                value: Any = self._decode(line)
                for _ in self.path:
                    value = value.f
                    if value is None:
                        return None
            except Exception:
                return super().line(line)
            return value if value is None or type(value) is str else INVALID
        return super().line(line)


def _hashable(value: object) -> object:
    """A list or object found at the field stands in the tally as INVALID, which is what it counts as."""
    return value if value is None or type(value) in (str, object) else INVALID


def make_decoder(path: Sequence[str], fast: bool) -> Decoder:
    if fast:
        try:
            import msgspec
        except ImportError:
            pass
        else:
            return FastDecoder(path, msgspec)
    return Decoder(path)


def fast_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("msgspec") is not None


# Reading


class Source:
    __slots__ = ("display", "path")

    def __init__(self, display: str, path: str | None) -> None:
        self.display = display
        self.path = path  # None for stdin


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


class _UntilError(io.RawIOBase):
    """Reads ``stream`` until it fails, then reports end of data and keeps the error.

    A truncated gzip file raises only when its end is reached; this way every complete line before the
    break is still counted, and the error is reported afterwards.
    """

    def __init__(self, stream: _Readable) -> None:
        self.stream = stream
        # read1 hands over what one underlying read produced, so a failure costs only that read.
        self.read_some = getattr(stream, "read1", stream.read)
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


def _open(source: Source) -> tuple[_UntilError, io.BufferedReader]:
    raw: BinaryIO
    if source.path is None:
        raw = sys.stdin.buffer
        peek = getattr(raw, "peek", None)  # a buffered stdin can be looked at without consuming it
        head: bytes = peek(2)[:2] if peek is not None else b""
    else:
        raw = open(source.path, "rb")  # noqa: SIM115  # closed through the returned reader
        head = raw.read(2)
        raw.seek(0)
    stream: _Readable = raw
    if head == GZIP_MAGIC or source.display.endswith(".gz"):
        import gzip

        stream = gzip.GzipFile(fileobj=raw, mode="rb")
    guarded = _UntilError(stream)
    return guarded, io.BufferedReader(guarded, BATCH_BYTES)


def describe_read_error(error: BaseException) -> str:
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


class Progress:
    """A line on stderr that says how far reading has got; only when stderr is a terminal."""

    INTERVAL: Final = 0.25

    def __init__(self, stream: IO[str] | None) -> None:
        self.stream = stream if stream is not None and stream.isatty() else None
        self.shown = False
        self.last = time.monotonic()

    def update(self, display: str, records: int) -> None:
        if self.stream is None:
            return
        now = time.monotonic()
        if now - self.last >= self.INTERVAL:
            self.last = now
            self.stream.write(f"\r\033[Kreading {display}: {records:,} records")
            self.stream.flush()
            self.shown = True

    def clear(self) -> None:
        if self.stream is not None and self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self.shown = False


# Counting


class Auditor:
    """Accumulates counts over any number of inputs; ``report()`` turns them into a Report."""

    def __init__(
        self,
        field_path: str = "failure_kind",
        aliases: dict[str, str] | None = None,
        fast: bool = True,
        progress: IO[str] | None = None,
    ) -> None:
        segments = field_path.split(".")
        if not all(segments):
            raise AuditError(f"--field {field_path!r} has an empty segment")
        self.aliases = dict(aliases or {})
        self.decoder = make_decoder(segments, fast)
        self.progress = Progress(progress)
        self.totals = Report(field_path)
        self.counts: dict[str, int] = {}
        self.first_seen: dict[str, str] = {}
        self.kept = {"unregistered": 0, "namespaced": 0}
        self.overflow: dict[str, KindRow] = {}

    def add_source(self, source: Source) -> FileReport:
        file = FileReport(source.display)
        self.totals.files.append(file)
        try:
            guarded, reader = _open(source)
        except OSError as error:
            file.error = describe_read_error(error)
            return file
        try:
            with reader:
                self._count(source.display, reader, file)
        except OSError as error:
            file.error = describe_read_error(error)
        finally:
            self.progress.clear()
        if guarded.error is not None and file.error is None:
            file.error = describe_read_error(guarded.error)
        return file

    def _count(self, display: str, reader: io.BufferedReader, file: FileReport) -> None:
        totals = self.totals
        next_line = 1
        while True:
            lines = reader.readlines(BATCH_BYTES)
            if not lines:
                break
            if next_line == 1 and lines[0].startswith(BOM):
                lines[0] = lines[0][len(BOM) :]
            values = self.decoder.batch(lines)
            blank = self._tally(values, display, next_line)
            records = len(values) - blank
            file.records += records
            totals.records += records
            next_line += len(lines)
            self.progress.update(display, file.records)

    def _tally(self, values: list[object], display: str, first_line: int) -> int:
        """Add one batch to the counts; return how many of its lines were blank."""
        totals = self.totals
        counts = self.counts
        try:
            tally = Counter(values)
        except TypeError:
            tally = Counter(map(_hashable, values))
        blank = 0
        new: list[str] = []
        for value, count in tally.items():
            if type(value) is str:
                known = counts.get(value)
                if known is None:
                    new.append(value)
                else:
                    counts[value] = known + count
                totals.with_kind += count
            elif value is None:
                totals.without_kind += count
            elif value is BLANK:
                blank += count
            elif value is UNPARSEABLE:
                totals.unparseable += count
            else:
                totals.invalid += count
        if new:
            first_index = _first_indexes(values, new)
            for value in new:
                self._first_sight(value, tally[value], f"{display}:{first_line + first_index[value]}")
        return blank

    def _first_sight(self, value: str, count: int, place: str) -> None:
        category = self._category(value)
        if category in self.kept:
            if self.kept[category] >= DISTINCT_LIMIT:
                overflow = self.overflow.get(category)
                if overflow is None:
                    self.overflow[category] = KindRow(None, count, category, place)
                else:
                    overflow.count += count
                if category == "namespaced":
                    self._add_namespace(value, count)
                return
            self.kept[category] += 1
        self.counts[value] = count
        self.first_seen[value] = place

    def _category(self, value: str) -> str:
        return "aliased" if value in self.aliases else category_of(value)

    def _add_namespace(self, value: str, count: int) -> None:
        server = value.partition(":")[0]
        namespaces = self.totals.namespaces
        if server in namespaces or len(namespaces) < DISTINCT_LIMIT:
            namespaces[server] = namespaces.get(server, 0) + count

    def report(self) -> Report:
        totals = self.totals
        rows: list[KindRow] = []
        for value, count in self.counts.items():
            category = self._category(value)
            row = KindRow(value, count, category, self.first_seen[value])
            if category == "registered":
                row.canonical = value
            elif category == "aliased":
                row.canonical = self.aliases[value]
            elif category == "namespaced":
                self._add_namespace(value, count)
            else:
                row.suggestion = failure_kinds.suggest(value)
            rows.append(row)
        rows.sort(key=lambda row: (-row.count, row.value or ""))
        rows.extend(self.overflow.values())
        totals.kinds = rows
        totals.namespaces = dict(sorted(totals.namespaces.items(), key=lambda item: (-item[1], item[0])))
        return totals


def _first_indexes(values: list[object], wanted: list[str]) -> dict[str, int]:
    if len(wanted) <= 8:
        return {value: values.index(value) for value in wanted}
    # Many new values in one batch: one pass instead of a search each.
    remaining = set(wanted)
    found: dict[str, int] = {}
    for index, value in enumerate(values):
        if type(value) is str and value in remaining:
            found[value] = index
            remaining.discard(value)
            if not remaining:
                break
    return found


def audit(
    inputs: Sequence[str],
    field_path: str = "failure_kind",
    aliases: dict[str, str] | None = None,
    fast: bool = True,
    progress: IO[str] | None = None,
) -> Report:
    """Audit ``inputs`` (paths, directories, or "-" for stdin) and return the report."""
    check_aliases(aliases or {})
    auditor = Auditor(field_path, aliases, fast=fast, progress=progress)
    notes: list[str] = []
    for source in expand_inputs(inputs, notes):
        auditor.add_source(source)
    report = auditor.report()
    report.notes = notes
    return report


def category_of(name: str) -> str:
    """registered, namespaced or unregistered: what the vocabulary says of ``name`` (no aliases)."""
    if failure_kinds.is_registered(name):
        return "registered"
    if failure_kinds.is_namespaced(name):
        return "namespaced"
    return "unregistered"


# Aliases


def check_aliases(aliases: dict[str, str]) -> None:
    for old, new in aliases.items():
        if not failure_kinds.is_registered(new):
            hint = failure_kinds.suggest(new)
            raise AuditError(
                f"alias {old!r} = {new!r}: {new!r} is not a registered kind"
                + (f"; did you mean {hint!r}?" if hint else "")
            )
        if failure_kinds.is_registered(old):
            raise AuditError(f"alias {old!r} = {new!r}: {old!r} is already a registered kind")


def parse_alias_option(text: str) -> tuple[str, str]:
    old, separator, new = text.partition("=")
    if not separator or not old or not new:
        raise AuditError(f"--alias {text!r}: expected OLD=NEW")
    return old, new


def load_alias_file(path: str) -> dict[str, str]:
    import tomllib

    try:
        with open(path, "rb") as file:
            document = tomllib.load(file)
    except OSError as error:
        raise AuditError(f"--aliases {path}: {describe_read_error(error)}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise AuditError(f"--aliases {path}: not valid TOML ({error})") from None
    table = document.get("aliases")
    if not isinstance(table, dict):
        raise AuditError(f'--aliases {path}: no [aliases] table (old = "new" lines under [aliases])')
    from typing import cast

    aliases: dict[str, str] = {}
    for old, new in cast("dict[str, object]", table).items():
        if not isinstance(new, str):
            raise AuditError(f"--aliases {path}: the alias for {old!r} must be a string, not {new!r}")
        aliases[old] = new
    return aliases


# Rendering


def printable(value: str) -> str:
    """``value`` as is when it is plain text, else its repr, so control characters never reach a
    terminal raw and unencodable characters never break the output."""
    if value and value.isprintable() and value.strip() == value:
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            pass
    return repr(value)


def _bar(count: int, largest: int, character: str) -> str:
    """At most 24 characters, never none for a count above zero."""
    return character * max(1, round(24 * count / largest)) if largest else ""


def _percent(count: int, total: int) -> str:
    return f"{100 * count / total:5.1f}%" if total else "    -"


def render_text(report: Report, bar_character: str = "#") -> str:
    lines: list[str] = []
    file_word = "file" if len(report.files) == 1 else "files"
    lines.append(f"failure kinds at {report.field!r} in {len(report.files)} {file_word}")
    lines.append("")
    number_width = max(len(f"{report.records:,}"), 5)
    for label, count, note in (
        ("records", report.records, ""),
        ("with a kind", report.with_kind, ""),
        ("without a kind", report.without_kind, "field absent or null"),
        ("invalid", report.invalid, "field holds a number, bool, object or list"),
        ("unparseable", report.unparseable, "not UTF-8, not JSON, or not a JSON object"),
    ):
        percent = _percent(count, report.records) if label != "records" else "      "
        lines.append(f"  {label:<15}{count:>{number_width},}  {percent}  {note}".rstrip())
    if report.kinds:
        lines.append("")
        lines.append(f"shares below are of the {report.with_kind:,} records with a kind")

    rows = report.kinds
    with_kind = report.with_kind
    biggest = max((row.count for row in rows), default=0)
    shown_values = {id(row): _row_label(row) for row in rows}
    width = max((len(label) for label in shown_values.values()), default=0)

    def row_line(row: KindRow, extra: str = "") -> str:
        bar = _bar(row.count, biggest, bar_character)
        line = f"  {shown_values[id(row)]:<{width}}  {row.count:>{number_width},}  "
        return (line + f"{_percent(row.count, with_kind)}  {bar:<24}  {extra}").rstrip()

    for category, title in (
        ("registered", "registered"),
        ("namespaced", "namespaced"),
        ("aliased", "aliased"),
        ("unregistered", "unregistered"),
    ):
        section = [row for row in rows if row.category == category]
        if not section:
            continue
        total = sum(row.count for row in section)
        distinct = sum(1 for row in section if row.value is not None)
        lines.append("")
        lines.append(f"{title}: {distinct:,} distinct, {total:,} records")
        for row in section:
            if category == "aliased":
                extra = f"-> {row.canonical}"
            elif category == "unregistered":
                hint = f"did you mean {row.suggestion!r}?  " if row.suggestion else ""
                extra = f"{hint}first seen {row.first_seen}"
            else:
                extra = ""
            lines.append(row_line(row, extra))
        if category == "namespaced" and report.namespaces:
            servers = ", ".join(
                f"{printable(server)} {count:,}" for server, count in report.namespaces.items()
            )
            lines.append(f"  by server: {servers}")

    if any(row.category == "aliased" for row in rows):
        lines.append("")
        lines.append("regrouped by canonical kind (registered and aliased together):")
        totals = report.canonical_totals()
        top = max(totals.values())
        for kind, count in totals.items():
            bar = _bar(count, top, bar_character)
            lines.append(f"  {kind:<{width}}  {count:>{number_width},}  {_percent(count, with_kind)}  {bar}")

    if len(report.files) > 1 or report.failed_files:
        lines.append("")
        lines.append("files:")
        path_width = max(len(printable(file.path)) for file in report.files)
        for file in report.files:
            status = f"{file.records:,} records" + (f", error: {file.error}" if file.error else "")
            lines.append(f"  {printable(file.path):<{path_width}}  {status}")
    return "\n".join(lines) + "\n"


def _row_label(row: KindRow) -> str:
    if row.value is None:
        return f"(other {row.category} values)"
    return printable(row.value)


def render_json(report: Report) -> str:
    return json.dumps(report.to_json(), indent=2) + "\n"
