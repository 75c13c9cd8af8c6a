"""Find misspelled failure kinds in Python source, where type checkers cannot see them.

A string literal is checked where it is used as a failure kind (the walk is in :mod:`_shapes`): a
keyword argument, dict value or default named after the field; an assignment to the field (``x["f"]``,
``x.f``, or a plain ``f = ...``); a fallback for it (``row.get("f", ...)``, ``row.get("f") or ...``); a
comparison with it (``==``, ``!=``, ``in``, ``not in`` against a display, a walrus on it included) or a
``case`` of a ``match`` on it; a ``case {"f": ...}`` or ``case Cls(f=...)`` pattern; a ``return`` of a
function annotated to return a kind; and the argument of validate_failure_kind, metric_label,
is_registered and is_namespaced. Both branches of a conditional expression count, and so does a module
constant in capitals assigned a literal. Names and attributes annotated in the same file as a kind
(``FailureKindName``, ``AnyFailureKind``, ``FailureKind``, or a generated alias such as
``ProjectFailureKind``) count as the field. Any other expression (names, f-strings, calls) is never
reported. A constant name read from ``failure_kinds`` or its ``FailureKind`` that it lacks is reported
too when it misspells a kind's constant or names an older label (``fk.AGENT_TIMOUT``, ``fk.PEER_DROP``).

The codes it reports, and what each means, are in CODES.

Only regular files are read, each up to SIZE_LIMIT bytes, and each once: a file that several paths name
(a symbolic or hard link beside its target, one path twice) is read at the first of them.
"""

from __future__ import annotations

import ast
import os
import re
import stat
import warnings
from typing import NamedTuple

import failure_kinds
from failure_kinds._columns import Columns
from failure_kinds._display import escaped, plain, shown
from failure_kinds._runtime import category
from failure_kinds._shapes import MissingName, kind_uses

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Collection, Iterator, Mapping, Sequence
    from typing import Final

DEFAULT_FIELDS: Final = ("failure_kind",)
SOURCE_SUFFIXES: Final = (".py", ".pyi")
# Directories nobody means when they lint "everything below here".
SKIPPED_DIRECTORIES: Final = frozenset({"__pycache__", "node_modules", "site-packages"})
# A source file larger than this is reported as FK000 instead of parsed: no hand-written module comes
# close, and parsing costs memory in proportion.
SIZE_LIMIT: Final = 8 * 1024 * 1024
# The note when nothing was linted, the audit's: the command then exits 1, as a gate should.
NO_INPUT: Final = "no input file was found"
# A path that has to be quoted and escaped is cut to this many characters.
PATH_LIMIT: Final = 1000
# A literal in a message is cut to this many characters.
_SHOWN_LIMIT: Final = 200


class Code(NamedTuple):
    """What a finding's code means: in a phrase, then what to do about it, and how serious it is (SARIF's
    level: an error, or a warning for a name that still works but is on its way out)."""

    summary: str
    advice: str
    level: str


# Every code the lint reports. The command's SARIF output lists them as its rules from here.
CODES: Final = {
    "FK000": Code(
        "the file could not be linted",
        "It does not parse, is nested too deeply for the Python parser, is larger than 8 MiB or declares an "
        "unknown encoding; the other files are still linted. Correct what the message names, or leave the "
        "file out of the paths linted.",
        "error",
    ),
    "FK001": Code(
        "unregistered failure kind, or a misspelled constant of one",
        "A string used as a failure kind is neither a registered kind nor a namespaced <server>:<kind>, or "
        "a constant read from failure_kinds does not exist. Write the kind the message suggests, or "
        "namespace a kind of your own.",
        "error",
    ),
    "FK002": Code(
        'looks namespaced (contains ":") but is not <server>:<kind>',
        "A namespaced kind is <server>:<kind>, each part [a-z][a-z0-9_]*. Write it in that shape.",
        "error",
    ),
    "FK003": Code(
        "a kind of a declared namespace that the declaration does not list",
        "The server declares its kinds in [tool.failure-kinds.namespaces]. Write one of them (the message "
        "suggests the closest), or add the kind to the declaration.",
        "error",
    ),
    "FK004": Code(
        "an older label: the message names its replacement, or says it has none",
        "The label is one of the older registry's. Write the replacement the message names (failure-kinds "
        "lint --fix rewrites the literals it can), or choose the kind that fits when there is none.",
        "warning",
    ),
    "FK005": Code(
        "a deprecated kind: the message names its replacement",
        "The kind still validates but is on its way out. Write the replacement the message names.",
        "warning",
    ),
}

