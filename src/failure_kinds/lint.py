"""Find misspelled failure kinds in Python source, where type checkers cannot see them.

A string literal is checked where it is used as a failure kind: a keyword argument or dict key named
after the field, a subscript or attribute assignment to the field, a comparison with the field, and the
argument of validate_failure_kind, metric_label, is_registered and is_namespaced. Anything that is not
a literal (names, f-strings, calls) is never reported.

Codes:
    FK000  the file could not be parsed
    FK001  unregistered failure kind
    FK002  looks namespaced (contains ":") but is not <server>:<kind>
"""

# This module shares the core's private helpers on purpose: they are one package.
# pyright: reportPrivateUsage=false

from __future__ import annotations

import ast
import os
import re

import failure_kinds

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence
    from typing import Final

DEFAULT_FIELDS: Final = ("failure_kind",)
CHECKED_FUNCTIONS: Final = frozenset(
    {"validate_failure_kind", "metric_label", "is_registered", "is_namespaced"}
)
SOURCE_SUFFIXES: Final = (".py", ".pyi")
# Directories nobody means when they lint "everything below here".
SKIPPED_DIRECTORIES: Final = frozenset({"__pycache__", "node_modules", "site-packages"})

_NOQA = re.compile(rb"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)


class Finding:
    __slots__ = ("code", "col", "line", "message", "path")

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
        return f"{self.path}:{self.line}:{self.col}: {self.code} {self.message}"


class LintError(Exception):
    """A path that was asked for and cannot be linted (missing or unreadable)."""


def source_files(paths: Sequence[str]) -> Iterator[str]:
    """Files as given; directories as their .py and .pyi files, recursively, sorted, hidden ones skipped."""
    for path in paths:
        if os.path.isdir(path):
            for folder, directories, names in os.walk(path):
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


def lint_paths(
    paths: Sequence[str], fields: Sequence[str] = DEFAULT_FIELDS
) -> tuple[list[Finding], list[str]]:
    """Findings for every file under ``paths``, and the files that could not be read."""
    missing = [path for path in paths if not os.path.exists(path)]
    if missing:
        raise LintError(f"{missing[0]}: no such file or directory")
    checker = Checker(fields)
    findings: list[Finding] = []
    unreadable: list[str] = []
    for path in source_files(paths):
        try:
            with open(path, "rb") as file:
                source = file.read()
        except OSError as error:
            unreadable.append(f"{path}: {error.strerror or error}")
            continue
        findings.extend(checker.check_source(source, path))
    return findings, unreadable


class Checker:
    def __init__(self, fields: Sequence[str] = DEFAULT_FIELDS) -> None:
        self.fields = frozenset(fields)
        # A file that mentions none of these cannot hold a finding; it is parsed (to report FK000) but
        # never walked, which keeps the lint close to the cost of parsing alone.
        self.triggers = tuple(name.encode() for name in (*self.fields, *CHECKED_FUNCTIONS))

    def check_source(self, source: bytes, path: str) -> list[Finding]:
        try:
            tree = ast.parse(source, filename=path)
        except (SyntaxError, ValueError) as error:
            line = getattr(error, "lineno", None) or 1
            col = getattr(error, "offset", None) or 1
            message = getattr(error, "msg", None) or str(error)
            return [Finding(path, line, col, "FK000", f"cannot parse: {message}")]
        if not any(trigger in source for trigger in self.triggers):
            return []
        findings: list[Finding] = []
        lines = source.splitlines()
        for literal in self.kind_literals(tree):
            finding = self.judge(literal, path, lines)
            if finding is not None:
                findings.append(finding)
        findings.sort(key=Finding.sort_key)
        return findings

    def kind_literals(self, tree: ast.AST) -> Iterator[ast.Constant]:
        """Every string literal that stands where a failure kind goes."""
        fields = self.fields
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                for keyword in node.keywords:
                    if keyword.arg in fields:
                        yield from _strings(keyword.value)
                if _called_name(node.func) in CHECKED_FUNCTIONS and node.args:
                    yield from _strings(node.args[0])
            elif isinstance(node, ast.Dict):
                for key, value in zip(node.keys, node.values, strict=True):
                    if isinstance(key, ast.Constant) and key.value in fields:
                        yield from _strings(value)
            elif isinstance(node, ast.Assign):
                if any(self.is_field(target) for target in node.targets):
                    yield from _strings(node.value)
            elif isinstance(node, ast.AnnAssign):
                if node.value is not None and self.is_field(node.target):
                    yield from _strings(node.value)
            elif isinstance(node, ast.Compare):
                operands = [node.left, *node.comparators]
                for operator, left, right in zip(node.ops, operands, operands[1:], strict=False):
                    if isinstance(operator, ast.Eq | ast.NotEq):
                        if self.is_field(left):
                            yield from _strings(right)
                        elif self.is_field(right):
                            yield from _strings(left)
                    elif (
                        isinstance(operator, ast.In | ast.NotIn)
                        and self.is_field(left)
                        and isinstance(right, ast.Tuple | ast.List | ast.Set)
                    ):
                        for element in right.elts:
                            yield from _strings(element)

    def is_field(self, node: ast.expr) -> bool:
        """``x["failure_kind"]`` or ``x.failure_kind``."""
        if isinstance(node, ast.Subscript):
            key = node.slice
            return isinstance(key, ast.Constant) and key.value in self.fields
        return isinstance(node, ast.Attribute) and node.attr in self.fields

    def judge(self, literal: ast.Constant, path: str, lines: list[bytes]) -> Finding | None:
        value = literal.value
        if (
            not isinstance(value, str)
            or failure_kinds.is_registered(value)
            or failure_kinds.is_namespaced(value)
        ):
            return None
        if ":" in value:
            code = "FK002"
            message = (
                f"malformed namespaced failure kind {failure_kinds._shown(value)}: "
                "expected <server>:<kind>, each [a-z][a-z0-9_]*"
            )
        else:
            code = "FK001"
            hint = failure_kinds.suggest(value)
            message = f"unregistered failure kind {failure_kinds._shown(value)}"
            if hint is not None:
                message += f"; did you mean {hint!r}?"
        line_number = literal.lineno
        physical = lines[line_number - 1] if line_number <= len(lines) else b""
        if _suppressed(physical, code):
            return None
        # ast counts columns in UTF-8 bytes; people and editors count characters.
        col = len(physical[: literal.col_offset].decode("utf-8", "replace")) + 1
        return Finding(path, line_number, col, code, message)


def _strings(node: ast.expr) -> Iterable[ast.Constant]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node


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
