"""Misspelled failure kinds in Python source (docs/lint.md): :class:`Checker` judges a file's bytes,
:func:`lint_paths` reads the paths named; :mod:`failure_kinds._shapes` says where a kind stands."""

from __future__ import annotations

import ast
import io
import os
import re
import sys
import tokenize
import warnings
from typing import NamedTuple

import failure_kinds
from failure_kinds import FailureKindsError
from failure_kinds._display import escaped, plain, shown
from failure_kinds._runtime import category
from failure_kinds._shapes import MissingName, kind_uses

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Collection, Iterator, Mapping, Sequence
    from typing import Final, TypeAlias

    from failure_kinds.history import OlderLabel

    _Declared: TypeAlias = "Mapping[str, Collection[str]] | None"

DEFAULT_FIELDS: Final = ("failure_kind",)
SOURCE_SUFFIXES: Final = (".py", ".pyi")
# Directories nobody means when they lint "everything below here".
SKIPPED_DIRECTORIES: Final = frozenset({"__pycache__", "node_modules", "site-packages"})
# Larger files are FK000 unread: no hand-written module comes close, and parsing costs memory in proportion.
SIZE_LIMIT: Final = 8 * 1024 * 1024
# What is said when nothing was linted, the audit's words: the command then exits 2, as for a usage error.
NO_INPUT: Final = "no input file was found"
PATH_LIMIT: Final = 1000
UNSAFE: Final = (
    "not fixed by default: code that reads older data compares with it; --unsafe-fixes rewrites it"
)


class Code(NamedTuple):
    """A code's meaning in a phrase, what to do about it, and its SARIF level."""

    summary: str
    advice: str
    level: str


# The one table of codes: each finding's level and SARIF's rules read it.
# fmt: off
CODES: Final = {
    "FK000": Code("the file could not be linted",
        "It does not parse, is nested too deeply for the Python parser, is larger than 8 MiB or declares "
        "an unknown encoding; the other files are still linted. Correct what the message names, or leave "
        "the file out of the paths linted.", "error"),
    "FK001": Code("unregistered failure kind, or a misspelled constant of one",
        "A string used as a failure kind is neither a registered kind nor a namespaced <server>:<kind>, "
        "or a constant read from failure_kinds does not exist. Write the kind the message suggests, or "
        "namespace a kind of your own.", "error"),
    "FK002": Code('looks namespaced (contains ":") but is not <server>:<kind>',
        "A namespaced kind is <server>:<kind>, each part [a-z][a-z0-9_]*. Write it in that shape.", "error"),
    "FK003": Code("a kind of a declared namespace that the declaration does not list",
        "The server declares its kinds in [tool.failure-kinds.namespaces]. Write one of them (the message "
        "suggests the closest), or add the kind to the declaration.", "error"),
    "FK004": Code("an older label: the message names its replacement, or says it has none",
        "The label is one of the older registry's. Write the replacement the message names (failure-kinds "
        "lint --fix rewrites the literals it can), or choose the kind that fits when there is none.",
        "warning"),
    "FK005": Code("a deprecated kind: the message names its replacement", "The kind still validates but is "
        "on its way out. Write the replacement the message names.", "warning"),
}
# fmt: on

