"""Where a failure kind stands in Python source: the walk behind :mod:`failure_kinds.lint`.

Each rule is one ``visit_`` method of :class:`_Walk`, named after the node it reads. Only the top-level
statements that mention a field, a kind type, a checked function, the package or a name learned from
those are walked: the rest cannot hold a kind.
"""

from __future__ import annotations

import ast
import bisect
import re
from typing import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence
    from typing import Final, TypeVar

    # Constrained, so a dict display's values come back as expressions and a pattern's as patterns.
    _Entry = TypeVar("_Entry", ast.expr, ast.pattern)

CHECKED_FUNCTIONS: Final = {"validate_failure_kind", "metric_label", "is_registered", "is_namespaced"}
PACKAGE: Final = "failure_kinds"
ENUM: Final = "FailureKind"
# Mapping methods whose second argument is the value a missing field stands for.
_DEFAULTING: Final = frozenset({"get", "pop", "setdefault"})
CONSTANT_NAME: Final = re.compile(r"[A-Z][A-Z0-9_]*")
# Comparisons whose operands code reads a kind against: a literal anywhere under one is a read.
_READING: Final = (ast.Eq, ast.NotEq, ast.In, ast.NotIn, ast.Is, ast.IsNot)
_DISPLAYS: Final = (ast.Tuple, ast.List, ast.Set)
# Subscripted annotations that hold a kind: unions of their arguments, and wrappers of their first.
_UNIONS: Final = frozenset({"Optional", "Union"})
_WRAPPERS: Final = frozenset({"Annotated", "Final", "ClassVar", "Required", "NotRequired"})


class MissingName(NamedTuple):
    """A constant name read from the package or its enum that it does not define."""

    lineno: int
    col_offset: int
    name: str
    owner: str


def kind_uses(
    tree: ast.Module, source: bytes, fields: frozenset[str], names: tuple[frozenset[str], frozenset[str]]
) -> tuple[list[ast.Constant | MissingName], set[ast.Constant]]:
    """The string literals standing where a kind goes and the constants read from the package or its enum
    that it lacks (``names``: what the two have); and the literals among them code reads a kind against."""
    walk = _Walk(tree, fields, names)
    # Each statement with its first line (decorators included) and its last.
    pending = [
        (min([item.lineno for item in getattr(statement, "decorator_list", ())], default=statement.lineno),
         statement.end_lineno or statement.lineno, statement)
        for statement in tree.body
    ]  # fmt: skip
    searched = {*fields, *CHECKED_FUNCTIONS, ENUM, PACKAGE}
    words = _searchable(searched)
    while pending and words:
        lines = _lines_mentioning(source, words)
        mentioned = [
            bisect.bisect_left(lines, first) < bisect.bisect_right(lines, last) for first, last, _ in pending
        ]
        walk.walk(statement for (_, _, statement), chosen in zip(pending, mentioned, strict=True) if chosen)
        pending = [entry for entry, chosen in zip(pending, mentioned, strict=True) if not chosen]
        words = _searchable(walk.learned_words() - searched)
        searched |= words
    return walk.finish()


def _searchable(words: set[str]) -> set[str]:
    # An empty word would match every statement; one with a line break is on no line.
    return {word for word in words if word and "\r" not in word and "\n" not in word}


def _lines_mentioning(source: bytes, words: set[str]) -> list[int]:
    """The numbers of the lines of ``source`` that hold one of ``words``, in order, counting lines as the
    parser does (a lone carriage return ends one too): one pass over the source, whatever its line ends."""
    pattern = re.compile(b"|".join(re.escape(word.encode("utf-8", "surrogatepass")) for word in words))
    lone = b"\r" in source  # CRLF and LF files count line feeds alone
    lines: list[int] = []
    line, counted = 1, 0
    for match in pattern.finditer(source):
        start = match.start()  # not inside a CRLF: no word holds a line end
        line += source.count(b"\n", counted, start)
        if lone:
            line += source.count(b"\r", counted, start) - source.count(b"\r\n", counted, start)
        lines.append(line)
        counted = start
    return lines