# What FK004 adds for a label that code reads a kind against, which --fix leaves without --unsafe-fixes.
UNSAFE: Final = (
    "not fixed by default: code that reads older data compares with it; --unsafe-fixes rewrites it"
)
# Codes split out of another, which a noqa for the older code still silences (FK001 before 0.3.0).
_REDIRECTS: Final = {"FK004": b"FK001", "FK005": b"FK001"}
_NOQA = re.compile(rb"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)


class Fix(NamedTuple):
    """Rewriting one literal: where the parser put it (UTF-8 byte offsets in its lines), what it holds
    and what it becomes."""

    line: int
    offset: int
    end_line: int
    end_offset: int
    old: str
    new: str


class Finding:
    __slots__ = ("code", "col", "end", "fix", "line", "message", "path")

    path: str
    line: int
    col: int
    code: str
    message: str
    fix: Fix | None
    # Where the literal found ends: its last line, and the 1-based column just after it; None where the
    # finding is not a literal (a constant's name, a file that could not be linted).
    end: tuple[int, int] | None

    def __init__(
        self,
        path: str,
        line: int,
        col: int,
        code: str,
        message: str,
        fix: Fix | None = None,
        end: tuple[int, int] | None = None,
    ) -> None:
        self.path = path
        self.line = line
        self.col = col
        self.code = code
        self.message = message
        self.fix = fix
        self.end = end

    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.path, self.line, self.col, self.code)

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "line": self.line,
            "col": self.col,
            "code": self.code,
            "message": self.message,
        }

    def __str__(self) -> str:
        # A parser's message can quote the file's own characters (an "invalid character" is printed as
        # itself), so the message is escaped like the path.
        return f"{plain(self.path, PATH_LIMIT)}:{self.line}:{self.col}: {self.code} {escaped(self.message)}"


class _Unreadable(Exception):
    """A file or directory that could not be read; the message says why."""


def source_files(
    paths: Sequence[str], problems: list[str] | None = None, pruned: list[str] | None = None
) -> Iterator[str]:
    """Files as given; directories as their .py and .pyi files, recursively, sorted, not entering a
    hidden directory, one in SKIPPED_DIRECTORIES or a symbolic link (each added to ``pruned``).
    Directories that cannot be listed are added to ``problems`` (``path: reason``)."""

    def note(error: OSError) -> None:
        if problems is not None:
            name = error.filename if isinstance(error.filename, str) else str(error.filename)
            problems.append(f"{plain(name, PATH_LIMIT)}: {_reason(error)}")

    for path in paths:
        if os.path.isdir(path):
            for folder, directories, names in os.walk(path, onerror=note):
                # os.walk does not enter a link to a directory either; it is said along with the others.
                left = {name for name in directories if _skipped(os.path.join(folder, name))}
                if pruned is not None:
                    pruned += (os.path.join(folder, name) for name in sorted(left))
                directories[:] = sorted(set(directories) - left)
                for name in sorted(names):
                    if name.endswith(SOURCE_SUFFIXES):
                        yield os.path.join(folder, name)
        else:
            yield path


def _skipped(directory: str) -> bool:
    name = os.path.basename(directory)
    return name.startswith(".") or name in SKIPPED_DIRECTORIES or os.path.islink(directory)


def read_source(path: str, *, walked: bool = False) -> bytes | None:
    """The bytes of the regular file ``path``, at most SIZE_LIMIT + 1 of them. Raises _Unreadable when it
    cannot be read or is not a regular file; returns None for an entry of a directory walk that is not a
    regular file (a FIFO, a device or a dangling symbolic link there is not source anybody asked for)."""
    read = _read(path, walked=walked, seen=None)
    return read if isinstance(read, bytes) else None


# What _read returns for an entry it does not read.
_SKIPPED: Final = "skipped"
_REPEATED: Final = "repeated"