# Codes split out of FK001 in 0.3.0, which a noqa for it still silences.
_REDIRECTS: Final = {"FK004": b"FK001", "FK005": b"FK001"}
_NOQA = re.compile(rb"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)


class Fix(NamedTuple):
    """Rewriting one literal: where the parser put it (UTF-8 byte offsets), what it holds, what it becomes."""

    line: int
    offset: int
    end_line: int
    end_offset: int
    old: str
    new: str


class Finding(NamedTuple):
    path: str
    line: int
    col: int
    code: str
    message: str
    fix: Fix | None = None
    # A literal's last line and the 1-based column just after it; None for a name or an unlintable file.
    end: tuple[int, int] | None = None

    def to_json(self) -> dict[str, object]:
        return {
            **dict(zip(self._fields[:4], self, strict=False)),
            "level": self.level,
            "message": self.message,
        }

    @property
    def level(self) -> str:
        """ "error" or "warning", as the table of codes says."""
        return CODES[self.code].level

    def __str__(self) -> str:
        # A parser's message can quote the file's own characters, so it is escaped like the path.
        return f"{plain(self.path, PATH_LIMIT)}:{self.line}:{self.col}: {self.code} {escaped(self.message)}"


class _Unreadable(FailureKindsError):
    """A file that could not be read; the message says why."""


def read_error(error: OSError) -> str:
    """Why a file could not be read, in the words every command uses ("no such file")."""
    from failure_kinds._streams import describe_read_error

    return describe_read_error(error)


def source_files(directory: str, problems: list[str], pruned: list[str]) -> Iterator[str]:
    """The directory's source files, sorted, not entering a hidden or skipped directory or a link (each
    added to ``pruned``); a directory that cannot be listed goes to ``problems``."""

    def note(error: OSError) -> None:
        problems.append(f"{plain(str(error.filename), PATH_LIMIT)}: {read_error(error)}")

    for folder, directories, names in os.walk(directory, onerror=note):
        left = sorted(name for name in directories if _skipped(os.path.join(folder, name)))
        pruned += (os.path.join(folder, name) for name in left)
        directories[:] = sorted(set(directories) - set(left))
        yield from (os.path.join(folder, name) for name in sorted(names) if name.endswith(SOURCE_SUFFIXES))


def _skipped(directory: str) -> bool:
    name = os.path.basename(directory)
    return name.startswith(".") or name in SKIPPED_DIRECTORIES or os.path.islink(directory)


def read_source(path: str, *, walked: bool = False, seen: set[tuple[int, int]] | None = None) -> bytes | str:
    """At most SIZE_LIMIT + 1 bytes of the regular file ``path``; "skipped" for a walked entry that is not
    one (a FIFO, a device, a dangling link), "repeated" for a file (device, inode) already in ``seen``.
    Raises _Unreadable."""
    from failure_kinds._streams import read_regular

    try:
        source = read_regular(path, SIZE_LIMIT, seen)
    except OSError as error:
        if walked and os.path.islink(path):
            return "skipped"
        raise _Unreadable(read_error(error)) from None
    if source == "not a regular file":
        if walked:
            return "skipped"
        raise _Unreadable(source)
    return source


def _counted(count: int, one: str, many: str) -> str:
    return one if count == 1 else f"{count:,} {many}"


def lint_paths(paths: Sequence[str], checker: Checker, notes: list[str]) -> tuple[list[Finding], list[str]]:
    """Findings for every file under ``paths`` and what could not be read (``path: reason``); what was
    left out (entries not regular files, files named twice, directories not entered) is said in ``notes``."""
    findings: list[Finding] = []
    unreadable: list[str] = []
    pruned: list[str] = []
    seen: set[tuple[int, int]] = set()
    counts = {"skipped": 0, "repeated": 0}
    read = 0
    for path in paths:
        walked, found = os.path.isdir(path), 0
        for file_path in source_files(path, unreadable, pruned) if walked else [path]:
            found += 1
            try:
                source = read_source(file_path, walked=walked, seen=seen)
                if isinstance(source, str):
                    counts[source] += 1
                else:
                    read += 1
                    findings.extend(checker.check_source(source, file_path))
            except _Unreadable as error:
                unreadable.append(f"{plain(file_path, PATH_LIMIT)}: {error}")
        if walked and not found:
            notes.append(f"{plain(path, PATH_LIMIT)}: no *.py or *.pyi files in this directory")
    skipped, repeated = counts["skipped"], counts["repeated"]
    if pruned:
        names = ", ".join(plain(name, PATH_LIMIT) for name in pruned[:3])
        more = f" and {len(pruned) - 3:,} more" if len(pruned) > 3 else ""
        notes.append(
            f"{_counted(len(pruned), '1 directory', 'directories')} not entered (hidden, __pycache__, "
            f"node_modules, site-packages or a link): {names}{more}"
        )
    if skipped:
        entries = _counted(skipped, "1 entry found in a directory is", "entries found in directories are")
        kind, verb = ("a regular file", "was") if skipped == 1 else ("regular files", "were")
        notes.append(
            f"{entries} not {kind} (a FIFO, a device or a dangling symbolic link) and {verb} skipped"
        )
    if repeated:
        from failure_kinds._streams import repeated_note

        notes.append(repeated_note(repeated))
    if not read and not unreadable:
        notes.append(NO_INPUT)
    return findings, unreadable


class Checker:
    def __init__(
        self, fields: Sequence[str] = DEFAULT_FIELDS, namespaces: _Declared = None, unsafe_fixes: bool = False
    ) -> None:
        """``unsafe_fixes`` gives a fix to older labels that code reads a kind against too."""
        self.fields: frozenset[str] = frozenset(fields)
        self.unsafe_fixes: bool = unsafe_fixes
        self.namespaces: dict[str, frozenset[str]] | None = {
            server: frozenset(kinds) for server, kinds in (namespaces or {}).items()
        } or None
        # The names the package and its enum have, which a constant read from them is checked against.
        enum = failure_kinds.FailureKind
        self.names: tuple[frozenset[str], frozenset[str]] = (
            frozenset(dir(failure_kinds)),
            frozenset([*dir(enum), *enum.__members__]),
        )

    def check_source(self, source: bytes, path: str) -> list[Finding]:
        # The compiler's warnings about the linted file (invalid escapes) are its business, not ours to print.
        with warnings.catch_warnings(action="ignore"):
            return sorted(self._check_source(source, path), key=lambda finding: finding[:4])

    def _check_source(self, source: bytes, path: str) -> list[Finding]:
        if len(source) > SIZE_LIMIT:
            return [Finding(path, 1, 1, "FK000", f"larger than {SIZE_LIMIT >> 20} MiB; not read")]
        try:
            tree = ast.parse(source, filename=path)
        except (SyntaxError, ValueError) as error:
            # ValueError: null bytes in the source, on Python 3.11; wide text is where they come from.
            wide = _wide_text(source)
            if wide is not None or not isinstance(error, SyntaxError):
                return [Finding(path, 1, 1, "FK000", f"cannot parse: {wide or error}")]
            line, col = max(error.lineno or 1, 1), max(error.offset or 1, 1)
            if sys.version_info < (3, 13) and not _names_encoding(source):
                # Where the source names no encoding, the parser of 3.11 and 3.12 counts UTF-8 bytes in its
                # own errors and characters in the tokenizer's; given text, it counts characters in both.
                try:
                    ast.parse(_decoded(source), filename=path)
                except SyntaxError as again:
                    if (again.msg, again.lineno) == (error.msg, error.lineno):
                        col = max(again.offset or 1, 1)
                except (ValueError, RecursionError, MemoryError):
                    pass  # the column as the bytes gave it
            return [Finding(path, line, col, "FK000", f"cannot parse: {error.msg}")]
        except (RecursionError, MemoryError) as error:
            # The parser's own limits (nesting, "parser stack overflowed"): the file is capped at SIZE_LIMIT.
            # Python 3.11 gives the stack's limit as a bare MemoryError, which later versions give only when
            # memory runs out: the machine's limit, not the file's, so the file is unread, not a finding.
            if isinstance(error, MemoryError) and not error.args and sys.version_info >= (3, 12):
                from failure_kinds._streams import OUT_OF_MEMORY

                raise _Unreadable(OUT_OF_MEMORY) from None
            return [Finding(path, 1, 1, "FK000", "cannot parse: nested too deeply for the Python parser")]
        uses, reads = kind_uses(tree, source, self.fields, self.names)
        judged: list[tuple[ast.Constant | MissingName, tuple[str, str, str | None]]] = []
        for use in {id(use): use for use in uses}.values():  # a constant used twice is one literal
            verdict = (
                self.missing_verdict(use) if isinstance(use, MissingName) else self.verdict(str(use.value))
            )
            judged += [(use, verdict)] if verdict else []
        if not judged:
            return []
        raw = re.split(rb"\r\n|\r|\n", source)
        text = re.split(r"\r\n|\r|\n", _decoded(source))
        # Per line: its UTF-8 bytes, a byte offset asked and that offset's character index. Uses come in
        # order, so each column is counted on from the one before it and a long line is decoded once.
        counted: dict[int, tuple[bytes, int, int]] = {}

        def column(line: int, offset: int) -> int:
            if not 0 < line <= len(text):
                return 1
            encoded, start, characters = counted.get(line) or (
                text[line - 1].encode("utf-8", "surrogatepass"),
                0,
                0,
            )
            if offset < start:
                start, characters = 0, 0
            characters += len(encoded[start:offset].decode("utf-8", "ignore"))
            counted[line] = (encoded, offset, characters)
            return characters + 1

        findings: list[Finding] = []
        comments: dict[int, bytes] | None = None
        tokenized = False
        silenced: dict[int, frozenset[bytes] | None] = {}  # per line: the codes its noqa names, None for all
        for use, (code, message, replacement) in sorted(
            judged, key=lambda item: (item[0].lineno, item[0].col_offset)
        ):
            line = use.lineno
            if line not in silenced:
                physical = raw[line - 1] if line <= len(raw) else b""
                silenced[line] = frozenset()
                if _NOQA.search(physical):
                    # Only a comment silences a line, not a string that reads like one (the whole line
                    # where the tokenizer cannot tell).
                    if not tokenized:
                        comments, tokenized = _comments(source), True
                    silenced[line] = _noqa_codes(physical if comments is None else comments.get(line, b""))
            codes = silenced[line]
            if codes is None or code.encode() in codes or _REDIRECTS.get(code) in codes:
                continue
            fix = end = None
            if isinstance(use, ast.Constant):
                end_line, end_offset = use.end_lineno or line, use.end_col_offset or 0
                start = column(line, use.col_offset)
                end = (end_line, column(end_line, end_offset))
                if replacement is not None and use in reads and not self.unsafe_fixes:
                    message += f"; {UNSAFE}"
                elif replacement is not None:
                    fix = Fix(line, use.col_offset, end_line, end_offset, str(use.value), replacement)
            else:
                start = column(line, use.col_offset)
            findings.append(Finding(path, line, start, code, message, fix, end))
        return findings

    def verdict(self, value: str) -> tuple[str, str, str | None] | None:
        """The code and message for the kind ``value``, and the replacement --fix writes; None when fine."""
        found = category(value, self.namespaces)
        text = shown(value, 200)
        if found == "registered":
            successor = failure_kinds.FailureKind(value).replaced_by
            if successor is None:
                return None
            return "FK005", f"deprecated failure kind {text}: use {successor.value!r}", None
        if found == "namespaced":
            return None
        if found == "legacy":
            label = _older(value)
            if label.replacement is None:
                return "FK004", f"older failure kind {text} has no single replacement: {label.note}", None
            return "FK004", f"older failure kind {text}: use {label.replacement!r}", label.replacement
        if found == "undeclared":
            from failure_kinds._suggest import suggest_any

            message = f"undeclared failure kind {text}: {value.partition(':')[0]} declares no such kind"
            hint = suggest_any(value, self.namespaces)
        elif ":" in value:
            expected = "expected <server>:<kind>, each [a-z][a-z0-9_]*"
            return "FK002", f"malformed namespaced failure kind {text}: {expected}", None
        else:
            message, hint = f"unregistered failure kind {text}", failure_kinds.suggest(value)
        code = "FK003" if found == "undeclared" else "FK001"
        return code, message + ("" if hint is None else f"; did you mean {hint!r}?"), None

    def missing_verdict(self, use: MissingName) -> tuple[str, str, None] | None:
        """A constant the package or its enum lacks that names an older label (FK004) or misspells a
        kind's constant (FK001). Other missing names are not kinds; the import fails on its own."""
        value = use.name.lower()
        if category(value) == "legacy":
            label = _older(value)
            advice = (
                f"it has no single replacement: {label.note}"
                if label.replacement is None
                else f"use {label.replacement.upper()}"
            )
            return "FK004", f"{use.owner}.{use.name} names the older failure kind {value!r}; {advice}", None
        hint = failure_kinds.suggest(value)
        if hint is None:
            return None
        return "FK001", f"{use.owner} has no {use.name}; did you mean {hint.upper()}?", None


def _older(value: str) -> OlderLabel:
    """What the older registry says of the label ``value``: its replacement, or what it meant (the audit's
    words)."""
    from failure_kinds.history import OLDER_LABELS

    return OLDER_LABELS[value]


def declared_encoding(source: bytes) -> str:
    """The encoding the parser reads ``source`` in (PEP 263). Raises SyntaxError or LookupError as
    tokenize.detect_encoding."""
    return tokenize.detect_encoding(iter(_head(source)).__next__)[0]


def _head(source: bytes) -> list[bytes]:
    """The first two lines of ``source``, each ended by a line feed; a lone carriage return ends one for the
    parser too."""
    import itertools

    first = itertools.islice(re.finditer(rb"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+", source), 2)
    return [line.group().rstrip(b"\r\n") + b"\n" for line in first]


def _names_encoding(source: bytes) -> bool:
    """Whether ``source`` names its encoding: a byte-order mark, or a coding comment on its first line or on
    its second after a comment or blank line, as the parser looks for one (PEP 263)."""
    head = [*_head(source), b""]
    second = head[1] if re.fullmatch(rb"[ \t\f]*(?:#.*)?\n", head[0]) else b""
    cookie = re.compile(rb"[ \t\f]*#.*?coding[:=][ \t]*[-\w.]")
    return source.startswith(b"\xef\xbb\xbf") or any(cookie.match(line) for line in (head[0], second))


def _decoded(source: bytes) -> str:
    """The source as the parser read it, byte-order mark dropped (a file that parsed has a known encoding)."""
    try:
        return source.decode(declared_encoding(source), "replace")
    except (SyntaxError, LookupError):
        return source.decode("utf-8", "replace")


def _wide_text(source: bytes) -> str | None:
    """What a file in UTF-16 or UTF-32 is, and how to convert it, in the audit's words; else None."""
    from failure_kinds._streams import wide_encoding  # only for a file that does not parse

    found = wide_encoding(source[:4])
    if found is None:
        return None
    name, order, encoding = found
    return (
        f"{name} ({order}-endian) text; Python source is read as UTF-8 unless it declares another "
        f"encoding: convert it with iconv -f {encoding} -t UTF-8"
    )


def _comments(source: bytes) -> dict[int, bytes] | None:
    """The comment of each line that has one; None when the tokenizer fails on source the parser took."""
    comments: dict[int, bytes] = {}
    try:
        for token in tokenize.tokenize(io.BytesIO(source).readline):
            if token.type == tokenize.COMMENT:
                comments[token.start[0]] = token.string.encode("utf-8", "surrogatepass")
    except (tokenize.TokenError, SyntaxError, UnicodeError):
        return None
    return comments


def _noqa_codes(text: bytes) -> frozenset[bytes] | None:
    """The codes the first noqa in ``text`` names: None for a bare noqa (every code), none without one."""
    match = _NOQA.search(text)
    if match is None:
        return frozenset()
    if match.group("codes") is None:
        return None
    return frozenset(re.split(rb"[,\s]+", match.group("codes").upper()))