def is_kind_annotation(annotation: ast.expr, depth: int = 0) -> bool:
    """``FailureKindName``, ``fk.AnyFailureKind``, ``FailureKind | None``, ``Optional["XFailureKind"]``..."""
    if depth > 16:  # annotations are small: a deeper one is not a kind annotation anybody wrote
        return False
    if isinstance(annotation, ast.Name | ast.Attribute):
        name = called_name(annotation) or ""
        return name == "FailureKindName" or name.endswith("FailureKind")
    members: list[ast.expr] = []
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        members = [annotation.left, annotation.right]
    elif isinstance(annotation, ast.Subscript) and called_name(annotation.value) in _UNIONS | _WRAPPERS:
        inner = annotation.slice
        members = inner.elts if isinstance(inner, ast.Tuple) else [inner]
        members = members[:1] if called_name(annotation.value) in _WRAPPERS else members
    elif isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        if len(annotation.value) > 200 or "FailureKind" not in annotation.value:
            return False
        try:
            return is_kind_annotation(ast.parse(annotation.value.strip(), mode="eval").body, depth + 1)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
    kinds = [is_kind_annotation(member, depth + 1) for member in members]
    return any(kinds) and all(
        kind or (isinstance(member, ast.Constant) and member.value is None)
        for kind, member in zip(kinds, members, strict=True)
    )


def called_name(function: ast.expr) -> str | None:
    """``f`` for ``f`` and ``m.f``."""
    if isinstance(function, ast.Name):
        return function.id
    return function.attr if isinstance(function, ast.Attribute) else None