def _read(path: str, *, walked: bool, seen: set[tuple[int, int]] | None) -> bytes | str:
    """The bytes of ``path`` as read_source reads them; _SKIPPED for what read_source returns None for;
    _REPEATED, unread, for a file (device and inode) already in ``seen``, which gets each file read."""
    try:
        descriptor = _open_descriptor(path)
    except OSError as error:
        if walked and os.path.islink(path):
            return _SKIPPED
        raise _Unreadable(_reason(error)) from None
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            if walked:
                return _SKIPPED
            raise _Unreadable("not a regular file")
        if seen is not None:
            # The file opened, not the name: a link replaced meanwhile is judged by what is read.
            key = (status.st_dev, status.st_ino)
            if key in seen:
                return _REPEATED
            seen.add(key)
        with os.fdopen(descriptor, "rb", closefd=False) as file:
            return file.read(SIZE_LIMIT + 1)
    except OSError as error:
        raise _Unreadable(_reason(error)) from None
    finally:
        os.close(descriptor)


def _reason(error: OSError) -> str:
    # In the words every command uses for a file it cannot read ("no such file"), the audit's.
    from failure_kinds.audit.errors import describe_read_error

    return describe_read_error(error)


def _open_descriptor(path: str) -> int:
    # Without blocking: opening a FIFO would otherwise wait for a writer that never comes.
    return os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))


def lint_paths(
    paths: Sequence[str],
    fields: Sequence[str] = DEFAULT_FIELDS,
    namespaces: Mapping[str, Collection[str]] | None = None,
    notes: list[str] | None = None,
    *,
    unsafe_fixes: bool = False,
) -> tuple[list[Finding], list[str]]:
    """Findings for every file under ``paths``, and what could not be read (``path: reason``), in the
    order met. ``namespaces`` maps each declared server to its kinds (FK003); None declares nothing.

    Each file is read once, at the first path naming it. What is left out is not an error but is said,
    once each, in ``notes``: how many entries of the directories walked were not regular files, and how
    many paths named a file already read. ``unsafe_fixes`` is the Checker's."""
    checker = Checker(fields, namespaces, unsafe_fixes=unsafe_fixes)
    findings: list[Finding] = []
    unreadable: list[str] = []
    seen: set[tuple[int, int]] = set()
    said: list[str] = []
    pruned: list[str] = []
    skipped = repeated = read = 0
    for path in paths:
        walked = os.path.isdir(path)
        found = 0
        for file_path in source_files([path], unreadable, pruned):
            found += 1
            try:
                source = _read(file_path, walked=walked, seen=seen)
            except _Unreadable as error:
                unreadable.append(f"{plain(file_path, PATH_LIMIT)}: {error}")
                continue
            if isinstance(source, bytes):
                read += 1
                findings.extend(checker.check_source(source, file_path))
            elif source == _SKIPPED:
                skipped += 1
            else:
                repeated += 1
        if walked and not found:
            # In the audit's words, so a step pointed at the wrong directory says so.
            said.append(f"{plain(path, PATH_LIMIT)}: no *.py or *.pyi files in this directory")
    if notes is not None:
        notes += said
        if pruned:
            names = ", ".join(plain(name, PATH_LIMIT) for name in pruned[:3])
            more = f" and {len(pruned) - 3:,} more" if len(pruned) > 3 else ""
            directories = "1 directory" if len(pruned) == 1 else f"{len(pruned):,} directories"
            notes.append(
                f"{directories} not entered (hidden, __pycache__, node_modules, site-packages or a link): "
                f"{names}{more}"
            )
        if skipped:
            entries = (
                "1 entry found in a directory is not a regular file"
                if skipped == 1
                else f"{skipped:,} entries found in directories are not regular files"
            )
            kinds = "a FIFO, a device or a dangling symbolic link"
            notes.append(f"{entries} ({kinds}) and {'was' if skipped == 1 else 'were'} skipped")
        if repeated:
            # In the audit's words for the same thing.
            inputs = "1 input names" if repeated == 1 else f"{repeated:,} inputs name"
            notes.append(f"{inputs} a file already read; each file is read once")
        if not read and not unreadable:
            notes.append(NO_INPUT)
    return findings, unreadable


