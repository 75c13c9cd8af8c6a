"""Where a failure kind stands in Python source: the walk behind :mod:`failure_kinds.lint`.

:func:`kind_uses` returns the string literals used as a kind, and the constant names taken from
``failure_kinds`` (or its ``FailureKind``) that do not exist there. Only the top-level statements whose
lines mention a field, a kind type, a checked function, the package or a name learned from those are
walked: the rest of a file cannot hold a kind, and skipping it keeps the lint near the cost of parsing.
Each rule is one ``visit_`` method of :class:`_Walk`, named after the node it reads.
"""

from __future__ import annotations

import ast
import bisect
import re

from failure_kinds._annotations import called_name, is_kind_annotation

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence
    from typing import Final, TypeVar

    # Constrained, so a dict display's values come back as expressions and a pattern's as patterns.
    _Entry = TypeVar("_Entry", ast.expr, ast.pattern)

CHECKED_FUNCTIONS: Final = frozenset(
    {"validate_failure_kind", "metric_label", "is_registered", "is_namespaced"}
)
PACKAGE: Final = "failure_kinds"
ENUM: Final = "FailureKind"
# Mapping methods whose second argument is the value a missing field stands for.
_DEFAULTING: Final = frozenset({"get", "pop", "setdefault"})
# What a constant's name looks like: module constants are checked only when written so.
CONSTANT_NAME: Final = re.compile(r"[A-Z][A-Z0-9_]*")
_SCOPES: Final = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
# Comparisons whose operands code reads a kind against: a literal anywhere under one is a read.
_READING: Final = (ast.Eq, ast.NotEq, ast.In, ast.NotIn, ast.Is, ast.IsNot)


class MissingName:
    """A constant name read from the package or its enum that it does not define."""

    __slots__ = ("col_offset", "lineno", "name", "owner")

    lineno: int
    col_offset: int
    name: str
    owner: str

    def __init__(self, lineno: int, col_offset: int, name: str, owner: str) -> None:
        self.lineno = lineno
        self.col_offset = col_offset
        self.name = name
        self.owner = owner


def kind_uses(
    tree: ast.Module, source: bytes, fields: frozenset[str], names: tuple[frozenset[str], frozenset[str]]
) -> tuple[list[ast.Constant | MissingName], set[ast.Constant]]:
    """Every string literal standing where a kind goes, and every constant name read from the package
    or its enum that it lacks (``names``: the names the package and the enum have), in no set order; and
    the literals among them that code reads a kind against (comparisons, ``in`` tests, ``case``
    patterns), where a rewrite would stop the code matching older data."""
    walk = _Walk(tree, fields, names)
    statements = tree.body
    words: set[str] = {*fields, *CHECKED_FUNCTIONS, ENUM, PACKAGE}
    if b"\r" in source and source.count(b"\r") != source.count(b"\r\n"):
        # Lone carriage returns end lines for the parser but not for the line count below: the file is
        # walked whole when it mentions a word at all.
        if _lines_with(source, words):
            walk.walk(statements)
        return walk.finish()
    ranges = [_line_range(statement) for statement in statements]
    pending = list(range(len(statements)))
    searched: set[str] = set()
    while pending and words - searched:
        new_words = words - searched
        searched |= new_words
        lines = _lines_with(source, new_words)
        chosen = [index for index in pending if _mentions(lines, *ranges[index])]
        if not chosen:
            break
        chosen_set = set(chosen)
        pending = [index for index in pending if index not in chosen_set]
        walk.walk([statements[index] for index in chosen])
        words |= walk.learned_words()
    return walk.finish()


def _line_range(statement: ast.stmt) -> tuple[int, int]:
    first = statement.lineno
    for decorator in getattr(statement, "decorator_list", ()):
        first = min(first, decorator.lineno)
    return first, statement.end_lineno or statement.lineno


def _lines_with(source: bytes, words: Iterable[str]) -> list[int]:
    """The sorted line numbers where any of ``words`` occurs."""
    positions: list[int] = []
    for word in words:
        encoded = word.encode("utf-8", "surrogatepass")
        if not encoded:
            continue
        position = source.find(encoded)
        while position != -1:
            positions.append(position)
            position = source.find(encoded, position + len(encoded))
    positions.sort()
    lines: list[int] = []
    line, counted = 1, 0
    for position in positions:
        line += source.count(b"\n", counted, position)
        counted = position
        lines.append(line)
    return lines


def _mentions(lines: list[int], first: int, last: int) -> bool:
    index = bisect.bisect_left(lines, first)
    return index < len(lines) and lines[index] <= last