class _Walk:
    """One file's walk. :meth:`walk` reaches every node and calls the rule for its type: a loop, not
    recursion, walks a tree as deep as the parser allows. What depends on the whole file (a comparison with
    a name annotated further down, an import below its use) is kept for :meth:`finish`."""

    def __init__(
        self, tree: ast.Module, fields: frozenset[str], names: tuple[frozenset[str], frozenset[str]]
    ) -> None:
        self.fields = fields
        self.package_names, self.enum_names = names
        self.constants = _module_constants(tree)
        self.found: list[ast.Constant | MissingName] = []
        self.reads: set[ast.Constant] = set()
        # Every literal under an operand of a comparison or in a case pattern (`row == {"failure_kind": ..}`).
        self.compared: set[ast.Constant] = set()
        # Names and attributes annotated as a kind; names bound to a field's value (a read, not a type).
        self.kind_names: set[str] = set()
        self.kind_attributes: set[str] = set()
        self.read_names: set[str] = set()
        self.package_aliases: set[str] = set()
        self.enum_aliases: set[str] = set()
        # Judged once every annotation and import of the file is known.
        self.later: list[ast.Compare | ast.Match | ast.Assign | ast.BoolOp] = []
        self.constant_reads: list[tuple[str, ast.Attribute]] = []

    def walk(self, roots: Iterable[ast.stmt]) -> None:
        """Every node under ``roots``, each given to its rule: :func:`ast.walk` with a rule looked up by
        type, as this loop is the lint's hot path."""
        pending: list[object] = list(roots)
        while pending:
            node = pending.pop()
            fields = _CHILD_FIELDS.get(type(node))
            if fields is None:
                if not isinstance(node, ast.AST):
                    continue  # a name (an attribute's, global x), or None for a dict's ** entry
                fields = _CHILD_FIELDS[type(node)] = tuple(field for field in node._fields if field != "ctx")
            rule = _RULES.get(type(node))
            if rule is not None:
                rule(self, node)
            for field in fields:
                child = getattr(node, field, None)
                if type(child) is list:
                    pending += child
                elif child is not None:
                    pending.append(child)

    def learned_words(self) -> set[str]:
        return self.kind_names.union(
            self.kind_attributes, self.read_names, self.package_aliases, self.enum_aliases
        )

    def strings(self, node: ast.expr | ast.pattern) -> Iterator[ast.Constant]:
        """The literals an expression may evaluate to (itself, both branches of a conditional, the operands
        of ``or`` and ``and``, a walrus's value, a module constant's literal), or a case pattern compares
        its subject with (``"a"``, ``"a" | "b"``, ``"a" as k``)."""
        pending = [node]  # a loop: a conditional expression may nest as deep as parsed
        while pending:
            current = pending.pop()
            if isinstance(current, ast.Constant) and isinstance(current.value, str):
                yield current
            elif isinstance(current, ast.IfExp):
                pending += (current.orelse, current.body)
            elif isinstance(current, ast.BoolOp | ast.MatchOr):
                pending.extend(
                    reversed(current.values if isinstance(current, ast.BoolOp) else current.patterns)
                )
            elif isinstance(current, ast.NamedExpr | ast.MatchValue):
                pending.append(current.value)
            elif isinstance(current, ast.MatchAs) and current.pattern is not None:
                pending.append(current.pattern)
            elif isinstance(current, ast.Name) and current.id in self.constants:
                yield self.constants[current.id]

    def is_field(self, node: ast.expr) -> bool:
        """``x["failure_kind"]``, ``x.failure_kind``, ``x.get("failure_kind")`` or ``failure_kind``."""
        if isinstance(node, ast.Subscript):
            return isinstance(node.slice, ast.Constant) and node.slice.value in self.fields
        if isinstance(node, ast.Attribute | ast.Name):
            return called_name(node) in self.fields
        return (
            isinstance(node, ast.Call)
            and called_name(node.func) in _DEFAULTING
            and isinstance(node.func, ast.Attribute)
            and bool(node.args)
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value in self.fields
        )

    def under_fields(self, keys: Sequence[ast.expr | None], entries: list[_Entry]) -> list[_Entry]:
        """The entries of a dict display or mapping pattern whose key is a literal naming a field."""
        pairs = zip(keys, entries, strict=True)
        return [entry for key, entry in pairs if isinstance(key, ast.Constant) and key.value in self.fields]

    def visit_Attribute(self, node: ast.Attribute) -> None:
        owner = node.value
        if not CONSTANT_NAME.fullmatch(node.attr):
            return
        if isinstance(owner, ast.Name):
            self.constant_reads.append((owner.id, node))
        elif isinstance(owner, ast.Attribute) and owner.attr == ENUM and isinstance(owner.value, ast.Name):
            self.constant_reads.append((f"{owner.value.id}.{ENUM}", node))  # `fk.FailureKind.X`

    def visit_Call(self, node: ast.Call) -> None:
        for keyword in node.keywords:
            if keyword.arg in self.fields:
                self.found.extend(self.strings(keyword.value))
        if node.args and called_name(node.func) in CHECKED_FUNCTIONS:
            self.found.extend(self.strings(node.args[0]))
        elif len(node.args) >= 2 and self.is_field(node):
            self.found.extend(self.strings(node.args[1]))

    def visit_Dict(self, node: ast.Dict) -> None:
        for value in self.under_fields(node.keys, node.values):
            self.found.extend(self.strings(value))

    def visit_Compare(self, node: ast.Compare | ast.match_case) -> None:
        if isinstance(node, ast.match_case) or any(isinstance(operator, _READING) for operator in node.ops):
            for child in ast.walk(node.pattern if isinstance(node, ast.match_case) else node):
                if isinstance(child, ast.Constant):
                    self.compared.add(child)
                elif isinstance(child, ast.Name) and child.id in self.constants:
                    self.compared.add(self.constants[child.id])
        if isinstance(node, ast.Compare):
            self.later.append(node)

    visit_match_case = visit_Compare

    def visit_BoolOp(self, node: ast.BoolOp | ast.Match) -> None:
        self.later.append(node)

    visit_Match = visit_BoolOp

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        if self.is_field(node.value):
            self.read_names.add(node.target.id)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if node.returns is not None and is_kind_annotation(node.returns):
            for value in _returned(node):
                self.found.extend(self.strings(value))

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        for pattern in self.under_fields(node.keys, node.patterns):
            self.read(self.strings(pattern))

    def visit_MatchClass(self, node: ast.MatchClass) -> None:
        for attribute, pattern in zip(node.kwd_attrs, node.kwd_patterns, strict=True):
            if attribute in self.fields:
                self.read(self.strings(pattern))

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name == PACKAGE or (alias.asname is None and alias.name.startswith(PACKAGE + ".")):
                self.package_aliases.add(alias.asname or PACKAGE)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names if node.module == PACKAGE and not node.level else ():
            if alias.name == ENUM:
                self.enum_aliases.add(alias.asname or ENUM)
            elif CONSTANT_NAME.fullmatch(alias.name) and alias.name not in self.package_names:
                self.found.append(MissingName(alias.lineno, alias.col_offset, alias.name, PACKAGE))

    def visit_Assign(self, node: ast.Assign) -> None:
        if any(self.is_field(target) for target in node.targets):
            self.found.extend(self.strings(node.value))
        elif type(node.value) in (ast.Constant, ast.IfExp):
            self.later.append(node)
        elif len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and self.is_field(node.value):
            self.read_names.add(node.targets[0].id)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        target = node.target
        if node.value is not None and self.is_field(target):
            self.found.extend(self.strings(node.value))
            return
        if not is_kind_annotation(node.annotation) or isinstance(target, ast.Subscript):
            return
        if isinstance(target, ast.Name):
            self.kind_names.add(target.id)
        # A field declared in a class body is read as an attribute elsewhere.
        self.kind_attributes.add(called_name(target) or "")
        if node.value is not None:
            self.found.extend(self.strings(node.value))

    def visit_arguments(self, node: ast.arguments) -> None:
        positional = [*node.posonlyargs, *node.args]
        defaults = [*zip(positional[len(positional) - len(node.defaults) :], node.defaults, strict=True)]
        for argument, default in [*defaults, *zip(node.kwonlyargs, node.kw_defaults, strict=True)]:
            if default is not None and (argument.arg in self.fields or _annotated(argument)):
                self.found.extend(self.strings(default))
        self.kind_names.update(
            argument.arg for argument in (*positional, *node.kwonlyargs) if _annotated(argument)
        )

    def holds_kind(self, node: ast.expr) -> bool:
        """Whether ``node`` reads a kind: a field, a name or attribute annotated or bound as one."""
        if isinstance(node, ast.Name) and node.id in self.read_names:
            return True
        return self.holds_kind(node.value) if isinstance(node, ast.NamedExpr) else self.typed_kind(node)

    def typed_kind(self, node: ast.expr) -> bool:
        """Whether ``node`` is a field or a name or attribute annotated as a kind (``kind.value`` too)."""
        if isinstance(node, ast.Name):
            return node.id in self.kind_names or node.id in self.fields
        if isinstance(node, ast.Attribute):
            if node.attr in self.fields or node.attr in self.kind_attributes:
                return True
            return (
                node.attr == "value" and isinstance(node.value, ast.Name) and node.value.id in self.kind_names
            )
        return self.is_field(node)

    def read(self, literals: Iterable[ast.Constant]) -> None:
        for literal in literals:
            self.found.append(literal)
            self.reads.add(literal)

    def finish(self) -> tuple[list[ast.Constant | MissingName], set[ast.Constant]]:
        for node in self.later:
            if isinstance(node, ast.Compare):
                operands = [node.left, *node.comparators]
                for operator, left, right in zip(node.ops, operands, operands[1:], strict=False):
                    if isinstance(operator, ast.Eq | ast.NotEq) and self.holds_kind(left):
                        self.read(self.strings(right))
                    elif isinstance(operator, ast.Eq | ast.NotEq) and self.holds_kind(right):
                        self.read(self.strings(left))
                    elif isinstance(operator, ast.In | ast.NotIn) and isinstance(right, _DISPLAYS):
                        for element in right.elts if self.holds_kind(left) else ():
                            self.read(self.strings(element))
            elif isinstance(node, ast.BoolOp) and any(self.holds_kind(value) for value in node.values):
                for value in node.values:
                    if isinstance(value, ast.Constant | ast.IfExp):
                        self.found.extend(self.strings(value))
            elif isinstance(node, ast.Assign) and any(self.typed_kind(target) for target in node.targets):
                self.found.extend(self.strings(node.value))
            elif isinstance(node, ast.Match) and self.holds_kind(node.subject):
                for case in node.cases:
                    self.read(self.strings(case.pattern))
        for owner, read in self.constant_reads:
            if owner in self.package_aliases:
                owner_name, known = PACKAGE, self.package_names
            elif owner in self.enum_aliases or owner.removesuffix(f".{ENUM}") in self.package_aliases:
                owner_name, known = ENUM, self.enum_names
            else:
                continue
            if read.attr not in known:  # at the name itself, which ends the attribute expression
                column = (read.end_col_offset or 0) - len(read.attr)
                self.found.append(MissingName(read.end_lineno or read.lineno, column, read.attr, owner_name))
        self.reads.update(use for use in self.found if isinstance(use, ast.Constant) and use in self.compared)
        return self.found, self.reads


