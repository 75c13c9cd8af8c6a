"""Find misspelled failure kinds in Python source, where type checkers cannot see them.

A string literal is checked where it is used as a failure kind: a keyword argument or dict key named
after the field, a subscript or attribute assignment to the field, a comparison with the field
(``==``, ``!=``, ``in``, ``not in`` against a tuple, list or set display), a ``case`` of a ``match`` on
the field, and the argument of validate_failure_kind, metric_label, is_registered and is_namespaced.
Names and attributes annotated in the same file as a kind (``FailureKindName``, ``AnyFailureKind``,
``FailureKind``, or a generated alias such as ``ProjectFailureKind``) count as the field in comparisons
and ``match``, and in assignments. Anything that is not a literal (names, f-strings, calls) is never reported.

Codes:
    FK000  the file could not be linted: it does not parse, is nested too deeply, is too large or
           declares an unknown encoding
    FK001  unregistered failure kind
    FK002  looks namespaced (contains ":") but is not <server>:<kind>
    FK003  a kind of a declared namespace that the declaration does not list

Only regular files are read, each up to SIZE_LIMIT bytes.
"""

from __future__ import annotations

import ast
import os
import re
import stat
import warnings

import failure_kinds
from failure_kinds._columns import Columns
from failure_kinds._runtime import category

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
    from typing import Final

DEFAULT_FIELDS: Final = ("failure_kind",)
CHECKED_FUNCTIONS: Final = frozenset(
    {"validate_failure_kind", "metric_label", "is_registered", "is_namespaced"}
)
SOURCE_SUFFIXES: Final = (".py", ".pyi")
# Directories nobody means when they lint "everything below here".
SKIPPED_DIRECTORIES: Final = frozenset({"__pycache__", "node_modules", "site-packages"})
# A source file larger than this is reported as FK000 instead of parsed: no hand-written module comes
# close, and parsing costs memory in proportion.
SIZE_LIMIT: Final = 8 * 1024 * 1024
# Annotations that make a name or attribute a kind: these, and any name ending in "FailureKind"
# (FailureKind, AnyFailureKind, NamespacedFailureKind, the generated DeclaredFailureKind, ...).
KIND_TYPES: Final = frozenset({"FailureKindName"})
# Subscripted annotations that still hold a kind: unions of their arguments, and wrappers of their first.
_UNIONS: Final = frozenset({"Optional", "Union"})
_WRAPPERS: Final = frozenset({"Annotated", "Final", "ClassVar", "Required", "NotRequired"})
# Annotations are small; a deeper one is not a kind annotation anybody wrote.
_ANNOTATION_DEPTH: Final = 16
_ANNOTATION_TEXT: Final = 200
_PATH_LIMIT: Final = 1000
# A literal in a message is cut to this many characters.
_SHOWN_LIMIT: Final = 200

_NOQA = re.compile(rb"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)


def shown_path(path: str) -> str:
    """``path`` as printed: as is when printable, else quoted and escaped, so a crafted file name cannot
    forge a finding or reach a terminal raw."""
    if path.isprintable():
        return path
    from failure_kinds._display import shown

    return shown(path, _PATH_LIMIT)


class Finding:
    __slots__ = ("code", "col", "line", "message", "path")

    path: str
    line: int
    col: int
    code: str
    message: str

    def __init__(self, path: str, line: int, col: int, code: str, message: str) -> None:
        self.path = path
        self.line = line
        self.col = col
        self.code = code
        self.message = message

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
        message = self.message
        if not message.isprintable():
            from failure_kinds._display import escape

            message = escape(message)
        return f"{shown_path(self.path)}:{self.line}:{self.col}: {self.code} {message}"


class _Unreadable(Exception):
    """A file or directory that could not be read; the message says why."""


def source_files(paths: Sequence[str], problems: list[str] | None = None) -> Iterator[str]:
    """Files as given; directories as their .py and .pyi files, recursively, sorted, hidden ones
    skipped. Directories that cannot be listed are added to ``problems`` (``path: reason``)."""

    def note(error: OSError) -> None:
        if problems is not None:
            name = error.filename if isinstance(error.filename, str) else str(error.filename)
            problems.append(f"{shown_path(name)}: {error.strerror or error}")

    for path in paths:
        if os.path.isdir(path):
            for folder, directories, names in os.walk(path, onerror=note):
                directories[:] = sorted(
                    name
                    for name in directories
                    if not name.startswith(".") and name not in SKIPPED_DIRECTORIES
                )
                for name in sorted(names):
                    if name.endswith(SOURCE_SUFFIXES):
                        yield os.path.join(folder, name)
        else:
            yield path


def read_source(path: str, *, walked: bool = False) -> bytes | None:
    """The bytes of the regular file ``path``, at most SIZE_LIMIT + 1 of them. Raises _Unreadable when it
    cannot be read or is not a regular file; returns None for a non-regular file found in a directory
    walk (a FIFO or a device there is not source anybody asked for)."""
    try:
        descriptor = _open_descriptor(path)
    except OSError as error:
        raise _Unreadable(error.strerror or str(error)) from None
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            if walked:
                return None
            raise _Unreadable("not a regular file")
        with os.fdopen(descriptor, "rb", closefd=False) as file:
            return file.read(SIZE_LIMIT + 1)
    except OSError as error:
        raise _Unreadable(error.strerror or str(error)) from None
    finally:
        os.close(descriptor)


def _open_descriptor(path: str) -> int:
    # Without blocking: opening a FIFO would otherwise wait for a writer that never comes.
    return os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))


