"""Whether an annotation makes a name or attribute a failure kind, for the lint's walk in :mod:`_shapes`."""

from __future__ import annotations

import ast

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

# Annotations that make a name or attribute a kind: these, and any name ending in "FailureKind"
# (FailureKind, AnyFailureKind, NamespacedFailureKind, the generated DeclaredFailureKind, ...).
KIND_TYPES: Final = frozenset({"FailureKindName"})
# Subscripted annotations that still hold a kind: unions of their arguments, and wrappers of their first.
_UNIONS: Final = frozenset({"Optional", "Union"})
_WRAPPERS: Final = frozenset({"Annotated", "Final", "ClassVar", "Required", "NotRequired"})
# Annotations are small; a deeper one is not a kind annotation anybody wrote.
_ANNOTATION_DEPTH: Final = 16
_ANNOTATION_TEXT: Final = 200


def is_kind_annotation(annotation: ast.expr, depth: int = 0) -> bool:
    """Whether ``annotation`` is a kind type, possibly optional: ``FailureKindName``, ``fk.AnyFailureKind``,
    ``FailureKind | None``, ``Optional["ProjectFailureKind"]``, ``Final[FailureKindName]``."""
    if depth > _ANNOTATION_DEPTH:
        return False
    if isinstance(annotation, ast.Name | ast.Attribute):
        name = annotation.id if isinstance(annotation, ast.Name) else annotation.attr
        return name in KIND_TYPES or name.endswith("FailureKind")
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        sides = (annotation.left, annotation.right)
        return all(is_kind_annotation(side, depth + 1) or _is_none(side) for side in sides) and any(
            is_kind_annotation(side, depth + 1) for side in sides
        )
    wrapper = called_name(annotation.value) if isinstance(annotation, ast.Subscript) else None
    if isinstance(annotation, ast.Subscript) and (wrapper in _UNIONS or wrapper in _WRAPPERS):
        inner = annotation.slice
        members = inner.elts if isinstance(inner, ast.Tuple) else [inner]
        if wrapper in _WRAPPERS:
            members = members[:1]
        return all(is_kind_annotation(member, depth + 1) or _is_none(member) for member in members) and any(
            is_kind_annotation(member, depth + 1) for member in members
        )
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        text = annotation.value
        if len(text) > _ANNOTATION_TEXT or "FailureKind" not in text:
            return False
        try:
            parsed = ast.parse(text.strip(), mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
        return is_kind_annotation(parsed, depth + 1)
    return False


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def called_name(function: ast.expr) -> str | None:
    """The name a call or subscript refers to: ``f`` for ``f(...)`` and ``m.f(...)``."""
    if isinstance(function, ast.Name):
        return function.id
    if isinstance(function, ast.Attribute):
        return function.attr
    return None