class Checker:
    fields: frozenset[str]
    namespaces: dict[str, frozenset[str]] | None
    # The names the package and its enum have, which a constant read from them is checked against.
    names: tuple[frozenset[str], frozenset[str]]

    def __init__(
        self,
        fields: Sequence[str] = DEFAULT_FIELDS,
        namespaces: Mapping[str, Collection[str]] | None = None,
        *,
        unsafe_fixes: bool = False,
    ) -> None:
        """``unsafe_fixes`` gives a fix to older labels that code reads a kind against too."""
        self.fields = frozenset(fields)
        self.unsafe_fixes = unsafe_fixes
        self.namespaces = (
            {server: frozenset(kinds) for server, kinds in namespaces.items()} if namespaces else None
        )
        self.names = (
            frozenset(dir(failure_kinds)),
            frozenset(dir(failure_kinds.FailureKind)) | frozenset(failure_kinds.FailureKind.__members__),
        )

    def check_source(self, source: bytes, path: str) -> list[Finding]:
        # What the compiler warns about in the linted file (an invalid escape sequence is a SyntaxWarning
        # on Python 3.12 and later) is the file's business, not a finding, and not ours to print.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return self._check_source(source, path)

    def _check_source(self, source: bytes, path: str) -> list[Finding]:
        if len(source) > SIZE_LIMIT:
            return [_unlintable(path, 1, 1, f"larger than {SIZE_LIMIT // (1024 * 1024)} MiB; not read")]
        try:
            tree = ast.parse(source, filename=path)
        except (SyntaxError, ValueError) as error:
            # ValueError: null bytes in the source, on Python 3.11; wide text is where they come from.
            wide = _wide_text(source)
            if wide is not None or not isinstance(error, SyntaxError):
                return [_unlintable(path, 1, 1, f"cannot parse: {wide or error}")]
            return [_unlintable(path, error.lineno or 1, error.offset or 1, f"cannot parse: {error.msg}")]
        except (RecursionError, MemoryError):
            # The parser's own limits (nesting, "parser stack overflowed"), not memory running out: the
            # file is capped at SIZE_LIMIT.
            return [_unlintable(path, 1, 1, "cannot parse: nested too deeply for the Python parser")]
        uses, reads = kind_uses(tree, source, self.fields, self.names)
        if not uses:
            return []
        findings: list[Finding] = []
        columns = Columns(source)
        # A module constant used as a kind twice is one literal, reported once.
        seen: set[int] = set()
        for use in uses:
            if id(use) in seen:
                continue
            seen.add(id(use))
            finding = self.judge(use, path, columns, read=isinstance(use, ast.Constant) and use in reads)
            if finding is not None:
                findings.append(finding)
        findings.sort(key=Finding.sort_key)
        return findings

    def verdict(self, value: str) -> tuple[str, str, str | None] | None:
        """The code and message for the kind ``value`` and, for an older label with one replacement,
        that replacement; None when the value is fine."""
        found = category(value, self.namespaces)
        text = shown(value, _SHOWN_LIMIT)
        if found == "registered":
            replacement = failure_kinds.FailureKind(value).replaced_by
            if replacement is None:
                return None
            return "FK005", f"deprecated failure kind {text}: use {replacement.value!r}", None
        if found == "namespaced":
            return None
        if found == "legacy":
            return "FK004", legacy_message(value, text), _replacement(value)
        if found == "undeclared":
            from failure_kinds._suggest import suggest_any

            server = value.partition(":")[0]
            message = f"undeclared failure kind {text}: {server} declares no such kind"
            hint = suggest_any(value, self.namespaces)
            if hint is not None:
                message += f"; did you mean {hint!r}?"
            return "FK003", message, None
        if ":" in value:
            return (
                "FK002",
                (f"malformed namespaced failure kind {text}: expected <server>:<kind>, each [a-z][a-z0-9_]*"),
                None,
            )
        hint = failure_kinds.suggest(value)
        message = f"unregistered failure kind {text}"
        if hint is not None:
            message += f"; did you mean {hint!r}?"
        return "FK001", message, None

    def judge(
        self, use: ast.Constant | MissingName, path: str, columns: Columns, *, read: bool = False
    ) -> Finding | None:
        verdict: tuple[str, str, str | None] | None
        if isinstance(use, MissingName):
            verdict = self.missing_verdict(use)
        elif isinstance(use.value, str):
            verdict = self.verdict(use.value)
        else:
            verdict = None
        if verdict is None:
            return None
        code, message, replacement = verdict
        line_number = use.lineno
        if _suppressed(columns.raw_line(line_number), code):
            return None
        fix = None
        if replacement is not None and read and not self.unsafe_fixes:
            message += f"; {UNSAFE}"
        elif replacement is not None and isinstance(use, ast.Constant):
            end_line, end_offset = use.end_lineno or line_number, use.end_col_offset or 0
            fix = Fix(line_number, use.col_offset, end_line, end_offset, str(use.value), replacement)
        column = columns.column(line_number, use.col_offset)
        end = None
        if isinstance(use, ast.Constant) and use.end_lineno is not None and use.end_col_offset is not None:
            end = (use.end_lineno, columns.column(use.end_lineno, use.end_col_offset))
        return Finding(path, line_number, column, code, message, fix, end)

    def missing_verdict(self, use: MissingName) -> tuple[str, str, None] | None:
        """A constant the package or its enum lacks that names an older label (FK004) or misspells a
        kind's constant (FK001). Other missing names are not kinds; the import fails on its own."""
        value = use.name.lower()
        if category(value) == "legacy":
            replacement = _replacement(value)
            advice = "it has no single replacement" if replacement is None else f"use {replacement.upper()}"
            return "FK004", f"{use.owner}.{use.name} names the older failure kind {value!r}; {advice}", None
        hint = failure_kinds.suggest(value)
        if hint is None:
            return None
        return "FK001", f"{use.owner} has no {use.name}; did you mean {hint.upper()}?", None