def lint_paths(
    paths: Sequence[str],
    fields: Sequence[str] = DEFAULT_FIELDS,
    namespaces: Mapping[str, Collection[str]] | None = None,
) -> tuple[list[Finding], list[str]]:
    """Findings for every file under ``paths``, and what could not be read (``path: reason``), in the
    order met. ``namespaces`` maps each declared server to its kinds (FK003); None declares nothing."""
    checker = Checker(fields, namespaces)
    findings: list[Finding] = []
    unreadable: list[str] = []
    for path in paths:
        if not os.path.lexists(path):
            unreadable.append(f"{shown_path(path)}: no such file or directory")
            continue
        walked = os.path.isdir(path)
        for file_path in source_files([path], unreadable):
            try:
                source = read_source(file_path, walked=walked)
            except _Unreadable as error:
                unreadable.append(f"{shown_path(file_path)}: {error}")
                continue
            if source is not None:
                findings.extend(checker.check_source(source, file_path))
    return findings, unreadable


class Checker:
    fields: frozenset[str]
    namespaces: dict[str, frozenset[str]] | None
    triggers: tuple[bytes, ...]

    def __init__(
        self,
        fields: Sequence[str] = DEFAULT_FIELDS,
        namespaces: Mapping[str, Collection[str]] | None = None,
    ) -> None:
        self.fields = frozenset(fields)
        self.namespaces = (
            {server: frozenset(kinds) for server, kinds in namespaces.items()} if namespaces else None
        )
        # A file that mentions none of these cannot hold a finding; it is parsed (to report FK000) but
        # never walked, which keeps the lint close to the cost of parsing alone.
        self.triggers = tuple(name.encode() for name in (*self.fields, *CHECKED_FUNCTIONS, "FailureKind"))

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
        except SyntaxError as error:
            return [_unlintable(path, error.lineno or 1, error.offset or 1, f"cannot parse: {error.msg}")]
        except ValueError as error:
            # Python 3.11: null bytes in the source.
            return [_unlintable(path, 1, 1, f"cannot parse: {error}")]
        except (RecursionError, MemoryError):
            # The parser's own limits (nesting, "parser stack overflowed"), not memory running out: the
            # file is capped at SIZE_LIMIT.
            return [_unlintable(path, 1, 1, "cannot parse: nested too deeply for the Python parser")]
        if not any(trigger in source for trigger in self.triggers):
            return []
        findings: list[Finding] = []
        columns = Columns(source)
        for literal in self.kind_literals(tree):
            finding = self.judge(literal, path, columns)
            if finding is not None:
                findings.append(finding)
        findings.sort(key=Finding.sort_key)
        return findings

    def kind_literals(self, tree: ast.AST) -> Iterator[ast.Constant]:
        """Every string literal that stands where a failure kind goes."""
        fields = self.fields
        # Comparisons and matches are judged after the walk, once every annotation in the file is known.
        comparisons: list[ast.Compare] = []
        matches: list[ast.Match] = []
        # Literal assignments to plain names or attributes, reported when the target is annotated as a kind.
        assignments: list[ast.Assign] = []
        kind_names: set[str] = set()
        kind_attributes: set[str] = set()
        # A walk of its own rather than ast.walk: no generator per node and exact-type dispatch (the parser
        # makes no subclasses) keep the lint close to the cost of parsing alone.
        pending: list[ast.AST] = [tree]
        pop, push = pending.pop, pending.append
        while pending:
            node = pop()
            for name in node._fields:
                child = getattr(node, name, None)
                if type(child) is list:
                    for item in child:  # pyright: ignore[reportUnknownVariableType]
                        if isinstance(item, ast.AST):
                            push(item)
                elif isinstance(child, ast.AST):
                    push(child)
            node_type = type(node)
            if node_type is ast.Call:
                assert isinstance(node, ast.Call)
                for keyword in node.keywords:
                    if keyword.arg in fields:
                        yield from _strings(keyword.value)
                if _called_name(node.func) in CHECKED_FUNCTIONS and node.args:
                    yield from _strings(node.args[0])
            elif node_type is ast.Dict:
                assert isinstance(node, ast.Dict)
                for key, value in zip(node.keys, node.values, strict=True):
                    if isinstance(key, ast.Constant) and key.value in fields:
                        yield from _strings(value)
            elif node_type is ast.Assign:
                assert isinstance(node, ast.Assign)
                if any(self.is_field(target) for target in node.targets):
                    yield from _strings(node.value)
                elif isinstance(node.value, ast.Constant):
                    assignments.append(node)
            elif node_type is ast.AnnAssign:
                assert isinstance(node, ast.AnnAssign)
                if node.value is not None and self.is_field(node.target):
                    yield from _strings(node.value)
                if _is_kind_annotation(node.annotation):
                    target = node.target
                    if isinstance(target, ast.Name):
                        kind_names.add(target.id)
                        # A field declared in a class body is read as an attribute elsewhere.
                        kind_attributes.add(target.id)
                        if node.value is not None:
                            yield from _strings(node.value)
                    elif isinstance(target, ast.Attribute):
                        kind_attributes.add(target.attr)
                        if node.value is not None:
                            yield from _strings(node.value)
            elif node_type is ast.arg:
                assert isinstance(node, ast.arg)
                if node.annotation is not None and _is_kind_annotation(node.annotation):
                    kind_names.add(node.arg)
            elif node_type is ast.Compare:
                assert isinstance(node, ast.Compare)
                comparisons.append(node)
            elif node_type is ast.Match:
                assert isinstance(node, ast.Match)
                matches.append(node)

        def is_kind(node: ast.expr) -> bool:
            if isinstance(node, ast.Name):
                return node.id in kind_names
            if isinstance(node, ast.Attribute):
                if node.attr in fields or node.attr in kind_attributes:
                    return True
                # The value of a FailureKind member: `kind.value` for `kind: FailureKind`.
                return (
                    node.attr == "value" and isinstance(node.value, ast.Name) and node.value.id in kind_names
                )
            return self.is_field(node)

        for comparison in comparisons:
            operands = [comparison.left, *comparison.comparators]
            for operator, left, right in zip(comparison.ops, operands, operands[1:], strict=False):
                if isinstance(operator, ast.Eq | ast.NotEq):
                    if is_kind(left):
                        yield from _strings(right)
                    elif is_kind(right):
                        yield from _strings(left)
                elif (
                    isinstance(operator, ast.In | ast.NotIn)
                    and is_kind(left)
                    and isinstance(right, ast.Tuple | ast.List | ast.Set)
                ):
                    for element in right.elts:
                        yield from _strings(element)
        for assignment in assignments:
            if any(is_kind(target) for target in assignment.targets):
                yield from _strings(assignment.value)
        for match in matches:
            if is_kind(match.subject):
                for case in match.cases:
                    yield from _case_strings(case.pattern)

    def is_field(self, node: ast.expr) -> bool:
        """``x["failure_kind"]`` or ``x.failure_kind``."""
        if isinstance(node, ast.Subscript):
            key = node.slice
            return isinstance(key, ast.Constant) and key.value in self.fields
        return isinstance(node, ast.Attribute) and node.attr in self.fields

    def judge(self, literal: ast.Constant, path: str, columns: Columns) -> Finding | None:
        value = literal.value
        if not isinstance(value, str):
            return None
        found = category(value, self.namespaces)
        if found in ("registered", "namespaced"):
            return None
        from failure_kinds._display import shown

        if found == "undeclared":
            from failure_kinds._suggest import suggest_any

            code = "FK003"
            server = value.partition(":")[0]
            message = f"undeclared failure kind {shown(value, _SHOWN_LIMIT)}: {server} declares no such kind"
            hint = suggest_any(value, self.namespaces)
            if hint is not None:
                message += f"; did you mean {hint!r}?"
        elif ":" in value:
            code = "FK002"
            message = (
                f"malformed namespaced failure kind {shown(value, _SHOWN_LIMIT)}: "
                "expected <server>:<kind>, each [a-z][a-z0-9_]*"
            )
        else:
            code = "FK001"
            hint = failure_kinds.suggest(value)
            message = f"unregistered failure kind {shown(value, _SHOWN_LIMIT)}"
            if hint is not None:
                message += f"; did you mean {hint!r}?"
        line_number = literal.lineno
        if _suppressed(columns.raw_line(line_number), code):
            return None
        return Finding(path, line_number, columns.column(line_number, literal.col_offset), code, message)


