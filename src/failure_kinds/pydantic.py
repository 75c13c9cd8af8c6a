"""A pydantic v2 field type for failure kinds: ``FailureKindField``.

Statically it is ``AnyFailureKind``, so mypy and pyright reject ``Model(failure_kind="judge_faild")`` and
accept registered literals, the module constants and ``namespaced(...)`` values. At run time the field
keeps every string it is given, reports an unregistered one, an older label (naming its replacement) or
an undeclared kind of a server given to ``failure_kinds.declare_namespace`` through
``validate_failure_kind`` (a warning, once per value), and serializes as a plain string.

This is the only module of the package that imports pydantic: the ``pydantic`` extra
(``pip install ".[pydantic]"`` in a clone; see the README's Install).
"""

from __future__ import annotations

from typing import Annotated, TypeAlias

from pydantic import AfterValidator

from failure_kinds import AnyFailureKind, validate_failure_kind

FailureKindField: TypeAlias = Annotated[AnyFailureKind, AfterValidator(validate_failure_kind)]

__all__ = ["FailureKindField"]