class _Walk(ast.NodeVisitor):
    """One file's walk: what it found, what it learned, and what waits for the end.

    Each rule is the ``visit_`` method of the node it reads. :func:`ast.walk` reaches every node, so no
    method calls ``generic_visit``: a loop, not recursion, so a tree as deep as the parser allows is walked.
    """

    def __init__(
        self, tree: ast.Module, fields: frozenset[str], names: tuple[frozenset[str], frozenset[str]]
    ) -> None:
        self.fields = fields
        self.package_names, self.enum_names = names
        self.constants = _module_constants(tree)
        self.found: list[ast.Constant | MissingName] = []
        self.reads: set[ast.Constant] = set()
        # Every literal under an operand of a comparison or in a case pattern: what a rewrite would stop
        # matching older data, wherever the walk finds it (`row == {"failure_kind": ...}`).
        self.compared: set[ast.Constant] = set()
        # Names and attributes annotated as a kind; names bound to a field's value (a read, not a type:
        # they count in comparisons and cases, never in assignments).
        self.kind_names: set[str] = set()
        self.kind_attributes: set[str] = set()
        self.read_names: set[str] = set()
        # Names bound to the package and to its enum by imports.
        self.package_aliases: set[str] = set()
        self.enum_aliases: set[str] = set()
        # Judged at the end, once every annotation and import of the file is known.
        self.comparisons: list[ast.Compare] = []
        self.matches: list[ast.Match] = []
        self.assignments: list[ast.Assign] = []
        self.alternatives: list[ast.BoolOp] = []
        # A capitalised attribute of a name, with that name: a constant read from the package or its enum?
        self.constant_reads: list[tuple[str, ast.Attribute]] = []

    def walk(self, roots: Iterable[ast.stmt]) -> None:
        for root in roots:
            for node in ast.walk(root):
                self.visit(node)

    def generic_visit(self, node: ast.AST) -> None:
        """A node no rule reads: nothing to do (ast.walk reaches its children)."""

    def learned_words(self) -> set[str]:
        return (
            self.kind_names
            | self.kind_attributes
            | self.read_names
            | self.package_aliases
            | self.enum_aliases
        )

    def strings(self, node: ast.expr) -> Iterator[ast.Constant]:
        """The literals ``node`` may evaluate to: itself, both branches of a conditional expression,
        the operands of ``or`` and ``and``, a walrus's value, a module constant's literal."""
        pending = [node]  # a loop, not recursion: a conditional expression may nest as deep as parsed
        while pending:
            current = pending.pop()
            if isinstance(current, ast.Constant) and isinstance(current.value, str):
                yield current
            elif isinstance(current, ast.IfExp):
                pending += (current.orelse, current.body)
            elif isinstance(current, ast.BoolOp):
                pending.extend(reversed(current.values))
            elif isinstance(current, ast.NamedExpr):
                pending.append(current.value)
            elif isinstance(current, ast.Name) and current.id in self.constants:
                yield self.constants[current.id]

    def is_field(self, node: ast.expr) -> bool:
        """``x["failure_kind"]``, ``x.failure_kind``, ``x.get("failure_kind")`` or ``failure_kind``."""
        if isinstance(node, ast.Subscript):
            return isinstance(node.slice, ast.Constant) and node.slice.value in self.fields
        if isinstance(node, ast.Attribute):
            return node.attr in self.fields
        if isinstance(node, ast.Name):
            return node.id in self.fields
        return (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _DEFAULTING
            and bool(node.args)
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value in self.fields
        )

    def under_fields(self, keys: Sequence[ast.expr | None], entries: list[_Entry]) -> list[_Entry]:
        """The entries of a dict display or a mapping pattern whose key is a literal naming a field: the
        two spell a field's value the same way, ``{"failure_kind": ...}``."""
        fields = self.fields
        return [
            entry
            for key, entry in zip(keys, entries, strict=True)
            if isinstance(key, ast.Constant) and key.value in fields
        ]

    # The rules, one per kind of node. What depends on the whole file (a comparison with a name annotated
    # further down, an import below its use) is kept for finish.

    def visit_Attribute(self, node: ast.Attribute) -> None:
        owner = node.value
        if not CONSTANT_NAME.fullmatch(node.attr):
            return
        if isinstance(owner, ast.Name):
            self.constant_reads.append((owner.id, node))
        elif isinstance(owner, ast.Attribute) and owner.attr == ENUM and isinstance(owner.value, ast.Name):
            # `fk.FailureKind.X`: the enum read through the package.
            self.constant_reads.append((f"{owner.value.id}.{ENUM}", node))

    def visit_Call(self, node: ast.Call) -> None:
        for keyword in node.keywords:
            if keyword.arg in self.fields:
                self.found.extend(self.strings(keyword.value))
        if node.args:
            if called_name(node.func) in CHECKED_FUNCTIONS:
                self.found.extend(self.strings(node.args[0]))
            elif len(node.args) >= 2 and self.is_field(node):
                self.found.extend(self.strings(node.args[1]))

    def visit_Dict(self, node: ast.Dict) -> None:
        for value in self.under_fields(node.keys, node.values):
            self.found.extend(self.strings(value))

    def visit_Compare(self, node: ast.Compare) -> None:
        self.comparisons.append(node)
        if any(isinstance(operator, _READING) for operator in node.ops):
            self.mark_compared([node.left, *node.comparators])

    def visit_match_case(self, node: ast.match_case) -> None:
        self.mark_compared([node.pattern])

    def mark_compared(self, roots: list[ast.AST]) -> None:
        for root in roots:
            for child in ast.walk(root):
                if isinstance(child, ast.Constant):
                    self.compared.add(child)
                elif isinstance(child, ast.Name) and child.id in self.constants:
                    self.compared.add(self.constants[child.id])

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        self.alternatives.append(node)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        if self.is_field(node.value):
            self.read_names.add(node.target.id)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if node.returns is not None and is_kind_annotation(node.returns):
            for value in _returned(node):
                self.found.extend(self.strings(value))

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Match(self, node: ast.Match) -> None:
        self.matches.append(node)

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        for pattern in self.under_fields(node.keys, node.patterns):
            self.read(self.case_strings(pattern))

    def visit_MatchClass(self, node: ast.MatchClass) -> None:
        for attribute, pattern in zip(node.kwd_attrs, node.kwd_patterns, strict=True):
            if attribute in self.fields:
                self.read(self.case_strings(pattern))

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name == PACKAGE or (alias.asname is None and alias.name.startswith(PACKAGE + ".")):
                self.package_aliases.add(alias.asname or PACKAGE)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.module != PACKAGE or node.level:
            return
        for alias in node.names:
            if alias.name == ENUM:
                self.enum_aliases.add(alias.asname or ENUM)
            elif CONSTANT_NAME.fullmatch(alias.name) and alias.name not in self.package_names:
                self.found.append(MissingName(alias.lineno, alias.col_offset, alias.name, PACKAGE))

    def visit_Assign(self, node: ast.Assign) -> None:
        if any(self.is_field(target) for target in node.targets):
            self.found.extend(self.strings(node.value))
            return
        value_type = type(node.value)
        if value_type is ast.Constant or value_type is ast.IfExp:
            self.assignments.append(node)
        elif len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and self.is_field(node.value):
            self.read_names.add(node.targets[0].id)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        target = node.target
        if node.value is not None and self.is_field(target):
            self.found.extend(self.strings(node.value))
            return
        if not is_kind_annotation(node.annotation):
            return
        if isinstance(target, ast.Name):
            self.kind_names.add(target.id)
            # A field declared in a class body is read as an attribute elsewhere.
            self.kind_attributes.add(target.id)
        elif isinstance(target, ast.Attribute):
            self.kind_attributes.add(target.attr)
        else:
            return
        if node.value is not None:
            self.found.extend(self.strings(node.value))

    def visit_arguments(self, node: ast.arguments) -> None:
        positional = [*node.posonlyargs, *node.args]
        pairs = [
            *zip(positional[len(positional) - len(node.defaults) :], node.defaults, strict=True),
            *zip(node.kwonlyargs, node.kw_defaults, strict=True),
        ]
        for argument in (*positional, *node.kwonlyargs):
            if argument.annotation is not None and is_kind_annotation(argument.annotation):
                self.kind_names.add(argument.arg)
        for argument, default in pairs:
            if default is None:
                continue
            if argument.arg in self.fields or (
                argument.annotation is not None and is_kind_annotation(argument.annotation)
            ):
                self.found.extend(self.strings(default))

    def holds_kind(self, node: ast.expr) -> bool:
        """Whether ``node`` reads a kind: a field, a name or attribute annotated or bound as one."""
        if isinstance(node, ast.Name):
            return node.id in self.kind_names or node.id in self.read_names or node.id in self.fields
        if isinstance(node, ast.NamedExpr):
            return self.holds_kind(node.value)
        return self.typed_kind(node)

    def typed_kind(self, node: ast.expr) -> bool:
        """Whether ``node`` is a field or a name or attribute annotated as a kind (what an assignment of
        a literal is checked for)."""
        if isinstance(node, ast.Name):
            return node.id in self.kind_names or node.id in self.fields
        if isinstance(node, ast.Attribute):
            if node.attr in self.fields or node.attr in self.kind_attributes:
                return True
            # The value of a FailureKind member: `kind.value` for `kind: FailureKind`.
            return (
                node.attr == "value" and isinstance(node.value, ast.Name) and node.value.id in self.kind_names
            )
        return self.is_field(node)

    def case_strings(self, pattern: ast.pattern) -> Iterator[ast.Constant]:
        """The literals a case pattern compares its subject with: ``"a"``, ``"a" | "b"``, ``"a" as k``."""
        pending = [pattern]
        while pending:
            current = pending.pop()
            if isinstance(current, ast.MatchValue):
                yield from self.strings(current.value)
            elif isinstance(current, ast.MatchOr):
                pending.extend(reversed(current.patterns))
            elif isinstance(current, ast.MatchAs) and current.pattern is not None:
                pending.append(current.pattern)

    def read(self, literals: Iterable[ast.Constant]) -> None:
        """Add ``literals`` that code compares a kind with."""
        for literal in literals:
            self.found.append(literal)
            self.reads.add(literal)

    def finish(self) -> tuple[list[ast.Constant | MissingName], set[ast.Constant]]:
        found = self.found
        for comparison in self.comparisons:
            operands = [comparison.left, *comparison.comparators]
            for operator, left, right in zip(comparison.ops, operands, operands[1:], strict=False):
                if isinstance(operator, ast.Eq | ast.NotEq):
                    if self.holds_kind(left):
                        self.read(self.strings(right))
                    elif self.holds_kind(right):
                        self.read(self.strings(left))
                elif (
                    isinstance(operator, ast.In | ast.NotIn)
                    and self.holds_kind(left)
                    and isinstance(right, ast.Tuple | ast.List | ast.Set)
                ):
                    for element in right.elts:
                        self.read(self.strings(element))
        for alternative in self.alternatives:
            if any(self.holds_kind(value) for value in alternative.values):
                for value in alternative.values:
                    if isinstance(value, ast.Constant | ast.IfExp):
                        found.extend(self.strings(value))
        for assignment in self.assignments:
            if any(self.typed_kind(target) for target in assignment.targets):
                found.extend(self.strings(assignment.value))
        for match in self.matches:
            if self.holds_kind(match.subject):
                for case in match.cases:
                    self.read(self.case_strings(case.pattern))
        for owner, read in self.constant_reads:
            if owner in self.package_aliases:
                owner_name, known = PACKAGE, self.package_names
            elif owner in self.enum_aliases or owner.removesuffix(f".{ENUM}") in self.package_aliases:
                owner_name, known = ENUM, self.enum_names
            else:
                continue
            if read.attr not in known:
                # At the name itself, which ends the attribute expression.
                column = (read.end_col_offset or 0) - len(read.attr)
                found.append(MissingName(read.end_lineno or read.lineno, column, read.attr, owner_name))
        self.reads.update(use for use in found if isinstance(use, ast.Constant) and use in self.compared)
        return found, self.reads


def _module_constants(tree: ast.Module) -> dict[str, ast.Constant]:
    """Names in capitals assigned a string literal exactly once at the top of the module."""
    constants: dict[str, ast.Constant] = {}
    seen: set[str] = set()
    for statement in tree.body:
        if isinstance(statement, ast.Assign):
            targets, value = statement.targets, statement.value
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            targets, value = [statement.target], statement.value
        else:
            continue
        for target in targets:
            if isinstance(target, ast.Name) and CONSTANT_NAME.fullmatch(target.id):
                if target.id in seen:
                    constants.pop(target.id, None)
                    continue
                seen.add(target.id)
                if isinstance(value, ast.Constant) and isinstance(value.value, str) and len(targets) == 1:
                    constants[target.id] = value
    return constants


def _returned(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.expr]:
    """The values the function's own ``return`` statements give (not those of functions inside it)."""
    pending: list[ast.AST] = list(function.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Return):
            if node.value is not None:
                yield node.value
            continue
        if isinstance(node, (*_SCOPES, ast.expr)):
            continue
        pending.extend(ast.iter_child_nodes(node))