def _unlintable(path: str, line: int, col: int, reason: str) -> Finding:
    return Finding(path, max(line, 1), max(col, 1), "FK000", reason)


def _strings(node: ast.expr) -> Iterable[ast.Constant]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node


def _case_strings(pattern: ast.pattern) -> Iterator[ast.Constant]:
    """The string literals a case pattern compares its subject with: ``"a"``, ``"a" | "b"``, ``"a" as k``."""
    pending = [pattern]
    while pending:
        current = pending.pop()
        if isinstance(current, ast.MatchValue):
            yield from _strings(current.value)
        elif isinstance(current, ast.MatchOr):
            pending.extend(reversed(current.patterns))
        elif isinstance(current, ast.MatchAs) and current.pattern is not None:
            pending.append(current.pattern)


def _is_kind_annotation(annotation: ast.expr, depth: int = 0) -> bool:
    """Whether ``annotation`` is a kind type, possibly optional: ``FailureKindName``, ``fk.AnyFailureKind``,
    ``FailureKind | None``, ``Optional["ProjectFailureKind"]``, ``Final[FailureKindName]``."""
    if depth > _ANNOTATION_DEPTH:
        return False
    if isinstance(annotation, ast.Name | ast.Attribute):
        name = annotation.id if isinstance(annotation, ast.Name) else annotation.attr
        return name in KIND_TYPES or name.endswith("FailureKind")
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        sides = (annotation.left, annotation.right)
        return all(_is_kind_annotation(side, depth + 1) or _is_none(side) for side in sides) and any(
            _is_kind_annotation(side, depth + 1) for side in sides
        )
    wrapper = _called_name(annotation.value) if isinstance(annotation, ast.Subscript) else None
    if isinstance(annotation, ast.Subscript) and (wrapper in _UNIONS or wrapper in _WRAPPERS):
        inner = annotation.slice
        members = inner.elts if isinstance(inner, ast.Tuple) else [inner]
        if wrapper in _WRAPPERS:
            members = members[:1]
        return all(_is_kind_annotation(member, depth + 1) or _is_none(member) for member in members) and any(
            _is_kind_annotation(member, depth + 1) for member in members
        )
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        text = annotation.value
        if len(text) > _ANNOTATION_TEXT or "FailureKind" not in text:
            return False
        try:
            parsed = ast.parse(text.strip(), mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
        return _is_kind_annotation(parsed, depth + 1)
    return False


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _called_name(function: ast.expr) -> str | None:
    if isinstance(function, ast.Name):
        return function.id
    if isinstance(function, ast.Attribute):
        return function.attr
    return None


def _suppressed(line: bytes, code: str) -> bool:
    match = _NOQA.search(line)
    if match is None:
        return False
    codes = match.group("codes")
    if codes is None:
        return True
    return code.encode() in re.split(rb"[,\s]+", codes.upper())