def _replacement(value: str) -> str | None:
    from failure_kinds.history import older_label

    label = older_label(value)
    return label.replacement if label is not None else None


def legacy_message(value: str, shown_value: str) -> str:
    """What FK004 says of the older label ``value``: its replacement, or that it has none."""
    replacement = _replacement(value)
    if replacement is None:
        return f"older failure kind {shown_value} has no single replacement; choose the kind that fits"
    return f"older failure kind {shown_value}: use {replacement!r}"


# Byte-order marks of wide text, longest first; without one, where the NUL bytes are among the first four
# (ASCII) bytes tells the encoding apart, as the audit tells its inputs'.
_MARKS: Final = (
    (b"\xff\xfe\x00\x00", "UTF-32", "little"),
    (b"\x00\x00\xfe\xff", "UTF-32", "big"),
    (b"\xff\xfe", "UTF-16", "little"),
    (b"\xfe\xff", "UTF-16", "big"),
)
_NULS: Final = {
    "0101": ("UTF-16", "little"),
    "1010": ("UTF-16", "big"),
    "0111": ("UTF-32", "little"),
    "1110": ("UTF-32", "big"),
}


def _wide_text(source: bytes) -> str | None:
    """What a file in UTF-16 or UTF-32 is, and how to convert it, in the audit's words; else None."""
    found = next(((name, order, name) for mark, name, order in _MARKS if source.startswith(mark)), None)
    head = source[:4]
    if found is None and len(head) == 4 and max(head) < 0x80:
        name, order = _NULS.get("".join("1" if byte == 0 else "0" for byte in head), ("", ""))
        found = (name, order, f"{name}{order[0].upper()}E") if name else None
    if found is None:
        return None
    name, order, encoding = found
    return (
        f"{name} ({order}-endian) text; Python source is read as UTF-8 unless it declares another "
        f"encoding: convert it with iconv -f {encoding} -t UTF-8"
    )


def _unlintable(path: str, line: int, col: int, reason: str) -> Finding:
    return Finding(path, max(line, 1), max(col, 1), "FK000", reason)


def _suppressed(line: bytes, code: str) -> bool:
    match = _NOQA.search(line)
    if match is None:
        return False
    codes = match.group("codes")
    if codes is None:
        return True
    listed = re.split(rb"[,\s]+", codes.upper())
    return code.encode() in listed or _REDIRECTS.get(code) in listed