# The rule for each type of node: `visit_Call` for ast.Call.
_RULES: Final = {
    getattr(ast, name.removeprefix("visit_")): rule
    for name, rule in vars(_Walk).items()
    if name.startswith("visit_")
}
# The fields of each type of node that may hold a node, filled in as the walk meets a type.
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {ast.Constant: (), ast.Name: ()}


def _annotated(argument: ast.arg) -> bool:
    return argument.annotation is not None and is_kind_annotation(argument.annotation)


def _module_constants(tree: ast.Module) -> dict[str, ast.Constant]:
    """Names in capitals assigned a string literal exactly once at the top of the module."""
    values: dict[str, ast.expr | None] = {}  # None: assigned twice, or with another name (`A = B = "x"`)
    for statement in tree.body:
        if isinstance(statement, ast.Assign | ast.AnnAssign) and statement.value is not None:
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            for target in targets:
                if isinstance(target, ast.Name) and CONSTANT_NAME.fullmatch(target.id):
                    once = target.id not in values and len(targets) == 1
                    values[target.id] = statement.value if once else None
    return {
        name: value
        for name, value in values.items()
        if isinstance(value, ast.Constant) and isinstance(value.value, str)
    }


def _returned(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.expr]:
    """The values the function's own ``return`` statements give (not those of functions inside it)."""
    pending: list[ast.AST] = list(function.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Return) and node.value is not None:
            yield node.value
        elif not isinstance(
            node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef | ast.expr | ast.Return
        ):
            pending.extend(ast.iter_child_nodes(node))
